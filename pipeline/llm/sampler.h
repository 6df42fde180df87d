// Sampler: turns the logits of one position into the next token.
//
// The chain runs in llama.cpp's usual order:
//     top-k → top-p → min-p → temperature → seeded draw
// The three filters look at the distribution at temperature 1 (softmax of the
// raw logits) and only remove candidates; temperature then reshapes what is
// left, and a seeded generator draws one. Temperature 0 (or below) is greedy:
// the most likely token, no randomness. Any positive temperature is valid: it
// is applied in log space, so a tiny one is greedy too and a huge one gives
// equal odds. Logits that are NaN or infinite are an error naming the token
// being generated, never a draw.
//
// For teaching, sample() can record the probability table before and after
// each filter (SamplerTrace), so a lesson can show what top-k cut away.
//
//     Sampler s({.temperature = 0.8f, .top_k = 40, .seed = 42});
//     int token = s.sample(logits);   // logits: n_vocab floats of one position
#pragma once
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace sixstep::llm {

struct SamplerParams {
    float temperature = 0.8f;  // > 0 reshapes p ∝ exp(logit / T) (lower: sharper); <= 0 → greedy
    int top_k = 40;            // keep the k most likely tokens; <= 0 → off
    float top_p = 0.95f;       // keep the smallest set whose probability reaches p; >= 1 → off
    float min_p = 0.05f;       // drop tokens below min_p × p(top token); <= 0 → off
    std::uint64_t seed = 0;    // seed of the draw: the same seed gives the same text
};

// One row of a probability table.
struct Candidate {
    int id = 0;
    float logit = 0;  // the raw logit (temperature changes p, not this)
    float p = 0;      // probability after renormalizing over the kept candidates
};

// The table after each stage of the chain (sorted by p, descending).
struct SamplerStage {
    std::string name;  // "softmax", "top_k", "top_p", "min_p", "temperature", "greedy", "dist"
    // The most likely kept candidates (max_rows of them), then the drawn
    // token's row when it was kept but ranks below those: the table can
    // always show the token that was taken.
    std::vector<Candidate> candidates;
    int n_kept = 0;                     // how many candidates survive this stage
};
struct SamplerTrace {
    int max_rows = 10;  // rows recorded per stage
    std::vector<SamplerStage> stages;
    int chosen = -1;
    float chosen_p = 0;    // probability of the chosen token in the final table
    int chosen_rank = -1;  // its place among all tokens by logit: 0 = the most likely
};

// Throws sixstep::Error for a NaN temperature, a top_p outside (0, 1] or a
// min_p outside [0, 1), naming the value.
void check_sampler_params(const SamplerParams& params);

// Puts the k candidates with the largest logits first, in order (ties: the
// lower id first); the rest follow in no order.
void rank_candidates(std::vector<Candidate>& cand, int k);

// The chain once the candidates are ranked: `cand` holds the candidates,
// its first min(top_k, size) sorted by logit (all of them when top-k is
// off). Keeps the top k, then cuts top-p and min-p on the softmax at
// temperature 1, then sets each survivor's p to its share at the
// temperature (> 0); each stage is recorded in `trace` when given.
// Sampler::sample and sampler_distribution both run it, so the table a
// lesson shows and the distribution speculative decoding compares cut at
// the same places.
void run_sampler_chain(std::vector<Candidate>& cand, const SamplerParams& params, SamplerTrace* trace = nullptr);

class Sampler {
public:
    explicit Sampler(const SamplerParams& params = {});
    const SamplerParams& params() const { return params_; }
    bool greedy() const { return params_.temperature <= 0; }

    // Picks the next token. trace (optional) receives the tables.
    int sample(std::span<const float> logits, SamplerTrace* trace = nullptr);

    void reseed(std::uint64_t seed);

private:
    SamplerParams params_;
    std::mt19937_64 rng_;
    std::vector<Candidate> cand_;
    std::uint64_t n_sampled_ = 0;  // tokens chosen so far: the step named in errors
};

// The probabilities of every token (softmax at temperature 1), and the n most
// likely ones, most likely first. For "what does the model think comes next".
std::vector<float> softmax(std::span<const float> logits);
std::vector<Candidate> top_n(std::span<const float> logits, int n);

// log Σ exp(logits), in double, shifted by the largest so nothing
// overflows: a token's probability at temperature 1 is exp(logit − this),
// its surprise (negative log-likelihood) this − logit. Throws sixstep::Error
// for NaN or infinite logits, as softmax does.
double log_sum_exp(std::span<const float> logits);

// The index of the largest logit (ties: the lowest index).
int argmax(std::span<const float> logits);

}  // namespace sixstep::llm
