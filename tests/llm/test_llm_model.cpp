#include <doctest/doctest.h>

#include "temp_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "pipeline/core/error.h"
#include "pipeline/core/pipeline.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/llm/observer.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep;
namespace fs = std::filesystem;

namespace llm_model_test {

namespace {
fs::path tiny_model() {
    const fs::path dir = sixstep::test::process_temp_dir("llm-model");
    const fs::path path = dir / "tiny.gguf";
    if (!fs::exists(path)) {
        llm::RandomModelParams p = llm::random_model_preset("tiny");
        p.n_ctx = 48;
        llm::write_random_model(path, p);
    }
    return path;
}
std::string text(const std::optional<Value>& v) { return v ? format_value(*v) : "<missing>"; }
double number(const std::optional<Value>& v) {
    REQUIRE(v.has_value());
    REQUIRE(std::holds_alternative<double>(*v));
    return std::get<double>(*v);
}
}  // namespace

TEST_CASE("llm model: one request walks the six stages, looping forward → postprocess per token") {
    llm::LlmModel model(tiny_model(), {.n_threads = 2, .n_ctx = 0, .top_n = 4, .max_tokens = 16});
    CHECK_FALSE(model.loaded());
    Request req;
    req.set("prompt", "The cat sat on the");
    req.set("max_tokens", "3");
    Pipeline p(model, req);
    const Response& r = p.run();
    CHECK(model.loaded());

    int n_forward = 0, n_post = 0;
    for (const auto& ev : p.trace().events()) {
        if (ev.stage == Stage::forward) ++n_forward;
        if (ev.stage == Stage::postprocess) ++n_post;
    }
    CHECK(n_forward == 3);
    CHECK(n_post == 3);
    const Trace& t = p.trace();
    CHECK(number(t.lookup("request.n_tokens")) == 18);
    CHECK(text(t.lookup("load.status")) == "cold load");
    CHECK(number(t.lookup("load.load_ms")) > 0);
    CHECK(number(t.lookup("forward.n_tokens")) == 1);  // the last forward is a decode step
    CHECK(number(t.lookup("forward.kv_used_tokens")) == 20);
    CHECK(text(t.lookup("forward.phase")) == "decode");
    const double top1 = number(t.lookup("output.top1_prob"));
    CHECK(top1 > 0);
    CHECK(top1 <= 1);
    CHECK(t.lookup("output.top1_piece").has_value());
    CHECK(t.lookup("postprocess.token_piece").has_value());
    CHECK(text(t.lookup("postprocess.stop_reason")) == "max_tokens");
    CHECK(number(t.lookup("respond.n_generated")) == 3);
    CHECK(number(t.lookup("respond.ttft_ms")) > 0);
    CHECK(number(t.lookup("respond.tpot_ms")) > 0);
    CHECK(text(t.lookup("respond.weights_unchanged")) == "yes");
    CHECK(text(t.lookup("respond.text")) == r.text);
    // Greedy by default: the sampled token is the top-1 of the table.
    CHECK(number(t.lookup("postprocess.token_id")) == number(t.lookup("output.top1_id")));

    // The first forward was the prefill of the whole prompt.
    const TraceEvent* first = nullptr;
    for (const auto& ev : t.events())
        if (ev.stage == Stage::forward) {
            first = &ev;
            break;
        }
    REQUIRE(first);
    CHECK(format_value(first->find("phase")->value) == "prefill");
    CHECK(std::get<double>(first->find("n_tokens")->value) == 18);

    // A second request reuses the loaded weights and gives the same greedy text.
    Pipeline p2(model, req);
    CHECK(p2.run().text == r.text);
    CHECK(text(p2.trace().lookup("load.status")) == "reused");
    // The model's shape is there after a reuse too: a later step's checks
    // on load.n_layer read "(nothing)" when its weights were warm.
    for (const char* path : {"load.n_layer", "load.n_params", "load.kv_bytes_per_token", "load.n_ctx"})
        CHECK(number(p2.trace().lookup(path)) == number(t.lookup(path)));
    CHECK(text(p2.trace().lookup("load.type")) == text(t.lookup("load.type")));
    CHECK_FALSE(p2.trace().lookup("load.file"));  // a cold load's own
}

TEST_CASE("llm model: the load warms the backend up through a cache of its own, leaving the model's empty") {
    llm::LlmModel model(tiny_model());
    Request req;
    req.set("prompt", "The cat sat on the");
    Pipeline p(model, req);
    p.run_through(Stage::load);
    const TraceEvent* load = p.trace().last(Stage::load);
    REQUIRE(load != nullptr);
    // The context is 48: a 47-token prefill and a decode step, said in the summary.
    CHECK(load->summary.find(" warming up") != std::string::npos);
    // The file was opened for the tokenizer, before this stage: its time is
    // in the summary's total, said as such (the card has only the stage's own).
    CHECK(load->summary.find(" ms opening the file earlier)") != std::string::npos);
    const llm::KvCacheStats kv = model.kv_cache().stats();
    CHECK(kv.n_sequences == 0);
    CHECK(kv.n_tokens == 0);
    CHECK(kv.n_blocks_used == 0);
    CHECK(kv.bytes_allocated == 0);
}

TEST_CASE("llm model: bad requests fail at the request stage with clear messages") {
    llm::LlmModel model(tiny_model());
    {
        Pipeline p(model, Request{});
        CHECK_THROWS_WITH_AS(p.step(), "request has no prompt (field \"prompt\")", Error);
    }
    {
        Request r;
        r.set("prompt", std::string(60, 'x'));
        Pipeline p(model, r);
        CHECK_THROWS_WITH_AS(p.step(), "prompt is 60 tokens but the context holds 48 (n_ctx)", Error);
    }
    {
        Request r;
        r.set("prompt", "hi");
        r.set("max_tokens", "100");
        Pipeline p(model, r);
        CHECK_THROWS_WITH_AS(p.step(),
                             "prompt (2 tokens) + max_tokens (100) does not fit in the context of 48 tokens (n_ctx); ask for "
                             "at most 47 tokens (the last one is never fed back, so it needs no place)",
                             Error);
    }
    {
        Request r;
        r.set("prompt", "hi");
        r.set("temperature", "warm");
        Pipeline p(model, r);
        CHECK_THROWS_WITH_AS(p.step(), "request field temperature = \"warm\" is not a number", Error);
    }
    {
        // A token forced past the answer's end was never used, without a word.
        Request r;
        r.set("prompt", "hi");
        r.set("max_tokens", "3");
        r.set("force", "9:41");
        Pipeline p(model, r);
        CHECK_THROWS_WITH_AS(p.step(),
                             "request field force: index 9 is past the answer's end: max_tokens 3 gives indices 0..2",
                             Error);
    }
    {
        llm::LlmModel missing("/nonexistent/model.gguf");
        Request r;
        r.set("prompt", "hi");
        Pipeline p(missing, r);
        CHECK_THROWS_AS(p.step(), Error);
    }
}

TEST_CASE("llm model: a stop string ends the loop early") {
    llm::LlmModel model(tiny_model());
    Request req;
    req.set("prompt", "abc");
    req.set("max_tokens", "10");
    Pipeline full(model, req);
    const std::string text_full = full.run().text;
    REQUIRE(text_full.size() >= 3);
    req.set("stop", text_full.substr(1, 2));
    Pipeline cut(model, req);
    CHECK(cut.run().text == text_full.substr(0, text_full.find(text_full.substr(1, 2))));
    CHECK(format_value(*cut.trace().lookup("respond.stop_reason")) == "stop_string");
}

TEST_CASE("llm model: the bundled model says \" mat\" after \"The cat sat on the\"") {
    for (const char* name : {"stories-3m-f16.gguf", "stories-3m-q8_0.gguf", "stories-draft-f32.gguf"}) {
        const fs::path path = fs::path(SIXSTEP_SOURCE_DIR) / "assets" / "models" / name;
        REQUIRE_MESSAGE(fs::exists(path), "missing " << path.string());
        llm::LlmModel model(path, {.n_threads = 2, .n_ctx = 0, .top_n = 5, .max_tokens = 16});
        Request req;
        req.set("prompt", "The cat sat on the");
        req.set("max_tokens", "1");
        Pipeline p(model, req);
        const Response& r = p.run();
        const Trace& t = p.trace();
        CHECK(text(t.lookup("output.top1_piece")) == " mat");
        CHECK(r.text == " mat");
        const double prob = number(t.lookup("output.top1_prob"));
        MESSAGE(std::string(name) << ": p(\" mat\") = " << prob);
        CHECK(prob > 0.3);
        CHECK(text(t.lookup("respond.stop_reason")) == "max_tokens");
        CHECK(text(t.lookup("respond.weights_unchanged")) == "yes");
    }
}

TEST_CASE("llm model: a tensor observer sees the forward stages' named tensors") {
    struct Watcher : llm::TensorObserver {
        int outputs = 0, fills = 0;
        bool wants(std::string_view name, int) override { return name == "result_output"; }
        void tensor(const llm::TensorView& t) override { outputs += t.name == "result_output"; }
        void kv_fill(int, int, int, int) override { ++fills; }
    } w;
    llm::LlmModel model(tiny_model());
    model.set_tensor_observer(&w);
    Request req;
    req.set("prompt", "abc");
    req.set("max_tokens", "3");
    Pipeline p(model, req);
    p.run();
    CHECK(w.outputs == 3);  // prefill + 2 decode steps
    CHECK(w.fills == 3);
}

}  // namespace llm_model_test

