#include "pipeline/core/memory_size.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace sixstep {

namespace {

// The limit of this process's control group: cgroup v2's memory.max (bytes,
// or "max"), else v1's memory.limit_in_bytes (a huge number when unset).
std::size_t cgroup_limit() {
    std::ifstream self("/proc/self/cgroup");
    std::string line, file;
    while (std::getline(self, line)) {
        if (line.rfind("0::", 0) == 0 && file.empty()) file = "/sys/fs/cgroup" + line.substr(3) + "/memory.max";
        const auto v1 = line.find(":memory:");
        if (v1 != std::string::npos)
            file = "/sys/fs/cgroup/memory" + line.substr(v1 + 8) + "/memory.limit_in_bytes";
    }
    std::ifstream limit(file);
    unsigned long long bytes = 0;
    return !file.empty() && limit >> bytes ? static_cast<std::size_t>(bytes) : 0;
}

}  // namespace

std::size_t usable_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    const std::size_t ram = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
    const std::size_t limit = cgroup_limit();
    if (ram == 0) return limit;
    return limit == 0 ? ram : std::min(ram, limit);
}

}  // namespace sixstep
