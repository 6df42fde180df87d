// The CPU kernels for level "avx512", compiled with -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni (see pipeline/CMakeLists.txt).
// The algorithms are in kernels_simd.inc; this file only names the level.
#define SIXSTEP_SIMD_LEVEL 2

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <immintrin.h>
#include <type_traits>

#include "pipeline/llm/cpu/kernels_simd.h"

namespace sixstep::llm::simd_avx512 {
#include "pipeline/llm/cpu/kernels_simd.inc"
}  // namespace sixstep::llm::simd_avx512

namespace sixstep::llm {
const SimdKernels& simd_kernels_avx512() { return simd_avx512::table; }
}  // namespace sixstep::llm
