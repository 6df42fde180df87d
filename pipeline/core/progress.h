// Progress and interruption of long work: loading big model files,
// benchmarks, training, writing models.
//
// A long loop calls report_progress(task, done, total) every so often:
//   - once cancellation has been requested (request_cancel(); the CLI's
//     Ctrl+C handler calls it), it throws Cancelled. Cancelled is not a
//     sixstep::Error, so the layers that turn bad input into a message (the
//     interpreter records engine errors as failed checks) let it pass up to
//     the front end, which cleans up and exits with 130;
//   - otherwise it hands the numbers to the installed ProgressSink, if any
//     (the CLI's one-line display on a terminal), which decides how often to
//     draw.
//
//     for (int i = 0; i < n; ++i) {
//         report_progress("training", i, n);   // may throw Cancelled
//         ...
//     }
//
// Both the flag and the sink are process-wide on purpose: a signal handler
// can only set a flag, and the loops sit below interfaces (Model stages, the
// lesson interpreter) that a front end cannot thread a callback through. The
// engine never installs anything itself; without a front end's sink and
// Ctrl+C handler, report_progress() is a relaxed atomic load.
#pragma once
#include <cstdint>
#include <exception>
#include <string_view>

namespace sixstep {

// Thrown by report_progress() and throw_if_cancelled() after request_cancel().
class Cancelled : public std::exception {
public:
    const char* what() const noexcept override { return "interrupted"; }
};

// The front end's view of long work. Called on the thread doing the work.
class ProgressSink {
public:
    virtual ~ProgressSink() = default;
    // task: "loading weights", "prefill pp128", "training"; total 0: unknown.
    virtual void progress(std::string_view task, std::uint64_t done, std::uint64_t total) = 0;
    // A task finished, or other output follows: remove what was drawn.
    virtual void clear() = 0;
};

// Async-signal-safe: only sets an atomic flag.
void request_cancel() noexcept;
bool cancel_requested() noexcept;
void clear_cancel() noexcept;  // for a front end that handled one and goes on

// Throws Cancelled when cancellation was requested.
void throw_if_cancelled();

// Checks for cancellation, then tells the sink (if any).
void report_progress(std::string_view task, std::uint64_t done, std::uint64_t total);
// Tells the sink (if any) to remove its display: a task ended, or the front
// end is about to print something else. Never throws.
void clear_progress() noexcept;

// Installs `sink` (may be null) for the rest of the process, or until the
// next call; returns the previous one. The sink must outlive its use.
ProgressSink* set_progress_sink(ProgressSink* sink) noexcept;

}  // namespace sixstep
