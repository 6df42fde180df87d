#include "pipeline/llm/cpu/cpu_load.h"

#include <charconv>
#include <thread>

#if defined(__linux__)
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#endif

namespace sixstep::llm {

std::optional<int> parse_runnable_tasks(std::string_view loadavg) {
    // Skip three load averages and the blanks after them.
    std::size_t at = 0;
    for (int field = 0; field < 3; ++field) {
        const std::size_t blank = loadavg.find(' ', at);
        if (blank == std::string_view::npos) return std::nullopt;
        at = loadavg.find_first_not_of(' ', blank);
        if (at == std::string_view::npos) return std::nullopt;
    }
    int n = 0;
    const char* begin = loadavg.data() + at;
    const char* end = loadavg.data() + loadavg.size();
    const auto [p, ec] = std::from_chars(begin, end, n);
    if (ec != std::errc{} || p == begin || p == end || *p != '/' || n < 0) return std::nullopt;
    return n;
}

std::optional<int> runnable_tasks() {
#if defined(__linux__)
    const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    char buf[128];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (n <= 0) return std::nullopt;
    return parse_runnable_tasks(std::string_view(buf, static_cast<std::size_t>(n)));
#else
    return std::nullopt;
#endif
}

bool realtime_policy() {
#if defined(__linux__)
    const int policy = ::sched_getscheduler(0);
    return policy == SCHED_FIFO || policy == SCHED_RR;
#else
    return false;
#endif
}

std::optional<int> runnable_tasks_that_compete() {
    if (realtime_policy()) return std::nullopt;
    return runnable_tasks();
}

int online_cpus() {
#if defined(__linux__)
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 0) return static_cast<int>(n);
#endif
    const unsigned hw = std::thread::hardware_concurrency();
    return hw > 0 ? static_cast<int>(hw) : 1;
}

}  // namespace sixstep::llm
