#include <doctest/doctest.h>

#include "temp_dir.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/generator.h"
#include "pipeline/tools/random_model.h"
#include "pipeline/llm/vocab/vocab.h"

using namespace sixstep::llm;
namespace fs = std::filesystem;

namespace {

struct Fixture {
    std::shared_ptr<LlamaModel> model;
    std::shared_ptr<const Vocab> vocab;
    std::unique_ptr<TextCodec> codec;
    std::unique_ptr<CpuBackend> cpu;
    Fixture() {
        const fs::path dir = sixstep::test::process_temp_dir("generator");
        const fs::path path = dir / "tiny.gguf";
        if (!fs::exists(path)) {
            RandomModelParams p = random_model_preset("tiny");
            p.n_ctx = 64;
            write_random_model(path, p);
        }
        model = LlamaModel::load(path);
        vocab = std::make_shared<const Vocab>(Vocab::from_gguf(model->file()));
        codec = make_vocab_codec(vocab);
        cpu = std::make_unique<CpuBackend>(model, CpuBackendParams{2});
    }
};

GenerateParams greedy(int n) {
    GenerateParams p;
    p.n_predict = n;
    p.sampling.temperature = 0;
    return p;
}

// A codec that declares one chosen token the end of generation.
struct EogCodec : TextCodec {
    const TextCodec& inner;
    int eog;
    EogCodec(const TextCodec& c, int e) : inner(c), eog(e) {}
    std::vector<int> encode(std::string_view t) const override { return inner.encode(t); }
    std::string piece(int t) const override { return inner.piece(t); }
    bool is_eog(int t) const override { return t == eog; }
    std::unique_ptr<TokenTextStream> stream() const override { return inner.stream(); }
};

}  // namespace

TEST_CASE("generator: greedy tokens are the argmax of the reference forward pass, step by step") {
    Fixture f;
    Generator gen(*f.cpu, *f.codec);
    const GenerateResult r = gen.generate("The cat sat", greedy(8));
    REQUIRE(r.tokens.size() == 8);
    CHECK(r.stop_reason == sixstep::llm::StopReason::max_tokens);
    CHECK(r.prompt_tokens == f.codec->encode("The cat sat"));

    // The oracle: re-run the whole sequence through forward_reference each step.
    std::vector<int> seq = r.prompt_tokens;
    for (int i = 0; i < 8; ++i) {
        KvCache kv({f.model->hparams().n_layer, f.model->hparams().n_head_kv, f.model->hparams().head_dim(), 64});
        const int s = kv.add_sequence();
        std::vector<float> logits;
        forward_reference(*f.model, kv, Batch::prefill(seq, s), logits);
        CHECK(argmax(logits) == r.tokens[i]);
        seq.push_back(r.tokens[i]);
    }
    // The text is the detokenized tokens.
    CHECK(r.text == f.vocab->detokenize(r.tokens));
    // Greedy is deterministic, and the cache was given back.
    CHECK(gen.generate("The cat sat", greedy(8)).tokens == r.tokens);
}

