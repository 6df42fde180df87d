// The interpreter: stepping, replay, lookups, knobs, errors as failed checks.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>

#include "app/core/interpreter.h"
#include "unchecked_lesson.h"
#include "app/core/lesson_paths.h"
#include "app/core/report.h"
#include "pipeline/llm/backend.h"
#include "temp_dir.h"

using namespace sixstep;
using namespace sixstep::app;

namespace interpreter_test {

namespace {
Interpreter make(const char* yaml) { return Interpreter(parse_lesson(yaml, "test.yaml")); }

// A lesson whose request at `step` lacks `field`: it fails when that step runs.
Interpreter make_without(const char* yaml, std::size_t step, const char* field) {
    return Interpreter(sixstep::test::without_field(parse_lesson(yaml, "test.yaml"), step, field));
}

double number(const Interpreter& it, const char* path) {
    auto v = it.lookup(path);
    REQUIRE_MESSAGE(v.has_value(), path);
    return std::get<double>(*v);
}
ValueType test_type(const Value& v) {
    if (std::holds_alternative<double>(v)) return ValueType::number;
    if (std::holds_alternative<std::string>(v)) return ValueType::text;
    return ValueType::numbers;
}
std::string text(const Interpreter& it, const char* path) {
    auto v = it.lookup(path);
    REQUIRE_MESSAGE(v.has_value(), path);
    return format_value(*v);
}
}  // namespace

TEST_CASE("run: stage walks one stage at a time, in the six-step order") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
  - run: stage
  - run: stage
  - run: stage
  - run: stage
  - run: stage
  - run: stage
)");
    it.step();
    CHECK(!it.state().next_stage);
    const Stage order[] = {Stage::request, Stage::load, Stage::forward, Stage::output, Stage::postprocess, Stage::respond};
    for (Stage s : order) {
        const StepReport r = it.step();
        REQUIRE(r.events.size() == 1);
        CHECK(r.events[0].stage == s);
        CHECK(*it.state().last_stage == s);
    }
    CHECK(it.finished());
    REQUIRE(it.state().response);
    CHECK(it.state().response->text == "Estimated delivery time: 11 minutes");
    CHECK(!it.state().next_stage);
}

TEST_CASE("run: token once the answer is finished writes the response, then a fresh request's first token") {
    // It ran respond alone before, and the step read the last token's
    // forward and postprocess again ("decode", "stop: yes").
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    Interpreter it(parse_lesson("title: t\nmodel: {kind: llm, file: \"" + model + "\", threads: 1}\nsteps:\n"
                                "  - {request: {prompt: \"The cat sat on the\", max_tokens: 2, temperature: 0}, run: token}\n"
                                "  - {run: token}\n  - {run: token}\n",
                                "test.yaml"));
    it.step();
    CHECK(text(it, "forward.phase") == "prefill");
    // The request's numbers as written, not the sampler's floats (0.949999988):
    // a lesson's `request.top_p: 0.95` failed with "expected = 0.95, got 0.95".
    CHECK(number(it, "request.top_p") == 0.95);
    CHECK(number(it, "request.min_p") == 0.05);
    it.step();
    CHECK(text(it, "forward.phase") == "decode");
    CHECK(text(it, "postprocess.stop") == "yes");
    const StepReport r = it.step();
    REQUIRE(r.events.size() >= 2);
    CHECK(r.events.front().stage == Stage::respond);  // the finished answer, written
    CHECK(r.events.back().stage == Stage::postprocess);
    CHECK(text(it, "forward.phase") == "prefill");    // the new request's first token
    CHECK(text(it, "postprocess.stop") == "no");
}

// The step printed "6 · respond", and its checks found no respond.text:
// "the request has not reached the respond stage".
TEST_CASE("run: token with only respond left lets the step check the answer it wrote") {
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    Interpreter it(parse_lesson("title: t\nmodel: {kind: llm, file: \"" + model + "\", threads: 1}\nsteps:\n"
                                "  - {request: {prompt: \"The cat sat on the\", max_tokens: 1, temperature: 0}, "
                                "run: postprocess}\n"
                                "  - {run: token}\n  - {say: later}\n",
                                "test.yaml"));
    it.step();
    CHECK(!it.lookup("respond.text"));
    const StepReport r = it.step();
    REQUIRE(!r.events.empty());
    CHECK(r.events.front().stage == Stage::respond);
    CHECK(text(it, "respond.text") == " mat");
    CHECK(number(it, "respond.n_generated") == 1);
    CHECK(text(it, "response.text") == " mat");
    CHECK(text(it, "forward.phase") == "prefill");  // the fresh request's own stages
    // A later step checks the fresh request, which has no answer yet.
    it.step();
    CHECK(!it.lookup("respond.text"));
    CHECK(!it.lookup("response.text"));
}

