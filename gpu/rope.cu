#include "gpu/rope.h"

#include <algorithm>

#include "gpu/cuda_check.h"
#include "gpu/reduce.cuh"

namespace sixstep::gpu {

namespace {

constexpr int kRopeThreads = 128;

// One thread per (token, pair).
__global__ void __launch_bounds__(kRopeThreads)
    rope_angles_kernel(const int* pos, int n_tokens, int n_rot, double freq_base, float* cs) {
    const int n_pairs = n_rot / 2;
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n_tokens * n_pairs) return;
    const int i = idx / n_pairs, j = 2 * (idx % n_pairs);
    const double theta = pos[i] * pow(freq_base, -static_cast<double>(j) / n_rot);
    float* out = cs + static_cast<std::size_t>(i) * n_rot + j;
    out[0] = static_cast<float>(cos(theta));
    out[1] = static_cast<float>(sin(theta));
}

// One block per (token, head): the q heads, then the k heads; its threads
// walk the head's pairs. (One block per token left a decode step's rotation
// to a single block: 6 µs a layer under ncu.)
__global__ void __launch_bounds__(kRopeThreads) rope_apply_kernel(float* q, int n_head, float* k, int n_head_kv,
                                                                   int head_dim, int n_rot, const float* cs) {
    const int n_heads = n_head + n_head_kv;
    const int i = blockIdx.x / n_heads, head = blockIdx.x % n_heads;
    const int n_pairs = n_rot / 2;
    const float* csi = cs + static_cast<std::size_t>(i) * n_rot;
    for (int pair = threadIdx.x; pair < n_pairs; pair += blockDim.x) {
        const int j = 2 * pair;
        float* v = head < n_head ? q + (static_cast<std::size_t>(i) * n_head + head) * head_dim + j
                                 : k + (static_cast<std::size_t>(i) * n_head_kv + (head - n_head)) * head_dim + j;
        const float c = csi[j], s = csi[j + 1];
        const float x0 = v[0], x1 = v[1];
        v[0] = x0 * c - x1 * s;
        v[1] = x0 * s + x1 * c;
    }
}

}  // namespace

void rope_angles(const int* pos, int n_tokens, int n_rot, float freq_base, float* cs, cudaStream_t stream) {
    const int items = n_tokens * (n_rot / 2);
    if (items <= 0) return;
    rope_angles_kernel<<<(items + kRopeThreads - 1) / kRopeThreads, kRopeThreads, 0, stream>>>(
        pos, n_tokens, n_rot, static_cast<double>(freq_base), cs);
    CUDA_CHECK(cudaGetLastError());
}

void rope_apply(float* q, int n_head, float* k, int n_head_kv, int head_dim, int n_rot, const float* cs,
                int n_tokens, cudaStream_t stream) {
    if (n_tokens <= 0 || n_rot <= 0) return;
    const int threads = std::clamp((n_rot / 2 + kWarpSize - 1) / kWarpSize * kWarpSize, kWarpSize, kRopeThreads);
    rope_apply_kernel<<<n_tokens * (n_head + n_head_kv), threads, 0, stream>>>(q, n_head, k, n_head_kv, head_dim,
                                                                               n_rot, cs);
    CUDA_CHECK(cudaGetLastError());
}

}  // namespace sixstep::gpu
