// Sums and maxima across a warp and across a thread block, for the kernels
// that reduce a row (norm.cu, attention.cu, matmul.cu). Device code only.
//
// block_sum / block_max must be called by every thread of the block (they
// contain __syncthreads) and return the same value to all of them; `shared`
// is 32 floats of __shared__ memory, reusable right after the call returns.
#pragma once
#include <cuda_runtime.h>

namespace sixstep::gpu {

inline constexpr int kWarpSize = 32;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = kWarpSize / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = kWarpSize / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// blockDim.x must be a multiple of 32 (every kernel here launches 128 or 256).
template <bool kMax>
__device__ __forceinline__ float block_reduce(float v, float* shared) {
    const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
    const int n_warps = blockDim.x / kWarpSize;
    v = kMax ? warp_max(v) : warp_sum(v);
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float w = lane < n_warps ? shared[lane] : (kMax ? -INFINITY : 0.0f);
        w = kMax ? warp_max(w) : warp_sum(w);
        if (lane == 0) shared[0] = w;
    }
    __syncthreads();
    const float r = shared[0];
    __syncthreads();  // everyone has read shared[0] before the next call writes it
    return r;
}

__device__ __forceinline__ float block_sum(float v, float* shared) { return block_reduce<false>(v, shared); }
__device__ __forceinline__ float block_max(float v, float* shared) { return block_reduce<true>(v, shared); }

}  // namespace sixstep::gpu
