#include "pipeline/core/huge_page_buffer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include <sys/mman.h>

#include <fmt/format.h>

#include "pipeline/core/error.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL and the copy faults instead
#endif

namespace sixstep {

namespace {

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

HugePageBuffer::HugePageBuffer(std::size_t bytes, bool huge) {
    if (bytes == 0) return;
    constexpr std::size_t align = huge_page_size;
    if (bytes > (std::size_t{1} << 46)) throw Error(fmt::format("cannot hold {} bytes of weights", bytes));
    // The whole of the last huge page is ours: a tail in a page of 4 KiB
    // would be the only part left out.
    const std::size_t usable = round_up(bytes, huge ? align : 4096);
    // Room to start on a 2 MiB boundary, which a huge page needs.
    map_bytes_ = usable + (huge ? align : 0);
    map_ = ::mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map_ == MAP_FAILED) {
        const int err = errno;
        map_ = nullptr;
        throw Error(fmt::format("cannot get {:.1f} MiB of memory for the weights: {}",
                                static_cast<double>(bytes) / (1 << 20), std::strerror(err)));
    }
    const auto base = reinterpret_cast<std::uintptr_t>(map_);
    data_ = reinterpret_cast<std::uint8_t*>(huge ? round_up(base, align) : base);
    size_ = bytes;
    if (huge) {
        // Advice only: a refusal leaves plain pages, which work the same.
        (void)::madvise(data_, usable, MADV_HUGEPAGE);
        // Fault every page in now, huge where it can be: one call instead of
        // a fault per page during the copy (~40 ms for 418 MiB here, against
        // several hundred faulted one at a time when memory must be found).
        (void)::madvise(data_, usable, MADV_POPULATE_WRITE);
    }
}

HugePageBuffer::HugePageBuffer(HugePageBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      map_(std::exchange(o.map_, nullptr)),
      map_bytes_(std::exchange(o.map_bytes_, 0)) {}

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& o) noexcept {
    if (this != &o) {
        release();
        data_ = std::exchange(o.data_, nullptr);
        size_ = std::exchange(o.size_, 0);
        map_ = std::exchange(o.map_, nullptr);
        map_bytes_ = std::exchange(o.map_bytes_, 0);
    }
    return *this;
}

HugePageBuffer::~HugePageBuffer() { release(); }

void HugePageBuffer::release() noexcept {
    if (map_) ::munmap(map_, map_bytes_);
    map_ = nullptr;
    data_ = nullptr;
    size_ = map_bytes_ = 0;
}

std::size_t HugePageBuffer::huge_page_bytes() const {
    if (!data_) return 0;
    // smaps lists each mapping as "start-end perms …" followed by its
    // fields; the one whose range holds data_ is ours (the kernel may have
    // merged it with a neighbour of the same kind, hence the cap at size()).
    std::ifstream smaps("/proc/self/smaps");
    const auto at = reinterpret_cast<std::uintptr_t>(data_);
    bool ours = false;
    for (std::string line; std::getline(smaps, line);) {
        std::uintptr_t lo = 0, hi = 0;
        char dash = 0;
        if (std::sscanf(line.c_str(), "%lx%c%lx", &lo, &dash, &hi) == 3 && dash == '-' &&
            line.find(':') > line.find(' ')) {  // a header: the address range comes before any ':'
            ours = lo <= at && at < hi;
            continue;
        }
        std::size_t kib = 0;
        if (ours && std::sscanf(line.c_str(), "AnonHugePages: %zu kB", &kib) == 1)
            return std::min(kib << 10, size_);
    }
    return 0;
}

}  // namespace sixstep
