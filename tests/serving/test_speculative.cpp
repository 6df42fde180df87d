// Speculative decoding: greedy text identical to the target alone, sampled
// text distributed as the target's sampler (chi-square), consistent
// statistics, and the mistakes it refuses.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/backend.h"
#include "pipeline/llm/cpu/cpu_load.h"
#include "pipeline/llm/sampler_dist.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/serving/bundled_model.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"
#include "pipeline/serving/speculative.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep;
using namespace sixstep::llm;
using namespace sixstep::serving;

namespace {

struct Loaded {
    std::shared_ptr<const LlamaModel> model;
    std::unique_ptr<Backend> backend;
};

Loaded load(std::shared_ptr<const LlamaModel> model, int n_threads = 1, int n_helpers = 0) {
    Loaded l;
    l.model = model;
    l.backend = make_backend(BackendKind::cpu, model, {.n_threads = n_threads, .n_helpers = n_helpers}).backend;
    return l;
}
// The target as --overlap builds it: two threads, one of them the place the
// draft's thread takes when it lends itself.
Loaded with_helper(const Loaded& l) { return load(l.model, 2, 1); }
Loaded load_bundled(const char* file) { return load(LlamaModel::load(bundled_model_path(file))); }

// Overlapped whatever else the machine runs meanwhile (ctest runs suites side
// by side): the runnable count is not known, so a CPU is taken to be free.
void overlap_regardless(SpeculativeDecoder& d) {
    d.set_runnable_source([] { return std::optional<int>{}; });
}
Loaded load_random(RandomModelParams p) {
    return load(LlamaModel::from_gguf(GGUFFile::from_bytes(random_model_bytes(p), p.name)));
}

std::unique_ptr<TextCodec> codec_of(const LlamaModel& m) {
    return make_vocab_codec(std::make_shared<const Vocab>(Vocab::from_gguf(m.file())));
}

// The bundled draft's shape with random weights and the target's vocabulary:
// a draft that costs the same and agrees with nothing.
RandomModelParams random_draft_params() {
    RandomModelParams p;
    p.n_embd = 128, p.n_layer = 2, p.n_head = 4, p.n_head_kv = 2, p.n_ff = 352, p.n_ctx = 512;
    p.tied_output = true;
    p.vocab_from = bundled_model_path("stories-3m-f16.gguf");
    p.seed = 11;
    p.name = "random draft";
    return p;
}

// The chi-square critical value for df degrees of freedom at significance
// alpha = 0.001 (z = 3.0902), by the Wilson–Hilferty approximation (within
// about 1% of the exact quantile for df >= 3).
double chi2_critical_001(int df) {
    const double z = 3.0902, a = 2.0 / (9.0 * df);
    return df * std::pow(1 - a + z * std::sqrt(a), 3);
}

// Pearson's statistic of observed counts against expected probabilities;
// cells expected below 5 are pooled into one. Returns {statistic, df}.
std::pair<double, int> chi_square(const std::map<std::pair<int, int>, int>& observed,
                                  const std::map<std::pair<int, int>, double>& expected_p, int n) {
    double stat = 0, pooled_e = 0, pooled_o = 0;
    int cells = 0;
    for (const auto& [key, p] : expected_p) {
        const double e = p * n;
        const auto it = observed.find(key);
        const double o = it == observed.end() ? 0 : it->second;
        if (e < 5) {
            pooled_e += e, pooled_o += o;
            continue;
        }
        stat += (o - e) * (o - e) / e, ++cells;
    }
    if (pooled_e > 0) stat += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e, ++cells;
    return {stat, cells - 1};
}

}  // namespace

TEST_CASE("speculative: greedy output is the target's own, token for token (bundled pair)") {
    Loaded target = load_bundled("stories-3m-f16.gguf"), draft = load_bundled("stories-draft-f16.gguf");
    const auto codec = codec_of(*target.model);
    SpeculativeDecoder dec(*target.backend, *draft.backend);
    for (const std::string prompt : {"Once upon a time", "The cat sat on the"}) {
        const std::vector<int> ids = codec->encode(prompt);
        for (int k : {1, 3, 4, 8}) {
            SpeculativeParams p;
            p.n_draft = k;
            p.n_predict = 48;
            p.sampling.temperature = 0;
            const SpeculativeResult r = dec.generate(*codec, ids, p);
            const GenerateResult alone = generate_target_alone(*target.backend, *codec, ids, p);
            CAPTURE(prompt);
            CAPTURE(k);
            CHECK(r.tokens == alone.tokens);
            CHECK(r.text == alone.text);
            CHECK(r.stop_reason == alone.stop_reason);
            // The draft agrees with the target's greedy choice ~90% of the
            // time on held-out text (assets/README.md): a target pass yields
            // well over one token.
            CHECK(r.stats.tokens_per_pass() > (k == 1 ? 1.5 : 2.0));
        }
    }
}

