// How long the calling thread has waited for a CPU: runnable, but the OS was
// running something else. A step the engine times on a busy machine (a
// build, a browser, a video call beside the lesson) is its own work plus
// those waits, which come in slices of milliseconds where the bundled
// model's decode pass takes a tenth of one — so the serving lab's virtual
// clock (pipeline/serving/virtual_clock.h) leaves them out.
//
//     const WorkTimer t;
//     step();
//     const WorkTimer::Split s = t.split();   // s.waited_ms of the wall time; s.ms the step's own
//
// Linux counts it per thread in /proc/thread-self/schedstat (run_delay: the
// second field, in nanoseconds; the file is there when the kernel keeps
// scheduler statistics, as Debian's does). A reading costs 1.6 µs here
// (the file stays open, one per thread): two per serving step, whose
// passes take 0.1 ms and more.
#pragma once
#include <chrono>
#include <optional>
#include <string_view>

namespace sixstep {

// The calling thread's total wait for a CPU since it started, in
// milliseconds; nullopt where the system does not say.
std::optional<double> thread_cpu_wait_ms();

// Times a piece of the calling thread's work: the wall time since it was
// made, and of that the thread's wait for a CPU (0 where the system does not
// say). Read it on the thread that made it.
class WorkTimer {
public:
    WorkTimer() : t0_(std::chrono::steady_clock::now()), wait0_(thread_cpu_wait_ms()) {}
    double wall_ms() const;
    double waited_ms() const;
    // Both from one reading: the work's own time (the wall time less the
    // wait, at least 0) and the wait.
    struct Split {
        double ms = 0, waited_ms = 0;
    };
    Split split() const;
    double ms() const { return split().ms; }

private:
    std::chrono::steady_clock::time_point t0_;
    std::optional<double> wait0_;
};

// run_delay in the text of a schedstat file, "7218745 34920 12\n" → 34920 ns
// (nullopt for text that is not three whole numbers, or whose run time is 0:
// a kernel that keeps no statistics writes zeros).
std::optional<long long> parse_schedstat_run_delay_ns(std::string_view text);

}  // namespace sixstep
