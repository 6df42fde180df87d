// The stepper: many requests through one batched forward pass. Each one's
// tokens must be exactly what it would get alone (greedy), however the batch
// is cut — prompts in chunks, requests evicted and recomputed — and its clocks
// must count engine time only.
#include <doctest/doctest.h>

#include "tiny_model.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/generator.h"
#include "pipeline/llm/stepper.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep::llm;
namespace fs = std::filesystem;

namespace stepper_test {

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

const std::vector<std::string> prompts = {"The cat sat on the", "Once upon a time", "x", "a longer prompt than the rest, by far"};

std::vector<std::vector<int>> alone(Fixture& f, int n) {
    std::vector<std::vector<int>> out;
    Generator gen(*f.backend, *f.codec);
    for (const auto& p : prompts) out.push_back(gen.generate(p, greedy(n)).tokens);
    return out;
}

// Runs every prompt through one stepper; `plan` chooses the feeds of each step.
using Plan = std::function<std::vector<Feed>(Stepper&, std::vector<std::unique_ptr<Generation>>&, int step)>;
std::vector<std::vector<int>> together(Fixture& f, int n, const Plan& plan, KvCache* kv_in = nullptr) {
    auto kv_own = kv_in ? nullptr : f.backend->make_kv_cache(0, static_cast<int>(prompts.size()));
    KvCache& kv = kv_in ? *kv_in : *kv_own;
    std::vector<std::unique_ptr<Generation>> gens;
    Stepper st(*f.backend, kv);
    for (const auto& p : prompts) {
        gens.push_back(std::make_unique<Generation>(*f.codec, p, greedy(n)));
        st.attach(*gens.back());
    }
    for (int step = 0; step < 1000; ++step) {
        bool all_done = true;
        for (auto& g : gens) all_done &= g->done();
        if (all_done) break;
        const std::vector<Feed> feeds = plan(st, gens, step);
        if (!feeds.empty()) st.forward(feeds);
        for (auto& g : gens)
            if (g->has_logits()) g->sample();
    }
    std::vector<std::vector<int>> out;
    for (auto& g : gens) out.push_back(g->tokens());
    return out;
}

std::vector<Feed> everyone(std::vector<std::unique_ptr<Generation>>& gens, int chunk = 0) {
    std::vector<Feed> feeds;
    for (auto& g : gens)
        if (!g->pending().empty()) feeds.push_back({g.get(), chunk});
    return feeds;
}

}  // namespace

TEST_CASE("stepper: requests batched together get exactly the tokens they get alone") {
    Fixture f;
    const auto want = alone(f, 12);
    const auto got = together(f, 12, [](Stepper&, auto& gens, int) { return everyone(gens); });
    CHECK(got == want);
}

TEST_CASE("stepper: prompts read in chunks of 3 tokens give the same tokens") {
    Fixture f;
    const auto want = alone(f, 8);
    const auto got = together(f, 8, [](Stepper&, auto& gens, int) { return everyone(gens, 3); });
    CHECK(got == want);
}

TEST_CASE("stepper: requests joining at different steps give the same tokens") {
    Fixture f;
    const auto want = alone(f, 8);
    // Request i joins the batch at step 2·i (continuous batching's shape).
    const auto got = together(f, 8, [](Stepper&, auto& gens, int step) {
        std::vector<Feed> feeds;
        for (std::size_t i = 0; i < gens.size(); ++i)
            if (static_cast<int>(i) * 2 <= step && !gens[i]->pending().empty()) feeds.push_back({gens[i].get(), 0});
        return feeds;
    });
    CHECK(got == want);
}

TEST_CASE("stepper: an evicted request recomputes its prompt and tokens and finishes the same") {
    Fixture f;
    const auto want = alone(f, 10);
    auto kv = f.backend->make_kv_cache(0, static_cast<int>(prompts.size()));
    const auto got = together(
        f, 10,
        [](Stepper& st, auto& gens, int step) {
            // Evict request 1 after its 4th step and request 3 after its 7th.
            if (step == 4 && gens[1]->n_past() > 0) st.evict(*gens[1]);
            if (step == 7 && gens[3]->n_past() > 0) st.evict(*gens[3]);
            return everyone(gens);
        },
        kv.get());
    CHECK(got == want);
    CHECK(kv->stats().n_blocks_used == 0);  // every sequence gave its blocks back
}

