#include <doctest/doctest.h>

#include <cstdint>

#include "pipeline/core/aligned.h"

TEST_CASE("aligned vector: the buffer starts on a cache line whatever its size, and grows keeping that") {
    for (std::size_t n : {1, 3, 17, 100, 1000, 100000}) {
        CAPTURE(n);
        sixstep::AlignedVector<float> v(n, 1.0f);
        CHECK(reinterpret_cast<std::uintptr_t>(v.data()) % sixstep::cache_line_bytes == 0);
        v.resize(3 * n + 5, 2.0f);
        CHECK(reinterpret_cast<std::uintptr_t>(v.data()) % sixstep::cache_line_bytes == 0);
        CHECK(v[n - 1] == 1.0f);
        CHECK(v.back() == 2.0f);
        sixstep::AlignedVector<std::int8_t> b(n);
        CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % sixstep::cache_line_bytes == 0);
    }
}