namespace llm_model_test {

// A lesson's `random:` model is cached in the temporary folder. At a
// predictable name in /tmp anyone could plant a file, and the lesson then
// ran on it (0.6 M parameters for a 110 M model) without a word.
TEST_CASE("random model cache: a private folder, and a file that is not the preset's model is written again") {
    // tiny at Q8_0: a combination no other test caches, so none reads the planted file.
    const fs::path path = llm::cached_random_model("tiny", llm::GGMLType::Q8_0);
    struct stat st{};
    REQUIRE(::lstat(path.parent_path().c_str(), &st) == 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK((st.st_mode & 0777) == 0700);
    CHECK(st.st_uid == ::geteuid());
    const auto size = fs::file_size(path);
    // Another model planted in its place: replaced, not used.
    const fs::path other = tiny_model();
    fs::copy_file(other, path.string() + ".planted");
    fs::rename(path.string() + ".planted", path);
    REQUIRE(fs::file_size(path) != size);
    CHECK(llm::cached_random_model("tiny", llm::GGMLType::Q8_0) == path);
    CHECK(fs::file_size(path) == size);
    // And junk: written again, no "bad magic" for every later run.
    { std::ofstream(path.string() + ".planted") << "junk"; }
    fs::rename(path.string() + ".planted", path);
    CHECK(llm::cached_random_model("tiny", llm::GGMLType::Q8_0) == path);
    CHECK(fs::file_size(path) == size);
}

}  // namespace llm_model_test
