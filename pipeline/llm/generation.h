// Generation: one request's state while the model writes its answer — the
// prompt's tokens, the sampler, the detokenizer, the stop rules, what has been
// generated and the engine time it cost. It runs no forward pass itself: a
// Stepper (stepper.h) feeds many Generations through one batched forward pass
// and hands each its row of logits; the Generation samples from it.
//
//     Generation g(codec, "The cat sat on the", params);   // tokenizes (timed)
//     Stepper st(backend, kv);
//     st.attach(g);                      // a KV sequence for it
//     while (!g.done()) {
//         st.forward_all();              // prefill, then one decode step at a time
//         const TokenEvent& e = g.sample();
//     }
//     g.result().timings.ttft_ms;        // engine time, whatever the pauses
//
// Clocks. Every time here is engine time, measured around the work itself:
// tokenizing, the forward passes this request took part in, sampling. Time
// between calls (a lesson paused between steps, a request waiting for a batch
// slot) is not counted: queueing is the serving layer's to measure.
//   TTFT = tokenize + prefill forward passes + first sample
//   TPOT = mean of (forward + sample) over the decode steps after the first token
#pragma once
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/measure.h"
#include "pipeline/llm/sampler.h"
#include "pipeline/llm/stop_reason.h"
#include "pipeline/llm/text_codec.h"

namespace sixstep::llm {

class Stepper;

struct GenerateParams {
    int n_predict = 64;                 // most tokens to generate, >= 1
    SamplerParams sampling;             // the one set of sampling defaults (sampler.h)
    std::vector<std::string> stop;      // stop when the text contains one of these (not included)
    bool stop_at_eog = true;            // stop at the end-of-generation token
    int top_n = 0;                      // report the n most likely tokens at every step
    int n_ctx = 0;                      // context for this generation; <= 0 → the KV cache's
};

// One generated token, as streamed.
struct TokenEvent {
    int index = 0;          // 0 = first generated token
    int token = 0;          // id
    std::string piece;      // the token's own text
    std::string text;       // new text that became complete with this token (may be empty)
    float p = 0;            // probability of this token before sampling filters (temperature 1)
    double t_ms = 0;        // engine time of this request so far
    double dt_ms = 0;       // engine time of this token (the first: TTFT)
    std::vector<Candidate> top;  // the top_n most likely tokens, when asked
    bool forced = false;    // chosen by a person (force), not by the sampler
};

struct GenerateTimings {
    double load_ms = 0;      // cold load of the model (set by whoever loaded it)
    double tokenize_ms = 0;  // prompt → ids
    double prefill_ms = 0;   // forward passes over the prompt
    double sample_ms = 0;    // every sampling step
    double ttft_ms = 0;      // time to first token: tokenize + prefill + first sample
    double tpot_ms = 0;      // time per output token after the first: mean of forward + sample
    double tpot_p50_ms = 0;  // the median of the same steps: one pause of a busy machine cannot move it
    double total_ms = 0;     // all engine time of this request: TTFT + the decode steps
    int n_prompt = 0;        // prompt tokens
    int n_generated = 0;     // tokens generated
    int n_forward = 0;       // forward passes this request took part in
    double prefill_tok_s() const { return prefill_ms > 0 ? n_prompt * 1000.0 / prefill_ms : 0; }
    double decode_tok_s() const { return tpot_ms > 0 ? 1000.0 / tpot_ms : 0; }
};

struct GenerateResult {
    std::string text;           // generated text (without the prompt, cut before a stop string)
    std::vector<int> prompt_tokens;
    std::vector<int> tokens;    // generated ids
    StopReason stop_reason = StopReason::none;  // set by result(): never none there
    GenerateTimings timings;
};

// Throws the generator's errors for a prompt of n_prompt tokens and n_predict
// new tokens in a context of n_ctx: "prompt is 600 tokens but the context
// holds 512 (n_ctx)", "prompt (10 tokens) + n (600) does not fit …".
// `n_name`: what the caller calls n_predict ("max_tokens" in a lesson).
void check_generation_fits(int n_prompt, int n_predict, int n_ctx, std::string_view n_name = "n");

class Generation {
public:
    // Tokenizes the prompt (timed as tokenize_ms). Throws sixstep::Error for
    // an empty prompt; whether it fits the context is checked when a Stepper
    // attaches it.
    Generation(const TextCodec& codec, std::string_view prompt, const GenerateParams& params);
    // The same with a prompt already tokenized (in tokenize_ms).
    Generation(const TextCodec& codec, std::vector<int> prompt_tokens, const GenerateParams& params,
               double tokenize_ms = 0);
    ~Generation();  // detaches from its stepper, freeing its KV sequence
    Generation(const Generation&) = delete;
    Generation& operator=(const Generation&) = delete;

