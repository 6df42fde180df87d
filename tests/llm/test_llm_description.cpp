// The language model against its own description: it emits exactly the
// declared paths, its request stage takes the declared defaults, and the
// declared ranges of its request fields are the ones it enforces.
#include <doctest/doctest.h>

#include <cmath>

#include "description_coverage.h"
#include "temp_dir.h"

#include "pipeline/core/error.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep;
namespace fs = std::filesystem;

namespace {

fs::path tiny_model() {
    const fs::path path = test::process_temp_dir("llm-description") / "tiny.gguf";
    if (!fs::exists(path)) {
        llm::RandomModelParams p = llm::random_model_preset("tiny");
        p.n_ctx = 48;
        llm::write_random_model(path, p);
    }
    return path;
}

Request prompt(const char* text) {
    Request r;
    r.set("prompt", text);
    return r;
}

// Runs the request stage only (it tokenizes; the weights stay unloaded).
Trace request_stage(llm::LlmModel& model, const Request& r) {
    Pipeline p(model, r);
    p.step();
    return p.trace();
}

}  // namespace

TEST_CASE("llm: runs emit only declared paths, and every declared stage path is emitted by some run") {
    llm::LlmModel model(tiny_model(), {.n_threads = 2, .n_ctx = 0, .top_n = 3, .max_tokens = 3});
    test::EmittedPaths seen;
    Pipeline cold(model, prompt("The cat sat on the"));  // cold load, prefill, decode
    cold.run();
    seen.add(cold);
    Request sampled = prompt("Once upon a time");
    sampled.set("temperature", "0.8");
    sampled.set("seed", "5");
    Pipeline warm(model, sampled);  // reused weights, the sampler chain
    warm.run();
    seen.add(warm);
    Request forced = prompt("Once");
    forced.set("force", "0:65");
    Pipeline by_hand(model, forced);  // a token chosen by hand
    by_hand.run();
    seen.add(by_hand);
    CHECK(seen.size() > 40);
    seen.check_declared(llm::LlmModel::describe());
    seen.check_all_emitted(llm::LlmModel::describe());
}

TEST_CASE("llm: a request without sampling fields runs with the declared defaults") {
    llm::LlmModel model(tiny_model());
    const Trace t = request_stage(model, prompt("hi"));
    for (const Knob& k : model.description().knobs) {
        if (k.type != KnobType::number || k.default_value.empty()) continue;
        CAPTURE(k.name);
        const auto v = t.lookup("request." + k.name);
        REQUIRE(v.has_value());
        CHECK(std::get<double>(*v) == doctest::Approx(std::stod(k.default_value)).epsilon(1e-6));
    }
}

TEST_CASE("llm: the declared range of each numeric request field is the one the request stage enforces") {
    llm::LlmModel model(tiny_model());
    auto accepted = [&](const std::string& name, double x) {
        Request r = prompt("hi");
        r.set(name, format_value(Value{x}, 17));
        if (name != "max_tokens") r.set("max_tokens", "1");  // the tiny context fits one token
        try {
            (void)request_stage(model, r);
            return true;
        } catch (const Error&) {
            return false;
        }
    };
    for (const Knob& k : model.description().knobs) {
        if (k.type != KnobType::number) continue;
        CAPTURE(k.name);
        const double step = k.whole ? 1 : 1e-3;
        CHECK(accepted(k.name, k.min) == !k.min_exclusive);
        CHECK(!accepted(k.name, k.min - step));
        // max_tokens' upper bound is the context, smaller than its declared range.
        if (k.name == "max_tokens") continue;
        CHECK(accepted(k.name, k.max) == !k.max_exclusive);
        CHECK(!accepted(k.name, k.max + std::max(step, std::fabs(k.max) * 0.01)));
        // And the knob check agrees at the edges.
        CHECK_THROWS_AS((void)k.check(format_value(Value{k.min - step}, 17)), Error);
    }
}

TEST_CASE("llm: no settings — sampling is per request") {
    llm::LlmModel model(tiny_model());
    CHECK(model.description().setting_names().empty());
    CHECK_THROWS_WITH_AS(model.apply_setting("temperature", "0.5"),
                         "\"temperature\" is a request field of the llm model, not a setting: give it in the request",
                         Error);
    CHECK_THROWS_WITH_AS(model.apply_setting("normalize", "true"),
                         "unknown setting \"normalize\": the llm model has no settings", Error);
}
