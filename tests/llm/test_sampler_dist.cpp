// The sampler's final distribution written out (sampler_dist.h) must be the
// table Sampler::sample draws from, for every setting of the chain; a seeded
// draw from an arbitrary distribution must follow it.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/llm/sampler.h"
#include "pipeline/llm/sampler_dist.h"

using namespace sixstep::llm;

namespace {

// A bumpy 300-token distribution with ties, so every filter has work to do.
std::vector<float> bumpy_logits() {
    std::vector<float> l(300);
    std::mt19937_64 rng(5);
    std::normal_distribution<float> n(0.0f, 2.0f);
    for (auto& x : l) x = n(rng);
    l[17] = l[42];  // a tie
    return l;
}

}  // namespace

TEST_CASE("sampler_distribution: equals the final table of Sampler::sample for every chain setting") {
    const std::vector<float> logits = bumpy_logits();
    struct Case {
        float temperature;
        int top_k;
        float top_p;
        float min_p;
    };
    const Case cases[] = {{1.0f, 40, 0.95f, 0.05f}, {0.7f, 0, 1.0f, 0.0f}, {1.5f, 10, 1.0f, 0.0f},
                          {1.0f, 0, 0.5f, 0.0f},    {0.3f, 0, 1.0f, 0.2f}, {2.0f, 300, 0.9f, 0.01f},
                          {1.0f, 1, 1.0f, 0.0f}};
    for (const Case& c : cases) {
        SamplerParams sp{.temperature = c.temperature, .top_k = c.top_k, .top_p = c.top_p, .min_p = c.min_p};
        std::vector<float> p;
        sampler_distribution(logits, sp, p);
        SamplerTrace trace;
        trace.max_rows = static_cast<int>(logits.size());
        Sampler(sp).sample(logits, &trace);
        const SamplerStage* final_stage = nullptr;
        for (const SamplerStage& st : trace.stages)
            if (st.name == "temperature") final_stage = &st;
        REQUIRE(final_stage);
        CAPTURE(c.temperature);
        CAPTURE(c.top_k);
        CAPTURE(c.top_p);
        CAPTURE(c.min_p);
        int n_nonzero = 0;
        double sum = 0;
        for (float x : p) {
            n_nonzero += x > 0;
            sum += x;
        }
        CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
        CHECK(n_nonzero == final_stage->n_kept);
        for (const Candidate& cand : final_stage->candidates) CHECK(p[cand.id] == doctest::Approx(cand.p).epsilon(1e-6));
    }
}

TEST_CASE("sampler_distribution: a tiny temperature is greedy, as in Sampler, not NaN") {
    // logit / T overflowed to ∞ below T ≈ 1e-37 and ∞ − ∞ made the shares
    // NaN: speculative decoding stopped with "weight -nan is not a probability".
    const std::vector<float> logits = bumpy_logits();
    const int best = argmax(logits);
    for (float t : {1e-37f, 1e-38f, 1e-39f, 1e-44f}) {
        CAPTURE(t);
        const SamplerParams sp{.temperature = t, .top_k = 0, .top_p = 1, .min_p = 0};
        std::vector<float> p;
        sampler_distribution(logits, sp, p);
        CHECK(p[static_cast<std::size_t>(best)] == 1.0f);
        double sum = 0;
        for (float x : p) sum += x;
        CHECK(sum == 1.0);
        CHECK(Sampler(sp).sample(logits) == best);
    }
}

