#include "pipeline/tools/thread_times.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace sixstep::llm {

std::optional<ThreadTimes> parse_schedstat(std::string_view line) {
    unsigned long long ns[2] = {0, 0};
    const char* p = line.data();
    const char* end = line.data() + line.size();
    for (unsigned long long& v : ns) {
        while (p < end && *p == ' ') ++p;
        const auto [next, ec] = std::from_chars(p, end, v);
        if (ec != std::errc() || next == p) return std::nullopt;
        p = next;
    }
    return ThreadTimes{static_cast<double>(ns[0]) * 1e-9, static_cast<double>(ns[1]) * 1e-9};
}

std::optional<ThreadTimesSnapshot> thread_times_now() {
#if defined(__linux__)
    std::error_code ec;
    std::filesystem::directory_iterator it("/proc/self/task", ec);
    if (ec) return std::nullopt;
    ThreadTimesSnapshot snap;
    for (const auto& entry : it) {
        long tid = 0;
        const std::string name = entry.path().filename().string();
        if (std::from_chars(name.data(), name.data() + name.size(), tid).ec != std::errc()) continue;
        std::ifstream in(entry.path() / "schedstat");
        std::string line;
        if (!std::getline(in, line)) continue;  // the thread ended while we looked
        const auto t = parse_schedstat(line);
        if (!t) return std::nullopt;
        snap[tid] = *t;
    }
    if (snap.empty()) return std::nullopt;
    return snap;
#else
    return std::nullopt;
#endif
}

ThreadTimes times_between(const ThreadTimesSnapshot& before, const ThreadTimesSnapshot& after) {
    ThreadTimes sum;
    for (const auto& [tid, now] : after) {
        const auto was = before.find(tid);
        const ThreadTimes then = was == before.end() ? ThreadTimes{} : was->second;
        // A thread id reused by a new thread starts below its predecessor's.
        if (now.on_cpu_s < then.on_cpu_s || now.waiting_s < then.waiting_s) {
            sum.on_cpu_s += now.on_cpu_s;
            sum.waiting_s += now.waiting_s;
        } else {
            sum.on_cpu_s += now.on_cpu_s - then.on_cpu_s;
            sum.waiting_s += now.waiting_s - then.waiting_s;
        }
    }
    return sum;
}

}  // namespace sixstep::llm
