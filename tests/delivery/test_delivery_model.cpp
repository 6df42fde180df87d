#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <set>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/core/pipeline.h"
#include "pipeline/delivery/delivery_model.h"
#include "pipeline/delivery/trace_keys.h"
#include "pipeline/delivery/weights_file.h"

using namespace sixstep;
using namespace sixstep::delivery;

namespace delivery_model_test {

namespace {
Request req(const char* distance, const char* congestion = "0", const char* express = "0") {
    Request r;
    r.set("distance", distance);
    r.set("congestion", congestion);
    r.set("express_lane", express);
    return r;
}

double raw_output(DeliveryModel& m, const Request& r) {
    Pipeline p(m, r);
    p.run();
    return std::get<double>(*p.trace().lookup("forward.raw_output"));
}
}  // namespace

TEST_CASE("3 km, no congestion, no express lane: 11 minutes") {
    DeliveryModel m;
    Pipeline p(m, req("3 km"));
    const Response& r = p.run();
    CHECK(r.text == "Estimated delivery time: 11 minutes");
    const TraceEvent* fwd = p.trace().last(Stage::forward);
    REQUIRE(fwd);
    CHECK(fwd->arithmetic.back() == "5 + 2×3 + 10×0 + (−2)×0 = 11");
}

// A bare number is taken in km, the training unit: said, since a unit the
// sender meant and nobody wrote is lesson 02's skew.
TEST_CASE("a distance without a unit is said to be read in the training unit") {
    DeliveryModel m;
    Pipeline p(m, req("3"));
    p.run();
    const TraceEvent* rq = p.trace().last(Stage::request);
    REQUIRE(rq);
    CHECK(rq->arithmetic.front() == "distance: \"3\" → 3 km (no unit given: read in the training unit)");
    Pipeline km(m, req("3 km"));
    km.run();
    CHECK(km.trace().last(Stage::request)->arithmetic.front() == "distance: \"3 km\" → 3");
}

// Lesson 02 printed "5 + 2×3 + 10×0 + (−2)×0 = 11" for 1.864 mi, then "raw
// output = 10.9996": two answers to one sum.
TEST_CASE("a distance that is not a round number reads the same in every stage") {
    DeliveryModel m;
    Pipeline p(m, req("1.864 mi"));
    p.run();
    const TraceEvent* rq = p.trace().last(Stage::request);
    const TraceEvent* fwd = p.trace().last(Stage::forward);
    const TraceEvent* out = p.trace().last(Stage::output);
    const TraceEvent* post = p.trace().last(Stage::postprocess);
    REQUIRE((rq && fwd && out && post));
    CHECK(rq->arithmetic.front() == "distance: \"1.864 mi\" → 2.99982 km (× 1.609344)");
    CHECK(fwd->arithmetic.back() == "5 + 2×2.99982 + 10×0 + (−2)×0 = 10.9996");
    CHECK(out->arithmetic.back() == "raw output = 10.9996");
    CHECK(post->arithmetic.front() == "round(10.9996) = 11 minutes");
}

TEST_CASE("the linear model: every weight matters") {
    DeliveryModel m;
    CHECK(raw_output(m, req("0.5 km")) == 6);
    CHECK(raw_output(m, req("3 km", "1")) == 21);
    CHECK(raw_output(m, req("3 km", "0", "1")) == 9);
    CHECK(raw_output(m, req("3 km", "50%", "yes")) == 14);
    DeliveryModel other(Params{1, {1, 1, 1}});
    CHECK(raw_output(other, req("3 km", "1", "1")) == 6);
}

TEST_CASE("normalization converts units, without it the number goes in raw (skew)") {
    DeliveryModel m;
    CHECK(raw_output(m, req("3000 m")) == 11);
    CHECK(raw_output(m, req("1.864 mi")) == doctest::Approx(11).epsilon(1e-3));
    CHECK(raw_output(m, req("3 公里", "30％", "是")) == doctest::Approx(12));  // 5 + 2·3 + 10·0.3 − 2·1
    m.settings().normalize = false;
    CHECK(raw_output(m, req("3000 m")) == 6005);
    CHECK(raw_output(m, req("3 km")) == 11);  // already in the training unit: no harm done
}

TEST_CASE("values outside the training range warn, inside they don't") {
    DeliveryModel m;
    Pipeline p(m, req("45 km"));
    p.run();
    const auto& w = p.trace().last(Stage::request)->warnings;
    REQUIRE(w.size() == 1);
    CHECK(w[0] == "distance = 45 is outside the training range 0.5–20 km: the model never saw such a request, do not "
                  "trust the answer");
    Pipeline q(m, req("3 km"));
    q.run();
    CHECK(q.trace().last(Stage::request)->warnings.empty());
    // The range's ends are inside it: 20 km was seen in training, 20.1 km not.
    Pipeline edge(m, req("20 km"));
    edge.run();
    CHECK(edge.trace().last(Stage::request)->warnings.empty());
    Pipeline past(m, req("20.1 km"));
    past.run();
    CHECK(past.trace().last(Stage::request)->warnings.size() == 1);
    // A feature without a unit says its range without one.
    Pipeline busy(m, req("3 km", "1.5"));
    busy.run();
    REQUIRE(busy.trace().last(Stage::request)->warnings.size() == 1);
    CHECK(busy.trace().last(Stage::request)->warnings[0] ==
          "congestion = 1.5 is outside the training range 0–1: the model never saw such a request, do not trust the "
          "answer");
    m.settings().range_check = false;
    Pipeline r(m, req("45 km"));
    r.run();
    CHECK(r.trace().last(Stage::request)->warnings.empty());
}

TEST_CASE("bad requests are errors with one clear message") {
    DeliveryModel m;
    auto error_of = [&](const Request& r) {
        Pipeline p(m, r);
        try {
            p.run();
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    Request missing;
    missing.set("distance", "3 km");
    CHECK(error_of(missing) == "missing feature \"congestion\" (the model needs distance, congestion and express_lane)");
    Request unknown = req("3 km");
    unknown.set("weather", "rain");
    CHECK(error_of(unknown) == "unknown feature \"weather\" (the model knows distance, congestion, express_lane)");
    CHECK(error_of(req("3 kg")) == "distance: unit \"kg\" is not a length (use km, m or mi)");
    CHECK(error_of(req("3 km", "5 km")) == "congestion: unit \"km\" is not a valid unit here (use a fraction 0..1 or %)");
    CHECK(error_of(req("3 km", "0", "0.5")) == "express_lane: \"0.5\" must be 0 or 1");
    // No delivery is -3 km long: refused, not answered "-1 minutes" with a warning.
    CHECK(error_of(req("-3 km")) == "distance: \"-3 km\" is negative; a distance is 0 or more");
    CHECK(error_of(req("3 km", "-10%")) == "congestion: \"-10%\" is negative; a share of congestion is 0 or more");
    CHECK(error_of(req("0 km")) == "(no error)");
    // Each field's hint is what that field takes, not a distance's example.
    CHECK(error_of(req("far")) ==
          "distance: \"far\" is not a number with an optional unit (e.g. \"3 km\", \"3000 m\", \"1.9 mi\")");
    CHECK(error_of(req("3 km", "high")) ==
          "congestion: \"high\" is not a number with an optional unit (a fraction 0..1 or a percentage: 0.3, \"30%\")");
    CHECK(error_of(req("3 km", "0", "maybe")) ==
          "express_lane: \"maybe\" is not a number with an optional unit (0 or 1, yes or no)");
}

TEST_CASE("postprocess: rounding, a minimum-time rule, English and Chinese") {
    DeliveryModel m;
    Pipeline p(m, req("3.2 km"));  // 11.4 → 11
    CHECK(p.run().text == "Estimated delivery time: 11 minutes");
    Pipeline up(m, req("3.3 km"));  // 11.6 → 12: rounded, not cut
    CHECK(up.run().text == "Estimated delivery time: 12 minutes");
    m.settings().minimum_minutes = 15;
    Pipeline q(m, req("3 km"));
    q.run();
    CHECK(std::get<double>(*q.trace().lookup("postprocess.minutes")) == 15);
    CHECK(std::get<std::string>(*q.trace().lookup("postprocess.rule")) == "minimum 15 minutes");
    m.settings().lang = "zh";
    Pipeline r(m, req("10 km"));
    CHECK(r.run().text == "预计送达时间：25 分钟");
    CHECK(delivery_text(1, "en") == "Estimated delivery time: 1 minute");
}

// A weights file with a bias of −1000 promised "−994 minutes" with no word.
TEST_CASE("postprocess: a negative time is said to be nonsense, and a minimum rule replaces it") {
    DeliveryModel m(Params{-1000, {2, 10, -2}});
    Pipeline p(m, req("3 km"));
    CHECK(p.run().text == "Estimated delivery time: \u2212994 minutes");
    const auto& w = p.trace().last(Stage::postprocess)->warnings;
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("the model promises \u2212994 minutes, less than none") == 0);
    m.settings().minimum_minutes = 5;
    Pipeline q(m, req("3 km"));
    CHECK(q.run().text == "Estimated delivery time: 5 minutes");
    CHECK(q.trace().last(Stage::postprocess)->warnings.empty());
}

TEST_CASE("dropout: train mode changes identical requests' answers, eval mode never") {
    DeliveryModel m;
    m.settings().dropout = 0.5;
    m.settings().mode = Mode::train;
    m.reseed();
    // 5 + (2·3·k₁ + 10·0.5·k₂)·2, each kᵢ ∈ {0, 1}: 5, 15, 17 or 27 — never the
    // eval answer 16. The default seed (42) draws this sequence.
    std::vector<double> train_answers;
    for (int i = 0; i < 10; ++i) train_answers.push_back(raw_output(m, req("3 km", "0.5")));
    CHECK(train_answers == std::vector<double>{5, 17, 15, 27, 5, 5, 27, 27, 27, 17});
    m.settings().mode = Mode::eval;
    std::set<double> eval_answers;
    for (int i = 0; i < 10; ++i) eval_answers.insert(raw_output(m, req("3 km", "0.5")));
    CHECK(eval_answers == std::set<double>{16});
}

// At p = 0.2 an input is dropped one time in five (at 0.5, dropping and
// keeping look alike), and a kept one is scaled by 1 / (1 − p).
TEST_CASE("dropout: each input is dropped with probability p, the kept ones scaled by 1 / (1 − p)") {
    DeliveryModel m;
    m.settings().dropout = 0.2;
    m.settings().mode = Mode::train;
    m.reseed();
    int dropped = 0, inputs = 0;
    for (int i = 0; i < 2000; ++i) {
        Pipeline p(m, req("3 km", "0.5", "1"));
        p.run();
        const auto mask = std::get<std::vector<double>>(*p.trace().lookup("forward.dropout_mask"));
        const double raw = std::get<double>(*p.trace().lookup("forward.raw_output"));
        REQUIRE(mask.size() == 3);
        // 5 + (2·3·k₁ + 10·0.5·k₂ − 2·1·k₃) ÷ 0.8
        CHECK(raw == doctest::Approx(5 + (6 * mask[0] + 5 * mask[1] - 2 * mask[2]) / 0.8));
        for (double k : mask) dropped += k == 0, ++inputs;
    }
    // 6000 draws: the share's standard error is 0.005
    CHECK(static_cast<double>(dropped) / inputs == doctest::Approx(0.2).epsilon(0.1));
}

TEST_CASE("dropout is seeded: the same seed replays the same answers") {
    auto run = [](std::uint64_t seed) {
        DeliveryModel m;
        m.settings().dropout = 0.5;
        m.settings().mode = Mode::train;
        m.settings().seed = seed;
        m.reseed();
        std::vector<double> out;
        for (int i = 0; i < 10; ++i) out.push_back(raw_output(m, req("3 km", "0.5")));
        return out;
    };
    CHECK(run(3) == run(3));
    CHECK(run(3) == std::vector<double>{15, 17, 15, 27, 5, 27, 15, 27, 15, 17});
    CHECK(run(4) == std::vector<double>{15, 17, 15, 5, 27, 15, 5, 17, 27, 15});
}

TEST_CASE("load once: cold the first time, reused after, unload forces a cold start again") {
    DeliveryModel m;
    CHECK(!m.loaded());
    Pipeline a(m, req("3 km"));
    a.run();
    CHECK(std::get<std::string>(*a.trace().lookup("load.cold")) == "yes");
    Pipeline b(m, req("3 km"));
    b.run();
    CHECK(std::get<std::string>(*b.trace().lookup("load.cold")) == "no");
    m.unload();
    Pipeline c(m, req("3 km"));
    c.run();
    CHECK(std::get<std::string>(*c.trace().lookup("load.cold")) == "yes");
}

TEST_CASE("weights files: save, load, serve, broken files are clear errors") {
    const auto dir = std::filesystem::temp_directory_path() / "sixstep-test-weights";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "w.json").string();
    save_weights(path, Params{4, {3, 1, -1}}, {100, 0.5});
    const Params p = load_weights(path);
    CHECK(p.bias == 4);
    CHECK(p.w[0] == 3);
    CHECK(p.w[2] == -1);
    DeliveryModel m;
    m.use_weights_file(path);
    // Before the load, the weights the load will read (it showed the
    // built-in defaults, b = 5).
    CHECK(m.property(keys::bias) == std::optional<Value>(4.0));
    CHECK(m.property(keys::w_distance) == std::optional<Value>(3.0));
    CHECK(raw_output(m, req("2 km")) == 10);

    const std::string bad = (dir / "bad.json").string();
    FILE* f = std::fopen(bad.c_str(), "w");
    std::fputs("{\"format\": \"sixstep-delivery-weights\", \"version\": 1, \"bias\": \"five\"}", f);
    std::fclose(f);
    const std::string whole = " — a whole one reads {\"format\": \"sixstep-delivery-weights\", \"version\": 1, "
                              "\"bias\": 5, \"w_distance\": 2, \"w_congestion\": 10, \"w_express_lane\": -2} "
                              "(minutes, minutes per km, per unit of congestion, for the express lane)";
    CHECK_THROWS_WITH_AS(load_weights(bad),
                         (bad + ": not a delivery weights file: \"bias\" is not a number; \"w_distance\" is missing; "
                                "\"w_congestion\" is missing; \"w_express_lane\" is missing" + whole)
                             .c_str(),
                         Error);
    // Whatever the JSON holds, one message at the file (and the line and column where it stopped).
    const auto written = [&](const char* name, const char* text) {
        const std::string file = (dir / name).string();
        FILE* out = std::fopen(file.c_str(), "w");
        std::fputs(text, out);
        std::fclose(out);
        return file;
    };
    const std::string syntax = written("syntax.json", "{\"format\": \"sixstep-delivery-weights\",\n \"bias\": x}");
    CHECK_THROWS_WITH_AS(load_weights(syntax), (syntax + ":2:10: not valid JSON: syntax error while parsing value - invalid "
                                                          "literal; last read: '\"bias\": x'").c_str(), Error);
    const std::string huge = written("huge.json", "{\"bias\": 1e999}");
    CHECK_THROWS_WITH_AS(load_weights(huge), (huge + ": not a weights file: a number in it is too large for a double").c_str(),
                         Error);
    const std::string format = written("format.json", "{\"format\": 5}");
    CHECK_THROWS_WITH_AS(load_weights(format),
                         (format + ": not a delivery weights file: \"format\" is not \"sixstep-delivery-weights\"; "
                                   "\"version\" is not 1 (the version sixstep reads); \"bias\" is missing; \"w_distance\" "
                                   "is missing; \"w_congestion\" is missing; \"w_express_lane\" is missing" + whole)
                             .c_str(),
                         Error);
    const std::string version = written("version.json", "{\"format\": \"sixstep-delivery-weights\", \"version\": \"1\", "
                                                        "\"bias\": 4, \"w_distance\": 3, \"w_congestion\": 1, "
                                                        "\"w_express_lane\": -1}");
    CHECK_THROWS_WITH_AS(load_weights(version),
                         (version + ": not a delivery weights file: \"version\" is not 1 (the version sixstep reads)" + whole)
                             .c_str(),
                         Error);
    // The example the message gives is a whole file.
    const std::string example = written("example.json", "{\"format\": \"sixstep-delivery-weights\", \"version\": 1, "
                                                        "\"bias\": 5, \"w_distance\": 2, \"w_congestion\": 10, "
                                                        "\"w_express_lane\": -2}");
    CHECK(load_weights(example).w[1] == 10);
    CHECK_THROWS_WITH_AS(load_weights((dir / "none.json").string()),
                         ((dir / "none.json").string() + ": cannot open the weights file: No such file or directory").c_str(), Error);
    std::filesystem::remove_all(dir);
}

TEST_CASE("weights_checksum changes with the weights") {
    DeliveryModel a, b(Params{5, {2, 10, -1.999}});
    Pipeline(a, req("3 km")).run();
    Pipeline(b, req("3 km")).run();
    CHECK(a.weights_checksum() != b.weights_checksum());
    CHECK(a.weights_checksum() != 0);
}

}  // namespace delivery_model_test