TEST_CASE("speculative: greedy output is the target's own with a random pair, and a random draft wins nothing") {
    RandomModelParams tp = random_model_preset("tiny");
    tp.seed = 3;
    RandomModelParams dp = random_model_preset("tiny");
    dp.seed = 4, dp.n_layer = 1, dp.n_embd = 32, dp.n_ff = 64;
    Loaded target = load_random(tp), draft = load_random(dp);
    const auto codec = codec_of(*target.model);
    SpeculativeDecoder dec(*target.backend, *draft.backend);
    const std::vector<int> ids = codec->encode("random weights, same bytes");
    for (int k : {1, 2, 5}) {
        SpeculativeParams p;
        p.n_draft = k;
        p.n_predict = 40;
        p.sampling.temperature = 0;
        p.stop_at_eog = false;
        const SpeculativeResult r = dec.generate(*codec, ids, p);
        CAPTURE(k);
        CHECK(r.tokens == generate_target_alone(*target.backend, *codec, ids, p).tokens);
        CHECK(r.tokens.size() == 40);
    }
    // Overlapped, a draft that agrees with nothing makes the draft throw its
    // guesses away at almost every step, and the text must not notice.
    Loaded lent = with_helper(target);
    SpeculativeDecoder overlapped(*lent.backend, *draft.backend);
    overlap_regardless(overlapped);
    for (int k : {1, 3}) {
        SpeculativeParams p;
        p.n_draft = k;
        p.n_predict = 40;
        p.sampling.temperature = 0;
        p.stop_at_eog = false;
        p.overlap = true;
        const SpeculativeResult r = overlapped.generate(*codec, ids, p);
        CAPTURE(k);
        CHECK(r.tokens == generate_target_alone(*target.backend, *codec, ids, p).tokens);
        CHECK(r.stats.acceptance_rate() < 0.5);
        CHECK(r.stats.n_draft_passes >= r.stats.n_drafted);
    }
}

TEST_CASE("speculative, overlapped: greedy output is the target's own, with and without the lent thread") {
    Loaded target = load_bundled("stories-3m-f16.gguf"), draft = load_bundled("stories-draft-f16.gguf");
    Loaded lent = with_helper(target);
    const auto codec = codec_of(*target.model);
    for (Loaded* t : {&target, &lent}) {
        SpeculativeDecoder dec(*t->backend, *draft.backend);
        overlap_regardless(dec);
        for (const std::string prompt : {"Once upon a time", "The cat sat on the"}) {
            const std::vector<int> ids = codec->encode(prompt);
            for (int k : {1, 2, 4}) {
                SpeculativeParams p;
                p.n_draft = k;
                p.n_predict = 48;
                p.sampling.temperature = 0;
                p.overlap = true;
                const SpeculativeResult r = dec.generate(*codec, ids, p);
                CAPTURE(t->backend->name());
                CAPTURE(prompt);
                CAPTURE(k);
                CHECK(r.stats.overlapped);
                CHECK(r.tokens == generate_target_alone(*target.backend, *codec, ids, p).tokens);
                CHECK(r.stats.tokens_per_pass() > (k == 1 ? 1.5 : 2.0));
                // Every step after the first (which takes what is ready while
                // the target reads the prompt) checks k proposals, fewer only
                // where the text must end first.
                int generated_before = static_cast<int>(r.steps[0].emitted.size());
                for (std::size_t i = 1; i < r.steps.size(); ++i) {
                    CHECK(r.steps[i].n_drafted == std::min(k, p.n_predict - generated_before - 1));
                    generated_before += static_cast<int>(r.steps[i].emitted.size());
                }
            }
        }
    }
}

