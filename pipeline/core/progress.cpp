#include "pipeline/core/progress.h"

#include <atomic>

namespace sixstep {

namespace {
std::atomic<bool> g_cancel{false};
std::atomic<ProgressSink*> g_sink{nullptr};
static_assert(std::atomic<bool>::is_always_lock_free, "the Ctrl+C handler needs a lock-free flag");
}  // namespace

void request_cancel() noexcept { g_cancel.store(true, std::memory_order_relaxed); }
bool cancel_requested() noexcept { return g_cancel.load(std::memory_order_relaxed); }
void clear_cancel() noexcept { g_cancel.store(false, std::memory_order_relaxed); }

void throw_if_cancelled() {
    if (cancel_requested()) throw Cancelled();
}

void report_progress(std::string_view task, std::uint64_t done, std::uint64_t total) {
    throw_if_cancelled();
    if (ProgressSink* s = g_sink.load(std::memory_order_acquire)) s->progress(task, done, total);
}

void clear_progress() noexcept {
    if (ProgressSink* s = g_sink.load(std::memory_order_acquire)) {
        try {
            s->clear();
        } catch (...) {
        }
    }
}

ProgressSink* set_progress_sink(ProgressSink* sink) noexcept { return g_sink.exchange(sink, std::memory_order_acq_rel); }

}  // namespace sixstep
