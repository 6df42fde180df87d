#include "pipeline/llm/sampler.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"

namespace sixstep::llm {

namespace {

// Softmax over the candidates' logits, in place; they are sorted by logit
// (descending) so cand[0] holds the maximum.
void normalize(std::vector<Candidate>& cand) {
    if (cand.empty()) return;
    const float max_logit = cand.front().logit;
    double sum = 0;
    for (auto& c : cand) {
        c.p = std::exp(c.logit - max_logit);
        sum += c.p;
    }
    for (auto& c : cand) c.p = static_cast<float>(c.p / sum);
}

void record(SamplerTrace* trace, const char* name, const std::vector<Candidate>& cand) {
    if (!trace) return;
    SamplerStage st;
    st.name = name;
    st.n_kept = static_cast<int>(cand.size());
    const std::size_t rows = std::min<std::size_t>(cand.size(), static_cast<std::size_t>(std::max(0, trace->max_rows)));
    st.candidates.assign(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(rows));
    trace->stages.push_back(std::move(st));
}

// The drawn token in every table before the draw, when it ranks below the
// rows recorded. Every stage keeps a prefix of the tokens sorted by logit,
// and the drawn one is in the last prefix, so every stage kept it; its share
// there follows from the stage's top row: p ∝ exp(logit) before the
// temperature, exp(logit / T) at it.
void record_drawn(SamplerTrace& trace, const Candidate& drawn, std::size_t rank, float temperature) {
    for (SamplerStage& st : trace.stages) {
        if (st.candidates.empty() || rank < st.candidates.size()) continue;
        const Candidate& top = st.candidates.front();
        const double t = st.name == "temperature" ? temperature : 1.0;
        st.candidates.push_back({drawn.id, drawn.logit, static_cast<float>(top.p * std::exp((drawn.logit - top.logit) / t))});
    }
}

bool by_logit(const Candidate& a, const Candidate& b) { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id); }

// NaN or ±inf logits mean the forward pass overflowed (or the weights hold
// such values); any table or draw made from them would be garbage. step: the
// sampler's step (1 = the first token it chose), 0 when not sampling.
void require_finite(std::span<const float> logits, const char* who, std::uint64_t step) {
    for (std::size_t i = 0; i < logits.size(); ++i)
        if (!std::isfinite(logits[i]))
            throw Error(fmt::format("{}{}: the logit of token id {} is {}: the forward pass overflowed (check the "
                                    "model's weights)",
                                    who, step ? fmt::format(", step {}", step) : std::string(), i, logits[i]));
}

}  // namespace

void rank_candidates(std::vector<Candidate>& cand, int k) {
    k = std::clamp(k, 0, static_cast<int>(cand.size()));
    std::partial_sort(cand.begin(), cand.begin() + k, cand.end(), by_logit);
}

void check_sampler_params(const SamplerParams& params) {
    if (std::isnan(params.temperature)) throw Error("sampler: temperature is not a number");
    if (!(params.top_p > 0)) throw Error(fmt::format("sampler: top_p must be in (0, 1], got {}", params.top_p));
    if (!(params.min_p < 1)) throw Error(fmt::format("sampler: min_p must be in [0, 1), got {}", params.min_p));
}

void run_sampler_chain(std::vector<Candidate>& cand, const SamplerParams& params, SamplerTrace* trace) {
    // top-k: keep the k most likely.
    const int n = static_cast<int>(cand.size());
    if (params.top_k > 0 && params.top_k < n) cand.resize(static_cast<std::size_t>(params.top_k));
    normalize(cand);
    if (params.top_k > 0) record(trace, "top_k", cand);

    // top-p (nucleus): keep the smallest prefix whose mass reaches p.
    if (params.top_p < 1) {
        double mass = 0;
        std::size_t keep = cand.size();
        for (std::size_t i = 0; i < cand.size(); ++i) {
            mass += cand[i].p;
            if (mass >= params.top_p) {
                keep = i + 1;
                break;
            }
        }
        cand.resize(keep);
        normalize(cand);
        record(trace, "top_p", cand);
    }

    // min-p: drop tokens less likely than min_p × the top token.
    if (params.min_p > 0) {
        const float floor_p = params.min_p * cand.front().p;
        std::size_t keep = 1;
        while (keep < cand.size() && cand[keep].p >= floor_p) ++keep;
        cand.resize(keep);
        normalize(cand);
        record(trace, "min_p", cand);
    }

    // temperature: p ∝ exp(logit / T), computed as exp((logit − best) / T).
    // Every exponent is then ≤ 0: a tiny T gives 1 for the best and 0 for the
    // rest (greedy) where logit / T alone would overflow to inf − inf = NaN;
    // a huge T gives equal odds. The logits themselves are kept as they are.
    const double best = cand.front().logit, t = params.temperature;
    double sum = 0;
    for (auto& c : cand) sum += c.p = static_cast<float>(std::exp((c.logit - best) / t));
    for (auto& c : cand) c.p = static_cast<float>(c.p / sum);
    record(trace, "temperature", cand);
}