TEST_CASE("speculative, overlapped: with no CPU free for the draft's thread the request takes turns, and says why") {
    Loaded target = load_bundled("stories-3m-f16.gguf"), draft = load_bundled("stories-draft-f16.gguf");
    Loaded lent = with_helper(target);
    const auto codec = codec_of(*target.model);
    const std::vector<int> ids = codec->encode("Once upon a time");
    SpeculativeParams p;
    p.n_draft = 2;
    p.n_predict = 24;
    p.sampling.temperature = 0;
    p.overlap = true;
    const std::vector<int> alone = generate_target_alone(*target.backend, *codec, ids, p).tokens;
    SpeculativeDecoder dec(*lent.backend, *draft.backend);
    // Beside a program on every CPU: far more runnable tasks than CPUs.
    const int crowded = online_cpus() + 3;
    int readings = 0;
    dec.set_runnable_source([&] { return ++readings, std::optional<int>(crowded); });
    const SpeculativeResult turns = dec.generate(*codec, ids, p);
    CHECK(readings == 3);
    CHECK_FALSE(turns.stats.overlapped);
    CHECK(turns.stats.overlap_declined ==
          fmt::format("no CPU free for the draft's thread ({} other runnable tasks on {} CPU{}): it took turns",
                      crowded - 1, online_cpus(), online_cpus() == 1 ? "" : "s"));
    CHECK(turns.tokens == alone);
    CHECK(turns.stats.draft_ms > 0);  // the draft's passes stood on this thread
    for (const SpeculativeStep& st : turns.steps) CHECK(st.wait_ms == 0);
    // One reading in three with a free CPU is enough to overlap: a kernel
    // thread passing by is not a busy machine.
    readings = 0;
    dec.set_runnable_source([&] { return std::optional<int>(++readings == 2 ? 1 : crowded); });
    const SpeculativeResult overlapped = dec.generate(*codec, ids, p);
    CHECK(overlapped.stats.overlapped);
    CHECK(overlapped.stats.overlap_declined.empty());
    CHECK(overlapped.tokens == alone);
    CHECK(speculative_json(turns, *codec)["stats"]["overlap_declined"] == turns.stats.overlap_declined);
}

TEST_CASE("speculative: the statistics add up") {
    Loaded target = load_bundled("stories-3m-f16.gguf"), draft = load_bundled("stories-draft-f16.gguf");
    const auto codec = codec_of(*target.model);
    SpeculativeDecoder dec(*target.backend, *draft.backend);
    const std::vector<int> ids = codec->encode("Once upon a time");
    for (float temp : {0.0f, 1.0f}) {
        SpeculativeParams p;
        p.n_draft = 4;
        p.n_predict = 61;
        p.stop_at_eog = false;  // no stop cuts a step short: every step emits accepted + 1
        p.sampling.temperature = temp;
        p.sampling.seed = 5;
        const SpeculativeResult r = dec.generate(*codec, ids, p);
        const SpeculativeStats& s = r.stats;
        CAPTURE(temp);
        REQUIRE(!r.steps.empty());
        int drafted = 0, accepted = 0, emitted = 0, generated_before = 0;
        for (std::size_t i = 0; i < r.steps.size(); ++i) {
            const SpeculativeStep& st = r.steps[i];
            CHECK(st.n_accepted <= st.n_drafted);
            CHECK(st.n_drafted == static_cast<int>(st.drafted.size()));
            CHECK(st.n_drafted == std::min(p.n_draft, p.n_predict - generated_before - 1));
            CHECK(st.all_accepted == (st.n_accepted == st.n_drafted));
            CHECK(static_cast<int>(st.emitted.size()) == st.n_accepted + 1);
            for (int j = 0; j < st.n_accepted; ++j) CHECK(st.emitted[j] == st.drafted[j]);
            // The first verify batch carries the prompt; later ones one fed-back token and the proposals.
            CHECK(st.n_verify_rows == (i == 0 ? static_cast<int>(ids.size()) : 1) + st.n_drafted);
            drafted += st.n_drafted, accepted += st.n_accepted, emitted += static_cast<int>(st.emitted.size());
            generated_before += static_cast<int>(st.emitted.size());
        }
        CHECK(s.n_steps == static_cast<int>(r.steps.size()));
        CHECK(s.n_drafted == drafted);
        CHECK(s.n_accepted == accepted);
        CHECK(s.n_draft_passes == drafted);
        CHECK(s.n_generated == emitted);
        CHECK(s.n_generated == p.n_predict);
        CHECK(static_cast<int>(r.tokens.size()) == s.n_generated);
        CHECK(s.acceptance_rate() == doctest::Approx(double(accepted) / drafted));
        CHECK(s.tokens_per_pass() == doctest::Approx(1.0 + double(accepted) / s.n_steps));
        CHECK(s.total_ms >= s.draft_ms + s.verify_ms);
        CHECK(s.ttft_ms <= s.total_ms);
        CHECK(r.stop_reason == sixstep::llm::StopReason::max_tokens);
    }
}

