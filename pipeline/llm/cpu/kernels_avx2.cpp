// The CPU kernels for level "avx2", compiled with -mavx2 -mfma -mf16c (see pipeline/CMakeLists.txt).
// The algorithms are in kernels_simd.inc; this file only names the level.
#define SIXSTEP_SIMD_LEVEL 1

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <immintrin.h>
#include <type_traits>

#include "pipeline/llm/cpu/kernels_simd.h"

namespace sixstep::llm::simd_avx2 {
#include "pipeline/llm/cpu/kernels_simd.inc"
}  // namespace sixstep::llm::simd_avx2

namespace sixstep::llm {
const SimdKernels& simd_kernels_avx2() { return simd_avx2::table; }
}  // namespace sixstep::llm