Sampler::Sampler(const SamplerParams& params) : params_(params), rng_(params.seed) { check_sampler_params(params_); }

void Sampler::reseed(std::uint64_t seed) {
    params_.seed = seed;
    rng_.seed(seed);
}

int Sampler::sample(std::span<const float> logits, SamplerTrace* trace) {
    if (logits.empty()) throw Error("sampler: no logits");
    throw_if_cancelled();  // once per token: where Ctrl+C stops a generation
    ++n_sampled_;
    require_finite(logits, "sampler", n_sampled_);
    if (trace) trace->stages.clear();
    const int n_vocab = static_cast<int>(logits.size());

    if (greedy()) {
        const int id = argmax(logits);
        if (trace) {
            // Even when greedy, show the table the choice was made from.
            cand_ = top_n(logits, std::max(1, trace->max_rows));
            record(trace, "softmax", cand_);
            trace->stages.back().n_kept = n_vocab;
            record(trace, "greedy", {cand_.front()});
            trace->chosen = id;
            trace->chosen_p = cand_.front().p;
            trace->chosen_rank = 0;
        }
        return id;
    }

    // Candidates sorted by logit. With top-k on, a partial sort of k suffices.
    cand_.resize(logits.size());
    for (int i = 0; i < n_vocab; ++i) cand_[i] = Candidate{i, logits[i], 0};
    const int k = params_.top_k > 0 ? std::min(params_.top_k, n_vocab) : n_vocab;
    rank_candidates(cand_, trace ? n_vocab : k);  // the trace's first table shows every token
    if (trace) {
        normalize(cand_);
        record(trace, "softmax", cand_);
    }

    run_sampler_chain(cand_, params_, trace);

    // seeded draw from what is left.
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const double r = uniform(rng_);
    double acc = 0;
    std::size_t pick = cand_.size() - 1;
    for (std::size_t i = 0; i < cand_.size(); ++i) {
        acc += cand_[i].p;
        if (r < acc) {
            pick = i;
            break;
        }
    }
    if (trace) {
        record_drawn(*trace, cand_[pick], pick, params_.temperature);
        record(trace, "dist", {cand_[pick]});
        trace->chosen = cand_[pick].id;
        trace->chosen_p = cand_[pick].p;
        trace->chosen_rank = static_cast<int>(pick);
    }
    return cand_[pick].id;
}

std::vector<float> softmax(std::span<const float> logits) {
    std::vector<float> p(logits.size());
    if (logits.empty()) return p;
    require_finite(logits, "softmax", 0);
    const float m = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        p[i] = std::exp(logits[i] - m);
        sum += p[i];
    }
    for (auto& x : p) x = static_cast<float>(x / sum);
    return p;
}

double log_sum_exp(std::span<const float> logits) {
    if (logits.empty()) throw Error("log-sum-exp of no logits");
    require_finite(logits, "next-token probabilities", 0);
    const double m = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - m);
    return m + std::log(sum);
}

std::vector<Candidate> top_n(std::span<const float> logits, int n) {
    const int n_vocab = static_cast<int>(logits.size());
    n = std::clamp(n, 0, n_vocab);
    if (n_vocab == 0) return {};
    const double lse = log_sum_exp(logits);
    std::vector<Candidate> all(n_vocab);
    for (int i = 0; i < n_vocab; ++i) all[i] = Candidate{i, logits[i], 0};
    rank_candidates(all, n);
    all.resize(n);
    for (auto& c : all) c.p = static_cast<float>(std::exp(static_cast<double>(c.logit) - lse));
    return all;
}

int argmax(std::span<const float> logits) {
    int best = 0;
    for (int i = 1; i < static_cast<int>(logits.size()); ++i)
        if (logits[i] > logits[best]) best = i;
    return best;
}

}  // namespace sixstep::llm
