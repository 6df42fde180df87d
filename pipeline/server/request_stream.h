// RequestStream: one request's way back from the engine thread to whoever
// asked (an HTTP handler): the text of each token as it is sampled, then how
// it finished. The engine pushes; the reader waits with a timeout, so it can
// notice in between that its client went away and cancel.
//
//     auto s = engine.submit(req).stream;
//     for (;;) {
//         RequestStream::News n = s->wait(std::chrono::milliseconds(100));
//         send(n.text);
//         if (n.finished) break;
//     }
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "pipeline/llm/stop_reason.h"

namespace sixstep::server {

// How a request ended, once it has.
struct RequestOutcome {
    llm::StopReason stop_reason = llm::StopReason::none;  // eos, stop_string, max_tokens, cancelled or error
    std::string error;         // with error: what went wrong
    int n_prompt = 0;          // prompt tokens
    int n_cached = 0;          // of them, adopted from the prefix cache
    int n_generated = 0;       // tokens sampled
};

class RequestStream {
public:
    explicit RequestStream(int id) : id_(id) {}
    int id() const { return id_; }

    // ---- the engine thread ----
    void push_token(const std::string& text);  // one token was sampled; its new complete text (may be "")
    void finish(RequestOutcome outcome);       // no more tokens

    // ---- the reader ----
    // What arrived since the last call.
    struct News {
        std::string text;      // new text
        int n_tokens = 0;      // new tokens
        bool finished = false; // the outcome is known (and everything before it was in this or earlier news)
        RequestOutcome outcome;
    };
    // Waits until there is news or timeout passes (then returns empty news).
    News wait(std::chrono::milliseconds timeout);
    bool finished() const;

private:
    const int id_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::string text_;        // not yet read
    int n_tokens_ = 0;        // not yet read
    bool finished_ = false;
    RequestOutcome outcome_;
};

}  // namespace sixstep::server
