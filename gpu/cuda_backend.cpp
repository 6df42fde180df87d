#include "gpu/cuda_backend.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "gpu/attention.h"
#include "gpu/device_buffer.h"
#include "gpu/elementwise.h"
#include "gpu/embed.h"
#include "gpu/kv_storage_cuda.h"
#include "gpu/matmul.h"
#include "gpu/norm.h"
#include "gpu/rope.h"
#include "pipeline/core/error.h"

namespace sixstep::llm {

// The two functions the engine's make_backend (pipeline/llm/backend.cpp)
// declares when this library is built.
std::optional<std::string> cuda_unavailable() { return gpu::device_unavailable(); }

std::unique_ptr<Backend> make_cuda_backend(std::shared_ptr<const LlamaModel> model, const BackendParams& params) {
    return std::make_unique<gpu::CudaBackend>(std::move(model), params);
}

}  // namespace sixstep::llm

namespace sixstep::gpu {

using namespace sixstep::llm;

namespace {

// Dequantized rows for one GEMM step: 16 M floats (64 MiB) at most, so a
// large output head is done in a few tiles rather than held whole.
constexpr std::size_t kTileBudgetFloats = std::size_t{16} << 20;

// Offers a device tensor to the observer: copied to the host only when the
// observer said yes (wants() is asked once per tensor per pass).
struct Offer {
    TensorObserver* obs;
    cudaStream_t stream;
    std::vector<float>& host;

