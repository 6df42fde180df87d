// The two roofs of this machine, measured in a fraction of a second on the
// same thread pool the CPU backend uses, so that a roofline prediction
// (serving/roofline.h) compares the engine with what the hardware can do
// here and now, not with a datasheet.
//
// - Read bandwidth: every thread sums its contiguous share of one buffer of
//   `read_bytes` floats (already in memory), 64 independent sums per thread
//   so that the adds never wait on each other; bytes ÷ time of the slowest
//   thread, best of `repetitions`. Sized like the data a step reads, the
//   buffer lands where that data lives: DRAM for a 438 MB model, the caches
//   for a 7 MB one.
// - Peak FLOP/s: every thread runs chains of fused multiply-adds that never
//   touch memory (12 independent chains of the widest vectors the CPU has:
//   AVX-512, else AVX2+FMA, else scalar), 2 FLOPs per lane per FMA, each
//   thread's rate over its own CPU time (a busy machine that lends a core to
//   another process for a moment does not halve the roof), summed; best of
//   `repetitions`. No real kernel reaches this: it is the ceiling.
//
//     ThreadPool pool(2);
//     MachinePeaks m = measure_machine_peaks(pool, {.read_bytes = 438u << 20});
//     m.read_bytes_per_s, m.flops_per_s, m.method
#pragma once
#include <cstddef>
#include <string>

namespace sixstep::llm {

class ThreadPool;

struct MachinePeaksParams {
    std::size_t read_bytes = std::size_t(256) << 20;  // bandwidth buffer, bytes (1 MiB … 4 GiB)
    int repetitions = 5;                              // best of this many runs of each test (1 … 100)
};

struct MachinePeaks {
    double read_bytes_per_s = 0;  // memory read bandwidth, bytes/s
    double flops_per_s = 0;       // peak FLOP/s of FMA chains
    std::size_t read_bytes = 0;   // the buffer the bandwidth was measured on
    int n_threads = 0;            // threads that ran both tests
    int repetitions = 0;
    std::string simd;             // instructions of the FMA chains: "avx512", "avx2+fma", "scalar"
    std::string method;           // how both were measured, in one sentence
};

// Throws sixstep::Error for parameters out of range.
MachinePeaks measure_machine_peaks(ThreadPool& pool, const MachinePeaksParams& params = {});

}  // namespace sixstep::llm