TEST_CASE("speculative: a one-step answer has its first token's time") {
    // n = 1: k is cut to 0, and the one step's verify pass gives the only token.
    Loaded target = load_bundled("stories-3m-f16.gguf"), draft = load_bundled("stories-draft-f16.gguf");
    const auto codec = codec_of(*target.model);
    SpeculativeDecoder dec(*target.backend, *draft.backend);
    SpeculativeParams p;
    p.n_predict = 1;
    const SpeculativeResult r = dec.generate(*codec, codec->encode("Once upon a time"), p);
    REQUIRE(r.steps.size() == 1u);
    CHECK(r.steps[0].n_drafted == 0);
    CHECK(r.tokens.size() == 1u);
    // The token came after the verify pass and before the run ended.
    CHECK(r.stats.ttft_ms >= r.steps[0].verify_ms);
    CHECK(r.stats.ttft_ms > 0);
    CHECK(r.stats.ttft_ms <= r.stats.total_ms);
}

TEST_CASE("speculative, overlapped: the statistics add up, a cancel stops the draft, and the sweep times the "
          "target alone on its own backend") {
    Loaded target = load_bundled("stories-3m-f16.gguf"), draft = load_bundled("stories-draft-f16.gguf");
    Loaded lent = with_helper(target);
    const auto codec = codec_of(*target.model);
    SpeculativeDecoder dec(*lent.backend, *draft.backend);
    overlap_regardless(dec);
    const std::vector<int> ids = codec->encode("Once upon a time");
    for (float temp : {0.0f, 1.0f}) {
        SpeculativeParams p;
        p.n_draft = 3;
        p.n_predict = 61;
        p.stop_at_eog = false;
        p.sampling.temperature = temp;
        p.sampling.seed = 5;
        p.overlap = true;
        const SpeculativeResult r = dec.generate(*codec, ids, p);
        const SpeculativeStats& s = r.stats;
        CAPTURE(temp);
        REQUIRE(!r.steps.empty());
        int drafted = 0, accepted = 0, emitted = 0;
        double waited = 0;
        for (std::size_t i = 0; i < r.steps.size(); ++i) {
            const SpeculativeStep& st = r.steps[i];
            CHECK(st.n_accepted <= st.n_drafted);
            CHECK(st.n_drafted == static_cast<int>(st.drafted.size()));
            CHECK(st.all_accepted == (st.n_accepted == st.n_drafted));
            CHECK(static_cast<int>(st.emitted.size()) == st.n_accepted + 1);
            for (int j = 0; j < st.n_accepted; ++j) CHECK(st.emitted[j] == st.drafted[j]);
            CHECK(st.n_verify_rows == (i == 0 ? static_cast<int>(ids.size()) : 1) + st.n_drafted);
            CHECK(st.draft_ms == 0);  // the draft's passes run on its own thread
            CHECK(st.wait_ms >= 0);
            drafted += st.n_drafted, accepted += st.n_accepted, emitted += static_cast<int>(st.emitted.size());
            waited += st.wait_ms;
        }
        CHECK(s.overlapped);
        CHECK(s.n_steps == static_cast<int>(r.steps.size()));
        CHECK(s.n_drafted == drafted);
        CHECK(s.n_accepted == accepted);
        CHECK(s.n_generated == emitted);
        CHECK(s.n_generated == p.n_predict);
        CHECK(s.wait_ms == doctest::Approx(waited));
        // Proposals the target never saw (the draft ran ahead, then a
        // rejection threw them away) still cost passes.
        CHECK(s.n_draft_passes >= s.n_drafted);
        CHECK(s.draft_ms > 0);
        CHECK(s.total_ms >= s.wait_ms + s.verify_ms);
        CHECK(r.stop_reason == sixstep::llm::StopReason::max_tokens);
    }

    // A cancel from the stream stops the request; the draft's thread is gone
    // with it, and the next request starts clean.
    SpeculativeParams p;
    p.n_draft = 2;
    p.n_predict = 100;
    p.sampling.temperature = 0;
    p.overlap = true;
    int steps = 0;
    const SpeculativeResult cut = dec.generate(*codec, ids, p, [&](const SpeculativeStep&, const std::string&) {
        return ++steps < 3;
    });
    CHECK(cut.stop_reason == sixstep::llm::StopReason::cancelled);
    CHECK(cut.steps.size() == 3);
    p.n_predict = 20;
    CHECK(dec.generate(*codec, ids, p).tokens == generate_target_alone(*target.backend, *codec, ids, p).tokens);

    // The sweep times the target alone on `alone` (here: the plain backend).
    const SpeculativeDraft drafts[] = {{"stories-draft", draft.backend.get()}};
    SweepParams sp;
    sp.ks = {2};
    sp.temperatures = {0};
    sp.base.n_predict = 24;
    sp.base.overlap = true;
    sp.repetitions = 1;
    sp.alone = target.backend.get();
    const std::vector<SweepRow> rows = sweep_speculative(*lent.backend, drafts, *codec, ids, sp);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].identical);
    CHECK(rows[0].tokens_per_pass > 1.5);
    CHECK(rows[0].target_tok_s > 0);
}