TEST_CASE("go_to replays: stepping back gives the same numbers") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: forward
  - request: {distance: "10 km", congestion: 0, express_lane: 0}
    run: all
)");
    it.step();
    CHECK(number(it, "forward.raw_output") == 11);
    it.step();
    CHECK(number(it, "forward.raw_output") == 25);
    it.go_to(1);
    CHECK(it.position() == 1);
    CHECK(number(it, "forward.raw_output") == 11);
    CHECK(*it.state().next_stage == Stage::output);
    it.restart();
    CHECK(it.position() == 0);
    CHECK(!it.lookup("forward.raw_output"));
}

// `inspect:` points the window's inspector at a stage from that step on,
// until another; stepping back replays it.
TEST_CASE("inspect: the stage the window opens on, kept from step to step") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3000 m", congestion: 0, express_lane: 0}
    run: all
  - inspect: request
  - request: {distance: "5 km", congestion: 0, express_lane: 0}
    run: all
  - inspect: forward
)");
    it.step();
    CHECK(!it.state().inspect);
    it.step();
    REQUIRE(it.state().inspect);
    CHECK(*it.state().inspect == Stage::request);
    it.step();
    CHECK(*it.state().inspect == Stage::request);
    it.step();
    CHECK(*it.state().inspect == Stage::forward);
    it.go_to(2);
    CHECK(*it.state().inspect == Stage::request);
    it.restart();
    CHECK(!it.state().inspect);
}

// A lesson that trains has its data in hand from the start (the window
// plots it before the first step does); one that does not has none.
TEST_CASE("training data: read at the start of a lesson that trains, then the trainer's") {
    auto it = make(R"(
title: t
steps:
  - say: The data.
  - train: 3
)");
    REQUIRE(it.state().training.data);
    CHECK(it.state().training.data->size() == 200);
    CHECK(it.state().training.examples == 200);
    CHECK(!it.state().training.active);
    const delivery::Example first = it.state().training.data->front();
    CHECK(first.x[0] == doctest::Approx(6.81));  // assets/data/deliveries.csv's first row
    CHECK(first.minutes == doctest::Approx(21.23));
    it.step();
    it.step();
    CHECK(it.state().training.active);
    REQUIRE(it.state().training.data);
    CHECK(it.state().training.data->size() == 200);

    auto serving_only = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
)");
    CHECK(!serving_only.state().training.data);
}

// Stepping back replays the lesson from its start: the previewed data are
// read once, and again only when the file has changed.
TEST_CASE("training data: kept across restarts while the file is unchanged, read again when it changes") {
    const auto dir = sixstep::test::process_temp_dir("interp-preview");
    std::filesystem::create_directories(dir);
    const auto csv = dir / "few.csv";
    const auto write = [&](int rows) {
        std::ofstream f(csv);
        f << "distance_km,congestion,express_lane,minutes\n";
        for (int i = 0; i < rows; ++i) f << 1 + i << ",0.5,0,1" << i << "\n";
    };
    write(3);
    Interpreter it(parse_lesson("title: t\nsteps:\n  - say: The data.\n  - train: {steps: 1, data: few.csv}\n",
                                (dir / "lesson.yaml").string()));
    REQUIRE(it.state().training.data);
    const auto first = it.state().training.data;
    CHECK(first->size() == 3);
    it.step();
    it.go_to(0);
    CHECK(it.state().training.data == first);  // the same object: not read again
    write(5);
    std::filesystem::last_write_time(csv, std::filesystem::last_write_time(csv) + std::chrono::seconds(2));
    it.go_to(0);
    REQUIRE(it.state().training.data);
    CHECK(it.state().training.data->size() == 5);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
}