TEST_CASE("generator: streams tokens with timestamps, TTFT, TPOT and total are consistent") {
    Fixture f;
    Generator gen(*f.cpu, *f.codec);
    std::vector<TokenEvent> events;
    GenerateParams p = greedy(6);
    p.top_n = 3;
    const GenerateResult r = gen.generate("Hello", p, [&](const TokenEvent& e) {
        events.push_back(e);
        return true;
    });
    REQUIRE(events.size() == 6);
    std::string streamed;
    for (std::size_t i = 0; i < events.size(); ++i) {
        CHECK(events[i].index == static_cast<int>(i));
        CHECK(events[i].top.size() == 3);
        CHECK(events[i].top[0].id == events[i].token);  // greedy picks the top one
        CHECK(events[i].p == doctest::Approx(events[i].top[0].p));
        if (i > 0) CHECK(events[i].t_ms >= events[i - 1].t_ms);
        streamed += events[i].text;
    }
    CHECK(streamed == r.text);
    const GenerateTimings& t = r.timings;
    CHECK(t.n_prompt == 5);
    CHECK(t.n_generated == 6);
    CHECK(t.ttft_ms > 0);
    CHECK(t.ttft_ms == doctest::Approx(events[0].t_ms));
    CHECK(t.prefill_ms <= t.ttft_ms);
    CHECK(t.tpot_ms > 0);
    CHECK(t.total_ms >= t.ttft_ms);
    CHECK(t.tpot_ms == doctest::Approx((events.back().t_ms - events[0].t_ms) / 5).epsilon(1e-6));
    // The median TPOT: the middle of the five decode steps as their events
    // timed them, whatever one slow step did to the mean.
    std::vector<double> steps;
    for (std::size_t i = 1; i < events.size(); ++i) steps.push_back(events[i].dt_ms);
    std::sort(steps.begin(), steps.end());
    CHECK(t.tpot_p50_ms == steps[2]);
    CHECK(t.tpot_p50_ms > 0);
}

TEST_CASE("generator: stops at a stop string, at end of generation, or when the callback says so") {
    Fixture f;
    Generator gen(*f.cpu, *f.codec);
    const GenerateResult full = gen.generate("abc", greedy(12));
    REQUIRE(full.text.size() >= 4);

    // A stop string taken from the middle of the greedy text.
    GenerateParams p = greedy(12);
    const std::string stop = full.text.substr(2, 2);
    p.stop = {stop};
    const GenerateResult cut = gen.generate("abc", p);
    CHECK(cut.stop_reason == sixstep::llm::StopReason::stop_string);
    CHECK(cut.text == full.text.substr(0, full.text.find(stop)));
    // Any of several stop strings ends it, not only the last one given.
    GenerateParams several = p;
    several.stop = {stop, "#never#"};
    const GenerateResult first = gen.generate("abc", several);
    CHECK(first.stop_reason == sixstep::llm::StopReason::stop_string);
    CHECK(first.text == cut.text);

    // A stop string split over two tokens: the last character of one token's
    // text and the first of the next. The first must be held back when it
    // arrives (it may begin the stop), then cut with the rest.
    std::vector<std::string> pieces;
    gen.generate("abc", greedy(12), [&](const TokenEvent& ev) {
        pieces.push_back(ev.text);
        return true;
    });
    std::size_t at = 0, i = 0;
    for (; i + 1 < pieces.size(); at += pieces[i].size(), ++i)
        if (!pieces[i].empty() && !pieces[i + 1].empty()) break;
    REQUIRE(i + 1 < pieces.size());
    const std::string split = pieces[i].substr(pieces[i].size() - 1) + pieces[i + 1].substr(0, 1);
    p.stop = {split};
    std::string streamed;
    const GenerateResult across = gen.generate("abc", p, [&](const TokenEvent& ev) {
        streamed += ev.text;
        return true;
    });
    CAPTURE(split);
    CHECK(across.stop_reason == sixstep::llm::StopReason::stop_string);
    CHECK(across.text == full.text.substr(0, full.text.find(split)));
    CHECK(across.text.size() <= at + pieces[i].size() - 1);
    CHECK(streamed == across.text);  // the stop's first character was never streamed

    // End of generation: declare the third greedy token the EOS.
    EogCodec eog(*f.codec, full.tokens[2]);
    Generator gen2(*f.cpu, eog);
    const GenerateResult e = gen2.generate("abc", greedy(12));
    CHECK(e.stop_reason == sixstep::llm::StopReason::eos);
    CHECK(e.tokens.size() == static_cast<std::size_t>(std::find(full.tokens.begin(), full.tokens.end(), full.tokens[2]) -
                                                      full.tokens.begin() + 1));

    // The callback cancels.
    const GenerateResult c = gen.generate("abc", greedy(12), [](const TokenEvent& ev) { return ev.index < 1; });
    CHECK(c.stop_reason == sixstep::llm::StopReason::cancelled);
    CHECK(c.tokens.size() == 2);
}

