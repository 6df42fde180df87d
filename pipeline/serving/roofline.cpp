#include "pipeline/serving/roofline.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/backend.h"
#include "pipeline/llm/llama_model.h"

namespace sixstep::serving {

DecodeShape decode_shape(const llm::LlamaModel& model) {
    const llm::LlamaHparams& hp = model.hparams();
    const llm::LlamaWeights& w = model.weights();
    DecodeShape s;
    auto add = [&](const llm::WeightMatrix& m) {
        s.weight_bytes += m.bytes();
        s.matmul_weights += static_cast<std::uint64_t>(m.n_rows) * static_cast<std::uint64_t>(m.n_cols);
    };
    const auto norm_bytes = [](const std::vector<float>& v) { return v.size() * sizeof(float); };
    for (const llm::LlamaLayer& l : w.layers) {
        for (const llm::WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_gate, &l.ffn_up, &l.ffn_down}) add(*m);
        s.weight_bytes += norm_bytes(l.attn_norm) + norm_bytes(l.ffn_norm);
    }
    add(w.output);  // the head multiplies by every row, tied to the embedding or not
    s.weight_bytes += norm_bytes(w.output_norm);
    s.embd_row_bytes = w.token_embd.row_bytes;
    // An empty cache allocates nothing: it only reports its layout.
    s.kv_bytes_per_token = llm::KvCache(llm::kv_cache_params(hp, 1)).stats().bytes_per_token;
    s.n_layer = hp.n_layer;
    s.n_head = hp.n_head;
    s.head_dim = hp.head_dim();
    return s;
}

StepCost decode_step_cost(const DecodeShape& s, int n_seq, double context) {
    StepCost c;
    c.n_seq = n_seq;
    c.context = context;
    const double b = n_seq;
    c.weight_bytes = static_cast<double>(s.weight_bytes);
    c.embd_bytes = b * static_cast<double>(s.embd_row_bytes);
    c.kv_bytes = b * context * static_cast<double>(s.kv_bytes_per_token);
    c.bytes = c.weight_bytes + c.embd_bytes + c.kv_bytes;
    c.matmul_flops = 2.0 * static_cast<double>(s.matmul_weights) * b;
    c.attention_flops = 4.0 * s.n_layer * s.n_head * static_cast<double>(s.head_dim) * context * b;
    c.flops = c.matmul_flops + c.attention_flops;
    return c;
}

namespace {
void check_roofs(const MachineRoofs& r) {
    if (!(std::isfinite(r.bytes_per_s) && r.bytes_per_s > 0))
        throw Error(fmt::format("roofline: memory bandwidth must be a positive number of bytes/s, not {}", r.bytes_per_s));
    if (!(std::isfinite(r.flops_per_s) && r.flops_per_s > 0))
        throw Error(fmt::format("roofline: peak FLOP/s must be a positive number, not {}", r.flops_per_s));
}
}  // namespace

RooflinePrediction predict_roofline(const StepCost& c, const MachineRoofs& roofs) {
    check_roofs(roofs);
    RooflinePrediction p;
    p.memory_ms = 1e3 * c.bytes / roofs.bytes_per_s;
    p.compute_ms = 1e3 * c.flops / roofs.flops_per_s;
    p.predicted_ms = std::max(p.memory_ms, p.compute_ms);
    p.compute_bound = p.compute_ms > p.memory_ms;
    p.arithmetic_intensity = c.bytes > 0 ? c.flops / c.bytes : 0;
    p.ridge_intensity = roofs.flops_per_s / roofs.bytes_per_s;
    return p;
}

double ridge_batch(const DecodeShape& s, double context, const MachineRoofs& roofs) {
    check_roofs(roofs);
    // memory(B) = (W + B·m) / BW and compute(B) = B·f / F meet where
    // B = (W / BW) / (f / F − m / BW); m, f: the per-sequence bytes and FLOPs.
    const StepCost one = decode_step_cost(s, 1, context);
    const double m = one.embd_bytes + one.kv_bytes, f = one.flops;
    const double per_seq = f / roofs.flops_per_s - m / roofs.bytes_per_s;
    if (per_seq <= 0) return std::numeric_limits<double>::infinity();
    return (one.weight_bytes / roofs.bytes_per_s) / per_seq;
}

}  // namespace sixstep::serving
