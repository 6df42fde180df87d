// Where this process's threads spend their time: running on a CPU, or
// runnable but waiting for one. The waiting is what a crowded machine does
// to the engine, and it explains what a thread count gains or loses there:
// on 2 CPUs beside 2 CPU hogs, one decoding thread is one of 3 runnable
// threads and runs about 2/3 of the time; two are 2 of 4 and each runs about
// half of it — more CPU in all, but the second thread helps only while both
// run at once (`sixstep bench --contention` prints both figures).
//
//     const auto before = thread_times_now();
//     ... decode ...
//     const auto after = thread_times_now();
//     if (before && after) times_between(*before, *after).waiting_s / wall_s  // threads' waiting per second
//
// Linux keeps the two sums per thread in /proc/self/task/*/schedstat; other
// systems do not say, and the functions return nothing there.
#pragma once
#include <map>
#include <optional>
#include <string_view>

namespace sixstep::llm {

struct ThreadTimes {
    double on_cpu_s = 0;   // running on a CPU
    double waiting_s = 0;  // runnable, waiting for a CPU
};

// One schedstat line: "<ns on a CPU> <ns waiting> <time slices>"; nothing
// when it does not start with two numbers.
std::optional<ThreadTimes> parse_schedstat(std::string_view line);

// This process's threads now, by thread id; nothing where the system does
// not say.
using ThreadTimesSnapshot = std::map<long, ThreadTimes>;
std::optional<ThreadTimesSnapshot> thread_times_now();

// What the threads did from one snapshot to the next, summed: a thread that
// started in between counts whole, one that ended in between not at all
// (its times went with it).
ThreadTimes times_between(const ThreadTimesSnapshot& before, const ThreadTimesSnapshot& after);

}  // namespace sixstep::llm
