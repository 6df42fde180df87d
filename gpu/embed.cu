#include "gpu/embed.h"

#include "gpu/cuda_check.h"
#include "gpu/dequant.cuh"

namespace sixstep::gpu {

namespace {

constexpr int kEmbedThreads = 256;

// One block per token.
__global__ void __launch_bounds__(kEmbedThreads) embed_kernel(DeviceMatrix table, const int* tokens, float* x) {
    const int i = blockIdx.x;
    const int token = tokens[i];
    float* row = x + static_cast<std::size_t>(i) * table.n_cols;
    for (int c = threadIdx.x; c < table.n_cols; c += blockDim.x) row[c] = weight_at(table, token, c);
}

}  // namespace

void embed_rows(const DeviceMatrix& table, const int* tokens, int n_tokens, float* x, cudaStream_t stream) {
    if (n_tokens <= 0) return;
    embed_kernel<<<n_tokens, kEmbedThreads, 0, stream>>>(table, tokens, x);
    CUDA_CHECK(cudaGetLastError());
}

}  // namespace sixstep::gpu
