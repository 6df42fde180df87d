// Is there a CPU free for a second thread? The thread pool asks before a
// forward pass (thread_pool.h): beside programs that keep every CPU busy (a
// build, a spinning browser tab), a pass split across two threads waits
// whenever the OS has preempted one of them in the middle of its share, and
// the pool's timing of passes, whose outliers it caps so that one late pass
// cannot decide, did not see it: beside two busy shells on a 2-CPU machine,
// 2 threads decoded the bundled model at 5,200–5,650 tokens/s against
// 4,600–9,330 on one (median ratio of 5 rounds 0.67×), timing keeping both
// threads for 63–95 % of the passes.
//
// Linux counts the tasks running or ready to run, over all CPUs, in the
// fourth field of /proc/loadavg ("runnable/total"), our own included.
#pragma once
#include <functional>
#include <optional>
#include <string_view>

namespace sixstep::llm {

// The runnable count in the text of /proc/loadavg, e.g. "0.52 0.31 0.20 3/89 1234" → 3.
std::optional<int> parse_runnable_tasks(std::string_view loadavg);

// The machine's runnable tasks now; nullopt where that is not known (not
// Linux, no /proc).
std::optional<int> runnable_tasks();

// Whether the calling thread runs under a real-time policy (SCHED_FIFO or
// SCHED_RR, e.g. under `chrt -f 5`, as tools/vs-llama.sh runs). Then tasks
// of the normal policy cannot preempt it, and those it keeps waiting show
// up as runnable: counted as others, they sent 6-13 % of a 110M F32
// decode's passes to one thread (97 and 87 tokens/s against 106-111).
bool realtime_policy();

// What the thread pool asks by default: runnable_tasks(), or nothing known
// under a real-time policy (no other program can take our CPUs then).
std::optional<int> runnable_tasks_that_compete();

// CPUs online on this machine (at least 1).
int online_cpus();

// Where a caller learns the machine's runnable tasks: by default
// runnable_tasks_that_compete(); tests set their own (nullopt: not known).
using RunnableSource = std::function<std::optional<int>()>;

// Readings in a row that must all find no CPU free before a caller calls the
// machine crowded. One reading is a moment: on a quiet 2-CPU machine a
// kernel thread or a shell was runnable beside a decode pass often enough
// that 9-11 % of its passes ran on one thread for nothing. A busy program is
// there at every reading.
inline constexpr int crowded_readings = 3;

// Whether `online` CPUs leave one free for another thread of ours when
// `runnable` tasks are runnable, `ours` of them our threads: at least two
// CPUs not taken by the others.
inline bool cpu_free_for_another(int runnable, int ours, int online) {
    const int others = runnable > ours ? runnable - ours : 0;
    return online - others >= 2;
}

}  // namespace sixstep::llm
