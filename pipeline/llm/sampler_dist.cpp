#include "pipeline/llm/sampler_dist.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::llm {

void sampler_distribution(std::span<const float> logits, const SamplerParams& params, std::vector<float>& out) {
    check_sampler_params(params);
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
    std::vector<Candidate> kept;
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
        for (const Candidate& c : kept)
            if (c.logit == INFINITY) out[static_cast<std::size_t>(c.id)] = 1.0f / static_cast<float>(n_pos_inf);
        return;
    }

    const int n = static_cast<int>(kept.size());
    rank_candidates(kept, params.top_k > 0 ? std::min(params.top_k, n) : n);
    run_sampler_chain(kept, params);
    for (const Candidate& c : kept) out[static_cast<std::size_t>(c.id)] = c.p;
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
