#include "pipeline/tools/machine_peaks.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <vector>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/thread_pool.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SIXSTEP_X86_TARGETS 1
#endif

namespace sixstep::llm {

namespace {

using Clock = std::chrono::steady_clock;

// Sums n floats with 64 independent partial sums: the compiler turns the
// inner loop into a few vector adds, and no add waits for the previous one.
float sum_floats(const float* p, std::size_t n) {
    constexpr int lanes = 64;
    float acc[lanes] = {};
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes)
        for (int j = 0; j < lanes; ++j) acc[j] += p[i + j];
    for (; i < n; ++i) acc[0] += p[i];
    float s = 0;
    for (float a : acc) s += a;
    return s;
}

// FMA chains: 12 accumulators, each a ← a·m + c, `iters` times. Returns a
// sum so the work cannot be optimized away; flops receives what was done.
constexpr int n_chains = 12;
constexpr float chain_m = 0.999999f, chain_c = 1e-7f;

#if defined(SIXSTEP_X86_TARGETS)
__attribute__((target("avx512f"))) float fma_chains_avx512(long iters, double& flops) {
    __m512 a[n_chains];
    for (int k = 0; k < n_chains; ++k) a[k] = _mm512_set1_ps(1.0f + k);
    const __m512 m = _mm512_set1_ps(chain_m), c = _mm512_set1_ps(chain_c);
    for (long i = 0; i < iters; ++i)
        for (int k = 0; k < n_chains; ++k) a[k] = _mm512_fmadd_ps(a[k], m, c);
    __m512 s = a[0];
    for (int k = 1; k < n_chains; ++k) s = _mm512_add_ps(s, a[k]);
    float out[16];
    _mm512_storeu_ps(out, s);
    float t = 0;
    for (float v : out) t += v;
    flops = 2.0 * 16 * n_chains * static_cast<double>(iters);
    return t;
}

__attribute__((target("avx2,fma"))) float fma_chains_avx2(long iters, double& flops) {
    __m256 a[n_chains];
    for (int k = 0; k < n_chains; ++k) a[k] = _mm256_set1_ps(1.0f + k);
    const __m256 m = _mm256_set1_ps(chain_m), c = _mm256_set1_ps(chain_c);
    for (long i = 0; i < iters; ++i)
        for (int k = 0; k < n_chains; ++k) a[k] = _mm256_fmadd_ps(a[k], m, c);
    __m256 s = a[0];
    for (int k = 1; k < n_chains; ++k) s = _mm256_add_ps(s, a[k]);
    float out[8];
    _mm256_storeu_ps(out, s);
    float t = 0;
    for (float v : out) t += v;
    flops = 2.0 * 8 * n_chains * static_cast<double>(iters);
    return t;
}
#endif

float fma_chains_scalar(long iters, double& flops) {
    float a[n_chains];
    for (int k = 0; k < n_chains; ++k) a[k] = 1.0f + k;
    for (long i = 0; i < iters; ++i)
        for (int k = 0; k < n_chains; ++k) a[k] = a[k] * chain_m + chain_c;
    float s = 0;
    for (float v : a) s += v;
    flops = 2.0 * n_chains * static_cast<double>(iters);
    return s;
}

enum class Simd { avx512, avx2, scalar };

Simd best_simd() {
#if defined(SIXSTEP_X86_TARGETS)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return Simd::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Simd::avx2;
#endif
    return Simd::scalar;
}

float fma_chains(Simd simd, long iters, double& flops) {
#if defined(SIXSTEP_X86_TARGETS)
    if (simd == Simd::avx512) return fma_chains_avx512(iters, flops);
    if (simd == Simd::avx2) return fma_chains_avx2(iters, flops);
#endif
    return fma_chains_scalar(iters, flops);
}

const char* simd_name(Simd s) { return s == Simd::avx512 ? "avx512" : s == Simd::avx2 ? "avx2+fma" : "scalar"; }

// CPU time of the calling thread, in seconds.
double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Keeps results alive so that the compiler cannot drop the loops.
std::atomic<float> sink{0};

}  // namespace

MachinePeaks measure_machine_peaks(ThreadPool& pool, const MachinePeaksParams& p) {
    if (p.read_bytes < (std::size_t(1) << 20) || p.read_bytes > (std::size_t(4) << 30))
        throw Error(fmt::format("machine peaks: the bandwidth buffer must be 1 MiB … 4 GiB, not {} bytes", p.read_bytes));
    if (p.repetitions < 1 || p.repetitions > 100)
        throw Error(fmt::format("machine peaks: repetitions must be 1 … 100, not {}", p.repetitions));
    MachinePeaks m;
    m.n_threads = pool.n_threads();
    m.repetitions = p.repetitions;
    const int nt = m.n_threads;

    // Bandwidth: each thread owns the same contiguous share on every run, and
    // writes it first, so its pages are mapped (and, on NUMA machines, near it).
    const std::size_t n = p.read_bytes / sizeof(float);
    std::vector<float> buf(n);
    pool.parallel_for(nt, [&](int b, int e, int) {
        for (int t = b; t < e; ++t)
            std::fill(buf.begin() + static_cast<std::ptrdiff_t>(n * t / nt),
                      buf.begin() + static_cast<std::ptrdiff_t>(n * (t + 1) / nt), 1.0f + t);
    });
    m.read_bytes = n * sizeof(float);
    double best_s = 0;
    for (int rep = 0; rep < p.repetitions; ++rep) {
        std::vector<float> sums(static_cast<std::size_t>(nt));
        const auto t0 = Clock::now();
        pool.parallel_for(nt, [&](int b, int e, int) {
            for (int t = b; t < e; ++t) {
                const std::size_t i0 = n * t / nt, i1 = n * (t + 1) / nt;
                sums[static_cast<std::size_t>(t)] = sum_floats(buf.data() + i0, i1 - i0);
            }
        });
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        sink.store(sums[0]);
        if (rep == 0 || s < best_s) best_s = s;
    }
    m.read_bytes_per_s = static_cast<double>(m.read_bytes) / best_s;

    // Peak FLOP/s: the same FMA chains on every thread at once.
    const Simd simd = best_simd();
    m.simd = simd_name(simd);
    const long iters = simd == Simd::scalar ? 4'000'000 : 2'000'000;
    double best_flops = 0;
    for (int rep = 0; rep < p.repetitions; ++rep) {
        // Each thread's rate over its own CPU time, summed: what the cores
        // do while they run, even if the scheduler lends one to another
        // process for a moment (wall time would halve the roof then).
        std::vector<double> rate(static_cast<std::size_t>(nt));
        pool.parallel_for(nt, [&](int b, int e, int) {
            for (int t = b; t < e; ++t) {
                double flops = 0;
                const double c0 = thread_cpu_seconds();
                sink.store(fma_chains(simd, iters, flops));
                rate[static_cast<std::size_t>(t)] = flops / (thread_cpu_seconds() - c0);
            }
        });
        double total = 0;
        for (double r : rate) total += r;
        best_flops = std::max(best_flops, total);
    }
    m.flops_per_s = best_flops;
    m.method = fmt::format(
        "read bandwidth: {} thread{} summing a {:.0f} MiB float buffer (64 partial sums each), best of {}; peak "
        "FLOP/s: {} chains of {} fused multiply-adds per thread, no memory traffic, summed over the threads' own "
        "CPU time, best of {}",
        nt, nt == 1 ? "" : "s", static_cast<double>(m.read_bytes) / (1 << 20), p.repetitions, n_chains, m.simd,
        p.repetitions);
    return m;
}

}  // namespace sixstep::llm