TEST_CASE("knobs recompute the current request as far as it had run") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: output
    expect: {output.raw_output: 11}
)");
    it.step();
    CHECK(number(it, "output.raw_output") == 11);
    CHECK(it.state().checks.size() == 1);
    it.turn_knob("distance", "5 km");
    CHECK(number(it, "output.raw_output") == 15);
    CHECK(it.state().checks.empty());  // they held for the lesson's 3 km, not the class's 5
    CHECK(*it.state().last_stage == Stage::output);  // still stopped after output
    it.turn_knob("normalize", "false");
    it.turn_knob("distance", "3000 m");
    CHECK(number(it, "output.raw_output") == 6005);
    it.turn_knob("normalize", "true");
    CHECK(number(it, "output.raw_output") == 11);
    it.turn_knob("distance", "3 parsecs");
    REQUIRE(it.state().error);
    CHECK(it.state().error->find("unit \"parsecs\" is not a length") != std::string::npos);
    CHECK_THROWS_AS(it.turn_knob("temperature", "1"), Error);  // an LLM knob, not this model's
    CHECK_THROWS_AS(it.turn_knob("weather", "rain"), Error);
}

TEST_CASE("knobs: only the model's declared ones, each checked by its type and range") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
)");
    it.step();
    CHECK_THROWS_WITH_AS(it.turn_knob("dropuot", "0.5"),
                         "unknown knob \"dropuot\" for the delivery model \u2014 did you mean \"dropout\"? (known: distance, "
                         "congestion, express_lane, normalize, range_check, mode, dropout, seed, minimum_minutes, lang)",
                         Error);
    CHECK_THROWS_WITH_AS(it.turn_knob("dropout", "1.5"), "\"dropout\" must be at least 0 and below 1, got 1.5", Error);
    CHECK_THROWS_WITH_AS(it.turn_knob("normalize", "maybe"), "\"normalize\" must be true or false, got \"maybe\"",
                         Error);
    CHECK_THROWS_WITH_AS(it.turn_knob("mode", "training"), "\"mode\" must be eval or train, got \"training\" \u2014 did you mean \"train\"?", Error);
    CHECK_THROWS_WITH_AS(it.turn_knob("congestion", "2"), "\"congestion\" must be from 0 to 1, got 2", Error);
    CHECK(number(it, "respond.minutes") == 11);  // a refused value changes nothing

    // A request knob edits the request, spelled as the model reads it.
    it.turn_knob("express_lane", "yes");
    CHECK(*it.state().request.get("express_lane") == "1");
    CHECK(number(it, "respond.minutes") == 9);
    // A setting knob changes the model for this and later requests.
    it.turn_knob("minimum_minutes", "30");
    CHECK(it.state().setting("minimum_minutes") == "30");
    CHECK(number(it, "respond.minutes") == 30);
    it.turn_knob("minimum_minutes", "none");
    CHECK(it.state().setting("minimum_minutes").empty());
    CHECK(number(it, "respond.minutes") == 9);
    it.turn_knob("mode", "train");
    CHECK(text(it, "forward.mode") == "train");
}

TEST_CASE("set: applies the model's settings by name, in order, and starts a fresh request") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3000 m", congestion: 0, express_lane: 0}
    run: all
  - set: {normalize: false, range_check: false}
    run: all
)");
    it.step();
    CHECK(number(it, "forward.raw_output") == 11);
    CHECK(it.state().setting("normalize") == "true");
    it.step();
    CHECK(it.state().setting("normalize") == "false");
    CHECK(it.state().setting("range_check") == "false");
    CHECK(number(it, "forward.raw_output") == 6005);
    CHECK(text(it, "request.warnings").empty());
}

// Lesson 03 said "dropout 0.5" in eval mode, and "4 gradient-descent steps"
// above three of them.
TEST_CASE("narration: dropout is said to be off in eval mode, and a long training run names the steps it shows") {
    auto it = make(R"(
title: t
steps:
  - train: {steps: 1, from: zero}
  - train: 4
  - train: 20
  - set: {mode: train, dropout: 0.5}
  - set: {mode: eval}
)");
    it.step();
    StepReport r = it.step();
    CHECK(r.train_steps == 4);
    REQUIRE(r.train_shown.size() == 4);  // a short run shows every step
    CHECK(r.train_shown.front().step == 2);
    CHECK(r.train_shown.back().step == 5);
    CHECK(format_step(r, it.state()).find("of them shown") == std::string::npos);
    r = it.step();
    REQUIRE(r.train_shown.size() == 2);  // steps 6..25: 10 and the last
    CHECK(format_step(r, it.state()).find("2 of them shown: steps 10, 25\n") != std::string::npos);
    r = it.step();
    const std::string on = format_step(r, it.state());
    CHECK(on.find("mode train, dropout 0.5, ") != std::string::npos);
    r = it.step();
    const std::string off = format_step(r, it.state());
    CAPTURE(off);
    CHECK(off.find("mode eval, dropout 0.5 (off in eval), ") != std::string::npos);
}

