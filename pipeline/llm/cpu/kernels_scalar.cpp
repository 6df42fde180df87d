// The CPU kernels for level "scalar", compiled with no flags: the x86-64 baseline, or any other CPU.
// The algorithms are in kernels_simd.inc; this file only names the level.
#define SIXSTEP_SIMD_LEVEL 0

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>


#include "pipeline/llm/cpu/kernels_simd.h"

namespace sixstep::llm::simd_scalar {
#include "pipeline/llm/cpu/kernels_simd.inc"
}  // namespace sixstep::llm::simd_scalar

namespace sixstep::llm {
const SimdKernels& simd_kernels_scalar() { return simd_scalar::table; }
}  // namespace sixstep::llm
