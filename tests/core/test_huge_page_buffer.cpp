#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "pipeline/core/huge_page_buffer.h"

using sixstep::huge_page_size;
using sixstep::HugePageBuffer;

namespace {

// What the system allows: "always [madvise] never" → "madvise".
std::string thp_setting() {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string all;
    std::getline(in, all);
    const auto a = all.find('['), b = all.find(']');
    return a == std::string::npos || b == std::string::npos ? "" : all.substr(a + 1, b - a - 1);
}

}  // namespace

TEST_CASE("huge page buffer: 2 MiB aligned, writable to its last byte, moved without a copy") {
    for (const std::size_t n : {std::size_t{1}, std::size_t{4097}, huge_page_size, 5 * huge_page_size + 123}) {
        CAPTURE(n);
        HugePageBuffer b(n);
        REQUIRE(b.data() != nullptr);
        CHECK(b.size() == n);
        CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % huge_page_size == 0);
        CHECK(b.data()[0] == 0);  // fresh anonymous memory is zero
        std::memset(b.data(), 0x5a, n);
        CHECK(b.data()[n - 1] == 0x5a);
        CHECK(b.huge_page_bytes() <= (n + huge_page_size - 1) / huge_page_size * huge_page_size);
        std::uint8_t* const p = b.data();
        HugePageBuffer moved(std::move(b));
        CHECK(moved.data() == p);
        CHECK(moved.size() == n);
        CHECK(b.data() == nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
        CHECK(b.size() == 0);
        HugePageBuffer assigned;
        assigned = std::move(moved);
        CHECK(assigned.data() == p);
        CHECK(assigned.data()[n / 2] == 0x5a);
    }
    HugePageBuffer none(0);
    CHECK(none.data() == nullptr);
    CHECK(none.huge_page_bytes() == 0);
}

TEST_CASE("huge page buffer: on huge pages where the system allows them, on plain pages when asked") {
    const std::size_t n = 8 * huge_page_size;
    HugePageBuffer plain(n, false);
    std::memset(plain.data(), 1, n);
    // Plain pages: no advice given, and under "madvise" none are huge.
    if (thp_setting() == "madvise") CHECK(plain.huge_page_bytes() == 0);
    HugePageBuffer huge(n);
    const std::size_t on_huge = huge.huge_page_bytes();
    MESSAGE("transparent huge pages: \"" << thp_setting() << "\"; " << (on_huge >> 20) << " of " << (n >> 20)
                                         << " MiB on huge pages");
    CHECK(on_huge % huge_page_size == 0);
    // With the setting "never" there are none at all. Otherwise the kernel
    // may still refuse some for want of contiguous memory (defrag
    // compacts for an madvised buffer first), but not all of 16 MiB on a
    // machine with memory to spare.
    if (thp_setting() == "never") CHECK(on_huge == 0);
    if (thp_setting() == "always" || thp_setting() == "madvise") CHECK(on_huge > 0);
}
