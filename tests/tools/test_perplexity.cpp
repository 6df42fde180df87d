// Perplexity and the comparison with a reference: the batched, windowed
// scoring equals a plain one-token-at-a-time computation; a model compared
// with itself is at distance zero; bad input is refused.
#include <doctest/doctest.h>

#include "temp_dir.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/tools/perplexity.h"
#include "pipeline/tools/quantize.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep;
using namespace sixstep::llm;
namespace fs = std::filesystem;

namespace {

const fs::path models = fs::path(SIXSTEP_SOURCE_DIR) / "assets" / "models";

std::string heldout() {
    std::ifstream in(fs::path(SIXSTEP_SOURCE_DIR) / "assets" / "data" / "heldout-stories.txt");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// −Σ log p(x_{t+1} | x_≤t) computed the slow, obvious way: one decode step per token.
double nll_one_by_one(Backend& backend, const std::vector<TokenId>& ids) {
    auto kv = backend.make_kv_cache(static_cast<int>(ids.size()));
    const int seq = kv->add_sequence();
    const int n_vocab = backend.model().hparams().n_vocab;
    std::vector<float> logits;
    double nll = 0;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
        Batch b;
        b.add(ids[i], static_cast<int>(i), seq, true);
        backend.forward(*kv, b, logits);
        double m = logits[0], s = 0;
        for (int v = 1; v < n_vocab; ++v) m = std::max(m, static_cast<double>(logits[v]));
        for (int v = 0; v < n_vocab; ++v) s += std::exp(logits[v] - m);
        nll += m + std::log(s) - logits[ids[i + 1]];
    }
    return nll;
}

}  // namespace

TEST_CASE("perplexity: batched prefill with logits everywhere equals scoring one token at a time") {
    const auto model = LlamaModel::load(models / "stories-3m-f16.gguf");
    const Vocab vocab = Vocab::from_gguf(model->file());
    CpuBackend cpu(model, {.n_threads = 2});
    const std::string a = "The cat sat on the mat. It was a sunny day.", b = "Once upon a time, there lived a fox.";
    const std::string text = a + "\n<|doc|>\n" + b + "\n";

    const PerplexityResult r = perplexity(cpu, vocab, text, {});
    std::vector<TokenId> ia = vocab.tokenize(a), ib = vocab.tokenize(b);
    ia.push_back(vocab.eos());
    ib.push_back(vocab.eos());
    CHECK(r.n_docs == 2);
    CHECK(r.n_windows == 2);
    CHECK(r.n_tokens == static_cast<std::int64_t>(ia.size() + ib.size()));
    CHECK(r.n_scored == static_cast<std::int64_t>(ia.size() + ib.size() - 2));
    const double expected = nll_one_by_one(cpu, ia) + nll_one_by_one(cpu, ib);
    CHECK(r.model.nll_sum == doctest::Approx(expected).epsilon(1e-4));
    CHECK(r.perplexity == doctest::Approx(std::exp(expected / static_cast<double>(r.n_scored))).epsilon(1e-4));

    // Small batches give the same sums.
    PerplexityParams small;
    small.n_batch = 3;
    CHECK(perplexity(cpu, vocab, text, small).model.nll_sum == doctest::Approx(r.model.nll_sum).epsilon(1e-5));
    // Without the separator it is one document: BOS once, EOS once.
    PerplexityParams one;
    one.doc_separator = "";
    CHECK(perplexity(cpu, vocab, text, one).n_docs == 1);
}

TEST_CASE("perplexity: a document longer than the window is scored in half-overlapping windows, each token once") {
    const auto model = LlamaModel::load(models / "stories-3m-f16.gguf");
    const Vocab vocab = Vocab::from_gguf(model->file());
    CpuBackend cpu(model, {.n_threads = 2});
    PerplexityParams p;
    p.n_ctx = 16;
    p.max_docs = 3;
    const std::string text = heldout();
    const PerplexityResult windowed = perplexity(cpu, vocab, text, p);
    p.n_ctx = 0;
    const PerplexityResult whole = perplexity(cpu, vocab, text, p);
    CHECK(windowed.n_docs == 3);
    CHECK(windowed.n_tokens == whole.n_tokens);
    CHECK(windowed.n_scored == whole.n_scored);  // every prediction exactly once
    CHECK(windowed.n_windows > whole.n_windows);
    // Less context per prediction: no better than the whole document.
    CHECK(windowed.model.mean_nll >= whole.model.mean_nll - 1e-9);
}

