// The reference forward pass: the Llama architecture as the papers describe
// it, layer by layer and one token at a time, with nothing clever. It is the
// oracle for every other path (forward_fast.cpp, a GPU backend) and stays
// forever; keep it obviously correct rather than fast. Shapes are written
// outermost first.
//
// It offers the same named tensors as the fast path (observer.h), so a test
// can compare two backends tensor by tensor, not only their logits.
#include <algorithm>
#include <cmath>

#include "pipeline/llm/cpu/forward.h"
#include "pipeline/llm/cpu/kernels.h"
#include "pipeline/llm/cpu/matmul.h"

namespace sixstep::llm {

namespace {

// Offers a tensor of shape `shape` to the observer, if it asked for it.
void offer(TensorObserver* obs, const char* name, int layer, const std::vector<float>& data,
           std::initializer_list<std::int64_t> shape) {
    if (!obs || !obs->wants(name, layer)) return;
    const std::vector<std::int64_t> dims(shape);
    obs->tensor(TensorView{name, layer, {data.data(), data.size()}, {dims.data(), dims.size()}});
}

}  // namespace

void forward_reference(const LlamaModel& model, KvCache& kv, const Batch& batch, std::vector<float>& logits,
                       TensorObserver* observer) {
    const LlamaHparams& hp = model.hparams();
    const int n_outputs = prepare_batch(hp.n_vocab, kv, batch, observer);
    const LlamaWeights& w = model.weights();
    const int n = batch.size();
    const int n_embd = hp.n_embd, hd = hp.head_dim(), n_head = hp.n_head, n_embd_kv = hp.n_embd_kv(), n_ff = hp.n_ff;
    const std::size_t N = static_cast<std::size_t>(n);
    int n_kv = 0;  // positions attended to: the longest context of any token
    for (int t = 0; t < n; ++t) n_kv = std::max(n_kv, batch.pos[t] + 1);

    std::vector<float> x(N * n_embd);              // (n, n_embd) the residual stream
    std::vector<float> xb(N * n_embd);             // (n, n_embd) normalized input of a sub-block
    std::vector<float> q(N * n_head * hd);         // (n, n_head, head_dim)
    std::vector<float> k(N * n_embd_kv);           // (n, n_head_kv, head_dim)
    std::vector<float> v(N * n_embd_kv);           // (n, n_head_kv, head_dim)
    std::vector<float> kq(N * n_head * n_kv);      // (n, n_head, n_kv) attention weights
    std::vector<float> attn(N * n_head * hd);      // (n, n_head, head_dim) attention output
    std::vector<float> proj(N * n_embd);           // (n, n_embd) output of attn_output / ffn_down
    std::vector<float> gate(N * n_ff), up(N * n_ff);  // (n, n_ff)
    auto row = [](std::vector<float>& a, int t, int width) { return a.data() + static_cast<std::size_t>(t) * width; };

    // Token embeddings: row `token` of token_embd.                  (n, n_embd)
    for (int t = 0; t < n; ++t) model.embed(batch.token[t], row(x, t, n_embd));

    for (int l = 0; l < hp.n_layer; ++l) {
        const LlamaLayer& L = w.layers[l];

        // Attention RMSNorm.
        for (int t = 0; t < n; ++t)
            kernels::rmsnorm_ref(row(xb, t, n_embd), row(x, t, n_embd), L.attn_norm.data(), n_embd, hp.f_norm_rms_eps);
        offer(observer, "attn_norm", l, xb, {n, n_embd});

        // Q, K, V projections; RoPE rotates q and k by their position
        // (adjacent pairs, per head); k and v are remembered in the cache.
        for (int t = 0; t < n; ++t) {
            const int pos = batch.pos[t], seq = batch.seq[t];
            matmul_ref(L.wq, row(xb, t, n_embd), 1, row(q, t, n_head * hd));
            matmul_ref(L.wk, row(xb, t, n_embd), 1, row(k, t, n_embd_kv));
            matmul_ref(L.wv, row(xb, t, n_embd), 1, row(v, t, n_embd_kv));
            kernels::rope(row(q, t, n_head * hd), n_head, hd, hp.n_rot, pos, hp.rope_freq_base);
            kernels::rope(row(k, t, n_embd_kv), hp.n_head_kv, hd, hp.n_rot, pos, hp.rope_freq_base);
            std::copy_n(row(k, t, n_embd_kv), n_embd_kv, kv.k(l, seq, pos));
            std::copy_n(row(v, t, n_embd_kv), n_embd_kv, kv.v(l, seq, pos));
        }
        offer(observer, "Qcur", l, q, {n, n_head, hd});
        offer(observer, "Kcur", l, k, {n, hp.n_head_kv, hd});
        offer(observer, "Vcur", l, v, {n, hp.n_head_kv, hd});

        // Grouped-query attention: query head h reads K/V head h / n_gqa,
        // over positions 0..pos of its own sequence (causal).
        for (int t = 0; t < n; ++t) {
            const int pos = batch.pos[t], seq = batch.seq[t];
            for (int h = 0; h < n_head; ++h) {
                const float* qh = row(q, t, n_head * hd) + h * hd;
                float* att = kq.data() + (static_cast<std::size_t>(t) * n_head + h) * n_kv;
                const int g = h / hp.n_gqa();
                // Scores: q · k / sqrt(head_dim).
                for (int p = 0; p <= pos; ++p) {
                    const float* kp = kv.k(l, seq, p) + g * hd;
                    double s = 0;
                    for (int i = 0; i < hd; ++i) s += static_cast<double>(qh[i]) * kp[i];
                    att[p] = static_cast<float>(s / std::sqrt(static_cast<double>(hd)));
                }
                // Softmax over positions.
                kernels::softmax_inplace_ref(att, pos + 1);
                // Weighted sum of the values.
                float* oh = row(attn, t, n_head * hd) + h * hd;
                for (int i = 0; i < hd; ++i) {
                    double s = 0;
                    for (int p = 0; p <= pos; ++p) s += static_cast<double>(att[p]) * kv.v(l, seq, p)[g * hd + i];
                    oh[i] = static_cast<float>(s);
                }
            }
        }
        offer(observer, "kq_soft_max", l, kq, {n, n_head, n_kv});
        offer(observer, "kqv_out", l, attn, {n, n_head, hd});

        // Output projection, then the residual connection.
        for (int t = 0; t < n; ++t) {
            matmul_ref(L.wo, row(attn, t, n_head * hd), 1, row(proj, t, n_embd));
            for (int i = 0; i < n_embd; ++i) row(x, t, n_embd)[i] += row(proj, t, n_embd)[i];
        }
        offer(observer, "ffn_inp", l, x, {n, n_embd});

        // Feed-forward RMSNorm.
        for (int t = 0; t < n; ++t)
            kernels::rmsnorm_ref(row(xb, t, n_embd), row(x, t, n_embd), L.ffn_norm.data(), n_embd, hp.f_norm_rms_eps);
        offer(observer, "ffn_norm", l, xb, {n, n_embd});

        // SwiGLU: down(silu(gate(x)) * up(x)).
        for (int t = 0; t < n; ++t) {
            float* g = row(gate, t, n_ff);
            const float* u = row(up, t, n_ff);
            matmul_ref(L.ffn_gate, row(xb, t, n_embd), 1, g);
            matmul_ref(L.ffn_up, row(xb, t, n_embd), 1, row(up, t, n_ff));
            for (int i = 0; i < n_ff; ++i) {
                const double gi = g[i];
                g[i] = static_cast<float>(gi / (1.0 + std::exp(-gi)) * u[i]);
            }
            matmul_ref(L.ffn_down, g, 1, row(proj, t, n_embd));
        }
        offer(observer, "ffn_out", l, proj, {n, n_embd});

        // Residual connection.
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += proj[i];
        offer(observer, "l_out", l, x, {n, n_embd});
    }

    // Final RMSNorm and the output head, for the rows that want logits.
    std::vector<float> xo(static_cast<std::size_t>(n_outputs) * n_embd);  // (n_outputs, n_embd)
    logits.assign(static_cast<std::size_t>(n_outputs) * hp.n_vocab, 0.0f);
    for (int t = 0, o = 0; t < n; ++t) {
        if (!batch.logits[t]) continue;
        kernels::rmsnorm_ref(row(xo, o, n_embd), row(x, t, n_embd), w.output_norm.data(), n_embd, hp.f_norm_rms_eps);
        matmul_ref(w.output, row(xo, o, n_embd), 1, row(logits, o, hp.n_vocab));
        ++o;
    }
    offer(observer, "result_norm", -1, xo, {n_outputs, n_embd});
    offer(observer, "result_output", -1, logits, {n_outputs, hp.n_vocab});

    commit_batch(kv, batch, observer);
}

}  // namespace sixstep::llm