TEST_CASE("every path the delivery kind declares beyond its stages is answered after train, freeze and serve") {
    auto it = make(R"(
title: t
steps:
  - train: {steps: 3, from: zero}
  - freeze: true
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    serve: 3
)");
    while (!it.finished()) CHECK(it.step().passed());
    for (const PathInfo& p : lesson_paths(*it.state().description)) {
        const std::string head = p.path.substr(0, p.path.find('.'));
        if (parse_stage(head)) continue;  // the engine tests cover the stages
        CAPTURE(p.path);
        const auto v = it.lookup(p.path);
        REQUIRE(v.has_value());
        CHECK(test_type(*v) == p.type);
    }
}

TEST_CASE("an unexpected engine error is a failed check, not a crash") {
    auto it = make_without(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
  - request: {distance: "3 km", express_lane: 0}
    run: all
    expect:
      error: {contains: "missing feature \"congestion\""}
)",
                           0, "congestion");
    StepReport a = it.step();
    REQUIRE(a.error);
    REQUIRE(a.checks.size() == 1);
    CHECK(!a.checks[0].passed);
    CHECK(a.checks[0].got.find("missing feature") != std::string::npos);
    StepReport b = it.step();
    CHECK(b.passed());
}

TEST_CASE("train on other data from: current goes on from the weights and steps so far, and frozen refuses any data") {
    // It restarted at step 1 from the lesson's weights, and after a freeze
    // trained (and unfroze) when given data.
    const auto dir = sixstep::test::process_temp_dir("train-data");
    const std::string csv = (dir / "more.csv").string();
    std::ofstream(csv) << "distance_km,congestion,express_lane,minutes\n1,0,0,7\n2,1,0,19\n4,0,1,11\n";
    Interpreter it(parse_lesson("title: t\nsteps:\n  - train: {steps: 5, from: zero, learning_rate: 0.01}\n"
                                "  - train: {steps: 1, data: \"" + csv + "\"}\n  - freeze: true\n"
                                "  - train: {steps: 1, data: \"" + csv + "\"}\n    expect: {error: {contains: \"frozen\"}}\n",
                                "test.yaml"));
    it.step();
    const double bias_after_5 = number(it, "train.bias");
    CHECK(bias_after_5 < 2);  // from zero, five small steps
    it.step();
    CHECK(number(it, "train.step") == 6);
    CHECK(number(it, "train.examples") == 3);
    CHECK(std::abs(number(it, "train.bias") - bias_after_5) < 1);  // one step on, not back to b = 5
    it.step();
    const StepReport frozen = it.step();
    CHECK(frozen.passed());
    REQUIRE(frozen.error);
    CHECK(number(it, "train.step") == 6);
    CHECK(text(it, "model.frozen") == "yes");
}

// "The learning rate is 0.005 until a train gives another, which later ones
// keep": a from: zero restart went back to 0.005, halving its steps.
TEST_CASE("train from: zero keeps the learning rate an earlier train gave") {
    Interpreter it(parse_lesson("title: t\nsteps:\n  - train: {steps: 1, from: zero, learning_rate: 0.01}\n"
                                "  - train: {steps: 1, from: zero}\n  - train: {steps: 1, from: zero, learning_rate: 0.02}\n",
                                "test.yaml"));
    it.step();
    CHECK(it.state().training.learning_rate == 0.01);
    const double first_bias = number(it, "train.bias");
    it.step();
    CHECK(it.state().training.learning_rate == 0.01);
    CHECK(number(it, "train.bias") == first_bias);  // the same step from zero at the same rate
    it.step();
    CHECK(it.state().training.learning_rate == 0.02);
    CHECK(number(it, "train.bias") == doctest::Approx(2 * first_bias));
}

