// What the user waits for: the reader arithmetic exact on known timelines,
// the three live runs consistent with what they measured.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>

#include "pipeline/core/error.h"
#include "pipeline/llm/backend.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/serving/bundled_model.h"
#include "pipeline/serving/user_wait.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep;
using namespace sixstep::llm;
using namespace sixstep::serving;

TEST_CASE("user waits: a reader keeps pace with a fast stream and waits on a slow one") {
    // 10 tokens/s: 100 ms per token. Text arrives every 10 ms after a 100 ms TTFT.
    ReaderTimeline fast = read_along({100, 110, 120, 130}, 10);
    CHECK(fast.read_ms == std::vector<double>{200, 300, 400, 500});
    CHECK(fast.waited_ms == 0);
    CHECK(fast.done_ms == 500);
    // Text every 300 ms: the reader finishes each token 200 ms before the next comes.
    ReaderTimeline slow = read_along({100, 400, 700}, 10);
    CHECK(slow.read_ms == std::vector<double>{200, 500, 800});
    CHECK(slow.waited_ms == 400);
    CHECK(slow.done_ms == 800);
    CHECK_THROWS_AS(read_along({1}, 0), Error);
}

namespace {

// The chat finding about the stream must agree with the figures it quotes.
void check_stream_finding(const ChatWait& c) {
    REQUIRE(c.findings.size() >= 2);
    const std::string& f = c.findings[1];
    CAPTURE(f);
    if (c.decode_tok_s < c.reading_tok_s)
        CHECK(f.find("slower than reading") != std::string::npos);
    else
        CHECK(f.find("slower than reading") == std::string::npos);
}

// Small runs: every figure is still measured, in a fraction of a second.
UserWaitParams small_params(int chat_tokens, int agent_calls, int agent_tokens, int batch_requests, int batch_tokens) {
    UserWaitParams p;
    p.chat_tokens = chat_tokens;
    p.agent_calls = agent_calls;
    p.agent_tokens = agent_tokens;
    p.batch_requests = batch_requests;
    p.batch_tokens = batch_tokens;
    return p;
}

}  // namespace

TEST_CASE("user waits: chat, agent and batch job run live and report what they measured") {
    const auto model = LlamaModel::load(bundled_model_path());
    auto backend = make_backend(BackendKind::cpu, model, {.n_threads = 1}).backend;
    const auto codec = make_vocab_codec(std::make_shared<const Vocab>(Vocab::from_gguf(model->file())));
    const UserWaitParams p = small_params(24, 3, 12, 5, 10);
    const UserWaits w = measure_user_waits(*backend, *codec, p);

    const ChatWait& c = w.chat;
    CHECK(c.headline.metric == "TTFT");
    CHECK(c.headline.value == c.ttft_ms);
    REQUIRE(c.arrival_ms.size() == 24);
    CHECK(c.n_tokens == 24);
    CHECK(c.arrival_ms.front() == doctest::Approx(c.ttft_ms));
    for (std::size_t i = 1; i < c.arrival_ms.size(); ++i) CHECK(c.arrival_ms[i] >= c.arrival_ms[i - 1]);
    CHECK(c.n_words > 0);
    CHECK(c.tokens_per_word == doctest::Approx(24.0 / c.n_words));
    CHECK(c.tokens_per_word_source == "this text");
    check_stream_finding(c);
    CHECK(c.reading_tok_s == doctest::Approx(238.0 / 60 * c.tokens_per_word));
    CHECK(c.stream_over_reading == doctest::Approx(c.decode_tok_s / c.reading_tok_s));
    const ReaderTimeline reader = read_along(c.arrival_ms, c.reading_tok_s);
    CHECK(c.reader_done_ms == doctest::Approx(reader.done_ms));
    CHECK(c.read_ms.size() == c.arrival_ms.size());
    // Faster text can only bring the end of reading nearer, never push it away.
    CHECK(c.done_if_decode_2x_ms <= c.reader_done_ms);
    CHECK(c.done_if_ttft_half_ms <= c.reader_done_ms);
    // The what-ifs replay the measured arrivals: decode twice as fast keeps
    // the first token where it came and halves every gap after it; half the
    // TTFT moves every token earlier by half the first token's time.
    std::vector<double> faster, earlier;
    const double first = c.arrival_ms.front();
    for (double t : c.arrival_ms) {
        faster.push_back(first + (t - first) / 2);
        earlier.push_back(t - first / 2);
    }
    CHECK(c.done_if_decode_2x_ms == doctest::Approx(read_along(faster, c.reading_tok_s).done_ms));
    CHECK(c.done_if_ttft_half_ms == doctest::Approx(read_along(earlier, c.reading_tok_s).done_ms));
    // The verdict is the one for the value measured.
    const char* expected_verdict = c.ttft_ms < p.instant_ms ? "instantaneous" : c.ttft_ms < p.flow_ms ? "is kept" : "breaks";
    CHECK(c.headline.verdict.find(expected_verdict) != std::string::npos);

    const AgentWait& a = w.agent;
    CHECK(a.headline.metric == "end-to-end");
    REQUIRE(a.calls.size() == 3);
    double sum = 0, ttft = 0;
    for (std::size_t i = 0; i < a.calls.size(); ++i) {
        sum += a.calls[i].total_ms, ttft += a.calls[i].ttft_ms;
        CHECK(a.calls[i].n_generated >= 1);
        if (i > 0 && !a.calls[i - 1].output.empty()) CHECK(a.calls[i].prompt == a.calls[i - 1].output);
        // Short English answers are passed on whole, within what a lesson's
        // work budget counts a re-read answer as.
        if (i > 0) CHECK(a.calls[i].n_prompt <= agent_reread_bytes_per_token * p.agent_tokens + 2);
    }
    CHECK(a.calls[0].prompt == p.agent_prompt);
    CHECK(a.end_to_end_ms == doctest::Approx(sum));
    CHECK(a.headline.value == a.end_to_end_ms);
    CHECK(a.ttft_share == doctest::Approx(ttft / sum));
    CHECK(a.saved_if_ttft_half_ms + a.saved_if_tpot_half_ms == doctest::Approx(sum / 2));

    const BatchWait& b = w.batch;
    CHECK(b.headline.metric == "throughput");
    CHECK(b.headline.value == b.batched_tok_s);
    CHECK(b.n_tokens == 5 * 10);
    // One pass reads every prompt and gives each its first token, then one
    // pass per further token: all five requests share every pass.
    CHECK(b.n_forward_batched == 10);
    CHECK(b.gain == doctest::Approx(b.batched_tok_s / b.sequential_tok_s));
    CHECK(b.batched_tok_s == doctest::Approx(1000.0 * 50 / b.batched_ms));

    const auto j = user_waits_json(w);
    CHECK(j["chat"]["headline"]["metric"] == "TTFT");
    CHECK(j["batch"]["n_tokens"] == 50);
}

