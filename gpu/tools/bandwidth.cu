// sixstep-cuda-bandwidth: how fast this GPU's memory moves bytes — the
// bound that batch-1 decode is measured against, since decode reads every
// weight once per token.
//
//     sixstep-cuda-bandwidth [--mib 2048] [--reps 20] [--device 0]
// prints, one "key: value" per line:
//     device: NVIDIA H200
//     read_gb_s: …    a kernel reading the buffer once, 16 bytes per thread per load (the median run)
//     copy_gb_s: …    cudaMemcpy device to device, (read + write bytes) / time
// GB are 10^9 bytes, as GPU datasheets count them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

namespace {

#define CHECK(call)                                                                                       \
    do {                                                                                                  \
        const cudaError_t err_ = (call);                                                                  \
        if (err_ != cudaSuccess) {                                                                        \
            std::fprintf(stderr, "sixstep-cuda-bandwidth: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
                         cudaGetErrorString(err_));                                                       \
            std::exit(1);                                                                                 \
        }                                                                                                 \
    } while (0)

constexpr int kThreads = 256;

// Reads n uint4 with a grid-stride loop, four loads in flight per thread;
// the XOR of everything is written once per block so the loads cannot be
// optimized away.
__global__ void __launch_bounds__(kThreads) read_kernel(const uint4* __restrict__ p, long long n, unsigned int* sink) {
    unsigned int x = 0;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
        x ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n; i += stride) {
        const uint4 a = p[i];
        x ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (x == 0x9e3779b9u) sink[blockIdx.x] = x;  // practically never true; the compiler cannot know
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    long long mib = 2048;
    int reps = 20, device = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--mib")) mib = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--device")) device = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: sixstep-cuda-bandwidth [--mib N] [--reps N] [--device I]\n");
            return 2;
        }
    }
    if (mib <= 0 || reps <= 0) {
        std::fprintf(stderr, "sixstep-cuda-bandwidth: --mib and --reps must be positive\n");
        return 2;
    }
    CHECK(cudaSetDevice(device));
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, device));
    const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
    void *a = nullptr, *b = nullptr;
    unsigned int* sink = nullptr;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMemset(a, 1, bytes));
    int n_sm = 0;
    CHECK(cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, device));
    const int blocks = n_sm * 8;  // a few resident blocks per SM keep enough loads in flight
    CHECK(cudaMalloc(&sink, static_cast<std::size_t>(blocks) * sizeof(unsigned int)));
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));

    std::vector<double> read_s, copy_s;
    for (int r = 0; r <= reps; ++r) {  // run 0 warms up
        CHECK(cudaEventRecord(t0));
        read_kernel<<<blocks, kThreads>>>(static_cast<const uint4*>(a), static_cast<long long>(bytes / 16), sink);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(t1));
        CHECK(cudaEventSynchronize(t1));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, t0, t1));
        if (r > 0) read_s.push_back(ms / 1e3);

        CHECK(cudaEventRecord(t0));
        CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(t1));
        CHECK(cudaEventSynchronize(t1));
        CHECK(cudaEventElapsedTime(&ms, t0, t1));
        if (r > 0) copy_s.push_back(ms / 1e3);
    }
    std::printf("device: %s\n", prop.name);
    std::printf("memory_gib: %.1f\n", static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
    std::printf("buffer_mib: %lld\n", mib);
    std::printf("read_gb_s: %.1f\n", static_cast<double>(bytes) / median(read_s) / 1e9);
    std::printf("copy_gb_s: %.1f\n", 2.0 * static_cast<double>(bytes) / median(copy_s) / 1e9);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(sink));
    return 0;
}