TEST_CASE("speculative: accept_or_correct emits p whatever q is (chi-square, alpha = 0.001)") {
    const std::vector<float> p = {0.40f, 0.25f, 0.20f, 0.10f, 0.05f, 0.0f};
    const std::vector<std::vector<float>> qs = {
        {0.40f, 0.25f, 0.20f, 0.10f, 0.05f, 0.0f},  // the draft is the target: always accepted
        {0.05f, 0.10f, 0.20f, 0.25f, 0.40f, 0.0f},  // reversed
        {0.0f, 0.0f, 0.0f, 0.0f, 0.2f, 0.8f},       // mostly where p has nothing
    };
    std::mt19937_64 rng(17);
    std::vector<float> scratch;
    const int n = 100000;
    for (std::size_t qi = 0; qi < qs.size(); ++qi) {
        std::map<std::pair<int, int>, int> observed;
        std::map<std::pair<int, int>, double> expected;
        for (int i = 0; i < 5; ++i) expected[{i, 0}] = p[i];
        int n_accepted = 0;
        for (int s = 0; s < n; ++s) {
            const int x = sample_from(qs[qi], rng);
            const Verdict v = accept_or_correct(p, qs[qi], x, rng, scratch);
            n_accepted += v.accepted;
            ++observed[{v.token, 0}];
        }
        CAPTURE(qi);
        CHECK(observed.count({5, 0}) == 0);  // never a token the target gives no chance
        const auto [stat, df] = chi_square(observed, expected, n);
        CHECK(stat < chi2_critical_001(df));
        // Acceptance is Σ min(p, q): 1 for q = p, 0.5 reversed, 0.05 for the third.
        const double expected_accept[] = {1.0, 0.5, 0.05};
        CHECK(double(n_accepted) / n == doctest::Approx(expected_accept[qi]).epsilon(0.03));
    }
}

