// HugePageBuffer: memory of the process's own, on 2 MiB pages where the
// kernel gives them, for data that is read from end to end over and over.
//
// A 110M-parameter F32 decode step reads 418 MiB of weights, every token.
// Read through the file's mapping, that is 107,000 pages of 4 KiB, each a
// TLB miss and a page walk, scattered wherever the page cache put them.
// Copied here, the same bytes sit on about 210 huge pages. On a 2-vCPU
// AMD Zen 5 VM at the AVX2 level, 110M F32 decode went from 55–63 to 68–82
// tokens/s in one spell and moved 0.92–1.32× (median 1.05) in another: in
// a VM the host's memory behind the guest's pages decides (README,
// "Weights in memory of its own").
//
// Anonymous, private, 2 MiB aligned, madvise(MADV_HUGEPAGE) (Linux's
// transparent huge pages: honoured when the system setting is "always" or
// "madvise", the usual defaults) and populated up front, so the copy that
// fills it does not fault page by page. Where the kernel gives no huge pages
// (the setting is "never", memory is fragmented, another OS), it is plain
// memory and everything still works.
//
//     HugePageBuffer b(n);                // throws sixstep::Error when the memory is refused
//     std::memcpy(b.data(), src, n);
//     b.huge_page_bytes();                // how much the kernel put on huge pages
#pragma once
#include <cstddef>
#include <cstdint>

namespace sixstep {

class HugePageBuffer {
public:
    HugePageBuffer() = default;
    // `bytes` may be 0 (no memory). `huge` false: plain pages, no advice
    // (what the buffer is measured against).
    explicit HugePageBuffer(std::size_t bytes, bool huge = true);
    HugePageBuffer(HugePageBuffer&& o) noexcept;
    HugePageBuffer& operator=(HugePageBuffer&& o) noexcept;
    HugePageBuffer(const HugePageBuffer&) = delete;
    HugePageBuffer& operator=(const HugePageBuffer&) = delete;
    ~HugePageBuffer();

    std::uint8_t* data() const { return data_; }  // 2 MiB aligned (null when size() is 0)
    std::size_t size() const { return size_; }

    // Bytes of this buffer the kernel has put on huge pages now, at most
    // size(), from /proc/self/smaps (AnonHugePages of the mapping that holds
    // it); 0 where that cannot be read.
    std::size_t huge_page_bytes() const;

private:
    void release() noexcept;

    std::uint8_t* data_ = nullptr;  // inside the mapping
    std::size_t size_ = 0;
    void* map_ = nullptr;           // the whole mapping (data_ rounded to 2 MiB within it)
    std::size_t map_bytes_ = 0;
};

// The size of a huge page on x86-64 (and on ARM64 with 4 KiB pages).
inline constexpr std::size_t huge_page_size = std::size_t{2} << 20;

}  // namespace sixstep