TEST_CASE("training lookups, freeze, and the frozen model serving") {
    auto it = make(R"(
title: t
steps:
  - train: {steps: 3, from: zero}
  - train: 2000
  - freeze: true
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    serve: 10
)");
    StepReport r = it.step();
    CHECK(r.train_steps == 3);
    CHECK(number(it, "train.step") == 3);
    const double first = number(it, "train.first_loss");
    CHECK(number(it, "train.loss") < first);
    CHECK(it.state().training.loss.size() == 3);
    it.step();
    CHECK(number(it, "train.step") == 2003);
    CHECK(number(it, "train.loss") < 3);
    // The model serves what training reached, after a cold load.
    CHECK(!it.state().loaded);
    CHECK(number(it, "model.w_distance") == doctest::Approx(number(it, "train.w_distance")));
    it.step();
    CHECK(text(it, "train.frozen") == "yes");
    CHECK(!it.state().training.weights_file.empty());
    r = it.step();
    REQUIRE(r.served.size() == 10);
    CHECK(r.served[0].cold);
    CHECK(!r.served[1].cold);
    CHECK(number(it, "served.cold") == 1);
    CHECK(number(it, "served.distinct") == 1);
    CHECK(text(it, "respond.weights_unchanged") == "yes");
    CHECK(it.state().weights_file == it.state().training.weights_file);
}

TEST_CASE("train mode with dropout: the same request gets different answers, eval does not") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0.5, express_lane: 0}
    set: {mode: train, dropout: 0.5, seed: 1}
    serve: 30
  - set: {mode: eval}
    serve: 30
)");
    // 5 + (2·3·k₁ + 10·0.5·k₂)·2 with kᵢ ∈ {0, 1}: seed 1 draws all four
    // answers in 30 requests, 27 first (nothing dropped).
    const auto r = it.step();
    REQUIRE(r.served.size() == 30);
    CHECK(r.served[0].text == "Estimated delivery time: 27 minutes");
    CHECK(r.served[3].text == "Estimated delivery time: 15 minutes");
    CHECK(number(it, "served.distinct") == 4);
    it.step();
    CHECK(number(it, "served.distinct") == 1);
    CHECK(number(it, "postprocess.minutes") == 16);
}

TEST_CASE("a business rule and the Chinese response") {
    auto it = make(R"(
title: t
language: zh
steps:
  - request: {distance: "1 km", congestion: 0, express_lane: 1}
    set: {minimum_minutes: 10}
    run: all
)");
    it.step();
    CHECK(number(it, "forward.raw_output") == 5);
    CHECK(number(it, "postprocess.minutes") == 10);
    CHECK(text(it, "respond.text") == "预计送达时间：10 分钟");
    CHECK(text(it, "postprocess.rule") == "minimum 10 minutes");
}

// A Chinese lesson writes its request and its yes/no checks in Chinese: the
// window labels the distance 距离（公里）.
TEST_CASE("a Chinese lesson's request in 公里, ％ and 否, and yes/no checks written 是, true or yes") {
    auto it = make(R"(
title: t
language: zh
steps:
  - request: {distance: "3 公里", congestion: "30％", express_lane: 否}
    run: all
    expect:
      forward.raw_output: 14
      respond.weights_unchanged: 是
      request.normalized: true
      load.cold: "yes"
  - expect:
      respond.weights_unchanged: {not: 否}
      request.normalized: {not: false}
)");
    const StepReport r = it.step();
    CHECK_FALSE(r.error);
    for (const CheckResult& c : r.checks) CHECK_MESSAGE(c.passed, c.expectation.path, " got ", c.got);
    CHECK(r.checks.size() == 4);
    const StepReport second = it.step();
    CHECK(second.checks.size() == 2);
    for (const CheckResult& c : second.checks) CHECK_MESSAGE(c.passed, c.expectation.path, " got ", c.got);
}

TEST_CASE("expect: yes/no is no looser than that: 否 fails on yes, and other text is compared as written") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      respond.weights_unchanged: 否
      request.normalized: "Yes"
      respond.text: "true"
)");
    const StepReport r = it.step();
    REQUIRE(r.checks.size() == 3);
    for (const CheckResult& c : r.checks) CHECK_FALSE_MESSAGE(c.passed, c.expectation.path);
}

