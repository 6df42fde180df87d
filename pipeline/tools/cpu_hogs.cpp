#include "pipeline/tools/cpu_hogs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "pipeline/core/error.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#define SIXSTEP_HAVE_FORK 1
#endif
#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace sixstep::llm {

namespace {

#if defined(SIXSTEP_HAVE_FORK)
// The child's whole life: normal priority, die with the parent, spin. Only
// async-signal-safe calls: the parent may have other threads.
[[noreturn]] void hog(pid_t parent) {
#if defined(__linux__)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sched_param normal{};
    sched_setscheduler(0, SCHED_OTHER, &normal);
#endif
    if (getppid() != parent) _exit(0);  // the parent died before prctl took effect
    volatile unsigned long spin = 0;
    for (;;) spin = spin + 1;
}
#endif

}  // namespace

CpuHogs::CpuHogs(int n) {
#if defined(SIXSTEP_HAVE_FORK)
    const pid_t parent = getpid();
    for (int i = 0; i < n; ++i) {
        const pid_t pid = fork();
        if (pid == 0) hog(parent);
        if (pid < 0) {
            const int err = errno;
            stop();
            throw Error(fmt::format("could not start a CPU hog process: {}", std::strerror(err)));
        }
        pids_.push_back(pid);
    }
#else
    if (n > 0) throw Error("CPU hogs need fork(), which this system does not have");
#endif
}

CpuHogs::~CpuHogs() { stop(); }

void CpuHogs::stop() {
#if defined(SIXSTEP_HAVE_FORK)
    for (int pid : pids_) kill(pid, SIGKILL);
    for (int pid : pids_) {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
#endif
    pids_.clear();
}

int CpuHogs::cpus_available() {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
    return std::max(1u, std::thread::hardware_concurrency());
}

bool CpuHogs::caller_is_realtime() {
#if defined(__linux__)
    const int policy = sched_getscheduler(0);
    return policy == SCHED_FIFO || policy == SCHED_RR;
#else
    return false;
#endif
}

}  // namespace sixstep::llm
