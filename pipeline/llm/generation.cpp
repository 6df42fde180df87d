#include "pipeline/llm/generation.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/llm/stepper.h"

namespace sixstep::llm {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

void check_generation_fits(int n_prompt, int n_predict, int n_ctx, std::string_view n_name) {
    if (n_predict < 1) throw Error(fmt::format("{} = {}: ask for at least one token", n_name, n_predict));
    if (n_prompt == 0) throw Error("prompt is empty after tokenization");
    if (n_prompt > n_ctx)
        throw Error(fmt::format("prompt is {} tokens but the context holds {} (n_ctx)", n_prompt, n_ctx));
    // The last generated token is never fed back, so n_prompt + n_predict - 1
    // positions are needed; summed in 64 bits, as n_predict may be INT_MAX.
    if (static_cast<long long>(n_prompt) + n_predict - 1 > n_ctx)
        throw Error(fmt::format("prompt ({} tokens) + {} ({}) does not fit in the context of {} tokens (n_ctx); "
                                "ask for at most {} tokens (the last one is never fed back, so it needs no place)",
                                n_prompt, n_name, n_predict, n_ctx, n_ctx - n_prompt + 1));
}

Generation::Generation(const TextCodec& codec, std::string_view prompt, const GenerateParams& params)
    : codec_(codec), params_(params), sampler_(params.sampling), stream_(codec.stream()) {
    if (prompt.empty()) throw Error("prompt is empty: give at least one character to continue from");
    const auto t0 = Clock::now();
    std::vector<int> tokens = codec_.encode(prompt);
    result_.timings.tokenize_ms = ms_since(t0);
    init(std::move(tokens));
}

Generation::Generation(const TextCodec& codec, std::vector<int> prompt_tokens, const GenerateParams& params,
                       double tokenize_ms)
    : codec_(codec), params_(params), sampler_(params.sampling), stream_(codec.stream()) {
    result_.timings.tokenize_ms = tokenize_ms;
    init(std::move(prompt_tokens));
}

void Generation::init(std::vector<int> prompt_tokens) {
    if (prompt_tokens.empty()) throw Error("prompt is empty after tokenization");
    if (params_.n_predict < 1) throw Error(fmt::format("n = {}: ask for at least one token", params_.n_predict));
    all_ = prompt_tokens;
    result_.prompt_tokens = std::move(prompt_tokens);
    result_.timings.n_prompt = n_prompt();
}

Generation::~Generation() {
    if (stepper_) stepper_->detach(*this);
}

double Generation::engine_ms() const {
    const GenerateTimings& t = result_.timings;
    return t.tokenize_ms + t.prefill_ms + t.sample_ms + decode_forward_ms_;
}

std::span<const int> Generation::pending() const {
    if (done() || has_logits_) return {};
    return std::span<const int>(all_).subspan(static_cast<std::size_t>(n_past_));
}

void Generation::on_forward(int n_fed, double ms, std::span<const float> logits_row) {
    n_past_ += n_fed;
    ++n_forward_;
    result_.timings.n_forward = n_forward_;
    last_forward_ms_ = ms;
    if (result_.tokens.empty()) {
        result_.timings.prefill_ms += ms;  // before the first token, every pass is the prompt's
        n_prefilled_ = std::max(n_prefilled_, std::min(n_past_, n_prompt()));
    } else {
        step_forward_ms_ += ms;
        decode_forward_ms_ += ms;
    }
    if (!logits_row.empty()) {
        logits_.assign(logits_row.begin(), logits_row.end());
        has_logits_ = true;
    }
}

void Generation::on_evicted() {
    n_past_ = 0;
    has_logits_ = false;
}

void Generation::on_cached(int n) {
    if (n < 0 || n >= static_cast<int>(all_.size()))
        throw Error(fmt::format("generation: a cached prefix of {} tokens must leave at least one token to read", n));
    n_past_ = n;
    n_prefilled_ = std::max(n_prefilled_, std::min(n, n_prompt()));
}

const TokenEvent& Generation::sample(SamplerTrace* trace) {
    if (done()) throw Error("generation: already finished");
    if (!has_logits_) throw Error("generation: run forward before sampling");
    const auto t0 = Clock::now();
    return accept(sampler_.sample(logits_, trace), t0);
}

const TokenEvent& Generation::force(int token) {
    if (done()) throw Error("generation: already finished");
    if (!has_logits_) throw Error("generation: run forward before choosing a token");
    const int n_vocab = static_cast<int>(logits_.size());
    if (token < 0 || token >= n_vocab)
        throw Error(fmt::format("token id {} does not exist: the vocabulary has ids 0..{}", token, n_vocab - 1));
    accept(token, Clock::now());
    event_.forced = true;
    return event_;
}

const TokenEvent& Generation::accept(int token, std::chrono::steady_clock::time_point t0) {
    has_logits_ = false;

    event_ = TokenEvent{};
    event_.index = static_cast<int>(result_.tokens.size());
    event_.token = token;
    event_.piece = codec_.piece(token);
    // Probability at temperature 1, before any filter.
    event_.p = static_cast<float>(std::exp(static_cast<double>(logits_[token]) - log_sum_exp(logits_)));
    if (params_.top_n > 0) event_.top = top_n(logits_, params_.top_n);
    result_.tokens.push_back(token);
    all_.push_back(token);
    result_.timings.n_generated = static_cast<int>(result_.tokens.size());

    if (params_.stop_at_eog && codec_.is_eog(token)) {
        stop_reason_ = StopReason::eos;
    } else {
        pending_text_ += stream_->push(token);
        // A stop string ends the text where it starts.
        std::size_t cut = std::string::npos;
        for (const auto& s : params_.stop)
            if (!s.empty()) cut = std::min(cut, pending_text_.find(s));
        if (cut != std::string::npos) {
            pending_text_.resize(cut);
            stop_reason_ = StopReason::stop_string;
        } else if (static_cast<int>(result_.tokens.size()) >= params_.n_predict) {
            stop_reason_ = StopReason::max_tokens;
        }
    }
    if (done()) {
        if (stop_reason_ != StopReason::stop_string) pending_text_ += stream_->flush();
        event_.text = std::move(pending_text_);
        pending_text_.clear();
    } else {
        // Hold back the longest tail of the text that could begin a stop string.
        std::size_t hold = 0;
        for (const auto& s : params_.stop)
            for (std::size_t k = std::min(s.size() - 1, pending_text_.size()); k > hold; --k)
                if (pending_text_.compare(pending_text_.size() - k, k, s, 0, k) == 0) {
                    hold = k;
                    break;
                }
        event_.text = pending_text_.substr(0, pending_text_.size() - hold);
        pending_text_.erase(0, pending_text_.size() - hold);
    }
    result_.text += event_.text;

    // The clocks: this sample's own time, and what this token cost.
    const double dt = ms_since(t0);
    GenerateTimings& t = result_.timings;
    t.sample_ms += dt;
    if (event_.index == 0) {
        t.ttft_ms = t.tokenize_ms + t.prefill_ms + dt;
        event_.dt_ms = t.ttft_ms;
    } else {
        event_.dt_ms = step_forward_ms_ + dt;
        decode_ms_sum_ += event_.dt_ms;
        decode_ms_p50_.add(event_.dt_ms);
    }
    step_forward_ms_ = 0;
    event_.t_ms = engine_ms();
    return event_;
}

const GenerateResult& Generation::result() {
    GenerateTimings& t = result_.timings;
    const int n_decode = t.n_generated - 1;
    t.tpot_ms = n_decode > 0 ? decode_ms_sum_ / n_decode : 0;
    t.tpot_p50_ms = decode_ms_p50_.get();
    t.total_ms = engine_ms();
    result_.stop_reason = done() ? stop_reason_ : StopReason::cancelled;
    return result_;
}

}  // namespace sixstep::llm
