// The delivery model against its own description: it emits exactly the
// declared paths, applies every declared setting by name, and answers its
// model.* properties.
#include <doctest/doctest.h>

#include <set>

#include "description_coverage.h"
#include "temp_dir.h"

#include "pipeline/core/error.h"
#include "pipeline/delivery/delivery_model.h"
#include "pipeline/delivery/weights_file.h"

using namespace sixstep;
using namespace sixstep::delivery;

namespace {
Request req(const char* distance) {
    Request r;
    r.set("distance", distance);
    r.set("congestion", "0.5");
    r.set("express_lane", "1");
    return r;
}
}  // namespace

TEST_CASE("delivery: runs emit only declared paths, and every declared stage path is emitted by some run") {
    const ModelDescription& d = DeliveryModel::describe();
    test::EmittedPaths seen;

    DeliveryModel m;
    Pipeline cold(m, req("3 km"));  // cold load, normalization on
    cold.run();
    seen.add(cold);
    Pipeline warm(m, req("3000 m"));  // reused weights
    warm.run();
    seen.add(warm);

    m.apply_setting("mode", "train");  // dropout's mask
    m.apply_setting("dropout", "0.5");
    m.apply_setting("minimum_minutes", "30");
    Pipeline train(m, req("30 km"));  // and a range warning
    train.run();
    seen.add(train);

    const auto dir = test::process_temp_dir("delivery-description");
    const std::string file = (dir / "weights.json").string();
    save_weights(file, Params{});
    DeliveryModel from_file;
    from_file.use_weights_file(file);  // the load stage names its file
    Pipeline served(from_file, req("2 mi"));
    served.run();
    seen.add(served);

    CHECK(seen.size() > 20);
    seen.check_declared(d);
    seen.check_all_emitted(d);
}

TEST_CASE("delivery: every declared setting applies by name and reads back, and unknown ones say what is known") {
    DeliveryModel m;
    const ModelDescription& d = m.description();
    CHECK(&d == &DeliveryModel::describe());
    for (const auto& name : d.setting_names()) {
        const Knob& k = d.setting(name);
        CAPTURE(name);
        // The model starts at the declared default (the knob check's spelling).
        CHECK(m.setting(name) == k.default_value);
    }
    m.apply_setting("normalize", "false");
    m.apply_setting("range_check", "false");
    m.apply_setting("mode", "train");
    m.apply_setting("dropout", "0.25");
    m.apply_setting("seed", "7");
    m.apply_setting("minimum_minutes", "12");
    m.apply_setting("lang", "zh");
    const Settings& s = m.settings();
    CHECK(!s.normalize);
    CHECK(!s.range_check);
    CHECK(s.mode == Mode::train);
    CHECK(s.dropout == 0.25);
    CHECK(s.seed == 7);
    REQUIRE(s.minimum_minutes);
    CHECK(*s.minimum_minutes == 12);
    CHECK(s.lang == "zh");
    CHECK(m.setting("dropout") == "0.25");
    CHECK(m.setting("minimum_minutes") == "12");
    m.apply_setting("minimum_minutes", "");  // none: the rule is gone
    CHECK(!m.settings().minimum_minutes);
    CHECK(m.setting("minimum_minutes").empty());

    CHECK_THROWS_WITH_AS(m.apply_setting("normalise", "true"),
                         "unknown setting \"normalise\" for the delivery model \u2014 did you mean \"normalize\"? "
                         "(known: normalize, range_check, mode, dropout, seed, minimum_minutes, lang)",
                         Error);
    CHECK_THROWS_WITH_AS(m.apply_setting("distance", "3 km"),
                         "\"distance\" is a request field of the delivery model, not a setting: give it in the request",
                         Error);
}

TEST_CASE("delivery: a seed applied by name restarts dropout's stream") {
    DeliveryModel m;
    m.apply_setting("mode", "train");
    m.apply_setting("dropout", "0.5");
    auto answers = [&] {
        std::vector<double> out;
        for (int i = 0; i < 8; ++i) {
            Pipeline p(m, req("3 km"));
            p.run();
            out.push_back(std::get<double>(*p.trace().lookup("forward.raw_output")));
        }
        return out;
    };
    m.apply_setting("seed", "3");
    const auto first = answers();
    CHECK(std::set<double>(first.begin(), first.end()).size() > 1);  // dropout is on
    m.apply_setting("seed", "3");
    CHECK(answers() == first);  // the same stream again
}

TEST_CASE("delivery: model properties are the loaded weights, or the checkpoint before loading") {
    DeliveryModel m(Params{4, {3, 10, -2}});
    CHECK(std::get<double>(*m.property("bias")) == 4);
    CHECK(std::get<double>(*m.property("w_distance")) == 3);
    CHECK(std::get<double>(*m.property("cold_load_ms")) == 0);
    Pipeline p(m, req("3 km"));
    p.run();
    CHECK(std::get<double>(*m.property("w_congestion")) == 10);
    CHECK(std::get<double>(*m.property("cold_load_ms")) > 0);
    m.use_params(Params{1, {1, 1, 1}});  // the next load reads this
    CHECK(std::get<double>(*m.property("bias")) == 1);
    CHECK(!m.property("no_such_thing"));
}
