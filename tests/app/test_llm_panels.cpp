// The transformer panels' commands through the interpreter, as the window's
// clicks reach them: tensors captured only while a panel that needs them
// listens, the attention panel's layer checked against the model, a click
// that forces a token, each bad choice one message for its panel.
#include <doctest/doctest.h>

#include <string>

#include "app/core/interpreter.h"
#include "pipeline/core/error.h"

using namespace sixstep;
using namespace sixstep::app;

namespace {

Interpreter stories(const char* steps) {
    const std::string yaml = std::string("title: t\nmodel: {kind: llm, file: ") + SIXSTEP_SOURCE_DIR +
                             "/assets/models/stories-3m-f16.gguf, threads: 1}\nsteps:\n" + steps;
    return Interpreter(parse_lesson(yaml, "inline.yaml"));
}

}  // namespace

TEST_CASE("llm panels: nothing captured until a panel listens, then the current pass is computed again") {
    auto it = stories(R"(
  - request: {prompt: "The cat sat on the", max_tokens: 4, temperature: 0}
    run: forward
)");
    it.step();
    const PanelsState& before = it.state().panels;
    REQUIRE(before.view);
    CHECK(before.view->kv.n_filled == 6);
    CHECK(before.listening.empty());
    CHECK_FALSE(before.attention);
    CHECK(before.lens.empty());

    it.show_in_window({"attention", "logit_lens"});
    const PanelsState& after = it.state().panels;
    REQUIRE(after.attention);
    CHECK(after.attention->n_pos == 6);                // the prompt's positions, query × key
    CHECK(after.attention->weight(0, 0, 0) == doctest::Approx(1.0f));  // the first token sees only itself
    CHECK(after.lens.size() == static_cast<size_t>(after.n_layer));
    CHECK(after.view->kv.n_filled == 6);              // computed again, not appended to

    it.show_in_window({});
    CHECK_FALSE(it.state().panels.attention);
}

// Computing the request again re-measures its times (often faster, on warm
// caches): the step's report says it ran again, so a reader comparing the
// prefill of an earlier step with the TTFT of a later one knows why.
TEST_CASE("llm panels: a step whose panels run the request again says so, a step that runs it first does not") {
    auto it = stories(R"(
  - request: {prompt: "The cat sat on the", max_tokens: 4, temperature: 0}
    show: attention
    run: forward
  - show: [attention, logit_lens]
  - show: [attention, logit_lens]
  - attention: {layer: 2, head: 0}
)");
    const StepReport first = it.step();  // listening before the run: nothing to run again
    CHECK(first.notes.empty());
    const StepReport lens = it.step();   // the logit lens was not captured: the pass again
    REQUIRE(lens.notes.size() == 1);
    CHECK(lens.notes[0].find("ran again from the start") != std::string::npos);
    CHECK(it.step().notes.empty());      // already captured
    CHECK(it.step().notes.size() == 1);  // another layer's attention: the pass again
}

TEST_CASE("llm panels: a layer or head the model lacks is one message in its panel, the last good choice kept") {
    auto it = stories(R"(
  - request: {prompt: "The cat sat on the", max_tokens: 4, temperature: 0}
    show: attention
    run: forward
)");
    it.step();
    it.choose_attention(1, 2);
    CHECK(it.state().panels.attention_layer == 1);
    CHECK(it.state().panels.attention_head == 2);
    CHECK_THROWS_AS(it.choose_attention(it.state().panels.n_layer, 0), Error);
    REQUIRE(it.state().panels.message);
    CHECK(it.state().panels.message->panel == "attention");
    CHECK(it.state().panels.message->text.find("does not exist") != std::string::npos);
    CHECK(it.state().panels.attention_layer == 1);
    it.choose_attention(0, 0);                         // a good choice clears the message
    CHECK_FALSE(it.state().panels.message);
}

TEST_CASE("llm panels: a clicked candidate is taken instead of the sampler's, a bad id is refused") {
    auto it = stories(R"(
  - request: {prompt: "The cat sat on the", max_tokens: 4, temperature: 0}
    show: next_token
    run: output
)");
    it.step();
    const int rug = it.state().panels.view->next.top.at(1).id;  // the runner-up, " rug"
    CHECK_THROWS_AS(it.force_token(1 << 20), Error);
    REQUIRE(it.state().panels.message);
    CHECK(it.state().panels.message->panel == "next_token");
    it.force_token(rug);
    const auto& view = *it.state().panels.view;
    CHECK(view.tokens.back().id == rug);
    CHECK(view.tokens.back().forced);
    CHECK_FALSE(it.state().panels.message);
}

// A calculation that fails leaves no figures: lesson 06, its data folder not
// found, checked the step's kv_calc.dtype against the previous step's
// ("expected f32, got q8_0").
TEST_CASE("llm panels: a KV calculation that fails leaves none, not the last one's figures") {
    auto it = stories(R"(
  - request: {prompt: "The cat", max_tokens: 1, temperature: 0}
    run: forward
)");
    it.step();
    KvCalcSpec good;
    good.preset = "article-36l";
    good.dtype = "q8_0";
    good.n_tokens = 1000;
    it.kv_calc(good);
    REQUIRE(it.state().panels.kv_calc);
    KvCalcSpec bad = good;
    bad.head_dim = 100;  // a q8_0 cache stores blocks of 32 values
    CHECK_THROWS_AS(it.kv_calc(bad), Error);
    CHECK_FALSE(it.state().panels.kv_calc);
    REQUIRE(it.state().panels.message);
    CHECK(it.state().panels.message->text.find("must be a multiple of 32") != std::string::npos);
}

// A new request with a panel shown: the panel's rerun took the old request's
// count of stages and ran the new one that far without a word, so `run: all`
// narrated its respond stage alone.
TEST_CASE("llm panels: a panel shown with a new request runs nothing unseen, and the step narrates every stage") {
    auto it = stories(R"(
  - request: {prompt: "The cat sat on the", max_tokens: 2, temperature: 0}
    run: forward
  - run: token
  - request: {prompt: "The dog ran to the", max_tokens: 1, temperature: 0}
    show: attention
    run: all
)");
    it.step();
    it.step();
    const StepReport r = it.step();
    REQUIRE_FALSE(r.error);
    REQUIRE(r.events.size() == 6);
    CHECK(r.events.front().stage == Stage::request);
    CHECK(r.events.back().stage == Stage::respond);
    CHECK(r.notes.empty());  // nothing ran twice
    CHECK(it.state().panels.attention);
}