TEST_CASE("perplexity: the bundled model on held-out stories, and its quantized copies against it") {
    const auto f16 = LlamaModel::load(models / "stories-3m-f16.gguf");
    const Vocab vocab = Vocab::from_gguf(f16->file());
    CpuBackend cpu(f16, {.n_threads = 2});
    PerplexityParams p;
    p.max_docs = 12;
    const std::string text = heldout();

    const PerplexityResult self = perplexity(cpu, vocab, text, p, &cpu);
    // The model learned the grammar: far from the 2,000 of a uniform guess.
    CHECK(self.perplexity > 1.0);
    CHECK(self.perplexity < 6.0);
    REQUIRE(self.compare.has_value());
    CHECK(self.compare->kl_mean == doctest::Approx(0).epsilon(1e-12));
    CHECK(self.compare->max_abs_logit_diff == 0);
    CHECK(self.compare->top1_agreement == 1.0);
    CHECK(self.reference->perplexity == self.perplexity);

    const fs::path q4 = test::process_temp_dir("perplexity") / "q4_0.gguf";
    quantize_model(models / "stories-3m-f16.gguf", q4, {.type = GGMLType::Q4_0});
    CpuBackend cpu_q8(LlamaModel::load(models / "stories-3m-q8_0.gguf"), {.n_threads = 2});
    CpuBackend cpu_q4(LlamaModel::load(q4), {.n_threads = 2});
    const PerplexityResult q8 = perplexity(cpu_q8, vocab, text, p, &cpu);
    const PerplexityResult r4 = perplexity(cpu_q4, vocab, text, p, &cpu);
    CHECK(q8.reference->perplexity == self.perplexity);
    CHECK(q8.compare->kl_mean > 0);
    CHECK(q8.compare->max_abs_logit_diff > 0);
    // Four bits per weight move the predictions further than eight.
    CHECK(r4.compare->kl_mean > q8.compare->kl_mean);
    CHECK(r4.compare->max_abs_logit_diff > q8.compare->max_abs_logit_diff);
    CHECK(r4.compare->kl_max >= r4.compare->kl_mean);
}

TEST_CASE("perplexity: nothing to score, a window beyond the context, or another vocabulary is a clear error") {
    const auto model = LlamaModel::load(models / "stories-3m-f16.gguf");
    const Vocab vocab = Vocab::from_gguf(model->file());
    CpuBackend cpu(model, {.n_threads = 1});
    CHECK_THROWS_WITH_AS(perplexity(cpu, vocab, "", {}), "perplexity: the text has no document of two or more tokens to score",
                         Error);
    CHECK_THROWS_WITH_AS(perplexity(cpu, vocab, "\n<|doc|>\n\n<|doc|>\n", {}),
                         "perplexity: the text has no document of two or more tokens to score", Error);
    PerplexityParams p;
    p.n_ctx = 4096;
    CHECK_THROWS_WITH_AS(perplexity(cpu, vocab, "The cat", p),
                         "perplexity: window of 4096 tokens is longer than the model's context (512)", Error);
    p.n_ctx = 1;
    CHECK_THROWS_AS(perplexity(cpu, vocab, "The cat", p), Error);

    const fs::path tiny = test::process_temp_dir("perplexity") / "tiny.gguf";
    write_random_model(tiny, random_model_preset("tiny"));
    CpuBackend other(LlamaModel::load(tiny), {.n_threads = 1});
    CHECK_THROWS_WITH_AS(perplexity(cpu, vocab, "The cat sat", {}, &other),
                         "perplexity: the reference has 512 tokens in its vocabulary, the model 2000: they cannot be compared",
                         Error);
}