TEST_CASE("stepper: a failed pass changes no request, and errors are clear") {
    Fixture f;
    KvCacheParams kp = kv_cache_params(f.model->hparams(), 96, 1, 4);
    kp.n_blocks = 3;  // 12 positions for everyone
    KvCache kv(kp);
    Stepper st(*f.backend, kv);
    Generation a(*f.codec, "0123456789", greedy(4)), b(*f.codec, "abcdef", greedy(4));
    st.attach(a);
    st.attach(b);
    CHECK_THROWS_WITH_AS(st.attach(a), "generation: already attached to a stepper", sixstep::Error);
    CHECK_THROWS_WITH_AS(st.forward_all(), doctest::Contains("KV cache full"), sixstep::Error);
    CHECK(a.n_past() == 0);
    CHECK(b.n_past() == 0);
    CHECK(a.pending().size() == a.prompt_tokens().size());
    CHECK(kv.stats().n_blocks_used == 0);  // what a's part of the batch reserved went back
    // Alone, b fits: the failure left nothing behind.
    const Feed only_b[] = {{&b, 0}};
    st.forward(only_b);
    CHECK(b.has_logits());
    CHECK_THROWS_WITH_AS(st.forward(only_b), "stepper: a feed has no pending tokens (sample its logits first)",
                         sixstep::Error);
    const Feed twice[] = {{&a, 0}, {&a, 0}};
    CHECK_THROWS_WITH_AS(st.forward(twice), "stepper: a generation appears twice in one forward pass", sixstep::Error);

    Generation too_long(*f.codec, std::string(100, 'a'), greedy(1));
    CHECK_THROWS_WITH_AS(st.attach(too_long), "prompt is 100 tokens but the context holds 96 (n_ctx)", sixstep::Error);
}

TEST_CASE("stepper: a destroyed generation gives its KV blocks back") {
    Fixture f;
    auto kv = f.backend->make_kv_cache();
    Stepper st(*f.backend, *kv);
    {
        Generation g(*f.codec, "hello", greedy(2));
        st.attach(g);
        st.forward_all();
        CHECK(kv->stats().n_blocks_used == 1);
    }
    CHECK(st.attached().empty());
    CHECK(kv->stats().n_blocks_used == 0);
}

TEST_CASE("generation clocks: engine time only, so a pause between steps changes nothing") {
    Fixture f;
    // One thread: the point is what the clock counts, not how fast it runs.
    auto backend = make_backend(BackendKind::cpu, f.model, {.n_threads = 1}).backend;
    auto kv = backend->make_kv_cache();
    Stepper st(*backend, *kv);
    Generation g(*f.codec, "The cat sat on the", greedy(4));
    st.attach(g);
    const auto pause = std::chrono::milliseconds(300);
    std::this_thread::sleep_for(pause);  // the class talks before the prefill…
    const double prefill_ms = st.forward_all().ms;
    std::this_thread::sleep_for(pause);  // …and before the sample
    const TokenEvent first = g.sample();
    double decode_forward_ms = 0;
    while (!g.done()) {
        decode_forward_ms += st.forward_all().ms;
        std::this_thread::sleep_for(pause);
        g.sample();
    }
    const GenerateTimings& t = g.result().timings;
    // Exactly the measured pieces: TTFT = tokenize + prefill + first sample,
    // total = TTFT + the decode steps (forward + sample) — no pause in them.
    CHECK(t.prefill_ms == prefill_ms);
    CHECK(first.dt_ms == t.ttft_ms);
    CHECK(t.ttft_ms - t.tokenize_ms - t.prefill_ms == doctest::Approx(t.sample_ms - (t.total_ms - t.ttft_ms - decode_forward_ms)));
    CHECK(t.total_ms == doctest::Approx(t.ttft_ms + 3 * t.tpot_ms));
    CHECK(t.total_ms == doctest::Approx(t.tokenize_ms + prefill_ms + decode_forward_ms + t.sample_ms));
    CHECK(t.ttft_ms < 300.0);
    CHECK(t.tpot_ms < 300.0);
    CHECK(t.n_forward == 4);
    MESSAGE("TTFT " << t.ttft_ms << " ms, TPOT " << t.tpot_ms << " ms with 300 ms pauses around every step");
}

}  // namespace stepper_test