TEST_CASE("generator: sampling with a seed is reproducible") {
    Fixture f;
    Generator gen(*f.cpu, *f.codec);
    GenerateParams p;
    p.n_predict = 10;
    p.sampling.temperature = 1.5f;
    p.sampling.top_k = 0;
    p.sampling.top_p = 1.0f;
    p.sampling.min_p = 0;
    p.sampling.seed = 123;
    const auto a = gen.generate("x", p);
    const auto b = gen.generate("x", p);
    CHECK(a.tokens == b.tokens);
    p.sampling.seed = 124;
    CHECK(gen.generate("x", p).tokens != a.tokens);
}

TEST_CASE("generator: a seeded draw from the bundled model tells the same story every time") {
    // A trained model's distribution is peaked, so float rounding of the
    // kernels (SIMD or scalar) cannot reorder the candidates the draw lands
    // on: the text is exact. (A random model's near-uniform logits are not.)
    auto model = LlamaModel::load(fs::path(SIXSTEP_SOURCE_DIR) / "assets" / "models" / "stories-3m-f16.gguf");
    const auto codec = make_vocab_codec(std::make_shared<const Vocab>(Vocab::from_gguf(model->file())));
    CpuBackend cpu(model, CpuBackendParams{2});
    Generator gen(cpu, *codec);
    GenerateParams p;
    p.n_predict = 12;
    p.sampling = {.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f, .seed = 1};
    const GenerateResult r = gen.generate("Once upon a time", p);
    CHECK(r.tokens == std::vector<int>{44, 544, 258, 1274, 672, 44, 473, 475, 258, 536, 472, 891});
    CHECK(r.text == ", in a gentle farm, there lived a girl named Yusuf");
    p.sampling.seed = 2;
    CHECK(gen.generate("Once upon a time", p).text == ", there was a fluffy girl named George.\n\nHer");
}

TEST_CASE("generator: bad requests are clear errors") {
    Fixture f;
    Generator gen(*f.cpu, *f.codec);
    CHECK_THROWS_WITH_AS(gen.generate("", greedy(4)), "prompt is empty: give at least one character to continue from",
                         sixstep::Error);
    const std::string long_prompt(70, 'a');  // 70 byte tokens, context 64
    CHECK_THROWS_WITH_AS(gen.generate(long_prompt, greedy(4)), "prompt is 70 tokens but the context holds 64 (n_ctx)",
                         sixstep::Error);
    CHECK_THROWS_WITH_AS(gen.generate("hello", greedy(61)),
                         "prompt (5 tokens) + n (61) does not fit in the context of 64 tokens (n_ctx); ask for at "
                         "most 60 tokens (the last one is never fed back, so it needs no place)",
                         sixstep::Error);
    CHECK_NOTHROW(gen.generate("hello", greedy(60)));
    CHECK_THROWS_WITH_AS(gen.generate("hello", greedy(0)), "n = 0: ask for at least one token", sixstep::Error);

    // A KV cache too small for the prompt: its pool runs out of blocks.
    KvCacheParams kp;
    kp.n_layer = f.model->hparams().n_layer;
    kp.n_head_kv = f.model->hparams().n_head_kv;
    kp.head_dim = f.model->hparams().head_dim();
    kp.n_ctx = 64;
    kp.block_size = 4;
    kp.n_blocks = 2;  // 8 positions in all
    KvCache kv(kp);
    Generation g(*f.codec, "0123456789", greedy(2));
    Stepper stepper(*f.cpu, kv);
    stepper.attach(g);
    CHECK_THROWS_WITH_AS(stepper.forward_all(), "KV cache full: sequence 0 needs 3 more blocks of 4 positions but only 2 of 2 are free",
                         sixstep::Error);
}
