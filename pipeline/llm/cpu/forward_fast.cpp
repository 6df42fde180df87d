// The fast forward pass (see forward.h). Same arithmetic as
// forward_reference, reorganized for the machine:
// - the whole batch goes through each layer together, so every weight matrix
//   is streamed from memory once per layer per batch, not once per token;
// - matmuls are tiled, SIMD and threaded (matmul.cpp), quantized weights are
//   never dequantized as a whole;
// - attention is parallel over tokens (and chunks of heads) and walks the paged KV
//   cache block by block;
// - RoPE's cos/sin are computed once per token, not once per layer;
// - named intermediate tensors are offered to an observer only if it asks.
#include <algorithm>
#include <array>
#include <cmath>

#include "pipeline/core/aligned.h"
#include "pipeline/llm/cpu/cpu_simd.h"
#include "pipeline/llm/cpu/kernels.h"
#include "pipeline/llm/cpu/forward.h"
#include "pipeline/llm/cpu/matmul.h"
#include "pipeline/llm/cpu/thread_pool.h"

namespace sixstep::llm {

struct LlamaForwardCpu::Scratch {
    int n_alloc = 0;                      // tokens the buffers hold
    AlignedVector<float> x;               // (n, n_embd) residual stream
    AlignedVector<float> xb;              // (n, n_embd) normalized input of a sub-block
    AlignedVector<float> q;               // (n, n_head, head_dim)
    AlignedVector<float> k, v;            // (n, n_head_kv, head_dim)
    AlignedVector<float> attn;            // (n, n_head, head_dim) attention output (kqv_out)
    AlignedVector<float> proj;            // (n, n_embd) output of attn_output / ffn_down
    AlignedVector<float> gate, up;        // (n, n_ff)
    AlignedVector<float> rope_cs;         // (n, n_rot/2, 2) cos, sin per token
    AlignedVector<float> xo;              // (n_outputs, n_embd) rows that produce logits
    std::vector<AlignedVector<float>> att;  // per thread: (heads of one KV chunk, n_kv) scores
    AlignedVector<float> kq;              // (n, n_head, n_kv) only when observed
    MatmulScratch mm;
    ThreadPool::Steps steps;              // the pass, written before it runs
};

LlamaForwardCpu::LlamaForwardCpu(const LlamaModel& model, ThreadPool* pool)
    : model_(model), pool_(pool), s_(std::make_unique<Scratch>()) {
    model.prepare_for_cpu();  // the rows the matmuls read, on huge pages (made once per model)
    // The bytes a decode step reads (decode_weight_bytes): if they fill at
    // most three quarters of one core's L2, they stay there from token to
    // token (the rest holds activations and the KV cache), and the matmuls read them as cached (matmul.h). The
    // bundled draft's 1.2 MB do on a Xeon with 2 MiB of L2 per core (decode
    // on one thread 13,000 → 15,200 tok/s at AVX-512, 14,300 → 15,000–17,500
    // at AVX2); the target's 6.6 MB do not, and tiles slowed its one-thread
    // decode there (3,050 → 2,230 tok/s).
    //
    // Past streamed_bytes they come from memory at every token (matmul.h):
    // no L3 a core reaches on common CPUs holds more (AMD Zen 3 to 5: 32 MiB
    // per CCD; Intel client parts 12–36 MiB), and the machine cannot be asked
    // reliably: this 2-vCPU AMD Zen 5 has no cache sizes in sysfs, and CPUID
    // gives the host's 508 MiB of L3.
    constexpr std::uint64_t streamed_bytes = std::uint64_t{32} << 20;
    const std::uint64_t l2 = cpu_l2_cache_bytes(), bytes = decode_weight_bytes(model);
    home_ = l2 > 0 && bytes <= l2 * 3 / 4 ? WeightHome::l2
            : bytes > streamed_bytes      ? WeightHome::memory
                                          : WeightHome::cache;
}
LlamaForwardCpu::~LlamaForwardCpu() = default;

namespace {

// A tensor's shape, kept by value in the step that offers it.
struct Shape {
    std::array<std::int64_t, 4> dims{1, 1, 1, 1};
    std::size_t nd = 0;
    Shape(std::initializer_list<std::int64_t> shape) {
        for (auto d : shape) dims[nd++] = d;
    }
    std::size_t elements() const {
        std::size_t n = 1;
        for (std::size_t i = 0; i < nd; ++i) n *= static_cast<std::size_t>(dims[i]);
        return n;
    }
};

// The token of attention work item j: first, last, second, second to last,
// … so that contiguous shares of the items hold short and long contexts
// alike (in a prefill, token t attends to t + 1 positions).
int attention_token(int j, int n) { return j % 2 == 0 ? j / 2 : n - 1 - j / 2; }

}  // namespace

// The pass is written as a list of steps (ThreadPool::run) and then run:
// each step is a loop over tokens, rows or attention items, and any thread
// of the pool that finishes one starts the next, so a preempted thread —
// the caller included — does not hold the pass up beyond the chunk it has
// in hand. Every value a step needs is sized here, before any step runs.
void LlamaForwardCpu::forward(KvCache& kv, const Batch& batch, std::vector<float>& logits, TensorObserver* observer) {
    const LlamaHparams& hp = model_.hparams();
    // The pass is a burst of short loops: wake the pool's workers once, now,
    // while the batch is checked and the steps are written (thread_pool.h).
    if (pool_) pool_->wake();
    const int n_outputs = prepare_batch(hp.n_vocab, kv, batch, observer);
    HostKvStorage& cache = kv.host();
    const LlamaWeights& w = model_.weights();
    const int n = batch.size();
    const int n_embd = hp.n_embd, hd = hp.head_dim(), n_head = hp.n_head, n_head_kv = hp.n_head_kv;
    const int n_q = n_head * hd, n_embd_kv = hp.n_embd_kv(), n_ff = hp.n_ff, n_rot = hp.n_rot;
    const float eps = hp.f_norm_rms_eps;
    const int n_threads = pool_ ? pool_->n_threads() : 1;
    Scratch& s = *s_;
    const std::size_t N = static_cast<std::size_t>(n);

    if (s.n_alloc < n) {
        s.x.resize(N * n_embd);
        s.xb.resize(N * n_embd);
        s.q.resize(N * n_q);
        s.k.resize(N * n_embd_kv);
        s.v.resize(N * n_embd_kv);
        s.attn.resize(N * n_q);
        s.proj.resize(N * n_embd);
        s.gate.resize(N * n_ff);
        s.up.resize(N * n_ff);
        s.rope_cs.resize(N * n_rot);
        s.n_alloc = n;
    }
    // Row i of a (n, width) buffer.
    const auto row = [](AlignedVector<float>& buf, int i, int width) {
        return buf.data() + static_cast<std::size_t>(i) * width;
    };
    int n_kv = 0;  // positions attended to: the longest context of any token
    for (int i = 0; i < n; ++i) n_kv = std::max(n_kv, batch.pos[i] + 1);
    // Attention work items (see the attention below): each token's KV heads
    // in as few chunks as still give every thread work — one chunk for a
    // batch of many sequences, several for a single decoding sequence.
    const int n_gqa = hp.n_gqa();
    const int att_chunks_wanted = std::clamp((2 * n_threads + n - 1) / n, 1, n_head_kv);
    const int kv_per_chunk = (n_head_kv + att_chunks_wanted - 1) / att_chunks_wanted;
    const int att_chunks = (n_head_kv + kv_per_chunk - 1) / kv_per_chunk;
    s.att.resize(n_threads);
    for (auto& a : s.att) {
        const std::size_t need = static_cast<std::size_t>(kv_per_chunk) * n_gqa * n_kv;
        if (a.size() < need) a.resize(need);
    }
    const bool want_kq = observer && [&] {
        for (int l = 0; l < hp.n_layer; ++l)
            if (observer->wants("kq_soft_max", l)) return true;
        return false;
    }();
    if (want_kq) s.kq.assign(N * n_head * n_kv, 0.0f);
    s.xo.resize(static_cast<std::size_t>(n_outputs) * n_embd);
    logits.resize(static_cast<std::size_t>(n_outputs) * hp.n_vocab);

    ThreadPool::Steps& steps = s.steps;
    steps.clear();
    // A loop over [0, n) in chunks of whole grains.
    const auto step = [&](int count, int grain, ThreadPool::RangeFn fn) { steps.push_back({count, grain, std::move(fn)}); };
    const auto matmul_step = [&](std::initializer_list<const WeightMatrix*> ws, std::initializer_list<float*> ys,
                                 const float* x, int n_rows_in) {
        matmul_steps(steps, ws.begin(), ys.begin(), static_cast<int>(ws.size()), x, n_rows_in, n_threads, s.mm,
                     home_);
    };
    // Offers a tensor to the observer, if it wants it, as a step between the
    // one that wrote it and the next.
    const auto observe = [&](const char* name, int layer, const float* data, Shape shape) {
        if (observer == nullptr || !observer->wants(name, layer)) return;
        step(1, 1, [observer, name, layer, data, shape](int, int, int) {
            observer->tensor(TensorView{name, layer, {data, shape.elements()}, {shape.dims.data(), shape.nd}});
        });
    };

    // Token embeddings → x (n, n_embd); RoPE angles per token (n, n_rot/2, 2).
    step(n, 1, [&](int b, int e, int) {
        for (int i = b; i < e; ++i) {
            model_.embed(batch.token[i], row(s.x, i, n_embd));
            kernels::rope_angles(batch.pos[i], n_rot, hp.rope_freq_base, row(s.rope_cs, i, n_rot));
        }
    });

    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const int bs = kv.params().block_size;

    for (int l = 0; l < hp.n_layer; ++l) {
        const LlamaLayer& L = w.layers[l];

        // (The steps run after this loop, when L and l are gone: they take
        // l by value and find the layer's weights through it.)
        // Residual of the layer before (x += ffn_out), then the attention
        // RMSNorm: xb = rmsnorm(x) * attn_norm.                       (n, n_embd)
        step(n, 1, [&, l](int b, int e, int) {
            for (int i = b; i < e; ++i) {
                if (l > 0) kernels::add(row(s.x, i, n_embd), row(s.proj, i, n_embd), n_embd);
                kernels::rmsnorm(row(s.xb, i, n_embd), row(s.x, i, n_embd), w.layers[l].attn_norm.data(), n_embd, eps);
            }
        });
        if (l > 0) observe("l_out", l - 1, s.x.data(), {n, n_embd});
        observe("attn_norm", l, s.xb.data(), {n, n_embd});

        // Q, K, V projections.                                         (n, n_head|n_head_kv, head_dim)
        matmul_step({&L.wq, &L.wk, &L.wv}, {s.q.data(), s.k.data(), s.v.data()}, s.xb.data(), n);

        // RoPE on q and k, then store k and v in the cache at each token's
        // position. One chunk, in token order: a batch may write one position
        // twice (prepare_batch allows rewriting), and the last token wins.
        step(n, n, [&, l](int b, int e, int) {
            for (int i = b; i < e; ++i) {
                const float* cs = row(s.rope_cs, i, n_rot);
                kernels::rope_rotate(row(s.q, i, n_q), n_head, hd, n_rot, cs);
                kernels::rope_rotate(row(s.k, i, n_embd_kv), n_head_kv, hd, n_rot, cs);
                std::copy_n(row(s.k, i, n_embd_kv), n_embd_kv, kv.k(l, batch.seq[i], batch.pos[i]));
                std::copy_n(row(s.v, i, n_embd_kv), n_embd_kv, kv.v(l, batch.seq[i], batch.pos[i]));
            }
        });
        observe("Qcur", l, s.q.data(), {n, n_head, hd});
        observe("Kcur", l, s.k.data(), {n, n_head_kv, hd});
        observe("Vcur", l, s.v.data(), {n, n_head_kv, hd});

        // Grouped-query attention: softmax(q·kᵀ / sqrt(head_dim)) · v over
        // positions 0..pos of the token's sequence.                    (n, n_head, head_dim)
        // A work item is one token and a chunk of its KV heads: it walks the
        // cache once, block by block, and each cached K or V row gives the
        // chunk's heads their slices in one contiguous read (a row holds every
        // head side by side). Walking once per head instead re-read each row
        // n_head times, from memory once the sequences outgrow the caches
        // (110M F32, 2 threads, batch 32, context 512: 170–183 → 127–128 ms per step).
        const bool kq_here = want_kq && observer->wants("kq_soft_max", l);
        step(n * att_chunks, 1, [&, l, kq_here](int b, int e, int thread) {
            float* att = s.att[thread].data();
            for (int item = b; item < e; ++item) {
                const int i = attention_token(item / att_chunks, n);
                const int g0 = (item % att_chunks) * kv_per_chunk, g1 = std::min(n_head_kv, g0 + kv_per_chunk);
                const int h0 = g0 * n_gqa, nh = (g1 - g0) * n_gqa;
                const int n_ctx_i = batch.pos[i] + 1;
                const std::vector<int>& table = kv.block_table(batch.seq[i]);
                const float* qi = row(s.q, i, n_q);
                float* oi = row(s.attn, i, n_q);
                // Scores, (nh, n_ctx_i), block by block through the block table.
                // Each KV head g serves its n_gqa query heads in one call per block.
                for (int p0 = 0; p0 < n_ctx_i; p0 += bs) {
                    const float* kb = cache.k(table[p0 / bs], l);
                    const int np = std::min(n_ctx_i, p0 + bs) - p0;
                    for (int g = g0; g < g1; ++g)
                        kernels::attn_scores(qi + g * n_gqa * hd, n_gqa, hd, kb + g * hd, n_embd_kv, np, scale,
                                             att + static_cast<std::size_t>(g - g0) * n_gqa * n_ctx_i + p0, n_ctx_i);
                }
                for (int h = 0; h < nh; ++h) {
                    float* a = att + static_cast<std::size_t>(h) * n_ctx_i;
                    kernels::softmax_inplace(a, n_ctx_i);
                    if (kq_here)
                        std::copy_n(a, n_ctx_i, s.kq.data() + (static_cast<std::size_t>(i) * n_head + h0 + h) * n_kv);
                }
                // Weighted sum of the values.
                std::fill_n(oi + h0 * hd, nh * hd, 0.0f);
                for (int p0 = 0; p0 < n_ctx_i; p0 += bs) {
                    const float* vb = cache.v(table[p0 / bs], l);
                    const int np = std::min(n_ctx_i, p0 + bs) - p0;
                    for (int g = g0; g < g1; ++g)
                        kernels::attn_values(att + static_cast<std::size_t>(g - g0) * n_gqa * n_ctx_i + p0, n_ctx_i,
                                             n_gqa, vb + g * hd, n_embd_kv, np, hd, oi + g * n_gqa * hd);
                }
            }
        });
        if (kq_here) observe("kq_soft_max", l, s.kq.data(), {n, n_head, n_kv});
        observe("kqv_out", l, s.attn.data(), {n, n_head, hd});

        // Output projection, residual (x += attn · Woᵀ), feed-forward RMSNorm.   (n, n_embd)
        matmul_step({&L.wo}, {s.proj.data()}, s.attn.data(), n);
        step(n, 1, [&, l](int b, int e, int) {
            for (int i = b; i < e; ++i) {
                kernels::add(row(s.x, i, n_embd), row(s.proj, i, n_embd), n_embd);
                kernels::rmsnorm(row(s.xb, i, n_embd), row(s.x, i, n_embd), w.layers[l].ffn_norm.data(), n_embd, eps);
            }
        });
        observe("ffn_inp", l, s.x.data(), {n, n_embd});
        observe("ffn_norm", l, s.xb.data(), {n, n_embd});

        // SwiGLU feed-forward: down(silu(gate) * up).                  (n, n_ff) → (n, n_embd)
        matmul_step({&L.ffn_gate, &L.ffn_up}, {s.gate.data(), s.up.data()}, s.xb.data(), n);
        step(n, 1, [&](int b, int e, int) {
            for (int i = b; i < e; ++i) kernels::swiglu(row(s.gate, i, n_ff), row(s.up, i, n_ff), n_ff);
        });
        matmul_step({&L.ffn_down}, {s.proj.data()}, s.gate.data(), n);
        observe("ffn_out", l, s.proj.data(), {n, n_embd});
    }

    // The last layer's residual, then the final RMSNorm of the rows that
    // want logits, then the output head.
    step(1, 1, [&](int, int, int) {
        kernels::add(s.x.data(), s.proj.data(), n * n_embd);
        int o = 0;
        for (int i = 0; i < n; ++i)
            if (batch.logits[i])
                kernels::rmsnorm(row(s.xo, o++, n_embd), row(s.x, i, n_embd), w.output_norm.data(), n_embd, eps);
    });
    observe("l_out", hp.n_layer - 1, s.x.data(), {n, n_embd});
    observe("result_norm", -1, s.xo.data(), {n_outputs, n_embd});
    matmul_step({&w.output}, {logits.data()}, s.xo.data(), n_outputs);
    observe("result_output", -1, logits.data(), {n_outputs, hp.n_vocab});

    run_steps(pool_, steps);

    commit_batch(kv, batch, observer);
}

}  // namespace sixstep::llm
