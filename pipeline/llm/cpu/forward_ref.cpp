// The reference forward pass: the Llama architecture as the papers describe
// it, one token at a time, with nothing clever. It is the oracle for the fast
// path (forward_fast.cpp) and stays forever; keep it obviously correct
// rather than fast. Shapes are written outermost first.
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/kernels.h"
#include "pipeline/llm/cpu/forward.h"

namespace sixstep::llm {

int Batch::n_outputs() const {
    int n = 0;
    for (char c : logits) n += c ? 1 : 0;
    return n;
}

Batch Batch::prefill(const std::vector<int>& tokens, int seq_id, int pos0) {
    Batch b;
    for (std::size_t i = 0; i < tokens.size(); ++i)
        b.add(tokens[i], pos0 + static_cast<int>(i), seq_id, i + 1 == tokens.size());
    return b;
}

int prepare_batch(const LlamaModel& model, KvCache& kv, const Batch& batch) {
    const int n = batch.size();
    if (n == 0) throw Error("forward: empty batch (no tokens)");
    if (static_cast<int>(batch.pos.size()) != n || static_cast<int>(batch.seq.size()) != n ||
        static_cast<int>(batch.logits.size()) != n)
        throw Error("forward: batch arrays have different lengths");
    const int n_vocab = model.hparams().n_vocab;
    std::map<int, int> next;  // seq → next position without a gap
    std::map<int, int> need;  // seq → positions it will hold
    for (int i = 0; i < n; ++i) {
        const int s = batch.seq[i];
        if (batch.token[i] < 0 || batch.token[i] >= n_vocab)
            throw Error(fmt::format("forward: token id {} is outside the vocabulary (0..{})", batch.token[i],
                                    n_vocab - 1));
        if (!kv.has_sequence(s)) throw Error(fmt::format("forward: sequence {} is not in the KV cache", s));
        auto it = next.find(s);
        if (it == next.end()) it = next.emplace(s, kv.n_tokens(s)).first;
        const int p = batch.pos[i];
        if (p < 0 || p > it->second)
            throw Error(fmt::format("forward: position {} of sequence {} leaves a gap: the sequence holds {} positions",
                                    p, s, it->second));
        if (p == it->second) ++it->second;
        need[s] = std::max(need[s], p + 1);
    }
    for (const auto& [s, total] : need) kv.reserve(s, total);
    return batch.n_outputs();
}

void commit_batch(KvCache& kv, const Batch& batch, TensorObserver* observer) {
    std::map<int, std::pair<int, int>> span;  // seq → [first pos, last pos]
    for (int i = 0; i < batch.size(); ++i) {
        auto [it, fresh] = span.emplace(batch.seq[i], std::make_pair(batch.pos[i], batch.pos[i]));
        if (!fresh) {
            it->second.first = std::min(it->second.first, batch.pos[i]);
            it->second.second = std::max(it->second.second, batch.pos[i]);
        }
    }
    for (const auto& [s, range] : span) {
        kv.commit(s, range.second + 1);
        if (observer) observer->kv_fill(s, range.first, range.second - range.first + 1, kv.n_tokens(s));
    }
}

void forward_reference(const LlamaModel& model, KvCache& kv, const Batch& batch, std::vector<float>& logits) {
    const int n_outputs = prepare_batch(model, kv, batch);
    const LlamaHparams& hp = model.hparams();
    const LlamaWeights& w = model.weights();
    const int n_embd = hp.n_embd, hd = hp.head_dim(), n_head = hp.n_head, n_kv = hp.n_embd_kv();

    std::vector<float> x(n_embd);               // (n_embd) the residual stream
    std::vector<float> xb(n_embd);              // (n_embd) normalized input of a sub-block
    std::vector<float> q(n_head * hd);          // (n_head, head_dim)
    std::vector<float> k(n_kv), v(n_kv);        // (n_head_kv, head_dim)
    std::vector<float> att;                     // (pos + 1) scores of one head
    std::vector<float> attn_out(n_head * hd);   // (n_head, head_dim)
    std::vector<float> proj(n_embd);            // (n_embd)
    std::vector<float> gate(hp.n_ff), up(hp.n_ff);  // (n_ff)
    logits.assign(static_cast<std::size_t>(n_outputs) * hp.n_vocab, 0.0f);

    int out_row = 0;
    for (int t = 0; t < batch.size(); ++t) {
        const int pos = batch.pos[t], seq = batch.seq[t];

        // Token embedding: row `token` of token_embd.
        model.embed(batch.token[t], x.data());

        for (int l = 0; l < hp.n_layer; ++l) {
            const LlamaLayer& L = w.layers[l];

            // Attention RMSNorm.
            kernels::rmsnorm(xb.data(), x.data(), L.attn_norm.data(), n_embd, hp.f_norm_rms_eps);

            // Q, K, V projections.
            matmul_ref(L.wq, xb.data(), 1, q.data());
            matmul_ref(L.wk, xb.data(), 1, k.data());
            matmul_ref(L.wv, xb.data(), 1, v.data());

            // RoPE: rotate q and k by their position (adjacent pairs, per head).
            kernels::rope(q.data(), n_head, hd, hp.n_rot, pos, hp.rope_freq_base);
            kernels::rope(k.data(), hp.n_head_kv, hd, hp.n_rot, pos, hp.rope_freq_base);

            // Remember this position's key and value.
            std::copy(k.begin(), k.end(), kv.k(l, seq, pos));
            std::copy(v.begin(), v.end(), kv.v(l, seq, pos));

            // Grouped-query attention: query head h reads K/V head h / n_gqa.
            att.resize(pos + 1);
            for (int h = 0; h < n_head; ++h) {
                const float* qh = q.data() + h * hd;
                const int g = h / hp.n_gqa();
                // Scores: q · k / sqrt(head_dim) for every position up to pos (causal).
                for (int p = 0; p <= pos; ++p) {
                    const float* kp = kv.k(l, seq, p) + g * hd;
                    double s = 0;
                    for (int i = 0; i < hd; ++i) s += static_cast<double>(qh[i]) * kp[i];
                    att[p] = static_cast<float>(s / std::sqrt(static_cast<double>(hd)));
                }
                // Softmax over positions.
                kernels::softmax_inplace(att.data(), pos + 1);
                // Weighted sum of the values.
                float* oh = attn_out.data() + h * hd;
                for (int i = 0; i < hd; ++i) {
                    double s = 0;
                    for (int p = 0; p <= pos; ++p) s += static_cast<double>(att[p]) * kv.v(l, seq, p)[g * hd + i];
                    oh[i] = static_cast<float>(s);
                }
            }

            // Output projection, then the residual connection.
            matmul_ref(L.wo, attn_out.data(), 1, proj.data());
            for (int i = 0; i < n_embd; ++i) x[i] += proj[i];

            // Feed-forward RMSNorm.
            kernels::rmsnorm(xb.data(), x.data(), L.ffn_norm.data(), n_embd, hp.f_norm_rms_eps);

            // SwiGLU: down(silu(gate(x)) * up(x)).
            matmul_ref(L.ffn_gate, xb.data(), 1, gate.data());
            matmul_ref(L.ffn_up, xb.data(), 1, up.data());
            for (int i = 0; i < hp.n_ff; ++i) {
                const double g = gate[i];
                gate[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
            }
            matmul_ref(L.ffn_down, gate.data(), 1, proj.data());

            // Residual connection.
            for (int i = 0; i < n_embd; ++i) x[i] += proj[i];
        }

        if (!batch.logits[t]) continue;
        // Final RMSNorm and the output head (logits over the vocabulary).
        kernels::rmsnorm(xb.data(), x.data(), w.output_norm.data(), n_embd, hp.f_norm_rms_eps);
        matmul_ref(w.output, xb.data(), 1, logits.data() + static_cast<std::size_t>(out_row) * hp.n_vocab);
        ++out_row;
    }
    commit_batch(kv, batch, nullptr);
}

}  // namespace sixstep::llm
