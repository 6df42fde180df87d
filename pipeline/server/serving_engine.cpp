#include "pipeline/server/serving_engine.h"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/serving/traffic.h"

namespace sixstep::server {

ServingEngine::ServingEngine(llm::Backend& backend, const llm::TextCodec& codec, const ServingEngineParams& params)
    : backend_(backend), codec_(codec), params_(params) {
    llm::check_kv_pool(params_.kv_blocks, params_.block_size);  // the limits traffic has
    if (params_.max_queue < 0) throw Error(fmt::format("max queue {}: must be >= 0", params_.max_queue));
    const llm::LlamaHparams& hp = backend_.model().hparams();
    if (params_.n_ctx < 0 || params_.n_ctx > hp.n_ctx)
        throw Error(fmt::format("context {}: the model holds at most {} positions (n_ctx; 0: all of them)", params_.n_ctx,
                                hp.n_ctx));
    n_ctx_ = params_.n_ctx > 0 ? params_.n_ctx : hp.n_ctx;
    n_vocab_ = hp.n_vocab;
    llm::KvCacheParams kp = llm::kv_cache_params(hp, n_ctx_, 1, params_.block_size);
    kp.n_blocks = params_.kv_blocks;
    kv_ = backend_.make_kv_cache(kp);
    serving::SchedulerParams sp = params_.scheduler;
    sp.time_cpu_waits = false;  // wall_cost reads the wall clock, waits included, as a client feels them
    scheduler_ = std::make_unique<serving::Scheduler>(backend_, *kv_, codec_, sp,
                                                      [this](const serving::StepShape& s) { return wall_cost(s); });
    serving::SchedulerObserver observer;
    observer.on_token = [this](int id, const llm::TokenEvent& ev) {
        ++n_step_tokens_;
        if (const auto it = active_.find(id); it != active_.end()) it->second->push_token(ev.text);
    };
    observer.on_finish = [this](const serving::RequestRecord& r) {
        metrics_.on_finish(r);
        if (const auto it = active_.find(r.id); it != active_.end()) {
            it->second->finish({r.stop_reason, "", r.n_prompt, r.n_cached_tokens, static_cast<int>(r.output.size())});
            active_.erase(it);
        }
        std::lock_guard lock(mutex_);
        --n_in_flight_;
    };
    scheduler_->set_observer(std::move(observer));
    metrics_.set_gauges({0, 0, 0, 0, kv_->blocks().n_blocks()});
    thread_ = std::thread([this] { run(); });
}

ServingEngine::~ServingEngine() { stop(std::chrono::milliseconds(0)); }

double ServingEngine::now_ms() const { return ms_since(t0_); }

// The virtual clock made the wall clock: a step "costs" whatever wall time
// passed since the clock last moved — the forward pass and sampling, and also
// the engine's own bookkeeping, which a real client waits through too.
double ServingEngine::wall_cost(const serving::StepShape&) const {
    return std::max(0.0, now_ms() - scheduler_->clock().now_ms());
}

Submission ServingEngine::submit(EngineRequest request) {
    serving::RequestSpec spec;
    spec.prompt = std::move(request.prompt);
    spec.max_tokens = request.max_tokens;
    spec.sampling = request.sampling;
    spec.stop = std::move(request.stop);
    std::lock_guard lock(mutex_);
    if (stopping_) return {nullptr, "shutting_down", "the server is shutting down"};
    // Waiting: received and not running. A request that a free batch slot
    // takes at once does not wait, so max_queue 0 (shed load rather than
    // queue it) still serves an idle server.
    const int queued = n_waiting_ + static_cast<int>(inbox_.size());
    const int free_slots = std::max(0, params_.scheduler.max_batch - (n_in_flight_ - queued));
    if (queued + 1 - free_slots > params_.max_queue) {
        metrics_.on_rejected("queue_full");
        return {nullptr, "queue_full",
                fmt::format("the queue is full ({} request{} waiting); retry later", params_.max_queue,
                            params_.max_queue == 1 ? "" : "s")};
    }
    spec.id = next_id_;
    spec.arrival_ms = now_ms();
    try {
        scheduler_->check(spec);
    } catch (const Error& e) {
        metrics_.on_rejected("invalid");
        return {nullptr, "invalid", e.message()};
    }
    ++next_id_;
    auto stream = std::make_shared<RequestStream>(spec.id);
    inbox_.emplace_back(std::move(spec), stream);
    ++n_in_flight_;
    cv_.notify_all();
    return {stream, "", ""};
}

void ServingEngine::cancel(int id) {
    {
        std::lock_guard lock(mutex_);
        cancels_.push_back(id);
    }
    cv_.notify_all();
}

void ServingEngine::stop(std::chrono::milliseconds grace) {
    {
        std::lock_guard lock(mutex_);
        if (!stopping_) {
            stopping_ = true;
            deadline_ = std::chrono::steady_clock::now() + grace;
        }
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

int ServingEngine::n_in_flight() const {
    std::lock_guard lock(mutex_);
    return n_in_flight_;
}

std::size_t ServingEngine::kv_pool_bytes() const { return kv_->stats().bytes_total; }

void ServingEngine::run() {
    for (;;) {
        std::vector<std::pair<serving::RequestSpec, std::shared_ptr<RequestStream>>> arrivals;
        std::vector<int> cancels;
        bool cancel_all = false;
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return !inbox_.empty() || !cancels_.empty() || stopping_ || !active_.empty(); });
            arrivals.swap(inbox_);
            // Until the step ends and says how many still wait, the arrivals
            // moved to the scheduler wait: uncounted, a burst that came
            // during the step went past --max-queue (4 taken of 3).
            n_waiting_ += static_cast<int>(arrivals.size());
            cancels.swap(cancels_);
            cancel_all = stopping_ && std::chrono::steady_clock::now() >= deadline_;
            if (stopping_ && arrivals.empty() && active_.empty()) break;
        }
        for (auto& [spec, stream] : arrivals) {
            const int id = spec.id;
            active_[id] = stream;
            try {
                scheduler_->submit({std::move(spec)});
            } catch (const std::exception& e) {  // checked in submit(): only a bug gets here
                active_.erase(id);
                stream->finish({llm::StopReason::error, e.what(), 0, 0, 0});
                std::lock_guard lock(mutex_);
                --n_in_flight_;
            }
        }
        for (int id : cancels) scheduler_->cancel(id);
        if (cancel_all) {
            std::vector<int> ids;
            for (const auto& [id, s] : active_) ids.push_back(id);
            for (int id : ids) scheduler_->cancel(id);
        }
        if (!active_.empty()) {
            n_step_tokens_ = 0;
            try {
                scheduler_->step();
            } catch (const std::exception& e) {
                // A bug, never input: end every request with the reason rather than hang them.
                std::vector<int> ids;
                for (const auto& [id, s] : active_) ids.push_back(id);
                for (int id : ids) {
                    active_[id]->finish({llm::StopReason::error, e.what(), 0, 0, 0});
                    scheduler_->cancel(id);
                }
            }
            metrics_.on_tokens(now_ms(), n_step_tokens_);
        }
        scheduler_->take_finished();  // already reported through the observer
        // Waiting: in flight and not running. Not the scheduler's queue
        // alone: a request whose arrival its clock has not reached yet is in
        // neither of its lists. Admission counts the inbox apart (n_waiting_
        // leaves it out); /metrics shows every request that waits.
        int waiting_all = 0;
        {
            std::lock_guard lock(mutex_);
            waiting_all = std::max(0, n_in_flight_ - scheduler_->n_running());
            n_waiting_ = std::max(0, waiting_all - static_cast<int>(inbox_.size()));
        }
        metrics_.set_gauges({scheduler_->n_running(), waiting_all, kv_->blocks().n_used(),
                             scheduler_->prefix_cache() ? scheduler_->prefix_cache()->n_evictable() : 0,
                             kv_->blocks().n_blocks()});
    }
}

}  // namespace sixstep::server
