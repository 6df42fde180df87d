// The sampler's chain as a distribution: what Sampler::sample draws from,
// written out over the whole vocabulary, and a seeded draw from any such
// distribution.
//
// Speculative decoding (serving/speculative.h) needs both: it compares the
// target's final probabilities p with the draft's q token by token
// (accept x with probability min(1, p(x)/q(x))) and, on a rejection, draws
// from normalize(max(0, p − q)) — a distribution no sampler chain produces.
//
//     std::vector<float> p;
//     sampler_distribution(logits, params, p);   // p[id]: 0 for every token a filter removed
//     std::mt19937_64 rng(seed);
//     int id = sample_from(p, rng);
//
// The chain is the one in sampler.h: top-k → top-p → min-p on the softmax at
// temperature 1, then temperature over the survivors. Temperature <= 0 is
// greedy: all the mass on the argmax. The cuts are Sampler's own
// (run_sampler_chain), and tests/llm/test_sampler_dist.cpp holds this
// function to Sampler's final table.
#pragma once
#include <random>
#include <span>
#include <vector>

#include "pipeline/llm/sampler.h"

namespace sixstep::llm {

// out receives n_vocab probabilities summing to 1. Logits that are NaN or −∞
// get probability 0. Throws sixstep::Error when no logit is finite or a
// parameter is out of range (the same checks as Sampler's constructor).
void sampler_distribution(std::span<const float> logits, const SamplerParams& params, std::vector<float>& out);

// Draws an index with probability weight[i] / Σ weight (weights >= 0; they
// need not sum to 1). One uniform number from rng per draw. Throws
// sixstep::Error when the total weight is not positive and finite.
int sample_from(std::span<const float> weight, std::mt19937_64& rng);

}  // namespace sixstep::llm