TEST_CASE("user waits: a random model's wordless output is not taken for prose") {
    RandomModelParams rp = random_model_preset("tiny");  // 512 byte-level tokens
    const auto model = LlamaModel::from_gguf(GGUFFile::from_bytes(random_model_bytes(rp), "tiny"));
    auto backend = make_backend(BackendKind::cpu, model, {.n_threads = 1}).backend;
    const auto codec = make_vocab_codec(std::make_shared<const Vocab>(Vocab::from_gguf(model->file())));
    const UserWaitParams p = small_params(32, 1, 4, 2, 4);
    const UserWaits w = measure_user_waits(*backend, *codec, p);
    const ChatWait& c = w.chat;
    if (c.tokens_per_word_source != "this text") {
        // Byte tokens: an English word and its space are a handful of tokens.
        CHECK(c.tokens_per_word > 2);
        CHECK(c.tokens_per_word < 8);
    }
    CHECK(c.tokens_per_word <= 8);
    CHECK(c.reading_tok_s == doctest::Approx(238.0 / 60 * c.tokens_per_word));
    check_stream_finding(c);
}

// A random model's pieces re-read as many tokens each: unbounded, the chain
// would outgrow the context (and any work budget) within a few calls.
TEST_CASE("user waits: an agent passes on at most 8 bytes of answer per token generated") {
    RandomModelParams rp = random_model_preset("tiny");  // n_ctx 256
    const auto model = LlamaModel::from_gguf(GGUFFile::from_bytes(random_model_bytes(rp), "tiny"));
    auto backend = make_backend(BackendKind::cpu, model, {.n_threads = 1}).backend;
    const auto codec = make_vocab_codec(std::make_shared<const Vocab>(Vocab::from_gguf(model->file())));
    const UserWaitParams p = small_params(4, 6, 24, 1, 1);
    const UserWaits w = measure_user_waits(*backend, *codec, p);
    const auto& calls = w.agent.calls;
    REQUIRE(calls.size() == 6);
    bool cut = false;
    for (std::size_t i = 1; i < calls.size(); ++i) {
        CAPTURE(i);
        const std::string& before = calls[i - 1].output;
        if (before.empty()) continue;
        CHECK(calls[i].prompt.size() <= 8 * 24);
        CHECK(before.compare(0, calls[i].prompt.size(), calls[i].prompt) == 0);  // a prefix of the answer
        CHECK(calls[i].n_prompt <= 8 * 24 + 2);
        cut = cut || calls[i].prompt.size() < before.size();
    }
    CHECK(cut);  // this model's answers are longer than that
    // Each agent call runs three times (its fastest times kept), and so does
    // the batch job, both ways.
    CHECK(user_waits_positions_at_most(p) == (18 + 4) + (18 + 4) + 3 * ((18 + 24) + 5 * (8 * 24 + 2 + 24)) + 3 * 2 * (26 + 1));
}

TEST_CASE("user waits: out-of-range parameters are refused") {
    const auto model = LlamaModel::load(bundled_model_path());
    auto backend = make_backend(BackendKind::cpu, model, {.n_threads = 1}).backend;
    const auto codec = make_vocab_codec(std::make_shared<const Vocab>(Vocab::from_gguf(model->file())));
    UserWaitParams p;
    p.chat_tokens = 0;
    CHECK_THROWS_WITH_AS(measure_user_waits(*backend, *codec, p), "chat tokens = 0: give 1..4096", Error);
    p = {};
    p.reading_words_per_min = NAN;
    CHECK_THROWS_AS(measure_user_waits(*backend, *codec, p), Error);
    p = {};
    p.batch_requests = 100000;
    CHECK_THROWS_AS(measure_user_waits(*backend, *codec, p), Error);
    p = {};
    p.agent_prompt.clear();
    CHECK_THROWS_AS(measure_user_waits(*backend, *codec, p), Error);
}
