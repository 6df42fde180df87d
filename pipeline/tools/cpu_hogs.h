// CPU hogs: child processes that spin at normal priority, to measure how the
// engine copes with a busy machine (`sixstep bench --contention`): a laptop
// with a browser and a video call, or a build running beside a lesson.
//
//     CpuHogs hogs(CpuHogs::cpus_available());   // one per CPU, spinning now
//     ... measure ...
//     // the destructor kills and reaps them
//
// The hogs are processes, not threads, so that the OS schedules them as it
// would any other program; they run at normal priority whatever the caller's
// (a real-time hog on every CPU would freeze the machine), and they die with
// the caller even if it is killed (Linux: PR_SET_PDEATHSIG).
#pragma once
#include <vector>

namespace sixstep::llm {

class CpuHogs {
public:
    // Starts n hogs. Throws sixstep::Error if a process cannot be started
    // (the ones already started are stopped) or on a system without fork().
    explicit CpuHogs(int n);
    ~CpuHogs();
    CpuHogs(const CpuHogs&) = delete;
    CpuHogs& operator=(const CpuHogs&) = delete;

    int size() const { return static_cast<int>(pids_.size()); }

    // Logical CPUs this process may run on (its affinity), at least 1.
    static int cpus_available();
    // True when this process runs under a real-time policy (chrt -f/-r): the
    // hogs at normal priority could then never take a CPU from it.
    static bool caller_is_realtime();

private:
    void stop();
    std::vector<int> pids_;
};

}  // namespace sixstep::llm