TEST_CASE("speculative: sampled decoding draws the target's distribution over the first two tokens "
          "(chi-square, alpha = 0.001)") {
    Loaded target = load_bundled("stories-3m-f16.gguf");
    Loaded drafts[] = {load_bundled("stories-draft-f16.gguf"), load_random(random_draft_params())};
    const auto codec = codec_of(*target.model);
    const std::vector<int> prompt = codec->encode("The cat sat on the");
    SpeculativeParams p;
    p.n_draft = 2;  // step 1 proposes both tokens: the first is row 0's verdict, the second row 1's or a bonus
    p.n_predict = 3;
    p.stop_at_eog = false;
    p.sampling.temperature = 1.0f;
    const int n_vocab = target.model->hparams().n_vocab;

    // The exact joint distribution p(t1) · p(t2 | t1) from the target's own logits.
    std::map<std::pair<int, int>, double> expected;
    {
        auto kv = target.backend->make_kv_cache();
        std::vector<float> logits, p1, p2;
        int seq = kv->add_sequence();
        target.backend->forward(*kv, Batch::prefill(prompt, seq), logits);
        sampler_distribution(logits, p.sampling, p1);
        for (int t1 = 0; t1 < n_vocab; ++t1) {
            if (p1[t1] <= 0) continue;
            kv->truncate(seq, static_cast<int>(prompt.size()));
            target.backend->forward(*kv, Batch::prefill({t1}, seq, static_cast<int>(prompt.size())), logits);
            sampler_distribution(logits, p.sampling, p2);
            for (int t2 = 0; t2 < n_vocab; ++t2)
                if (p2[t2] > 0) expected[{t1, t2}] = double(p1[t1]) * p2[t2];
        }
    }
    REQUIRE(expected.size() > 3);

    // 600 runs per draft keep the test near a second of CPU; a decoder that
    // always accepts the draft fails it by far with either draft.
    const int n = 600;
    // Only the first two tokens are counted: stop there.
    int n_out = 0;
    const auto two_tokens = [&n_out](const SpeculativeStep& st, const std::string&) {
        n_out += static_cast<int>(st.emitted.size());
        return n_out < 2;
    };
    // Overlapped too, with the bundled draft: a token may come out as a
    // checked proposal or as a bonus, depending on the threads' timing.
    Loaded lent = with_helper(target);
    struct Case {
        Loaded* target;
        Loaded* draft;
        bool overlap;
    };
    for (const Case c : {Case{&target, &drafts[0], false}, Case{&target, &drafts[1], false},
                         Case{&lent, &drafts[0], true}}) {
        Loaded& draft = *c.draft;
        p.overlap = c.overlap;
        SpeculativeDecoder dec(*c.target->backend, *draft.backend);
        std::map<std::pair<int, int>, int> observed;
        int impossible = 0;
        for (int s = 0; s < n; ++s) {
            p.sampling.seed = static_cast<std::uint64_t>(s);
            n_out = 0;
            const SpeculativeResult r = dec.generate(*codec, prompt, p, two_tokens);
            REQUIRE(r.tokens.size() >= 2);
            const std::pair<int, int> key{r.tokens[0], r.tokens[1]};
            impossible += expected.count(key) == 0;
            ++observed[key];
        }
        CAPTURE(draft.model->file().name());
        CAPTURE(c.overlap);
        CHECK(impossible == 0);
        const std::pair<double, int> chi = chi_square(observed, expected, n);
        const double stat = chi.first;
        const int df = chi.second;
        CAPTURE(stat);
        CAPTURE(df);
        CHECK(df >= 2);
        CHECK(stat < chi2_critical_001(df));
    }
}

TEST_CASE("speculative: a draft with another vocabulary is refused, naming both sizes") {
    Loaded target = load_bundled("stories-3m-f16.gguf");
    Loaded small = load_random(random_model_preset("tiny"));  // 512 byte-level tokens
    try {
        SpeculativeDecoder dec(*target.backend, *small.backend);
        FAIL("expected an error");
    } catch (const Error& e) {
        const std::string msg = e.what();
        CHECK(msg.find("512 tokens") != std::string::npos);
        CHECK(msg.find("2000") != std::string::npos);
    }
    RandomModelParams same_size = random_model_preset("tiny");
    same_size.n_vocab = 2000;  // the right size, other tokens
    Loaded other = load_random(same_size);
    try {
        SpeculativeDecoder dec(*target.backend, *other.backend);
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("differ at id") != std::string::npos);
    }
    // With the target's vocabulary copied in, the same random weights are accepted.
    Loaded random_draft = load_random(random_draft_params());
    CHECK_NOTHROW(SpeculativeDecoder(*target.backend, *random_draft.backend));
}

TEST_CASE("speculative: bad parameters are refused before any pass") {
    Loaded target = load_bundled("stories-3m-f16.gguf"), draft = load_bundled("stories-draft-f16.gguf");
    const auto codec = codec_of(*target.model);
    SpeculativeDecoder dec(*target.backend, *draft.backend);
    const std::vector<int> ids = codec->encode("Once");
    SpeculativeParams p;
    p.n_draft = 0;
    CHECK_THROWS_WITH_AS(dec.generate(*codec, ids, p), "draft length k = 0: give 1..64 tokens per step", Error);
    p.n_draft = 65;
    CHECK_THROWS_AS(dec.generate(*codec, ids, p), Error);
    p.n_draft = 64;  // the most, as the message says
    p.n_predict = 2;
    CHECK(dec.generate(*codec, ids, p).tokens.size() == 2u);
    p.n_draft = 4;
    p.n_predict = 600;  // the context holds 512
    CHECK_THROWS_AS(dec.generate(*codec, ids, p), Error);
    p.n_predict = 8;
    CHECK_THROWS_AS(dec.generate(*codec, std::vector<int>{}, p), Error);
    CHECK_THROWS_AS(dec.generate(*codec, std::vector<int>{5000}, p), Error);
    p.sampling.top_p = 0;
    CHECK_THROWS_AS(dec.generate(*codec, ids, p), Error);
}

