#include "pipeline/llm/panel_capture.h"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/batch.h"
#include "pipeline/llm/cpu/kernels.h"
#include "pipeline/llm/cpu/matmul.h"
#include "pipeline/llm/sampler.h"

namespace sixstep::llm {

PanelCapture::PanelCapture(const PanelCaptureParams& params) : params_(params) {
    if (params_.window < 1) throw Error(fmt::format("attention window of {} positions: give at least 1", params_.window));
    attention_.layer = params_.attention_layer;
}

bool PanelCapture::wants(std::string_view name, int layer) {
    if (name == "kq_soft_max") return params_.attention_layer >= 0 && layer == params_.attention_layer;
    if (name == "l_out") return params_.logit_lens;
    return false;
}

void PanelCapture::batch_begins(const Batch& batch) {
    rows_.clear();
    last_row_ = -1;
    for (int i = 0; i < batch.size(); ++i) {
        if (batch.seq[i] != params_.sequence) continue;
        if (batch.pos[i] == 0) attention_rows_.clear();  // the sequence starts again
        rows_.push_back({i, batch.pos[i]});
        if (last_row_ < 0 || batch.pos[i] > rows_[static_cast<std::size_t>(last_row_)].pos)
            last_row_ = static_cast<int>(rows_.size()) - 1;
    }
}

void PanelCapture::tensor(const TensorView& t) {
    if (rows_.empty()) return;
    if (t.name == "kq_soft_max") {
        add_attention_rows(t);
    } else if (t.name == "l_out") {
        const std::size_t n_embd = static_cast<std::size_t>(t.shape[1]);
        if (static_cast<int>(residuals_.size()) <= t.layer) residuals_.resize(static_cast<std::size_t>(t.layer) + 1);
        const std::size_t r = static_cast<std::size_t>(rows_[static_cast<std::size_t>(last_row_)].batch_row);
        residuals_[static_cast<std::size_t>(t.layer)].assign(t.data.begin() + static_cast<std::ptrdiff_t>(r * n_embd),
                                                             t.data.begin() + static_cast<std::ptrdiff_t>((r + 1) * n_embd));
    }
}

// kq_soft_max is [n_tokens, n_head, n_kv]: one row of weights per token and
// head over the positions it attends to.
void PanelCapture::add_attention_rows(const TensorView& t) {
    const int n_head = static_cast<int>(t.shape[1]);
    const std::size_t n_kv = static_cast<std::size_t>(t.shape[2]);
    attention_.n_head = n_head;
    const int w = params_.window;
    for (const Row& row : rows_) {
        const int k0 = std::max(0, row.pos + 1 - w);
        const int n_keys = row.pos + 1 - k0;
        std::vector<float>& keep = attention_rows_[row.pos];
        keep.resize(static_cast<std::size_t>(n_head) * n_keys);
        for (int h = 0; h < n_head; ++h) {
            const float* src = t.data.data() + (static_cast<std::size_t>(row.batch_row) * n_head + h) * n_kv;
            std::copy_n(src + k0, n_keys, keep.data() + static_cast<std::size_t>(h) * n_keys);
        }
    }
    // Keep only the latest `window` query positions.
    const int last = attention_rows_.rbegin()->first;
    attention_rows_.erase(attention_rows_.begin(), attention_rows_.lower_bound(last + 1 - w));
    rebuild_map();
}

void PanelCapture::rebuild_map() {
    AttentionMap& m = attention_;
    m.pos0 = attention_rows_.begin()->first;
    m.n_pos = attention_rows_.rbegin()->first + 1 - m.pos0;
    m.w.assign(static_cast<std::size_t>(m.n_head) * m.n_pos * m.n_pos, 0.0f);
    const int w = params_.window;
    for (const auto& [q, keep] : attention_rows_) {
        const int k0 = std::max(0, q + 1 - w);
        const int n_keys = q + 1 - k0;
        for (int h = 0; h < m.n_head; ++h)
            for (int k = std::max(k0, m.pos0); k <= q; ++k)
                m.w[(static_cast<std::size_t>(h) * m.n_pos + (q - m.pos0)) * m.n_pos + (k - m.pos0)] =
                    keep[static_cast<std::size_t>(h) * n_keys + (k - k0)];
    }
}

std::size_t PanelCapture::bytes() const {
    std::size_t n = attention_.w.size();
    for (const auto& [q, keep] : attention_rows_) n += keep.size();
    for (const auto& r : residuals_) n += r.size();
    return n * sizeof(float);
}

void PanelCapture::clear() {
    attention_ = AttentionMap{};
    attention_.layer = params_.attention_layer;
    attention_rows_.clear();
    residuals_.clear();
    rows_.clear();
    last_row_ = -1;
}

std::vector<LensRow> logit_lens(const LlamaModel& model, const PanelCapture& capture, int top_n_tokens) {
    const LlamaHparams& hp = model.hparams();
    const LlamaWeights& w = model.weights();
    std::vector<LensRow> out;
    std::vector<float> xn(static_cast<std::size_t>(hp.n_embd)), logits(static_cast<std::size_t>(hp.n_vocab));
    const auto& res = capture.residuals();
    for (int l = 0; l < static_cast<int>(res.size()); ++l) {
        if (res[static_cast<std::size_t>(l)].size() != static_cast<std::size_t>(hp.n_embd)) continue;
        // What the model would say if it stopped after layer l.
        kernels::rmsnorm(xn.data(), res[static_cast<std::size_t>(l)].data(), w.output_norm.data(), hp.n_embd,
                         hp.f_norm_rms_eps);
        matmul_ref(w.output, xn.data(), 1, logits.data());
        LensRow row;
        row.layer = l;
        for (const Candidate& c : top_n(logits, top_n_tokens)) row.top.push_back({c.id, c.p});
        out.push_back(std::move(row));
    }
    return out;
}

}  // namespace sixstep::llm
