#include "pipeline/llm/sampler_dist.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::llm {

namespace {

struct Kept {
    int id;
    float logit;
    float p;
};

// Softmax over the kept candidates, sorted by logit so kept[0] is the
// maximum; the arithmetic (float exp, double sum) is Sampler's, so the
// filters cut at the same places.
void normalize(std::vector<Kept>& kept) {
    const float max_logit = kept.front().logit;
    double sum = 0;
    for (auto& c : kept) {
        c.p = std::exp(c.logit - max_logit);
        sum += c.p;
    }
    for (auto& c : kept) c.p = static_cast<float>(c.p / sum);
}

}  // namespace

void sampler_distribution(std::span<const float> logits, const SamplerParams& params, std::vector<float>& out) {
    if (std::isnan(params.temperature)) throw Error("sampler: temperature is not a number");
    if (!(params.top_p > 0)) throw Error(fmt::format("sampler: top_p must be in (0, 1], got {}", params.top_p));
    if (!(params.min_p < 1)) throw Error(fmt::format("sampler: min_p must be in [0, 1), got {}", params.min_p));
    const int n_vocab = static_cast<int>(logits.size());
    out.assign(logits.size(), 0.0f);
    if (params.temperature <= 0) {
        // Greedy needs no table of candidates (speculative decoding asks for
        // this once per proposal and once per verified row): one pass for
        // the first of the largest usable logits; every +∞ shares the mass.
        int best = -1, n_pos_inf = 0;
        for (int i = 0; i < n_vocab; ++i) {
            const float l = logits[static_cast<std::size_t>(i)];
            if (std::isnan(l) || l == -INFINITY) continue;
            n_pos_inf += l == INFINITY;
            if (best < 0 || l > logits[static_cast<std::size_t>(best)]) best = i;
        }
        if (best < 0) throw Error("sampler: no finite logit to sample from");
        if (n_pos_inf == 0) {
            out[static_cast<std::size_t>(best)] = 1.0f;
            return;
        }
        for (int i = 0; i < n_vocab; ++i)
            if (logits[static_cast<std::size_t>(i)] == INFINITY)
                out[static_cast<std::size_t>(i)] = 1.0f / static_cast<float>(n_pos_inf);
        return;
    }

    // Only tokens with a usable logit can be drawn: NaN and −∞ never are; a
    // +∞ logit takes all the mass (shared with any other +∞).
    std::vector<Kept> kept;
    kept.reserve(logits.size());
    int n_pos_inf = 0;
    for (int i = 0; i < n_vocab; ++i) {
        const float l = logits[static_cast<std::size_t>(i)];
        if (std::isnan(l) || l == -INFINITY) continue;
        if (l == INFINITY) ++n_pos_inf;
        kept.push_back({i, l, 0});
    }
    if (kept.empty()) throw Error("sampler: no finite logit to sample from");
    if (n_pos_inf > 0) {
        for (const Kept& c : kept)
            if (c.logit == INFINITY) out[static_cast<std::size_t>(c.id)] = 1.0f / static_cast<float>(n_pos_inf);
        return;
    }

    const auto by_logit = [](const Kept& a, const Kept& b) { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id); };

    const int n = static_cast<int>(kept.size());
    const int k = params.top_k > 0 ? std::min(params.top_k, n) : n;
    std::partial_sort(kept.begin(), kept.begin() + k, kept.end(), by_logit);
    kept.resize(static_cast<std::size_t>(k));  // top-k (all of them when off)
    normalize(kept);

    if (params.top_p < 1) {  // top-p: the smallest prefix whose mass reaches p
        double mass = 0;
        std::size_t keep = kept.size();
        for (std::size_t i = 0; i < kept.size(); ++i) {
            mass += kept[i].p;
            if (mass >= params.top_p) {
                keep = i + 1;
                break;
            }
        }
        kept.resize(keep);
        normalize(kept);
    }
    if (params.min_p > 0) {  // min-p: at least min_p × the top token's probability
        const float floor_p = params.min_p * kept.front().p;
        std::size_t keep = 1;
        while (keep < kept.size() && kept[keep].p >= floor_p) ++keep;
        kept.resize(keep);
        normalize(kept);
    }
    // Temperature over the survivors, as Sampler computes it: exp((logit −
    // best) / T), every exponent ≤ 0. logit / T overflowed to ∞ for T below
    // about 1e-37, and ∞ − ∞ made every share NaN.
    const double best = kept.front().logit, t = params.temperature;
    double sum = 0;
    for (auto& c : kept) sum += c.p = static_cast<float>(std::exp((c.logit - best) / t));
    for (auto& c : kept) c.p = static_cast<float>(c.p / sum);
    for (const Kept& c : kept) out[static_cast<std::size_t>(c.id)] = c.p;
}

int sample_from(std::span<const float> weight, std::mt19937_64& rng) {
    double total = 0;
    for (float w : weight) {
        if (!(w >= 0)) throw Error(fmt::format("sample_from: weight {} is not a probability", w));
        total += w;
    }
    if (!(total > 0) || !std::isfinite(total))
        throw Error(fmt::format("sample_from: the weights sum to {}, not a positive finite number", total));
    const double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng) * total;
    double acc = 0;
    int last = -1;
    for (std::size_t i = 0; i < weight.size(); ++i) {
        if (weight[i] <= 0) continue;
        acc += weight[i];
        last = static_cast<int>(i);
        if (r < acc) return last;
    }
    return last;  // r fell past the last positive weight by rounding
}

}  // namespace sixstep::llm
