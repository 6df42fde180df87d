// Generator: prompt → tokenize → prefill → decode loop → detokenize, streaming
// each token with its timestamps.
//
//     auto model = LlamaModel::load("model.gguf");
//     CpuBackend cpu(model);
//     auto codec = make_vocab_codec(*model);           // the GGUF's tokenizer
//     Generator gen(cpu, *codec);
//     GenerateParams p;  p.n_predict = 32;  p.sampling.temperature = 0;
//     GenerateResult r = gen.generate("The cat sat on the", p, [](const TokenEvent& e) {
//         std::fputs(e.text.c_str(), stdout);             // stream
//         return true;                                    // false stops early
//     });
//     // r.timings.ttft_ms, r.timings.tpot_ms, r.stop_reason …
//
// The loop is also available one step at a time (Generation), which is how
// the six-stage pipeline walks it: forward, output, postprocess, repeat.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/sampler.h"

namespace sixstep::llm {

// Streams token ids back into text. Byte-level tokens can split a UTF-8
// character, so push() returns only text that is complete so far.
class TokenTextStream {
public:
    virtual ~TokenTextStream() = default;
    virtual std::string push(int token) = 0;
    virtual std::string flush() = 0;  // whatever is still held back
};

// What the generator needs from a tokenizer.
class TextCodec {
public:
    virtual ~TextCodec() = default;
    // Token ids of a prompt, with the beginning-of-sequence token when the
    // model wants one.
    virtual std::vector<int> encode(std::string_view text) const = 0;
    // The text of one token, for display ("Ġmat" shown as " mat").
    virtual std::string piece(int token) const = 0;
    // End of generation (EOS, EOT, …).
    virtual bool is_eog(int token) const = 0;
    virtual std::unique_ptr<TokenTextStream> stream() const = 0;
};

struct GenerateParams {
    int n_predict = 64;                 // most tokens to generate, >= 1
    SamplerParams sampling;             // temperature 0 → greedy
    std::vector<std::string> stop;      // stop when the text contains one of these (not included)
    bool stop_at_eog = true;            // stop at the end-of-generation token
    int top_n = 0;                      // report the n most likely tokens at every step
    int n_ctx = 0;                      // context for this generation; <= 0 → the model's
};

// One generated token, as streamed.
struct TokenEvent {
    int index = 0;          // 0 = first generated token
    int token = 0;          // id
    std::string piece;      // the token's own text
    std::string text;       // new text that became complete with this token (may be empty)
    float p = 0;            // probability of this token before sampling filters (temperature 1)
    double t_ms = 0;        // since generate() started
    double dt_ms = 0;       // this token's latency (the first: TTFT)
    std::vector<Candidate> top;  // the top_n most likely tokens, when asked
};

struct GenerateTimings {
    double load_ms = 0;      // cold load of the model (set by whoever loaded it)
    double tokenize_ms = 0;  // prompt → ids
    double prefill_ms = 0;   // forward over the prompt
    double ttft_ms = 0;      // time to first token: tokenize + prefill + first sample
    double tpot_ms = 0;      // time per output token after the first (mean)
    double total_ms = 0;     // generate() from start to end
    int n_prompt = 0;        // prompt tokens
    int n_generated = 0;     // tokens generated
    double prefill_tok_s() const { return prefill_ms > 0 ? n_prompt * 1000.0 / prefill_ms : 0; }
    double decode_tok_s() const { return tpot_ms > 0 ? 1000.0 / tpot_ms : 0; }
};

struct GenerateResult {
    std::string text;           // generated text (without the prompt, cut before a stop string)
    std::vector<int> prompt_tokens;
    std::vector<int> tokens;    // generated ids
    std::string stop_reason;    // "eos", "max_tokens", "stop_string", "cancelled"
    GenerateTimings timings;
};

// One generation, step by step. Owns a sequence in the KV cache while alive.
class Generation {
public:
    // Tokenizes and checks the prompt: throws sixstep::Error for an empty
    // prompt, a prompt longer than the context, or n_predict beyond it.
    Generation(Backend& backend, KvCache& kv, const TextCodec& codec, std::string_view prompt,
               const GenerateParams& params);
    // The same with a prompt already tokenized (tokenize_ms stays 0).
    Generation(Backend& backend, KvCache& kv, const TextCodec& codec, std::vector<int> prompt_tokens,
               const GenerateParams& params);
    ~Generation();
    Generation(const Generation&) = delete;
    Generation& operator=(const Generation&) = delete;

