// The machine's roofs: what a run reports (never how fast it is), and the
// ranges it refuses.
#include <doctest/doctest.h>

#include "error_of.h"
#include "pipeline/llm/cpu/thread_pool.h"
#include "pipeline/tools/machine_peaks.h"

using namespace sixstep::llm;
using sixstep::test::error_of;

TEST_CASE("machine peaks: both roofs measured on the pool's threads, and said how") {
    ThreadPool pool(2);
    MachinePeaksParams p;
    p.read_bytes = std::size_t(3) << 20;
    p.repetitions = 2;
    const MachinePeaks m = measure_machine_peaks(pool, p);
    CHECK(m.n_threads == 2);
    CHECK(m.read_bytes == p.read_bytes);  // a whole number of floats
    CHECK(m.repetitions == 2);
    CHECK(m.read_bytes_per_s > 0);
    CHECK(m.flops_per_s > 0);
    CHECK((m.simd == "avx512" || m.simd == "avx2+fma" || m.simd == "scalar"));
    CHECK(m.method.find("2 threads summing a 3 MiB float buffer") != std::string::npos);
    CHECK(m.method.find(m.simd + " fused multiply-adds") != std::string::npos);
}

TEST_CASE("machine peaks: out-of-range parameters are refused") {
    ThreadPool pool(1);
    CHECK(error_of([&] { measure_machine_peaks(pool, {.read_bytes = 1000, .repetitions = 1}); }) ==
          "machine peaks: the bandwidth buffer must be 1 MiB … 4 GiB, not 1000 bytes");
    CHECK(error_of([&] { measure_machine_peaks(pool, {.read_bytes = 1 << 20, .repetitions = 0}); }) ==
          "machine peaks: repetitions must be 1 … 100, not 0");
}