TEST_CASE("speculative: every k is timed in rounds against one target alone, and keeps its median run") {
    Loaded target = load_bundled("stories-3m-f16.gguf"), draft = load_bundled("stories-draft-f16.gguf");
    const auto codec = codec_of(*target.model);
    const std::vector<int> ids = codec->encode("Once upon a time");
    SpeculativeParams p;
    p.n_predict = 16;
    p.sampling.temperature = 0;
    const int ks[] = {1, 3};
    const std::vector<SpeculativeComparison> cs =
        compare_speculative(*target.backend, *draft.backend, *codec, ids, p, ks, 3);
    REQUIRE(cs.size() == 2);
    for (std::size_t i = 0; i < cs.size(); ++i) {
        const SpeculativeComparison& c = cs[i];
        CAPTURE(i);
        CHECK(c.n_timed == 3);
        CHECK(c.identical);
        CHECK(c.target_ms == cs[0].target_ms);  // one baseline for every k
        // The kept run is one run: its own clocks fit inside its wall time.
        const SpeculativeStats& s = c.speculative.stats;
        CHECK(s.draft_ms + s.verify_ms + s.accept_ms <= c.speculative_ms);
        CHECK(c.speedup == doctest::Approx((c.target_ms / c.target.tokens.size()) /
                                           (c.speculative_ms / c.speculative.tokens.size())));
        // The headline is the median round's: within the spread the verdict
        // quotes, never beside it.
        REQUIRE(c.round_speedups.size() == 3);
        std::vector<double> rounds = c.round_speedups;
        std::sort(rounds.begin(), rounds.end());
        CHECK(c.speedup == doctest::Approx(rounds[1]));
        const serving::RoundSpread spread = serving::round_spread(c.round_speedups);
        CHECK(spread.low <= c.speedup);
        CHECK(c.speedup <= spread.high);
    }
    // Each k proposes its own number of tokens per step.
    CHECK(cs[0].speculative.steps.front().n_drafted == 1);
    CHECK(cs[1].speculative.steps.front().n_drafted == 3);
    const int none[] = {0};
    CHECK_THROWS_AS(compare_speculative(*target.backend, *draft.backend, *codec, ids, p, none, 1), Error);
}

