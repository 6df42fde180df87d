// The LlmView the six-stage adapter writes for the transformer panels: the
// KV cache filling one block at prefill and one position per decode step,
// the tokens as they come, the next-token tables, forced tokens, the clocks.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/pipeline.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/llm/llm_view.h"
#include "pipeline/llm/text_codec.h"

using namespace sixstep;
namespace fs = std::filesystem;

namespace {

// The bundled story model: a real vocabulary (BOS, " cat", byte tokens).
fs::path bundled_model() { return fs::path(SIXSTEP_SOURCE_DIR) / "assets/models/stories-3m-f16.gguf"; }

Request request(const char* prompt, int max_tokens, const char* temperature = "0") {
    Request r;
    r.set("prompt", prompt);
    r.set("max_tokens", std::to_string(max_tokens));
    r.set("temperature", temperature);
    return r;
}

const char* phase_of(const llm::LlmView& v) { return v.passes.back().prefill ? "prefill" : "decode"; }

}  // namespace

TEST_CASE("llm view: the KV cache fills as one block at prefill, then one position per decode step") {
    llm::LlmModel model(bundled_model(), {.n_threads = 2, .n_ctx = 0, .top_n = 4, .max_tokens = 8});
    llm::LlmView view;
    model.set_view(&view);
    Pipeline p(model, request("The cat sat on the mat and", 5));
    p.step();  // request
    REQUIRE(view.request == 1);
    const int n_prompt = view.n_prompt;
    REQUIRE(n_prompt > 2);
    CHECK(static_cast<int>(view.tokens.size()) == n_prompt);
    CHECK(view.tokens.front().special);  // BOS
    CHECK(view.passes.empty());
    p.run_through(Stage::forward);
    REQUIRE(view.passes.size() == 1);
    CHECK(std::string(phase_of(view)) == "prefill");
    CHECK(view.passes[0].n_tokens == n_prompt);
    CHECK(view.kv.n_filled == n_prompt);
    CHECK(view.kv.capacity_left == view.kv.n_ctx - n_prompt);
    CHECK(view.kv.bytes_filled == view.kv.bytes_per_token * static_cast<std::size_t>(n_prompt));
    CHECK(view.kv.bytes_per_token ==
          2u * view.kv.n_layer * view.kv.n_head_kv * view.kv.head_dim * static_cast<std::size_t>(view.kv.bytes_per_value));
    CHECK(view.kv.block_table.size() == static_cast<std::size_t>((n_prompt + view.kv.block_size - 1) / view.kv.block_size));
    // Each decode step: one more pass, one more position, one more token.
    for (int k = 1; k <= 4; ++k) {
        CAPTURE(k);
        p.run_through(Stage::postprocess);
        CHECK(static_cast<int>(view.tokens.size()) == n_prompt + k);
        CHECK_FALSE(view.tokens.back().prompt);
        CHECK(view.passes.back().sampled);
        CHECK(view.ttft_ms > 0);
        p.run_through(Stage::forward);
        CHECK(std::string(phase_of(view)) == "decode");
        CHECK(view.passes.back().pos0 == n_prompt + k - 1);
        CHECK(view.passes.back().n_tokens == 1);
        CHECK(view.kv.n_filled == n_prompt + k);
        CHECK(static_cast<int>(view.passes.size()) == k + 1);
    }
    CHECK(view.tpot_ms > 0);
    p.run();
    CHECK(view.finished);
    CHECK(view.kv.released);
    // The next request starts a new picture.
    Pipeline q(model, request("Once", 1));
    q.step();
    CHECK(view.request == 2);
    CHECK(view.passes.empty());
}

TEST_CASE("llm view: the next-token tables — a preview of the filters at output, the sampled chain after") {
    llm::LlmModel model(bundled_model(), {.n_threads = 2, .n_ctx = 0, .top_n = 4, .max_tokens = 8});
    llm::LlmView view;
    model.set_view(&view);
    Request r = request("The cat sat", 2, "0.8");
    r.set("top_k", "3");
    Pipeline p(model, r);
    p.run_through(Stage::output);
    CHECK(view.next.top.size() == 4);
    CHECK_FALSE(view.next.sampled);
    CHECK(view.next.chosen == -1);
    REQUIRE(!view.next.chain.empty());
    for (const auto& st : view.next.chain) CHECK(st.name != "dist");  // a preview does not draw
    CHECK(view.next.chain[1].name == "top_k");
    CHECK(view.next.chain[1].n_kept == 3);
    p.step();  // postprocess
    CHECK(view.next.sampled);
    CHECK(view.next.chain.back().name == "dist");
    const auto id = p.trace().lookup("postprocess.token_id");
    REQUIRE(id);
    CHECK(view.next.chosen == static_cast<int>(std::get<double>(*id)));
    CHECK(p.trace().lookup("postprocess.final_top1_prob"));
    // The summary gives both odds: the model's own, and what the chain (top-k
    // 3, temperature 0.8) left the drawn token — never 0.000 for a small one.
    const std::string summary = p.trace().last(Stage::postprocess)->summary;
    CAPTURE(summary);
    CHECK(summary.rfind("sampled ", 0) == 0);
    // Printed as the out: line prints its probability (shown_number).
    CHECK(summary.find(fmt::format("(p = {}; ", shown_number(view.next.chosen_p))) != std::string::npos);
    CHECK(summary.find(" after the chain)") != std::string::npos);
}

