// What the transformer panels are drawn from: the attention map, the logit
// lens, a forced token, and the KV cache switched off.
#include <doctest/doctest.h>

#include "tiny_model.h"

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/llm/backend.h"
#include "pipeline/llm/cpu/forward.h"
#include "pipeline/llm/panel_capture.h"
#include "pipeline/llm/sampler.h"
#include "pipeline/llm/stepper.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/tools/kv_experiment.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep::llm;
namespace fs = std::filesystem;

namespace panel_capture_test {

namespace {

// The tiny model with a 96-token context.
struct Fixture : sixstep::test::TinyModel {
    Fixture() : TinyModel(96) {}
};

GenerateParams greedy(int n) {
    GenerateParams p;
    p.n_predict = n;
    p.sampling.temperature = 0;
    p.stop_at_eog = false;
    return p;
}

// Generates with `cap` listening; returns the generation's final logits row.
std::vector<float> generate(Fixture& f, PanelCapture& cap, const std::string& prompt, int n) {
    auto kv = f.backend->make_kv_cache();
    Stepper st(*f.backend, *kv);
    Generation g(*f.codec, prompt, greedy(n));
    st.attach(g);
    std::vector<float> last;
    while (!g.done()) {
        st.forward_all(&cap);
        last = g.logits();
        g.sample();
    }
    return last;
}

}  // namespace

TEST_CASE("attention map: causal, rows sum to one, and the same as the reference pass") {
    Fixture f;
    PanelCapture cap({.attention_layer = 1, .window = 64});
    generate(f, cap, "The cat sat on the", 6);
    const AttentionMap& a = cap.attention();
    const int n_prompt = static_cast<int>(f.codec->encode("The cat sat on the").size());
    REQUIRE(a.n_head == f.model->hparams().n_head);
    CHECK(a.pos0 == 0);
    CHECK(a.n_pos == n_prompt + 5);  // the prompt, then one row per decode step (the last token is never fed)
    for (int h = 0; h < a.n_head; ++h)
        for (int q = 0; q < a.n_pos; ++q) {
            double sum = 0;
            for (int k = 0; k < a.n_pos; ++k) {
                if (k > q) CHECK(a.weight(h, q, k) == 0.0f);  // the causal mask
                sum += a.weight(h, q, k);
            }
            CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
        }

    // The reference pass over the same tokens in one prefill gives the same map.
    std::vector<int> tokens = f.codec->encode("The cat sat on the");
    {
        auto kv = f.backend->make_kv_cache();
        Stepper st(*f.backend, *kv);
        Generation g(*f.codec, "The cat sat on the", greedy(6));
        st.attach(g);
        while (!g.done()) {
            st.forward_all();
            g.sample();
        }
        tokens.insert(tokens.end(), g.tokens().begin(), g.tokens().end() - 1);
    }
    PanelCapture ref_cap({.attention_layer = 1, .window = 64});
    KvCache kv(kv_cache_params(f.model->hparams(), 0));
    std::vector<float> logits;
    forward_reference(*f.model, kv, Batch::prefill(tokens, kv.add_sequence()), logits, &ref_cap);
    const AttentionMap& r = ref_cap.attention();
    REQUIRE(r.n_pos == a.n_pos);
    float maxdiff = 0;
    for (std::size_t i = 0; i < a.w.size(); ++i) maxdiff = std::max(maxdiff, std::fabs(a.w[i] - r.w[i]));
    MESSAGE("attention map, fast decode vs reference prefill: maxdiff " << maxdiff);
    CHECK(maxdiff < 1e-5f);
}

TEST_CASE("attention map: a long context keeps only the window, so memory stays bounded") {
    Fixture f;
    PanelCapture cap({.attention_layer = 0, .window = 8});
    generate(f, cap, "a", 40);
    const AttentionMap& a = cap.attention();
    CHECK(a.n_pos == 8);
    const int last_fed = static_cast<int>(f.codec->encode("a").size()) + 40 - 2;  // the last token is never fed
    CHECK(a.pos0 == last_fed - 7);
    const std::size_t bound = 2 * sizeof(float) * static_cast<std::size_t>(a.n_head) * 8 * 8;
    CHECK(cap.bytes() <= bound);
    MESSAGE("captured " << cap.bytes() << " bytes for 40 positions (bound " << bound << ")");
}

TEST_CASE("panel capture: nothing is copied when no panel listens") {
    Fixture f;
    PanelCapture idle(PanelCaptureParams{});  // no attention layer, no logit lens
    generate(f, idle, "The cat sat on the", 4);
    CHECK(idle.bytes() == 0);
    CHECK(idle.attention().n_pos == 0);
    CHECK_THROWS_WITH_AS(PanelCapture({.window = 0}), "attention window of 0 positions: give at least 1",
                         sixstep::Error);
}

TEST_CASE("logit lens: one row per layer, and the last row is the output stage") {
    Fixture f;
    PanelCapture cap({.logit_lens = true});
    const std::vector<float> logits = generate(f, cap, "The cat sat on the", 1);
    const std::vector<LensRow> lens = logit_lens(*f.model, cap, 3);
    REQUIRE(static_cast<int>(lens.size()) == f.model->hparams().n_layer);
    const std::vector<Candidate> out = top_n(logits, 3);
    const LensRow& last = lens.back();
    for (int i = 0; i < 3; ++i) {
        CHECK(last.top[i].id == out[i].id);
        CHECK(last.top[i].p == doctest::Approx(out[i].p).epsilon(1e-4));
    }
    for (const LensRow& row : lens) {
        CHECK(row.top.size() == 3);
        CHECK(row.top[0].p >= row.top[1].p);
    }
}

TEST_CASE("a forced token is taken instead of the sampled one, and generation goes on from it") {
    Fixture f;
    auto kv = f.backend->make_kv_cache();
    Stepper st(*f.backend, *kv);
    Generation g(*f.codec, "The cat sat on the", greedy(3));
    st.attach(g);
    st.forward_all();
    const int greedy_pick = argmax(g.logits());
    const int other = (greedy_pick + 1) % f.model->hparams().n_vocab;
    CHECK_THROWS_WITH_AS(g.force(f.model->hparams().n_vocab), "token id 512 does not exist: the vocabulary has ids 0..511",
                         sixstep::Error);
    CHECK(g.has_logits());  // a refused id changes nothing
    const TokenEvent& e = g.force(other);
    CHECK(e.token == other);
    CHECK(e.forced);
    CHECK(g.tokens() == std::vector<int>{other});
    CHECK(g.pending().size() == 1);
    CHECK(g.pending()[0] == other);
    st.forward_all();
    CHECK_FALSE(g.sample().forced);
}

TEST_CASE("kv experiment: without the cache the same tokens and logits, and every step reads everything again") {
    Fixture f;
    const KvExperiment e = run_kv_experiment(*f.backend, *f.codec, "The cat sat on the", 12);
    CHECK(e.identical_tokens);
    CHECK(e.tokens_cached.size() == 12);
    MESSAGE("max logit difference cached vs recomputed: " << e.max_logit_diff);
    CHECK(e.max_logit_diff < 1e-5f);
    const int n_prompt = static_cast<int>(e.prompt_tokens.size());
    CHECK(e.forward_tokens_cached == n_prompt + 11);
    int sum = 0;
    for (const KvExperimentStep& s : e.steps) {
        CHECK(s.n_context == n_prompt + s.index);
        sum += s.n_context;
    }
    CHECK(e.forward_tokens_uncached == sum);
}

}  // namespace panel_capture_test