TEST_CASE("JSON output survives half a UTF-8 character in a value") {
    nlohmann::ordered_json j;
    j["piece"] = std::string("\xe7\x8c");  // the first two bytes of 猫
    std::string text;
    CHECK_NOTHROW(text = dump_json(j));
    CHECK(text.find("\xef\xbf\xbd") != std::string::npos);  // U+FFFD
}

TEST_CASE("model backend: auto runs on a GPU where one is usable, else on the CPU with the reason, and cuda without one "
          "is an invalid lesson, where it says so") {
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    const auto lesson = [&](const char* backend) {
        return "title: t\nmodel: {kind: llm, file: " + model + ", backend: " + backend +
               "}\nsteps:\n  - request: {prompt: \"The cat\", max_tokens: 1, temperature: 0}\n    run: load\n";
    };
    const auto no_gpu = llm::backend_unavailable(llm::BackendKind::cuda);
    Interpreter it(parse_lesson(lesson("auto"), "test.yaml"));
    it.step();
    const std::string backend = text(it, "load.backend");
    if (no_gpu) {
        CHECK(backend.starts_with("cpu ("));
        CHECK(text(it, "load.warnings").find(*no_gpu + "; using the CPU") != std::string::npos);
    } else {
        CHECK(backend.starts_with("cuda ("));
    }

    const std::string cuda = lesson("cuda");
    if (!no_gpu) {
        CHECK_NOTHROW((void)parse_lesson(cuda, "test.yaml"));
        return;
    }
    try {
        (void)parse_lesson(cuda, "test.yaml");
        FAIL("a lesson asking for cuda loaded without a GPU");
    } catch (const Error& e) {
        CHECK(e.message() == "backend cuda: " + *no_gpu + " (backend: auto runs on the CPU when there is no GPU)");
        CHECK(e.where().line == 2);
        CHECK(e.where().column == static_cast<int>(cuda.find("cuda}") - cuda.find("model:")) + 1);
    }
}

}  // namespace interpreter_test

TEST_CASE("terminal: a field whose key ends in its unit says the unit once, after the value") {
    sixstep::TraceEvent ev;
    ev.stage = sixstep::Stage::output;
    ev.out("ttft_p50_ms", 3.9, "ms");
    ev.out("duration_s", 0.25, "s");
    ev.out("tokens_per_s", 10.0, "tok/s");  // "s" is not its unit: kept
    ev.out("wall_ms", 2.0, "ms", "real time");  // a label is said as it is
    const std::string text = sixstep::app::format_event(ev);
    CHECK(text.find("ttft p50 = 3.9 ms") != std::string::npos);
    CHECK(text.find("duration = 0.25 s") != std::string::npos);
    CHECK(text.find("tokens per s = 10 tok/s") != std::string::npos);
    CHECK(text.find("real time = 2 ms") != std::string::npos);
}

// The serve summary spoke of "cold load 0.000 ms once" when the weights were
// loaded steps before, and listed text answers bare, into their commas.
TEST_CASE("interpreter: the serve summary says whose cold load it is, and quotes text answers") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    serve: {requests: 3}
  - serve: {requests: 2}
)");
    const StepReport first = it.step();
    const std::string cold = format_step(first, it.state());
    CHECK(cold.find("served 3 requests: answers [11, 11, 11]") != std::string::npos);
    // The request echoed as a lesson writes it: numbers bare, text quoted.
    CHECK(cold.find("request: {distance: \"3 km\", congestion: 0, express_lane: 0}") != std::string::npos);
    CHECK(cold.find("cold load ") != std::string::npos);
    CHECK(cold.find(" ms once; each warm request ") != std::string::npos);
    const StepReport second = it.step();
    const std::string warm = format_step(second, it.state());
    CHECK(warm.find(" ms once;") == std::string::npos);
    CHECK(warm.find("the cold load (") != std::string::npos);
    CHECK(warm.find(") was paid once, before; each warm request ") != std::string::npos);
    // Below a microsecond, as the load stage printed it: "< 0.001 ms", not "(0.000 ms)".
    LessonState tiny = it.state();
    tiny.cold_load_ms = 2e-5;
    CHECK(format_step(first, tiny).find("cold load < 0.001 ms once;") != std::string::npos);
    CHECK(format_step(second, tiny).find("the cold load (< 0.001 ms) was paid once") != std::string::npos);

    auto stories = Interpreter(parse_lesson(std::string("title: t\nmodel: {kind: llm, file: ") + SIXSTEP_SOURCE_DIR +
                                                "/assets/models/stories-3m-f16.gguf, threads: 1}\nsteps:\n"
                                                "  - request: {prompt: \"Once upon\", max_tokens: 3, temperature: 0}\n"
                                                "    serve: {requests: 2}\n",
                                            "t.yaml"));
    const StepReport texts = stories.step();
    const std::string said = format_step(texts, stories.state());
    const std::string answer = texts.served.at(0).text;
    CHECK(said.find("answers [\"" + answer + "\", \"" + answer + "\"]") != std::string::npos);
}

