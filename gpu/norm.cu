#include "gpu/norm.h"

#include "gpu/cuda_check.h"
#include "gpu/reduce.cuh"

namespace sixstep::gpu {

namespace {

constexpr int kNormThreads = 256;

// One block per output row.
__global__ void __launch_bounds__(kNormThreads)
    rmsnorm_kernel(const float* __restrict__ x, const int* rows, int n, const float* __restrict__ w, float eps,
                   float* __restrict__ y) {
    __shared__ float shared[kWarpSize];
    const int r = blockIdx.x;
    const float* xr = x + static_cast<std::size_t>(rows ? rows[r] : r) * n;
    float* yr = y + static_cast<std::size_t>(r) * n;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) ss = fmaf(xr[i], xr[i], ss);
    ss = block_sum(ss, shared);
    // The scale in double, as the CPU computes it: one value per row, free.
    const float scale = static_cast<float>(1.0 / sqrt(static_cast<double>(ss) / n + static_cast<double>(eps)));
    for (int i = threadIdx.x; i < n; i += blockDim.x) yr[i] = xr[i] * scale * w[i];
}

}  // namespace

void rmsnorm(const float* x, const int* rows, int n_rows, int n, const float* w, float eps, float* y,
             cudaStream_t stream) {
    if (n_rows <= 0) return;
    rmsnorm_kernel<<<n_rows, kNormThreads, 0, stream>>>(x, rows, n, w, eps, y);
    CUDA_CHECK(cudaGetLastError());
}

}  // namespace sixstep::gpu
