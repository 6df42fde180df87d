// The registry of model kinds, and the consistency of every kind's
// description: names unique, defaults its own knobs accept, headlines that
// name declared paths.
#include <doctest/doctest.h>

#include <set>

#include "pipeline/core/error.h"
#include "pipeline/models.h"

using namespace sixstep;

TEST_CASE("the registry lists every kind, and an unknown one gets did you mean") {
    CHECK(model_kinds() == std::vector<std::string>{"delivery", "llm", "serving", "endpoint"});
    for (const auto& k : model_kinds()) CHECK(model_description(k).kind == k);
    CHECK(find_model_description("gpt5") == nullptr);
    CHECK_THROWS_WITH_AS(model_description("lm"), "unknown model kind \"lm\" \u2014 did you mean \"llm\"? (known: delivery, llm, serving, endpoint)",
                         Error);
    CHECK_THROWS_WITH_AS(model_description("gpt5"), "unknown model kind \"gpt5\" (known: delivery, llm, serving, endpoint)", Error);
}

TEST_CASE("every description is consistent") {
    for (const auto& kind : model_kinds()) {
        const ModelDescription& d = model_description(kind);
        CAPTURE(kind);
        CHECK(!d.title.empty());

        std::set<std::string> paths;
        for (const auto& p : d.paths) {
            CAPTURE(p.path);
            CHECK(paths.insert(p.path).second);  // no path twice
            const auto dot = p.path.find('.');
            REQUIRE(dot != std::string::npos);
            const std::string head = p.path.substr(0, dot);
            // Beyond the trace: what one of the kind's panels computes (kv_experiment.*, logit_lens.*).
            CHECK((parse_stage(head) || head == "response" || head == "model" || head == "train" ||
                   d.find_panel(head) != nullptr));
            CHECK(!p.meaning.empty());
        }

        std::set<std::string> knobs;
        for (const auto& k : d.knobs) {
            CAPTURE(k.name);
            CHECK(knobs.insert(k.name).second);
            CHECK(!k.meaning.empty());
            if (!k.default_value.empty()) CHECK(k.check(k.default_value) == k.default_value);
            if (k.type == KnobType::choice) CHECK(k.choices.size() >= 2);
            if (k.type == KnobType::boolean) CHECK((k.choices.empty() || k.choices.size() == 2));
            if (k.caution) CHECK(k.check(k.caution->value) == k.caution->value);
            if (k.has_slider()) {
                CHECK(k.type == KnobType::number);
                CHECK(k.slider_min >= k.min);
                CHECK(k.slider_max <= k.max);
            }
            // A setting always has a value: a default, or "none" allowed.
            if (k.target == KnobTarget::setting) CHECK((!k.default_value.empty() || k.optional));
        }

        std::set<Stage> stages;
        for (const auto& h : d.headlines) {
            CHECK(stages.insert(h.stage).second);
            CHECK(!h.fields.empty());
            for (const auto& f : h.fields) {
                const std::string path = std::string(stage_name(h.stage)) + "." + f.key;
                CAPTURE(path);
                CHECK(d.find_path(path));
            }
        }
    }
}