TEST_CASE("speculative: the sweep measures every regime and says why each loses") {
    Loaded target = load_bundled("stories-3m-f16.gguf"), draft = load_bundled("stories-draft-f16.gguf");
    Loaded random_draft = load_random(random_draft_params());
    const auto codec = codec_of(*target.model);
    const SpeculativeDraft drafts[] = {{"stories-draft", draft.backend.get()}, {"random", random_draft.backend.get()}};
    SweepParams sp;
    sp.ks = {1, 6};
    sp.temperatures = {0, 1.5f};
    sp.base.n_predict = 24;
    sp.repetitions = 1;
    const std::vector<SweepRow> rows = sweep_speculative(*target.backend, drafts, *codec, codec->encode("Once upon a time"), sp);
    REQUIRE(rows.size() == 8);
    for (const SweepRow& r : rows) {
        CAPTURE(r.draft);
        CAPTURE(r.k);
        CHECK(r.acceptance >= 0);
        CHECK(r.acceptance <= 1);
        CHECK(r.tokens_per_pass >= 1);
        CHECK(r.tokens_per_pass <= r.k + 1);
        CHECK(r.speedup > 0);
        CHECK(!r.verdict.empty());
        CHECK(r.even == (std::abs(r.speedup - 1) < serving::even_band || (r.rounds.low <= 1 && r.rounds.high >= 1)));
        CHECK(r.rounds.low <= r.rounds.high);
        CHECK(r.verdict.starts_with(r.even ? "about the same" : r.speedup >= 1 ? "wins" : "loses"));
        if (r.temperature == 0) CHECK(r.identical);
        // The printed costs add up to the printed total, and the two totals
        // divide to the printed speedup (a lesson printed a "loss" whose own
        // figures made a 1.05× win).
        CHECK(r.speculative_token_us == doctest::Approx(r.draft_token_us + r.wait_token_us + r.verify_token_us +
                                                        r.accept_token_us + r.other_token_us));
        CHECK(r.speedup == doctest::Approx(std::round(100 * r.target_token_us / r.speculative_token_us) / 100));
        CHECK(r.target_tok_s == doctest::Approx(1e6 / r.target_token_us));
        CHECK(r.speculative_tok_s == doctest::Approx(1e6 / r.speculative_token_us));
        CHECK(r.verdict.find(fmt::format("= {:.1f} \u00b5s, the target alone {:.1f} \u00b5s", r.speculative_token_us,
                                         r.target_token_us)) != std::string::npos);
        CHECK(r.wait_token_us == 0);  // taking turns: no wait, the draft's passes are on the target's thread
        CHECK(r.draft_token_us > 0);
    }
    // One baseline per draft and temperature, timed in the same rounds as every k.
    CHECK(rows[0].target_token_us == rows[1].target_token_us);
    CHECK(rows[2].target_token_us == rows[3].target_token_us);
    // The random draft agrees far less than the trained one, at every k, greedy.
    CHECK(rows[4].acceptance < rows[0].acceptance);
    CHECK(rows[5].acceptance < rows[1].acceptance);
    sp.ks = {0};
    CHECK_THROWS_AS(sweep_speculative(*target.backend, drafts, *codec, codec->encode("Once"), sp), Error);
}

// The lab's answer names the range of acceptance over every row measured, not
// only the first and the last (lesson 13 said 79–94 % beside a row of 95.5 %).
TEST_CASE("speculative lab: the answer's acceptance range spans every row, and its sentences stand alone") {
    using namespace sixstep::serving;
    ServingExhibit ex;
    const double acceptance[] = {0.79, 0.955, 0.94};
    for (int k = 1; k <= 3; ++k) {
        SweepRow r;
        r.k = k;
        r.acceptance = acceptance[k - 1];
        r.tokens_per_pass = 1 + k * r.acceptance;
        r.speedup = k == 2 ? 1.4 : 0.9;
        r.identical = true;
        ex.speculative.push_back(r);
    }
    sixstep::TraceEvent ev;
    const std::string answer = make_speculative_lab()->compare(ex, ev);
    CAPTURE(answer);
    CHECK(answer.find("accepted 79\u201396% of the time") != std::string::npos);
    CHECK(answer.find("The best setting, k = 2, ran 1.40\u00d7") != std::string::npos);
    CHECK(answer.find("The greedy text was the target's own, token for token.") != std::string::npos);
    CHECK(answer.find("A loss") == std::string::npos);  // the best setting won
}

// Lesson 13 called one setting a win (1.04×) and, rerun on a busy machine, a
// loss (0.97×): where its own rounds fall on both sides of 1×, or within 5 %
// of it, the verdict is "about the same".
TEST_CASE("speculative: a speedup whose rounds fall either side of 1x is about the same") {
    // Five rounds: the middle three (the 2nd to the 4th) are 0.95 to 1.09.
    const serving::RoundSpread wide = serving::round_spread({1.09, 0.70, 1.02, 0.95, 1.40});
    CHECK(wide.low == doctest::Approx(0.95));
    CHECK(wide.high == doctest::Approx(1.09));
    CHECK(serving::about_the_same(1.12, wide));  // the median run won, its rounds did not all
    // Nine rounds: the 3rd to the 7th.
    const serving::RoundSpread nine = serving::round_spread({1.3, 1.2, 1.1, 1.15, 1.25, 1.12, 0.8, 1.4, 1.18});
    CHECK(nine.low == doctest::Approx(1.12));
    CHECK(nine.high == doctest::Approx(1.25));
    CHECK(!serving::about_the_same(1.15, nine));  // every middle round won: a win
    CHECK(!serving::about_the_same(0.9, serving::round_spread({0.85, 0.9, 0.92})));  // a loss
    // Rounds that agree on a small gain: within 5 %, still about the same.
    CHECK(serving::about_the_same(1.03, serving::round_spread({1.02, 1.03, 1.04})));
    CHECK(serving::round_spread({}).low == 0);
}
