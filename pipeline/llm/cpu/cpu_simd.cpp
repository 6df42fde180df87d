#include "pipeline/llm/cpu/cpu_simd.h"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>

#include <fmt/format.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "pipeline/core/error.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/cpu/kernels_simd.h"

namespace sixstep::llm {

namespace {

const CpuSimd all_levels[] = {CpuSimd::scalar, CpuSimd::avx2, CpuSimd::avx512};

// What this CPU can run. __builtin_cpu_supports also checks that the OS
// saves the wide registers (XGETBV), so a feature the kernel disabled reads
// as absent.
bool cpu_has(CpuSimd level) {
#if defined(SIXSTEP_CPU_X86)
    __builtin_cpu_init();
    // F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports
    // does not know "f16c". AVX2 implies the OS saves the YMM registers F16C uses.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
    switch (level) {
        case CpuSimd::scalar: return true;
        case CpuSimd::avx2: return avx2;
        case CpuSimd::avx512:
            return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512vnni");
    }
    return false;
#else
    return level == CpuSimd::scalar;
#endif
}

const SimdKernels& table_of(CpuSimd level) {
#if defined(SIXSTEP_CPU_X86)
    if (level == CpuSimd::avx512) return simd_kernels_avx512();
    if (level == CpuSimd::avx2) return simd_kernels_avx2();
#endif
    return simd_kernels_scalar();
}

std::string supported_names() {
    std::string s;
    for (CpuSimd l : cpu_simd_levels()) s += (s.empty() ? "" : ", ") + std::string(cpu_simd_name(l));
    return s;
}

// The first choice: SIXSTEP_CPU if set, else the best level.
const SimdKernels* initial_table() {
    if (const char* env = std::getenv("SIXSTEP_CPU"); env && *env) {
        const auto level = cpu_simd_from_name(env);
        if (!level)
            throw Error(fmt::format("SIXSTEP_CPU=\"{}\" is not a CPU level (use scalar, avx2 or avx512)", elide(env, 40)));
        if (!cpu_simd_supported(*level))
            throw Error(fmt::format("SIXSTEP_CPU={}: this CPU cannot run it (it supports {})", env, supported_names()));
        return &table_of(*level);
    }
    return &table_of(cpu_simd_levels().back());
}

std::atomic<const SimdKernels*> current{nullptr};

}  // namespace

const char* cpu_simd_name(CpuSimd level) {
    switch (level) {
        case CpuSimd::scalar: return "scalar";
        case CpuSimd::avx2: return "avx2";
        case CpuSimd::avx512: return "avx512";
    }
    return "?";
}

std::optional<CpuSimd> cpu_simd_from_name(std::string_view name) {
    for (CpuSimd l : all_levels)
        if (name == cpu_simd_name(l)) return l;
    return std::nullopt;
}

bool cpu_simd_supported(CpuSimd level) {
#if !defined(SIXSTEP_CPU_X86)
    if (level != CpuSimd::scalar) return false;  // compiled in on x86 only
#endif
    return cpu_has(level);
}

std::vector<CpuSimd> cpu_simd_levels() {
    std::vector<CpuSimd> v;
    for (CpuSimd l : all_levels)
        if (cpu_simd_supported(l)) v.push_back(l);
    return v;
}

const SimdKernels& simd_kernels() {
    const SimdKernels* t = current.load(std::memory_order_acquire);
    if (!t) {
        // Two threads may both get here first: they compute the same table.
        t = initial_table();
        current.store(t, std::memory_order_release);
    }
    return *t;
}

CpuSimd cpu_simd() { return simd_kernels().level; }
const char* cpu_simd_name() { return cpu_simd_name(cpu_simd()); }

void set_cpu_simd(CpuSimd level) {
    if (!cpu_simd_supported(level))
        throw Error(fmt::format("CPU level {} is not available here (this CPU supports {})", cpu_simd_name(level),
                                supported_names()));
    current.store(&table_of(level), std::memory_order_release);
}

std::size_t cpu_l2_cache_bytes() {
    static const std::size_t bytes = [] {
        for (int i = 0; i < 8; ++i) {
            const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
            std::ifstream level(dir + "level"), type(dir + "type"), size(dir + "size");
            int l = 0;
            std::string t, sz;
            if (!(level >> l) || !(type >> t) || !(size >> sz)) continue;
            if (l != 2 || t == "Instruction") continue;
            try {
                std::size_t pos = 0;
                const unsigned long long v = std::stoull(sz, &pos);
                const char unit = pos < sz.size() ? sz[pos] : ' ';
                return static_cast<std::size_t>(v) * (unit == 'K' ? 1024u : unit == 'M' ? 1024u * 1024u : 1u);
            } catch (const std::exception&) {
                return std::size_t{0};
            }
        }
        return std::size_t{0};
    }();
    return bytes;
}

}  // namespace sixstep::llm