// Lesson 02 printed "raw output = 10.9996" and then "out: raw output = 11".
TEST_CASE("terminal: a value that only rounds to a whole number keeps its zeros, a whole one stays bare") {
    sixstep::TraceEvent ev;
    ev.stage = sixstep::Stage::output;
    ev.out("raw_output", 10.9996);
    ev.out("share", 0.99999);
    ev.out("minus", -10.9996);
    ev.out("minutes", 11.0);
    ev.out("tokens", 16609.7);
    const std::string text = sixstep::app::format_event(ev);
    CAPTURE(text);
    CHECK(text.find("raw output = 11.00;") != std::string::npos);
    CHECK(text.find("share = 1.000;") != std::string::npos);
    CHECK(text.find("minus = -11.00;") != std::string::npos);
    CHECK(text.find("minutes = 11;") != std::string::npos);
    CHECK(text.find("tokens = 16610\n") != std::string::npos);
}

// Lesson 01 printed "of it, reading the weights = 2×10⁻⁵ ms" beside stage
// times printed to the microsecond; lesson 03 "b = 5.068" under its working's
// 5.06815.
TEST_CASE("terminal: a time below a microsecond is < 0.001 ms, and a field shows the digits its working does") {
    sixstep::TraceEvent ev;
    ev.stage = sixstep::Stage::load;
    ev.out("reading_ms", 2e-5, "ms", "reading");
    ev.out("other_ms", 0.002926, "ms", "other");
    ev.out("tiny", 2e-5);  // not a time: a power of ten
    ev.out("b", 5.068152, "min", "b");
    ev.outputs.back().digits = 6;
    const std::string text = sixstep::app::format_event(ev);
    CAPTURE(text);
    CHECK(text.find("reading = < 0.001 ms;") != std::string::npos);
    CHECK(text.find("other = 0.002926 ms;") != std::string::npos);
    CHECK(text.find("tiny = 2\u00d710\u207b\u2075;") != std::string::npos);
    CHECK(text.find("b = 5.06815 min\n") != std::string::npos);
}

TEST_CASE("terminal: the delivery model's out: lines read as its working does") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "1.864 mi", congestion: 0, express_lane: 0}
    run: all
)");
    const StepReport r = it.step();
    const std::string text = format_step(r, it.state());
    CAPTURE(text);
    CHECK(text.find("→ 2.99982 km") != std::string::npos);
    CHECK(text.find("out: distance = 2.99982 km;") != std::string::npos);
    CHECK(text.find("raw output = 10.9996\n") != std::string::npos);
    CHECK(text.find("out: raw output = 10.9996\n") != std::string::npos);
    CHECK(text.find("11.00") == std::string::npos);
}

// A step's unexpected error read 'error: expected = "(no error)", got …'.
TEST_CASE("interpreter: a step that fails unexpectedly is said to have failed, with its error") {
    auto it = make_without(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
)",
                           0, "express_lane");
    const StepReport r = it.step();
    REQUIRE(r.checks.size() == 1);
    const std::string line = format_check(r.checks[0], "en", "");
    CHECK(line == "  ✗ test.yaml:4:5: the step failed: missing feature \"express_lane\" (the model needs distance, "
                  "congestion and express_lane)");
    // The step's text says it once: the check, where the step is, not an
    // "✗ error:" line above it as well.
    const std::string text = format_step(r, it.state());
    CAPTURE(text);
    const auto said = [&](std::string_view what) {
        std::size_t n = 0;
        for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
        return n;
    };
    CHECK(said("missing feature \"express_lane\"") == 1);
    CHECK(said(line) == 1);
}
