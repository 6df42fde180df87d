#include "pipeline/llm/generator.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/vocab/detokenizer.h"
#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::llm {

namespace {
double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

void check_generation_fits(int n_prompt, int n_predict, int n_ctx) {
    if (n_predict < 1) throw Error(fmt::format("n = {}: ask for at least one token", n_predict));
    if (n_prompt == 0) throw Error("prompt is empty after tokenization");
    if (n_prompt > n_ctx)
        throw Error(fmt::format("prompt is {} tokens but the context holds {} (n_ctx)", n_prompt, n_ctx));
    // The last generated token is never fed back, so n_prompt + n_predict - 1
    // positions are needed.
    if (n_prompt + n_predict - 1 > n_ctx)
        throw Error(fmt::format("prompt ({} tokens) + n ({}) does not fit in the context of {} tokens (n_ctx); "
                                "ask for at most {} tokens",
                                n_prompt, n_predict, n_ctx, n_ctx - n_prompt + 1));
}

Generation::Generation(Backend& backend, KvCache& kv, const TextCodec& codec, std::string_view prompt,
                       const GenerateParams& params)
    : backend_(backend), kv_(kv), codec_(codec), params_(params), sampler_(params.sampling), stream_(codec.stream()) {
    start_ = Clock::now();
    if (prompt.empty()) throw Error("prompt is empty: give at least one character to continue from");
    std::vector<int> tokens = codec_.encode(prompt);
    result_.timings.tokenize_ms = since_start_ms();
    init(std::move(tokens));
}

Generation::Generation(Backend& backend, KvCache& kv, const TextCodec& codec, std::vector<int> prompt_tokens,
                       const GenerateParams& params)
    : backend_(backend), kv_(kv), codec_(codec), params_(params), sampler_(params.sampling), stream_(codec.stream()) {
    start_ = Clock::now();
    init(std::move(prompt_tokens));
}

void Generation::init(std::vector<int> prompt_tokens) {
    n_ctx_ = kv_.params().n_ctx;
    if (params_.n_ctx > 0) n_ctx_ = std::min(n_ctx_, params_.n_ctx);
    result_.prompt_tokens = std::move(prompt_tokens);
    const int n_prompt = static_cast<int>(result_.prompt_tokens.size());
    result_.timings.n_prompt = n_prompt;
    check_generation_fits(n_prompt, params_.n_predict, n_ctx_);
    seq_ = kv_.add_sequence();
    last_token_ = start_;
}

Generation::~Generation() {
    if (seq_ >= 0 && kv_.has_sequence(seq_)) kv_.free_sequence(seq_);
}

double Generation::since_start_ms() const { return ms_between(start_, Clock::now()); }

void Generation::forward(TensorObserver* observer) {
    if (done()) throw Error("generation: already finished");
    const auto t0 = Clock::now();
    Batch batch;
    if (n_forward_ == 0) {
        batch = Batch::prefill(result_.prompt_tokens, seq_);
    } else {
        if (result_.tokens.empty()) throw Error("generation: sample a token before the next forward");
        const int pos = result_.timings.n_prompt + static_cast<int>(result_.tokens.size()) - 1;
        batch.add(result_.tokens.back(), pos, seq_, true);
    }
    backend_.forward(kv_, batch, all_logits_, observer);
    const int n_vocab = backend_.model().hparams().n_vocab;
    logits_.assign(all_logits_.end() - n_vocab, all_logits_.end());
    last_forward_ms_ = ms_between(t0, Clock::now());
    last_forward_tokens_ = batch.size();
    if (n_forward_ == 0) result_.timings.prefill_ms = last_forward_ms_;
    ++n_forward_;
}

const TokenEvent& Generation::sample(SamplerTrace* trace) {
    if (done()) throw Error("generation: already finished");
    if (n_forward_ == 0 || n_forward_ != static_cast<int>(result_.tokens.size()) + 1)
        throw Error("generation: run forward before sampling");
    const int token = sampler_.sample(logits_, trace);
    const auto now = Clock::now();

    event_ = TokenEvent{};
    event_.index = static_cast<int>(result_.tokens.size());
    event_.token = token;
    event_.piece = codec_.piece(token);
    {
        // Probability at temperature 1, before any filter.
        const float m = *std::max_element(logits_.begin(), logits_.end());
        double sum = 0;
        for (float l : logits_) sum += std::exp(static_cast<double>(l - m));
        event_.p = static_cast<float>(std::exp(static_cast<double>(logits_[token] - m)) / sum);
    }
    if (params_.top_n > 0) event_.top = top_n(logits_, params_.top_n);
    event_.t_ms = ms_between(start_, now);
    event_.dt_ms = ms_between(last_token_, now);
    last_token_ = now;
    if (event_.index == 0)
        result_.timings.ttft_ms = event_.t_ms;
    else
        decode_ms_sum_ += event_.dt_ms;
    result_.tokens.push_back(token);
    result_.timings.n_generated = static_cast<int>(result_.tokens.size());

    if (params_.stop_at_eog && codec_.is_eog(token)) {
        stop_reason_ = "eos";
    } else {
        pending_ += stream_->push(token);
        // A stop string ends the text where it starts.
        std::size_t cut = std::string::npos;
        for (const auto& s : params_.stop)
            if (!s.empty()) cut = std::min(cut, pending_.find(s));
        if (cut != std::string::npos) {
            pending_.resize(cut);
            stop_reason_ = "stop_string";
        } else if (static_cast<int>(result_.tokens.size()) >= params_.n_predict) {
            stop_reason_ = "max_tokens";
        }
    }
    if (done()) {
        if (stop_reason_ != "stop_string") pending_ += stream_->flush();
        event_.text = std::move(pending_);
        pending_.clear();
    } else {
        // Hold back the longest tail of the text that could begin a stop string.
        std::size_t hold = 0;
        for (const auto& s : params_.stop)
            for (std::size_t k = std::min(s.size() - 1, pending_.size()); k > hold; --k)
                if (pending_.compare(pending_.size() - k, k, s, 0, k) == 0) {
                    hold = k;
                    break;
                }
        event_.text = pending_.substr(0, pending_.size() - hold);
        pending_.erase(0, pending_.size() - hold);
    }
    result_.text += event_.text;
    return event_;
}

const GenerateResult& Generation::result() {
    GenerateTimings& t = result_.timings;
    const int n_decode = t.n_generated - 1;
    t.tpot_ms = n_decode > 0 ? decode_ms_sum_ / n_decode : 0;
    t.total_ms = ms_between(start_, last_token_ > start_ ? last_token_ : Clock::now());
    result_.stop_reason = stop_reason_.empty() ? "cancelled" : stop_reason_;
    return result_;
}

namespace {

class VocabStream : public TokenTextStream {
public:
    explicit VocabStream(std::shared_ptr<const Vocab> vocab) : vocab_(std::move(vocab)), detok_(*vocab_) {}
    std::string push(int token) override { return detok_.push(token); }
    std::string flush() override { return detok_.flush(); }

private:
    std::shared_ptr<const Vocab> vocab_;
    StreamingDetokenizer detok_;
};

class VocabCodec : public TextCodec {
public:
    explicit VocabCodec(std::shared_ptr<const Vocab> vocab) : vocab_(std::move(vocab)) {}
    std::vector<int> encode(std::string_view text) const override {
        const auto ids = vocab_->tokenize(text, /*add_special=*/true, /*parse_special=*/false);
        return {ids.begin(), ids.end()};
    }
    std::string piece(int token) const override { return vocab_->token_to_piece(token, /*special=*/true); }
    bool is_eog(int token) const override { return vocab_->is_eog(token); }
    std::unique_ptr<TokenTextStream> stream() const override { return std::make_unique<VocabStream>(vocab_); }

private:
    std::shared_ptr<const Vocab> vocab_;
};

}  // namespace

std::unique_ptr<TextCodec> make_vocab_codec(std::shared_ptr<const Vocab> vocab) {
    return std::make_unique<VocabCodec>(std::move(vocab));
}

GenerateResult Generator::generate(std::string_view prompt, const GenerateParams& params, const OnToken& on_token,
                                   TensorObserver* observer) {
    const int n_ctx = params.n_ctx > 0 ? params.n_ctx : backend_.model().hparams().n_ctx;
    if (!kv_ || kv_->params().n_ctx != n_ctx) kv_ = backend_.make_kv_cache(n_ctx);
    Generation g(backend_, *kv_, codec_, prompt, params);
    while (!g.done()) {
        g.forward(observer);
        const TokenEvent& ev = g.sample();
        if (on_token && !on_token(ev)) g.cancel();
    }
    return g.result();
}

}  // namespace sixstep::llm
