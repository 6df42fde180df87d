// PanelCapture: what the classroom's transformer panels show, taken from the
// forward pass through the tensor observer — and nothing more, so memory
// stays bounded at long contexts and nothing is copied when no panel listens.
//
//   attention   the softmax weights of one layer (every head), query position
//               × key position, of one sequence; rows accumulate as prefill
//               and decode run. At most `window` positions are kept (the
//               latest), so a long context costs window² × n_head floats.
//   logit lens  for every layer, the residual stream (l_out) of the last
//               position of the latest pass — stopping the model there,
//               final norm + output head, which token would it predict?
//
//     PanelCapture cap({.attention_layer = 1, .window = 128});
//     backend.forward(kv, batch, logits, &cap);
//     const AttentionMap& a = cap.attention();       // a.weight(head, q, k)
//     std::vector<LensRow> lens = logit_lens(model, cap, 3);   // top 3 per layer
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pipeline/llm/llama_model.h"
#include "pipeline/llm/observer.h"

namespace sixstep::llm {

struct PanelCaptureParams {
    int attention_layer = -1;  // layer whose attention to keep; < 0 → none
    int sequence = 0;          // KV sequence whose rows are kept
    int window = 128;          // most positions kept on each side of the map, >= 1
    bool logit_lens = false;   // keep each layer's last residual row
};

// Attention weights of one layer: rows are query positions, columns key
// positions, both in [pos0, pos0 + n_pos); entries above the diagonal are 0
// (the causal mask).
struct AttentionMap {
    int layer = -1;
    int n_head = 0;
    int pos0 = 0;               // first position shown (the window slides)
    int n_pos = 0;              // positions shown
    std::vector<float> w;       // [n_head, n_pos (query), n_pos (key)]
    float weight(int head, int q, int k) const {
        return w[(static_cast<std::size_t>(head) * n_pos + q) * n_pos + k];
    }
};

class PanelCapture : public TensorObserver {
public:
    explicit PanelCapture(const PanelCaptureParams& params = {});
    const PanelCaptureParams& params() const { return params_; }

    bool wants(std::string_view name, int layer) override;
    void batch_begins(const Batch& batch) override;
    void tensor(const TensorView& t) override;

    const AttentionMap& attention() const { return attention_; }
    // [n_layer][n_embd]: l_out of the last position of the latest pass.
    const std::vector<std::vector<float>>& residuals() const { return residuals_; }
    std::size_t bytes() const;  // memory held, for the bounded-memory promise
    void clear();

private:
    void add_attention_rows(const TensorView& t);
    void rebuild_map();

    PanelCaptureParams params_;
    AttentionMap attention_;
    struct Row {
        int batch_row = 0;
        int pos = 0;
    };
    std::vector<Row> rows_;  // the current batch's rows of the captured sequence
    int last_row_ = -1;      // of them, the one at the highest position
    // Query position → [n_head][keys kept], keys from max(0, q + 1 − window) to q.
    std::map<int, std::vector<float>> attention_rows_;
    std::vector<std::vector<float>> residuals_;
};

// One layer of the logit lens.
struct LensCandidate {
    int id = 0;
    float p = 0;
};
struct LensRow {
    int layer = 0;                         // 0-based; the last row equals the output stage
    std::vector<LensCandidate> top;        // most likely first
};

// Stops the model after every layer: final RMSNorm + output head on the
// captured residual rows, softmax, the top n tokens. Empty when nothing was
// captured.
std::vector<LensRow> logit_lens(const LlamaModel& model, const PanelCapture& capture, int top_n);

}  // namespace sixstep::llm
