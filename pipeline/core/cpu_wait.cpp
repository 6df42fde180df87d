#include "pipeline/core/cpu_wait.h"

#include <algorithm>
#include <charconv>

#include <fcntl.h>
#include <unistd.h>

namespace sixstep {

namespace {

// A whole number at the front of text (after spaces), or nullopt; text is
// moved past it.
std::optional<long long> take_number(std::string_view& text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    long long v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end == text.data() || v < 0) return std::nullopt;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return v;
}

// The calling thread's schedstat file, opened once (-1: not there).
class SchedstatFile {
public:
    SchedstatFile() : fd_(::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}
    ~SchedstatFile() {
        if (fd_ >= 0) ::close(fd_);
    }
    SchedstatFile(const SchedstatFile&) = delete;
    SchedstatFile& operator=(const SchedstatFile&) = delete;

    std::optional<long long> run_delay_ns() const {
        if (fd_ < 0) return std::nullopt;
        char buf[128];
        const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
        if (n <= 0) return std::nullopt;
        return parse_schedstat_run_delay_ns(std::string_view(buf, static_cast<std::size_t>(n)));
    }

private:
    int fd_;
};

}  // namespace

std::optional<long long> parse_schedstat_run_delay_ns(std::string_view text) {
    const std::optional<long long> run_ns = take_number(text);
    const std::optional<long long> delay_ns = take_number(text);
    const std::optional<long long> slices = take_number(text);
    while (!text.empty() && (text.front() == '\n' || text.front() == ' ')) text.remove_prefix(1);
    if (!run_ns || !delay_ns || !slices || !text.empty()) return std::nullopt;
    // A thread that reads its own file has run; all zeros is a kernel that
    // keeps no such statistics (sched_info off), not a thread that never waited.
    if (*run_ns == 0) return std::nullopt;
    return delay_ns;
}

double WorkTimer::wall_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
}

double WorkTimer::waited_ms() const {
    if (!wait0_) return 0;
    const std::optional<double> now = thread_cpu_wait_ms();
    return now ? std::max(0.0, *now - *wait0_) : 0;
}

WorkTimer::Split WorkTimer::split() const {
    const double waited = waited_ms();  // read first: the wall time then covers it
    return {std::max(0.0, wall_ms() - waited), waited};
}

std::optional<double> thread_cpu_wait_ms() {
    thread_local const SchedstatFile file;
    const std::optional<long long> ns = file.run_delay_ns();
    if (!ns) return std::nullopt;
    return static_cast<double>(*ns) * 1e-6;
}

}  // namespace sixstep
