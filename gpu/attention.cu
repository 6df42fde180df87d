// Attention kernels: see attention.h.
//
// One thread block per (token, head), 256 threads. The context is walked in
// tiles of 256 positions:
//   1. each thread scores one position: s = q · k / sqrt(head_dim), reading
//      its key row through the block table (q sits in shared memory);
//   2. the tile's maximum and the sum of exp(s − max) come from block
//      reductions; a running maximum m and sum l carry over between tiles,
//      rescaled by exp(m_old − m_new) — the online softmax, so the kernel
//      needs no memory proportional to the context;
//   3. the threads, as groups of head_dim, each own one output dimension and
//      accumulate the tile's weighted values; reading V is coalesced along
//      the head, through row pointers step 1 kept in shared memory.
// At the end the groups' partial sums are added and divided by l. When the
// softmax weights are observed (kq_soft_max), step 1 also stores the raw
// score and the last step turns it into exp(s − m) / l — the same thread
// wrote it, so no extra barrier is needed.
#include "gpu/attention.h"

#include "gpu/cuda_check.h"
#include "gpu/reduce.cuh"

namespace sixstep::gpu {

namespace {

constexpr int kAttnThreads = 256;  // also the positions per tile
constexpr int kStoreThreads = 128;

__device__ __forceinline__ const float* kv_row(const KvLayerView& kv, const int* table, int p, int which) {
    const float* block = kv.blocks[table[p / kv.block_size]];
    return block + (static_cast<std::size_t>(kv.layer) * 2 + which) * kv.block_size * kv.kv_dim +
           static_cast<std::size_t>(p % kv.block_size) * kv.kv_dim;
}

// One block per token.
__global__ void __launch_bounds__(kStoreThreads) kv_store_kernel(const float* __restrict__ k,
                                                                   const float* __restrict__ v,
                                                                   const int* slot_block, const int* pos,
                                                                   KvLayerView kv) {
    const int i = blockIdx.x;
    const int b = slot_block[i];
    if (b < 0) return;
    const std::size_t layer_base = static_cast<std::size_t>(kv.layer) * 2 * kv.block_size * kv.kv_dim;
    float* dst_k = kv.blocks[b] + layer_base + static_cast<std::size_t>(pos[i] % kv.block_size) * kv.kv_dim;
    float* dst_v = dst_k + static_cast<std::size_t>(kv.block_size) * kv.kv_dim;
    const float* src_k = k + static_cast<std::size_t>(i) * kv.kv_dim;
    const float* src_v = v + static_cast<std::size_t>(i) * kv.kv_dim;
    for (int j = threadIdx.x; j < kv.kv_dim; j += blockDim.x) {
        dst_k[j] = src_k[j];
        dst_v[j] = src_v[j];
    }
}

__global__ void __launch_bounds__(kAttnThreads) attention_kernel(AttentionArgs a, KvLayerView kv) {
    __shared__ float q_s[kAttentionMaxHeadDim];
    __shared__ float w_s[kAttnThreads];    // the tile's exp(s − m)
    __shared__ const float* v_s[kAttnThreads];  // the tile's value rows (this layer, head g)
    __shared__ float acc_s[kAttnThreads];  // partial outputs of the groups
    __shared__ float red[kWarpSize];

    const int i = blockIdx.x / a.n_head, h = blockIdx.x % a.n_head;
    const int tid = threadIdx.x;
    const int hd = a.head_dim;
    const int g = h / (a.n_head / a.n_head_kv);  // the K/V head this query head reads
    const int n_ctx = a.pos[i] + 1;
    const int* table = a.tables + a.table_off[i];
    float* kq_row = a.kq ? a.kq + (static_cast<std::size_t>(i) * a.n_head + h) * a.kq_stride : nullptr;

    const float* qi = a.q + (static_cast<std::size_t>(i) * a.n_head + h) * hd;
    for (int d = tid; d < hd; d += blockDim.x) q_s[d] = qi[d];
    __syncthreads();

    // Value accumulation: n_grp groups of hd threads; thread (grp, d).
    const int n_grp = kAttnThreads / hd;
    const int grp = tid / hd, d = tid % hd;
    const bool accumulates = grp < n_grp;

    float m = -INFINITY;  // running maximum score
    float l = 0.0f;       // running Σ exp(s − m)
    float acc = 0.0f;     // running Σ exp(s − m) · v[d] over this group's positions
    for (int p0 = 0; p0 < n_ctx; p0 += kAttnThreads) {
        const int n_t = min(kAttnThreads, n_ctx - p0);
        // 1. Scores.
        float s = -INFINITY;
        if (tid < n_t) {
            const float* k = kv_row(kv, table, p0 + tid, 0) + g * hd;
            // The value row sits block_size rows after the key row, in the same block.
            v_s[tid] = k + static_cast<std::size_t>(kv.block_size) * kv.kv_dim;
            float dot = 0.0f;
            if (hd % 4 == 0) {
                for (int e = 0; e < hd; e += 4) {
                    const float4 k4 = *reinterpret_cast<const float4*>(k + e);
                    dot = fmaf(q_s[e], k4.x, dot);
                    dot = fmaf(q_s[e + 1], k4.y, dot);
                    dot = fmaf(q_s[e + 2], k4.z, dot);
                    dot = fmaf(q_s[e + 3], k4.w, dot);
                }
            } else {
                for (int e = 0; e < hd; ++e) dot = fmaf(q_s[e], k[e], dot);
            }
            s = dot * a.scale;
            if (kq_row) kq_row[p0 + tid] = s;
        }
        // 2. Online softmax.
        const float m_new = fmaxf(m, block_max(s, red));
        const float correction = expf(m - m_new);  // 0 on the first tile (m = −inf)
        const float e = tid < n_t ? expf(s - m_new) : 0.0f;
        w_s[tid] = e;
        l = l * correction + block_sum(e, red);  // its barriers also publish w_s and v_s
        m = m_new;
        // 3. Weighted values: four positions' loads issued before the first
        // is used (each is one read through a pointer step 1 left in shared
        // memory, not the three dependent reads of the block table).
        if (accumulates) {
            acc *= correction;
            int pp = grp;
            for (; pp + 3 * n_grp < n_t; pp += 4 * n_grp) {
                const float v0 = v_s[pp][d], v1 = v_s[pp + n_grp][d];
                const float v2 = v_s[pp + 2 * n_grp][d], v3 = v_s[pp + 3 * n_grp][d];
                acc = fmaf(w_s[pp], v0, acc);
                acc = fmaf(w_s[pp + n_grp], v1, acc);
                acc = fmaf(w_s[pp + 2 * n_grp], v2, acc);
                acc = fmaf(w_s[pp + 3 * n_grp], v3, acc);
            }
            for (; pp < n_t; pp += n_grp) acc = fmaf(w_s[pp], v_s[pp][d], acc);
        }
        __syncthreads();  // w_s is rewritten by the next tile
    }

    acc_s[tid] = accumulates ? acc : 0.0f;
    __syncthreads();
    if (tid < hd) {
        float o = 0.0f;
        for (int j = 0; j < n_grp; ++j) o += acc_s[j * hd + tid];
        a.out[(static_cast<std::size_t>(i) * a.n_head + h) * hd + tid] = o / l;
    }
    if (kq_row)
        for (int p = tid; p < n_ctx; p += blockDim.x) kq_row[p] = expf(kq_row[p] - m) / l;
}

}  // namespace

void kv_store(const float* k, const float* v, const int* slot_block, const int* pos, int n_tokens,
              const KvLayerView& kv, cudaStream_t stream) {
    if (n_tokens <= 0) return;
    kv_store_kernel<<<n_tokens, kStoreThreads, 0, stream>>>(k, v, slot_block, pos, kv);
    CUDA_CHECK(cudaGetLastError());
}

void attention(const AttentionArgs& args, const KvLayerView& kv, cudaStream_t stream) {
    if (args.n_tokens <= 0) return;
    attention_kernel<<<args.n_tokens * args.n_head, kAttnThreads, 0, stream>>>(args, kv);
    CUDA_CHECK(cudaGetLastError());
}

}  // namespace sixstep::gpu
