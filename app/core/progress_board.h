// The window's side of long work (pipeline/core/progress.h): the session
// installs one ProgressBoard as the process's progress sink; the worker's
// loops report into it, and the UI reads the latest report once per frame to
// draw a bar. It keeps only the newest report, so a loop that reports a
// million times costs a short lock each, and the UI never falls behind.
//
//     ProgressBoard board;
//     set_progress_sink(&board);            // the session does this
//     report_progress("training", 3, 10);   // on the worker, inside a loop
//     board.latest();                       // on the UI thread: {"training", 3, 10}
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "pipeline/core/progress.h"

namespace sixstep::app {

// The latest report of long work.
struct ProgressReport {
    std::string task;         // "batch sweep: round 1 of 3, batch 8", "training (steps)"; empty: nothing reported yet
    std::uint64_t done = 0;   // units of `task` finished
    std::uint64_t total = 0;  // units in all; 0: not known in advance (a count without a bar)
};

class ProgressBoard : public ProgressSink {
public:
    void progress(std::string_view task, std::uint64_t done, std::uint64_t total) override;
    void clear() override;  // a task ended: nothing to show until the next report

    ProgressReport latest() const;  // any thread

private:
    mutable std::mutex mutex_;
    ProgressReport latest_;
};

}  // namespace sixstep::app
