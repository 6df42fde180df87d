// The KV cache, switched off: the same greedy generation run twice, once with
// the cache (each decode step reads one new token) and once recomputing the
// whole sequence at every step (each step is a prefill of everything so far).
// Same tokens, same logits up to rounding; per-step time grows with the
// length without the cache and stays flat with it — the reason every server
// keeps one.
//
//     KvExperiment e = run_kv_experiment(backend, codec, "The cat sat on the", 16);
//     e.steps[k].cached_ms, e.steps[k].uncached_ms, e.identical_tokens, e.max_logit_diff
#pragma once
#include <string_view>
#include <vector>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/text_codec.h"

namespace sixstep::llm {

struct KvExperimentStep {
    int index = 0;          // generated token k (0: the one after the prompt)
    int n_context = 0;      // tokens the step attends to
    double cached_ms = 0;   // forward pass with the cache: 1 token (k > 0) or the prompt (k = 0)
    double uncached_ms = 0; // forward pass without it: all n_context tokens again
    int token = 0;          // chosen with the cache (greedy)
};

struct KvExperiment {
    std::vector<int> prompt_tokens;
    std::vector<int> tokens_cached, tokens_uncached;
    std::vector<KvExperimentStep> steps;
    bool identical_tokens = false;
    float max_logit_diff = 0;     // between the two runs' logits, over every step
    int forward_tokens_cached = 0;    // tokens read by all forward passes, with the cache
    int forward_tokens_uncached = 0;  // and without: the sum of every step's context
    double cached_total_ms = 0;       // every forward pass, with the cache
    double uncached_total_ms = 0;     // and without
    // Medians over the first and the last quarter of the decode steps (k >= 1;
    // at least one step each): how a step's time moves as the context grows,
    // robust to one step that the machine happened to delay. 0 without decode steps.
    double cached_early_ms = 0, cached_late_ms = 0;
    double uncached_early_ms = 0, uncached_late_ms = 0;
};

// Greedy, n_tokens >= 1; throws sixstep::Error when the prompt and n_tokens
// do not fit the model's context.
KvExperiment run_kv_experiment(Backend& backend, const TextCodec& codec, std::string_view prompt, int n_tokens);

}  // namespace sixstep::llm
