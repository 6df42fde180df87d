// Which SIMD kernels the CPU backend runs, chosen at run time.
//
// One binary carries the kernels three times, each compiled for its own
// instruction set (kernels_scalar.cpp, kernels_avx2.cpp, kernels_avx512.cpp,
// see kernels_simd.h). At the first use the best level this CPU supports is
// picked; the environment variable SIXSTEP_CPU=scalar|avx2|avx512 or
// set_cpu_simd() forces another (tests run every level the machine has, and
// a benchmark can measure the AVX2 path on an AVX-512 machine).
//
//     set_cpu_simd(CpuSimd::avx2);      // throws sixstep::Error if this CPU lacks AVX2
//     cpu_simd_name();                  // "avx2"
//
//   level    instructions                                  a typical CPU
//   scalar   x86-64 baseline (SSE2) or any other CPU       anything
//   avx2     AVX2 + FMA + F16C                              Haswell (2013)+, Zen 1+
//   avx512   AVX-512 F/BW/DQ/VL + VNNI, and the above       Ice Lake, Sapphire Rapids, Zen 4+
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace sixstep::llm {

enum class CpuSimd { scalar, avx2, avx512 };

const char* cpu_simd_name(CpuSimd level);
std::optional<CpuSimd> cpu_simd_from_name(std::string_view name);

// Compiled into this binary and supported by this CPU (and its OS).
bool cpu_simd_supported(CpuSimd level);
// Every supported level, scalar first.
std::vector<CpuSimd> cpu_simd_levels();

// The level the kernels use now. The first call picks it: SIXSTEP_CPU if
// set, else the best supported level. Throws sixstep::Error when SIXSTEP_CPU
// names an unknown or unsupported level.
CpuSimd cpu_simd();
const char* cpu_simd_name();

// Forces a level. Throws sixstep::Error if it is not supported. Call it
// between forward passes, not during one.
void set_cpu_simd(CpuSimd level);

// The L2 cache of one core in bytes, from Linux's sysfs (cpu0); 0 where it
// cannot be read. The matmul reads a model small enough to stay there
// differently (matmul.h).
std::size_t cpu_l2_cache_bytes();

// Forces a level for a scope, then restores the one before (tests, benchmarks).
//     for (CpuSimd level : cpu_simd_levels()) { ScopedCpuSimd use(level); ... }
class ScopedCpuSimd {
public:
    explicit ScopedCpuSimd(CpuSimd level) : saved_(cpu_simd()) { set_cpu_simd(level); }
    ~ScopedCpuSimd() { set_cpu_simd(saved_); }
    ScopedCpuSimd(const ScopedCpuSimd&) = delete;
    ScopedCpuSimd& operator=(const ScopedCpuSimd&) = delete;

private:
    CpuSimd saved_;
};

}  // namespace sixstep::llm
