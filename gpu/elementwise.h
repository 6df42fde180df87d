// Element-wise operations of the forward pass on the device, with the CPU's
// formulas (pipeline/llm/cpu/kernels.h).
#pragma once
#include <cuda_runtime.h>

namespace sixstep::gpu {

// gate = silu(gate) · up, silu(g) = g / (1 + e^−g)   (SwiGLU)   n elements
void swiglu(float* gate, const float* up, long long n, cudaStream_t stream);
// y += x   (the residual connection)   n elements
void add(float* y, const float* x, long long n, cudaStream_t stream);

}  // namespace sixstep::gpu