TEST_CASE("sampler_distribution: greedy is one-hot on the argmax, unusable logits get nothing") {
    std::vector<float> logits = bumpy_logits();
    std::vector<float> p;
    sampler_distribution(logits, {.temperature = 0}, p);
    const int best = argmax(logits);
    CHECK(p[best] == 1.0f);
    double sum = 0;
    for (float x : p) sum += x;
    CHECK(sum == 1.0);

    logits[best] = NAN;
    logits[3] = -INFINITY;
    sampler_distribution(logits, {.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0}, p);
    CHECK(p[best] == 0.0f);
    CHECK(p[3] == 0.0f);

    // Greedy's own pass: unusable logits skipped (a NaN first included), the
    // first of equal maxima, +∞ sharing the mass.
    sampler_distribution(std::vector<float>{NAN, 1.0f, 3.0f, -INFINITY, 3.0f}, {.temperature = 0}, p);
    CHECK(p == std::vector<float>{0, 0, 1, 0, 0});
    sampler_distribution(std::vector<float>{INFINITY, 1.0f, INFINITY}, {.temperature = 0}, p);
    CHECK(p == std::vector<float>{0.5f, 0, 0.5f});

    const std::vector<float> none = {-INFINITY, NAN};
    CHECK_THROWS_AS(sampler_distribution(none, {}, p), sixstep::Error);
    CHECK_THROWS_AS(sampler_distribution(none, {.temperature = 0}, p), sixstep::Error);
    CHECK_THROWS_AS(sampler_distribution(logits, {.top_p = 0}, p), sixstep::Error);
    CHECK_THROWS_AS(sampler_distribution(logits, {.min_p = 1}, p), sixstep::Error);
}

TEST_CASE("sample_from: seeded, follows unnormalized weights, refuses an empty distribution") {
    const std::vector<float> w = {0.0f, 3.0f, 1.0f, 0.0f, 4.0f};  // 3/8, 1/8, 4/8
    std::mt19937_64 a(9), b(9);
    std::vector<int> counts(w.size());
    const int n = 80000;
    for (int i = 0; i < n; ++i) {
        const int x = sample_from(w, a);
        CHECK(x == sample_from(w, b));
        ++counts[static_cast<std::size_t>(x)];
    }
    CHECK(counts[0] == 0);
    CHECK(counts[3] == 0);
    CHECK(counts[1] / double(n) == doctest::Approx(3.0 / 8).epsilon(0.03));
    CHECK(counts[2] / double(n) == doctest::Approx(1.0 / 8).epsilon(0.05));
    CHECK(counts[4] / double(n) == doctest::Approx(4.0 / 8).epsilon(0.03));
    const std::vector<float> zero = {0.0f, 0.0f};
    CHECK_THROWS_AS(sample_from(zero, a), sixstep::Error);
    const std::vector<float> negative = {1.0f, -1.0f};
    CHECK_THROWS_AS(sample_from(negative, a), sixstep::Error);
}

// Ties and limits met exactly. Greedy picks the first of equal maxima in
// the Sampler and in the distribution alike (speculative decoding's greedy
// text must be the target's own); top-p keeps the prefix whose mass reaches
// p, so a mass equal to p stops there; min-p keeps a token at exactly
// min_p × the top's probability.
TEST_CASE("sampler: ties go to the lowest id, and a limit met exactly keeps what it reaches") {
    const std::vector<float> tied = {1, 3, 3};
    CHECK(argmax(tied) == 1);
    Sampler greedy({.temperature = 0, .top_k = 0, .top_p = 1, .min_p = 0, .seed = 1});
    CHECK(greedy.sample(tied) == 1);
    std::vector<float> p;
    sampler_distribution(tied, {.temperature = 0, .top_k = 0, .top_p = 1, .min_p = 0, .seed = 1}, p);
    CHECK(p == std::vector<float>{0, 1, 0});

    // {0, 0}: 0.5 each; top-p 0.5 is met by the first alone.
    sampler_distribution(std::vector<float>{0, 0}, {.temperature = 1, .top_k = 0, .top_p = 0.5f, .min_p = 0}, p);
    CHECK(p == std::vector<float>{1, 0});
    // {ln 2, 0}: 2/3 and 1/3; min-p 0.5 puts the floor at exactly 1/3, which stays.
    sampler_distribution(std::vector<float>{0.6931472f, 0}, {.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0.5f}, p);
    CHECK(p[1] > 0);
    sampler_distribution(std::vector<float>{0.6931472f, 0}, {.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0.51f}, p);
    CHECK(p[1] == 0);
}
