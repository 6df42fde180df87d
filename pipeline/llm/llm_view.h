// LlmView: what the classroom's transformer panels show of the latest
// request, as plain data — the tokens, each forward pass with its engine
// time, the KV cache's fill and block table with its bytes, the next
// token's candidates and the sampler's table after each filter.
//
// The six-stage adapter (llm_model.cpp) writes it as its stages run, but only
// when someone listens (LlmModel::set_view); front ends copy it and draw. So
// every number on the panels is the engine's, and a front end computes
// nothing. Tensors from inside the forward pass (attention, the logit lens)
// are not here: they come from a PanelCapture observer (panel_capture.h),
// which costs a copy per tensor and is set only while a panel shows them.
//
//     LlmView view;
//     model.set_view(&view);           // every request from now on fills it
//     Pipeline(model, request).run_through(Stage::forward);
//     view.kv.n_filled;                // the prompt's positions, in one pass
//     view.passes.back().forward_ms;   // the prefill's engine time
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/llm/sampler.h"

namespace sixstep::llm {

// One token of the request, prompt or generated.
struct ViewToken {
    int id = 0;
    std::string piece;      // its text as shown: " mat" (a byte token: one byte, maybe half a character)
    std::string raw;        // as the vocabulary stores it: "▁mat", "<0xE4>", "<s>"
    bool byte = false;      // a byte-fallback token (a character the vocabulary lacks, one byte each)
    bool special = false;   // a control token (BOS)
    bool prompt = true;     // false: generated
    bool forced = false;    // generated, chosen by a person instead of the sampler
};

// One forward pass of the request and the token sampled after it.
struct ViewPass {
    bool prefill = false;
    int pos0 = 0;           // first KV position it wrote
    int n_tokens = 0;       // positions it wrote: the prompt (prefill) or 1 (decode)
    double forward_ms = 0;  // engine time of the pass
    bool sampled = false;   // a token was taken from its logits
    double sample_ms = 0;   // engine time of that sampling step (when sampled)
};

// The KV cache as this request sees it, after its latest forward pass.
struct ViewKv {
    int n_layer = 0;
    int n_head_kv = 0;
    int head_dim = 0;
    int bytes_per_value = 0;          // element size the engine stores (4: f32)
    int block_size = 0;               // positions per block
    int n_blocks = 0;                 // blocks in the pool
    int n_blocks_used = 0;            // owned by any sequence
    int n_ctx = 0;                    // positions one sequence may hold
    int n_filled = 0;                 // positions of this request in the cache
    int capacity_left = 0;            // positions it may still add: n_ctx − n_filled
    int n_blocks_free = 0;            // blocks left in the pool
    std::vector<int> block_table;     // this request's logical block i → physical block id
    std::size_t bytes_per_token = 0;  // 2 × n_layer × n_head_kv × head_dim × bytes_per_value
    std::size_t bytes_filled = 0;     // bytes_per_token × n_filled
    std::size_t bytes_used = 0;       // whole blocks in use, all layers, at the last forward pass
    std::size_t bytes_allocated = 0;  // memory the storage has actually allocated (on demand)
    std::size_t bytes_capacity = 0;   // the whole pool, were every block allocated
    bool released = false;            // the request finished: its blocks went back to the pool
};

// A candidate for the next token.
struct ViewCandidate {
    int id = 0;
    std::string piece;
    float p = 0;      // probability in its table
    float logit = 0;
};

// The sampler's table after one stage of its chain.
struct ViewSamplerStage {
    std::string name;                 // "softmax", "top_k", "top_p", "min_p", "temperature", "greedy", "dist"
    int n_kept = 0;                   // candidates this stage kept
    std::vector<ViewCandidate> rows;  // the most likely of them
};

struct ViewNext {
    int n_vocab = 0;
    std::vector<ViewCandidate> top;        // the output stage's top-N, softmax at temperature 1
    SamplerParams sampling;                // the request's settings
    std::vector<ViewSamplerStage> chain;   // the sampler's tables, in chain order
    bool sampled = false;                  // chain is from the sample taken; false: a preview on these logits
    int chosen = -1;                       // the token taken (when sampled)
    std::string chosen_piece;
    float chosen_p = 0;                    // its probability at temperature 1 (the bars' scale)
    int chosen_rank = -1;                  // its place by logit, 0 = the most likely; -1 when not known (forced)
    bool forced = false;                   // taken by force, not sampled
    // Before the sampler's turn: the token the request forces here (a
    // lesson's `force:`, a click), so the window says so before it happens.
    int to_force = -1;
    std::string to_force_piece;
};

// The request before this one, kept for comparison (lesson 05: a short
// prompt's TTFT beside the long one's, which was no longer on the screen).
struct EarlierRequest {
    int n_prompt = 0;
    double ttft_ms = 0;
    double tpot_ms = 0;  // 0 when it generated one token
    double tpot_p50_ms = 0;  // the median step, which the lessons compare; 0 as tpot_ms
};

struct LlmView {
    std::uint64_t request = 0;      // grows with every request the model starts
    std::optional<EarlierRequest> before;  // none for the first request, or one that never reached a token
    std::vector<ViewToken> tokens;  // prompt, then generated
    int n_prompt = 0;
    std::vector<ViewPass> passes;   // every forward pass of the request, in order
    ViewKv kv;
    ViewNext next;                  // from the latest output stage (and its postprocess)
    double tokenize_ms = 0;         // engine times: where TTFT starts
    double ttft_ms = 0;             // tokenize + prefill + first sample; 0 until the first token
    double tpot_ms = 0;             // mean (forward + sample) of the decode steps; 0 until one ran
    double tpot_p50_ms = 0;         // their median, once the request is answered; 0 for one token
    bool finished = false;          // respond ran
};

}  // namespace sixstep::llm