TEST_CASE("llm view: a forced token is taken, marked, and generation goes on from it") {
    llm::LlmModel model(bundled_model(), {.n_threads = 2, .n_ctx = 0, .top_n = 4, .max_tokens = 8});
    llm::LlmView view;
    model.set_view(&view);
    Request r = request("The cat", 3);
    r.set("force", "0:7, 2:9");
    Pipeline p(model, r);
    // Before the sampler's turn the view already names the token to be
    // forced there (the window says so); at a token not forced, nothing.
    p.run_through(Stage::output);
    CHECK(view.next.chosen == -1);
    CHECK(view.next.to_force == 7);
    CHECK(view.next.to_force_piece == model.codec().piece(7));
    p.run_through(Stage::output);  // token 0 taken by force; the distribution of token 1
    CHECK(view.next.top.size() == 4);
    CHECK(view.next.to_force == -1);
    CHECK(view.next.to_force_piece.empty());
    p.run();
    const int n = view.n_prompt;
    REQUIRE(static_cast<int>(view.tokens.size()) == n + 3);
    CHECK(view.tokens[static_cast<std::size_t>(n)].id == 7);
    CHECK(view.tokens[static_cast<std::size_t>(n)].forced);
    CHECK_FALSE(view.tokens[static_cast<std::size_t>(n) + 1].forced);
    CHECK(view.tokens[static_cast<std::size_t>(n) + 2].id == 9);
    CHECK(format_value(*p.trace().lookup("postprocess.forced")) == "yes");
    CHECK(format_value(*p.trace().lookup("postprocess.sampler")) == "forced");
    CHECK(format_value(*p.trace().lookup("request.force")) == "0:7, 2:9");
    // Said as forced, not as sampled (the last token, 9, was forced).
    CHECK(p.trace().last(Stage::postprocess)->summary.rfind("forced ", 0) == 0);
}

TEST_CASE("llm view: a token id that does not exist, or a malformed choice, is one clear error") {
    llm::LlmModel model(bundled_model());
    for (const auto& entry : {std::pair{"0:99999", "token id 99999 does not exist: the vocabulary has ids 0.."},
                              std::pair{"first:3", "\"first:3\" is not index:id"},
                              std::pair{"0:-1", "token id -1 does not exist"}}) {
        const auto& force = entry.first;
        const auto& message = entry.second;
        CAPTURE(force);
        Request r = request("The cat", 2);
        r.set("force", force);
        Pipeline p(model, r);
        try {
            p.step();
            FAIL("no error");
        } catch (const Error& e) {
            CHECK(std::string(e.what()).find(message) != std::string::npos);
        }
    }
    CHECK(llm::parse_forced("0:1, 3:2", 10) == std::map<int, int>{{0, 1}, {3, 2}});
    // Spaces beside a colon belong to the pair (" 0 : 412 " said "\"0\" is not index:id").
    CHECK(llm::parse_forced(" 0 : 1 ,3 :2", 10) == std::map<int, int>{{0, 1}, {3, 2}});
    // An index past any answer wrapped at 32 bits (4294967296 forced token 0).
    CHECK_THROWS_WITH_AS(llm::parse_forced("4294967296:3", 10),
                         "request field force = \"4294967296:3\": index 4294967296 is past any answer's end "
                         "(max_tokens is at most 1000000)",
                         Error);
    CHECK_THROWS_WITH_AS(llm::parse_forced("0:3, 0:4", 10),
                         "request field force = \"0:3, 0:4\": index 0 is forced twice (to 3 and 4)", Error);
    CHECK_THROWS_WITH_AS(llm::parse_forced("0 1", 10),
                         "request field force = \"0 1\": \"0\" is not index:id (e.g. \"0:412\": token 412 as the first "
                         "generated token)",
                         Error);
    CHECK(llm::format_forced({{0, 1}, {3, 2}}) == "0:1, 3:2");
}

TEST_CASE("llm view: a piece names its token, a near miss suggests the nearest") {
    llm::LlmModel model(bundled_model());
    const int id = model.token_of_piece(" cat");
    CHECK(model.codec().piece(id) == " cat");
    try {
        model.token_of_piece(" catt");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("did you mean") != std::string::npos);
    }
    // A megabyte pasted as a piece: a message of bounded length that says so.
    try {
        model.token_of_piece(std::string(1 << 20, 'x'));
        FAIL("no error");
    } catch (const Error& e) {
        const std::string what = e.what();
        CHECK(what.size() < 1000);
        CHECK(what.find("bytes left out") != std::string::npos);
    }
}