    // Runs the model: the whole prompt the first time (prefill), then the
    // last sampled token (decode). Fills logits().
    void forward(TensorObserver* observer = nullptr);
    const std::vector<float>& logits() const { return logits_; }  // [n_vocab] of the last position
    bool prefilled() const { return n_forward_ > 0; }
    int n_forward() const { return n_forward_; }

    // Samples the next token from logits(), detokenizes it and checks the
    // stop conditions. trace (optional) receives the sampler's tables.
    // Returns the event; done() tells whether to stop.
    const TokenEvent& sample(SamplerTrace* trace = nullptr);
    bool done() const { return !stop_reason_.empty(); }
    void cancel() { if (stop_reason_.empty()) stop_reason_ = "cancelled"; }

    const GenerateResult& result();  // completes the timings
    const std::vector<int>& prompt_tokens() const { return result_.prompt_tokens; }
    const std::vector<int>& tokens() const { return result_.tokens; }  // generated so far
    const std::string& text() const { return result_.text; }           // streamed so far
    const std::string& stop_reason() const { return stop_reason_; }    // "" while running
    int seq() const { return seq_; }
    const KvCache& kv_cache() const { return kv_; }
    double last_forward_ms() const { return last_forward_ms_; }
    int last_forward_tokens() const { return last_forward_tokens_; }
    const TextCodec& codec() const { return codec_; }

private:
    using Clock = std::chrono::steady_clock;
    double since_start_ms() const;
    void init(std::vector<int> prompt_tokens);

    Backend& backend_;
    KvCache& kv_;
    const TextCodec& codec_;
    GenerateParams params_;
    Sampler sampler_;
    std::unique_ptr<TokenTextStream> stream_;
    int seq_ = -1;
    int n_ctx_ = 0;
    int n_forward_ = 0;
    std::vector<float> logits_;
    std::vector<float> all_logits_;
    TokenEvent event_;
    std::string pending_;  // text held back because it may start a stop string
    std::string stop_reason_;
    GenerateResult result_;
    Clock::time_point start_;
    Clock::time_point last_token_;
    double decode_ms_sum_ = 0;
    double last_forward_ms_ = 0;
    int last_forward_tokens_ = 0;
};

// Throws the generator's errors for a prompt of n_prompt tokens and n_predict
// new tokens in a context of n_ctx: "prompt is 600 tokens but the context
// holds 512 (n_ctx)", "prompt (10 tokens) + n (600) does not fit …".
void check_generation_fits(int n_prompt, int n_predict, int n_ctx);

// The tokenizer stored in a GGUF file (vocab.h), as a TextCodec.
class Vocab;
std::unique_ptr<TextCodec> make_vocab_codec(std::shared_ptr<const Vocab> vocab);

class Generator {
public:
    Generator(Backend& backend, const TextCodec& codec) : backend_(backend), codec_(codec) {}
    // on_token returns false to stop early (stop_reason "cancelled").
    using OnToken = std::function<bool(const TokenEvent&)>;
    GenerateResult generate(std::string_view prompt, const GenerateParams& params, const OnToken& on_token = {},
                            TensorObserver* observer = nullptr);

private:
    Backend& backend_;
    const TextCodec& codec_;
    std::unique_ptr<KvCache> kv_;
};

}  // namespace sixstep::llm
