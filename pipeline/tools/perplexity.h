// Perplexity of a model on a text, and how far a second model's predictions
// are from a reference's on the same text — the quality side of quantization.
//
// Teacher forcing: the text's own tokens go in, and at every position the
// model's logits are scored against the token that actually comes next:
//
//     NLL        = −(1/T) Σ_t log p(x_t | x_<t)        (nats per token)
//     perplexity = exp(NLL)                            (1 = certain; n_vocab = clueless)
//
// Each window runs as batched prefill with logits for every position, so a
// 500-token document costs a few forward calls, not 500.
//
// Documents: a line holding only the separator ("<|doc|>", the story
// corpus's) splits the text; each document is tokenized on its own as the
// model was trained — [BOS] text [EOS] — and every token after the first is
// predicted (EOS included: knowing where a story ends is part of the text).
// A document longer than the window is scored in windows that overlap by
// half: every window after the first scores only its second half, so each
// prediction sees at least n_ctx/2 tokens of context.
//
// With a reference backend (e.g. the F16 model beside its Q4_0 file) the same
// windows run through both, and at every scored position:
//     KL(P_ref ‖ P)      = Σ_v P_ref(v) · (log P_ref(v) − log P(v))
//     max logit diff     = max_v |logit_ref(v) − logit(v)|
//     top-1 agreement    = argmax P == argmax P_ref
//
//     auto model = LlamaModel::load("q4_0.gguf"), ref = LlamaModel::load("f16.gguf");
//     CpuBackend cpu(model), cpu_ref(ref);
//     Vocab vocab = Vocab::from_gguf(ref->file());
//     PerplexityResult r = perplexity(cpu, vocab, text, {}, &cpu_ref);
//     r.perplexity, r.reference->perplexity, r.compare->kl_mean
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::llm {

struct PerplexityParams {
    int n_ctx = 0;                          // window in tokens, >= 2; 0 → the model's context length
    int n_batch = 256;                      // positions per forward call, >= 1
    std::string doc_separator = "<|doc|>";  // a line holding only this splits documents; "" → one document
    int max_docs = 0;                       // score the first max_docs documents; 0 → all
    bool score_eos = true;                  // end every document with EOS (when the vocabulary has one) and score it
};

// Negative log-likelihood of one model over the scored positions.
struct TextScore {
    double nll_sum = 0;     // nats, summed over the scored positions
    double mean_nll = 0;    // nats per token
    double perplexity = 0;  // exp(mean_nll)
};

// How far the model's distributions are from the reference's.
struct LogitComparison {
    double kl_mean = 0;             // mean KL(P_ref ‖ P) over the scored positions, nats
    double kl_max = 0;              // the largest of them
    double max_abs_logit_diff = 0;  // over every position and every vocabulary entry
    double mean_max_logit_diff = 0; // the per-position maximum, averaged
    std::int64_t top1_agree = 0;    // positions where both pick the same most likely token
    double top1_agreement = 0;      // top1_agree ÷ scored positions
};

struct PerplexityResult {
    int n_docs = 0;              // documents scored (empty ones skipped)
    int n_windows = 0;           // windows run (one per document that fits)
    std::int64_t n_tokens = 0;   // tokens of the scored documents, BOS and EOS included
    std::int64_t n_scored = 0;   // predictions scored
    int n_ctx = 0;               // the window used
    double seconds = 0;          // wall time, the reference's forward passes included
    TextScore model;
    double perplexity = 0;       // model.perplexity, for the common case
    std::optional<TextScore> reference;      // with a reference backend
    std::optional<LogitComparison> compare;  // with a reference backend
};

// Throws sixstep::Error for a text with nothing to score, bad parameters, or
// a reference whose vocabulary size differs from the model's.
PerplexityResult perplexity(Backend& model, const Vocab& vocab, std::string_view text, const PerplexityParams& params,
                            Backend* reference = nullptr);

}  // namespace sixstep::llm
