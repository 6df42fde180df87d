#include "gpu/elementwise.h"

#include <algorithm>

#include "gpu/cuda_check.h"

namespace sixstep::gpu {

namespace {

constexpr int kThreads = 256;

int blocks_for(long long n) { return static_cast<int>(std::min<long long>((n + kThreads - 1) / kThreads, 65535)); }

__global__ void __launch_bounds__(kThreads) swiglu_kernel(float* gate, const float* __restrict__ up, long long n) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const float g = gate[i];
        gate[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

__global__ void __launch_bounds__(kThreads) add_kernel(float* y, const float* __restrict__ x, long long n) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<long long>(gridDim.x) * blockDim.x)
        y[i] += x[i];
}

}  // namespace

void swiglu(float* gate, const float* up, long long n, cudaStream_t stream) {
    if (n <= 0) return;
    swiglu_kernel<<<blocks_for(n), kThreads, 0, stream>>>(gate, up, n);
    CUDA_CHECK(cudaGetLastError());
}

void add(float* y, const float* x, long long n, cudaStream_t stream) {
    if (n <= 0) return;
    add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, x, n);
    CUDA_CHECK(cudaGetLastError());
}

}  // namespace sixstep::gpu