    bool wants(const char* name, int layer) const { return obs && obs->wants(name, layer); }
    void send(const char* name, int layer, const float* dev, std::initializer_list<std::int64_t> shape) const {
        std::int64_t dims[4] = {1, 1, 1, 1};
        std::size_t count = 1, nd = 0;
        for (std::int64_t d : shape) {
            dims[nd++] = d;
            count *= static_cast<std::size_t>(d);
        }
        host.resize(count);
        if (count)
            CUDA_CHECK(cudaMemcpyAsync(host.data(), dev, count * sizeof(float), cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        obs->tensor(TensorView{name, layer, {host.data(), count}, {dims, nd}});
    }
    void operator()(const char* name, int layer, const float* dev, std::initializer_list<std::int64_t> shape) const {
        if (wants(name, layer)) send(name, layer, dev, shape);
    }
};

}  // namespace

struct CudaBackend::Scratch {
    DeviceBuffer<float> x;        // (n, n_embd) residual stream
    DeviceBuffer<float> xb;       // (n, n_embd) normalized input of a sub-block
    DeviceBuffer<float> q;        // (n, n_head, head_dim)
    DeviceBuffer<float> k, v;     // (n, n_head_kv, head_dim)
    DeviceBuffer<float> attn;     // (n, n_head, head_dim) attention output (kqv_out)
    DeviceBuffer<float> proj;     // (n, n_embd) ffn_down output, when observed
    DeviceBuffer<float> gate, up;  // (n, n_ff)
    DeviceBuffer<float> rope_cs;  // (n, n_rot) cos, sin per token and pair
    DeviceBuffer<float> xo;       // (n_outputs, n_embd) rows that produce logits
    DeviceBuffer<float> logits;   // (n_outputs, n_vocab)
    DeviceBuffer<float> kq;       // (n, n_head, n_kv) only when observed
    DeviceBuffer<float> tile;     // dequantized weight rows for GEMMs
    DeviceBuffer<int> meta;       // the batch, see forward()
    PinnedBuffer<int> meta_host;  // its staging copy
    std::vector<int> meta_build;  // built here first
    std::vector<float> host;      // observed tensors
};

CudaBackend::CudaBackend(std::shared_ptr<const LlamaModel> model, const BackendParams& params)
    : model_(std::move(model)), s_(std::make_unique<Scratch>()) {
    const LlamaHparams& hp = model_->hparams();
    if (hp.head_dim() > kAttentionMaxHeadDim)
        throw Error(fmt::format("cuda backend: head_dim {} is larger than the attention kernel's {}", hp.head_dim(),
                                kAttentionMaxHeadDim));
    use_graphs_ = cuda_graphs_from_environment();
    device_ = std::make_shared<const CudaDevice>(params.device);
    weights_ = DeviceWeights::get(*model_, *device_);
}

CudaBackend::~CudaBackend() {
    // Scratch buffers and graphs free on their own device.
    static_cast<void>(cudaSetDevice(device_->index()));
    s_.reset();
    graphs_.clear();
}

std::string CudaBackend::name() const {
    return fmt::format("cuda ({}, {:.0f} GiB)", device_->name(),
                       static_cast<double>(device_->total_bytes()) / (1024.0 * 1024.0 * 1024.0));
}

std::unique_ptr<KvCache> CudaBackend::make_kv_cache(const KvCacheParams& params) const {
    // The pool as the block manager will size it (n_blocks <= 0: one full
    // context); bad parameters are left for KvCache to reject with the
    // messages every backend gives.
    int n_blocks = params.n_blocks;
    if (n_blocks <= 0)
        n_blocks = params.n_ctx > 0 && params.block_size > 0 ? (params.n_ctx + params.block_size - 1) / params.block_size
                                                             : 1;
    return std::make_unique<KvCache>(
        params, std::make_unique<CudaKvStorage>(device_, params.shape(), params.block_size, n_blocks));
}

void CudaBackend::forward(KvCache& kv, const Batch& batch, std::vector<float>& logits, TensorObserver* observer) {
    auto* storage = dynamic_cast<CudaKvStorage*>(&kv.storage());
    if (!storage)
        throw Error(fmt::format("cuda backend: the KV cache lives in {} memory; make it with the backend's "
                                "make_kv_cache",
                                kv.storage().kind()));
    if (storage->device().index() != device_->index())
        throw Error(fmt::format("cuda backend: the KV cache lives on CUDA device {}, the backend on device {}",
                                storage->device().index(), device_->index()));
    const LlamaHparams& hp = model_->hparams();
    const int n_outputs = prepare_batch(hp.n_vocab, kv, batch, observer);
    device_->make_current();
    // A cache made by another backend queues its block allocations and
    // copies on that backend's stream: let them land before this one reads.
    if (&storage->device() != device_.get()) storage->device().synchronize();
    const cudaStream_t stream = device_->stream();
    const DeviceWeights& w = *weights_;
    Scratch& s = *s_;
    const int n = batch.size();
    const int n_embd = hp.n_embd, hd = hp.head_dim(), n_head = hp.n_head, n_head_kv = hp.n_head_kv;
    const int n_q = n_head * hd, n_embd_kv = hp.n_embd_kv(), n_ff = hp.n_ff, n_rot = hp.n_rot;
    const int bs = kv.params().block_size;
    const std::size_t N = static_cast<std::size_t>(n);
    const Offer offer{observer, stream, s.host};

    // The batch as the kernels read it, uploaded in one copy:
    //   token[n] pos[n] slot_block[n] table_off[n] out_rows[n_outputs] tables[…]
    // slot_block: the block that receives the token's K and V (-1 when a
    // later token of the batch writes the same position: the last one wins,
    // as on the CPU); tables: each sequence's block table, once.
    std::vector<int>& meta = s.meta_build;
    meta.assign(4 * N + static_cast<std::size_t>(n_outputs), 0);
    int* m_token = meta.data();
    int* m_pos = m_token + n;
    int* m_slot = m_pos + n;
    int* m_table_off = m_slot + n;
    int* m_out_rows = m_table_off + n;
    std::map<int, int> table_at;                    // seq → where its table starts in tables[]
    std::map<std::pair<int, int>, int> last_write;  // (seq, pos) → last token writing it
    int n_kv = 0;
    for (int i = 0, o = 0; i < n; ++i) {
        const int seq = batch.seq[i], pos = batch.pos[i];
        m_token[i] = batch.token[i];
        m_pos[i] = pos;
        last_write[{seq, pos}] = i;
        n_kv = std::max(n_kv, pos + 1);
        if (batch.logits[i]) m_out_rows[o++] = i;
    }
    const std::size_t tables_start = meta.size();
    for (int i = 0; i < n; ++i) {
        const int seq = batch.seq[i], pos = batch.pos[i];
        auto [it, fresh] = table_at.emplace(seq, static_cast<int>(meta.size() - tables_start));
        const std::vector<int>& table = kv.block_table(seq);
        if (fresh) meta.insert(meta.end(), table.begin(), table.end());  // may move meta's data: index, not pointer
        meta[3 * N + i] = it->second;
        meta[2 * N + i] = last_write[{seq, pos}] == i ? table[static_cast<std::size_t>(pos / bs)] : -1;
    }
    // Grown in powers of two: the block tables lengthen by one entry per
    // block_size tokens, and a buffer that moved would make the decode
    // graph be captured again.
    s.meta_host.ensure(std::bit_ceil(meta.size()));
    std::copy(meta.begin(), meta.end(), s.meta_host.data());
    s.meta.ensure(std::bit_ceil(meta.size()));
    CUDA_CHECK(cudaMemcpyAsync(s.meta.data(), s.meta_host.data(), meta.size() * sizeof(int), cudaMemcpyHostToDevice,
                               stream));
    const int* d_token = s.meta.data();
    const int* d_pos = d_token + n;
    const int* d_slot = d_pos + n;
    const int* d_table_off = d_slot + n;
    const int* d_out_rows = d_table_off + n;
    const int* d_tables = d_out_rows + n_outputs;

    s.x.ensure(N * n_embd);
    s.xb.ensure(N * n_embd);
    s.q.ensure(N * n_q);
    s.k.ensure(N * n_embd_kv);
    s.v.ensure(N * n_embd_kv);
    s.attn.ensure(N * n_q);
    s.gate.ensure(N * n_ff);
    s.up.ensure(N * n_ff);
    s.rope_cs.ensure(N * std::max(n_rot, 1));
    s.xo.ensure(static_cast<std::size_t>(std::max(n_outputs, 1)) * n_embd);
    s.logits.ensure(static_cast<std::size_t>(std::max(n_outputs, 1)) * hp.n_vocab);
    MatmulContext mm{stream, device_->cublas(), nullptr, 0};
    if ((n > kGemvMaxTokens || n_outputs > kGemvMaxTokens) && w.largest_quantized_floats() > 0) {
        s.tile.ensure(std::max<std::size_t>(w.widest_row(), std::min(w.largest_quantized_floats(), kTileBudgetFloats)));
        mm.tile = s.tile.data();
        mm.tile_floats = s.tile.size();
    }

    // The pass itself: every kernel queued on the stream, in order. Nothing
    // in it allocates or waits unless a tensor is observed.
    const auto pass = [&] {
        // Token embeddings → x (n, n_embd); RoPE angles per token (n, n_rot).
        embed_rows(w.token_embd, d_token, n, s.x.data(), stream);
        rope_angles(d_pos, n, n_rot, hp.rope_freq_base, s.rope_cs.data(), stream);

        AttentionArgs att;
        att.q = s.q.data();
        att.out = s.attn.data();
        att.pos = d_pos;
        att.table_off = d_table_off;
        att.tables = d_tables;
        att.n_tokens = n;
        att.n_head = n_head;
        att.n_head_kv = n_head_kv;
        att.head_dim = hd;
        att.scale = 1.0f / std::sqrt(static_cast<float>(hd));
        KvLayerView kvl{storage->block_pointers(), bs, n_embd_kv, 0};

        for (int l = 0; l < hp.n_layer; ++l) {
            const DeviceLayer& L = w.layers[static_cast<std::size_t>(l)];
            kvl.layer = l;

            // Attention RMSNorm.                                           (n, n_embd)
            rmsnorm(s.x.data(), nullptr, n, n_embd, L.attn_norm, hp.f_norm_rms_eps, s.xb.data(), stream);
            offer("attn_norm", l, s.xb.data(), {n, n_embd});

            // Q, K, V projections; RoPE; K and V into the cache.          (n, n_head|n_head_kv, head_dim)
            {
                const DeviceMatrix ws[3] = {L.wq, L.wk, L.wv};
                float* const ys[3] = {s.q.data(), s.k.data(), s.v.data()};
                matmul_many(ws, ys, 3, s.xb.data(), n, mm);
            }
            rope_apply(s.q.data(), n_head, s.k.data(), n_head_kv, hd, n_rot, s.rope_cs.data(), n, stream);
            kv_store(s.k.data(), s.v.data(), d_slot, d_pos, n, kvl, stream);
            offer("Qcur", l, s.q.data(), {n, n_head, hd});
            offer("Kcur", l, s.k.data(), {n, n_head_kv, hd});
            offer("Vcur", l, s.v.data(), {n, n_head_kv, hd});

            // Attention over the paged cache.                              (n, n_head, head_dim)
            const bool want_kq = offer.wants("kq_soft_max", l);
            att.kq = nullptr;
            if (want_kq) {
                s.kq.ensure(N * n_head * n_kv);
                CUDA_CHECK(cudaMemsetAsync(s.kq.data(), 0, N * n_head * n_kv * sizeof(float), stream));
                att.kq = s.kq.data();
                att.kq_stride = n_kv;
            }
            attention(att, kvl, stream);
            if (want_kq) offer.send("kq_soft_max", l, s.kq.data(), {n, n_head, n_kv});
            offer("kqv_out", l, s.attn.data(), {n, n_head, hd});

            // Output projection added straight onto the residual stream.   (n, n_embd)
            matmul(L.wo, s.attn.data(), n, s.x.data(), true, mm);
            offer("ffn_inp", l, s.x.data(), {n, n_embd});

            // Feed-forward RMSNorm.                                        (n, n_embd)
            rmsnorm(s.x.data(), nullptr, n, n_embd, L.ffn_norm, hp.f_norm_rms_eps, s.xb.data(), stream);
            offer("ffn_norm", l, s.xb.data(), {n, n_embd});

            // SwiGLU: down(silu(gate) · up).                               (n, n_ff) → (n, n_embd)
            {
                const DeviceMatrix ws[2] = {L.ffn_gate, L.ffn_up};
                float* const ys[2] = {s.gate.data(), s.up.data()};
                matmul_many(ws, ys, 2, s.xb.data(), n, mm);
            }
            swiglu(s.gate.data(), s.up.data(), static_cast<long long>(N) * n_ff, stream);
            if (offer.wants("ffn_out", l)) {
                // Observed: the projection on its own first, then the residual.
                s.proj.ensure(N * n_embd);
                matmul(L.ffn_down, s.gate.data(), n, s.proj.data(), false, mm);
                offer.send("ffn_out", l, s.proj.data(), {n, n_embd});
                add(s.x.data(), s.proj.data(), static_cast<long long>(N) * n_embd, stream);
            } else {
                matmul(L.ffn_down, s.gate.data(), n, s.x.data(), true, mm);
            }
            offer("l_out", l, s.x.data(), {n, n_embd});
        }

        // Final RMSNorm of the rows that want logits, then the output head.
        rmsnorm(s.x.data(), d_out_rows, n_outputs, n_embd, w.output_norm, hp.f_norm_rms_eps, s.xo.data(), stream);
        offer("result_norm", -1, s.xo.data(), {n_outputs, n_embd});
        matmul(w.output, s.xo.data(), n_outputs, s.logits.data(), false, mm);
    };
    // Decode-sized passes nobody watches run as a replayed graph. Its key is
    // everything the kernels' launch arguments hold; what changes per step is
    // in s.meta (uploaded above), the KV blocks and the weights.
    if (use_graphs_ && observer == nullptr && n <= kGemvMaxTokens && n_outputs <= kGemvMaxTokens) {
        const auto word = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
        GraphCache::Key key{n, n_outputs,
                            {word(s.meta.data()), word(s.x.data()), word(s.xb.data()), word(s.q.data()),
                             word(s.k.data()), word(s.v.data()), word(s.attn.data()), word(s.gate.data()),
                             word(s.up.data()), word(s.rope_cs.data()), word(s.xo.data()), word(s.logits.data()),
                             word(storage->block_pointers()), static_cast<std::uintptr_t>(bs)}};
        graphs_.run(key, stream, pass);
    } else {
        pass();
    }
    logits.resize(static_cast<std::size_t>(n_outputs) * hp.n_vocab);
    if (!logits.empty())
        CUDA_CHECK(cudaMemcpyAsync(logits.data(), s.logits.data(), logits.size() * sizeof(float),
                                   cudaMemcpyDeviceToHost, stream));
    // Also where an error inside any kernel of this pass would surface.
    device_->synchronize();
    if (offer.wants("result_output", -1)) {
        const std::int64_t dims[2] = {n_outputs, hp.n_vocab};
        observer->tensor(TensorView{"result_output", -1, {logits.data(), logits.size()}, {dims, 2}});
    }

    commit_batch(kv, batch, observer);
}

}  // namespace sixstep::gpu
