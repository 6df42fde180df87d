#include "pipeline/server/request_stream.h"

namespace sixstep::server {

void RequestStream::push_token(const std::string& text) {
    {
        std::lock_guard lock(mutex_);
        text_ += text;
        ++n_tokens_;
    }
    cv_.notify_all();
}

void RequestStream::finish(RequestOutcome outcome) {
    {
        std::lock_guard lock(mutex_);
        if (finished_) return;
        finished_ = true;
        outcome_ = std::move(outcome);
    }
    cv_.notify_all();
}

RequestStream::News RequestStream::wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [&] { return n_tokens_ > 0 || !text_.empty() || finished_; });
    News n;
    n.text = std::move(text_);
    text_.clear();
    n.n_tokens = n_tokens_;
    n_tokens_ = 0;
    n.finished = finished_;
    if (finished_) n.outcome = outcome_;
    return n;
}

bool RequestStream::finished() const {
    std::lock_guard lock(mutex_);
    return finished_;
}

}  // namespace sixstep::server