    // ---- what the stepper reads and reports ------------------------------------
    // The tokens the next forward pass should read: the rest of the prompt
    // (prefill), or the last sampled token (decode) — after a preemption,
    // everything again. Empty when logits wait to be sampled or when done.
    std::span<const int> pending() const;
    int n_past() const { return n_past_; }        // positions already in the KV cache
    bool prefilled() const { return n_forward_ > 0 && n_prefilled_ >= n_prompt(); }  // the prompt was read
    int seq() const { return seq_; }              // KV sequence; -1 when not attached
    Stepper* stepper() const { return stepper_; }
    // n_fed of the pending tokens were read by a forward pass of `ms`
    // milliseconds; logits_row is this request's row when the pass reached
    // the last pending token (empty otherwise).
    void on_forward(int n_fed, double ms, std::span<const float> logits_row);
    // The KV cache no longer holds this request (preempted): recompute it all.
    void on_evicted();
    // The first n positions are already in the KV cache (a shared prefix).
    void on_cached(int n);

    // ---- sampling ---------------------------------------------------------------
    bool has_logits() const { return has_logits_; }
    const std::vector<float>& logits() const { return logits_; }  // [n_vocab] of the last position
    // Samples the next token from logits(), detokenizes it and checks the
    // stop conditions. trace (optional) receives the sampler's tables.
    const TokenEvent& sample(SamplerTrace* trace = nullptr);
    // Takes `token` instead of sampling (a student clicks a candidate); the
    // generation continues from it. Throws for an id outside the vocabulary.
    const TokenEvent& force(int token);
    bool done() const { return stop_reason_ != StopReason::none; }
    void cancel() { if (!done()) stop_reason_ = StopReason::cancelled; }

    const GenerateParams& params() const { return params_; }
    const GenerateResult& result();  // completes the timings
    const GenerateTimings& timings() const { return result_.timings; }
    int n_prompt() const { return static_cast<int>(result_.prompt_tokens.size()); }
    const std::vector<int>& prompt_tokens() const { return result_.prompt_tokens; }
    const std::vector<int>& tokens() const { return result_.tokens; }  // generated so far
    const std::string& text() const { return result_.text; }           // streamed so far
    StopReason stop_reason() const { return stop_reason_; }            // none while running
    int n_forward() const { return n_forward_; }
    double last_forward_ms() const { return last_forward_ms_; }
    const TextCodec& codec() const { return codec_; }

private:
    friend class Stepper;
    void init(std::vector<int> prompt_tokens);
    const TokenEvent& accept(int token, std::chrono::steady_clock::time_point t0);
    double engine_ms() const;  // all engine time so far

    const TextCodec& codec_;
    GenerateParams params_;
    Sampler sampler_;
    std::unique_ptr<TokenTextStream> stream_;
    Stepper* stepper_ = nullptr;
    int seq_ = -1;
    std::vector<int> all_;      // prompt + generated tokens, in order
    int n_past_ = 0;            // of all_, in the KV cache
    int n_prefilled_ = 0;       // prompt tokens read at least once
    int n_forward_ = 0;
    bool has_logits_ = false;
    std::vector<float> logits_;
    TokenEvent event_;
    std::string pending_text_;  // text held back because it may start a stop string
    StopReason stop_reason_ = StopReason::none;
    GenerateResult result_;
    double decode_ms_sum_ = 0;   // forward + sample of the decode steps
    RunningMedian decode_ms_p50_;  // their median
    double step_forward_ms_ = 0; // forward time since the last sample
    double decode_forward_ms_ = 0;  // forward time after the first token
    double last_forward_ms_ = 0;
};

}  // namespace sixstep::llm
