// Expectations that compare: a value against another path, a remembered
// value, ratios and offsets (times, plus), ranges, and `not` — parsed, then
// checked against what the engine computed. Broken ones are in
// test_lesson_loader.cpp (tests/data/bad-lessons).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "app/core/interpreter.h"
#include "app/core/report.h"
#include "unchecked_lesson.h"

using namespace sixstep;
using namespace sixstep::app;

namespace {

Interpreter make(const char* yaml) { return Interpreter(parse_lesson(yaml, "test.yaml")); }

// A lesson whose request at `step` lacks `field`: it fails when that step runs.
Interpreter make_without(const char* yaml, std::size_t step, const char* field) {
    return Interpreter(sixstep::test::without_field(parse_lesson(yaml, "test.yaml"), step, field));
}

// A lesson whose `name`, remembered at `step`, holds `path` instead: a text
// the loader would refuse to compare as a number, for the run's own check.
Interpreter make_remembering(const char* yaml, std::size_t step, const char* name, const char* path) {
    return Interpreter(sixstep::test::remembering(parse_lesson(yaml, "test.yaml"), step, name, path));
}

// Every check of the step, passed or not, in order.
std::vector<bool> results(const StepReport& r) {
    std::vector<bool> out;
    for (const auto& c : r.checks) out.push_back(c.passed);
    return out;
}

}  // namespace

TEST_CASE("expect: the grammar parses into conditions, operands and not") {
    const Lesson l = parse_lesson(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    remember: {eleven: forward.raw_output, km: request.distance_km}
    expect:
      forward.raw_output: {above: request.distance_km, times: 3}
      response.minutes: {equals: eleven}
      request.distance_km: {above: 0, below: 10}
      respond.text: {not: {contains: "hours"}}
      postprocess.minutes: {not: 12}
      output.raw_output: {equals: km, times: 2, plus: 5}
)",
                                  "inline.yaml");
    const LessonStep& s = l.steps[0];
    REQUIRE(s.remember.size() == 2);
    CHECK(s.remember[0] == std::pair<std::string, std::string>{"eleven", "forward.raw_output"});
    REQUIRE(s.expect.size() == 6);
    const Expectation& ratio = s.expect[0];
    REQUIRE(ratio.conditions.size() == 1);
    CHECK(ratio.conditions[0].op == Condition::Op::above);
    CHECK(ratio.conditions[0].operand.kind == Operand::Kind::path);
    CHECK(ratio.conditions[0].operand.name == "request.distance_km");
    CHECK(ratio.conditions[0].operand.times == 3);
    CHECK(ratio.describe() == "> 3 × request.distance_km");
    CHECK(s.expect[1].conditions[0].operand.kind == Operand::Kind::remembered);
    CHECK(s.expect[2].conditions.size() == 2);
    CHECK(s.expect[2].describe() == "> 0 and < 10");
    CHECK(s.expect[3].negated);
    CHECK(s.expect[3].describe() == "not contains \"hours\"");
    CHECK(s.expect[4].negated);
    CHECK(s.expect[5].describe() == "= 2 × km + 5");
}

// A bound is written with the digits that tell it from its neighbours: a
// narrow range read "expected > 17 and < 17".
TEST_CASE("expect: a bound is described with every digit it needs, and no more") {
    const Lesson l = parse_lesson(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      response.minutes: {above: 17, below: 17.0000000001}
      forward.raw_output: {value: 11.25, tol: 0.1}
      request.distance_km: {below: 0.1}
      postprocess.minutes: {above: request.distance_km, times: 1.0000001, plus: 0.123456789}
)",
                                  "inline.yaml");
    REQUIRE(l.steps[0].expect.size() == 4);
    CHECK(l.steps[0].expect[0].describe() == "> 17 and < 17.0000000001");
    CHECK(l.steps[0].expect[1].describe() == "\u2248 11.25 \u00b1 0.1");
    CHECK(l.steps[0].expect[2].describe() == "< 0.1");
    CHECK(l.steps[0].expect[3].describe() == "> 1.0000001 \u00d7 request.distance_km + 0.123456789");  // was "> 1 × …"
}

TEST_CASE("expect: relations between paths and remembered values hold or fail as the numbers say") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    remember: {short_trip: response.minutes, km: request.distance_km}
    expect:
      forward.raw_output: {above: request.distance_km, times: 3}
      output.raw_output: {below: request.distance_km, times: 4}
      response.minutes: {equals: short_trip}
      postprocess.raw_output: {equals: km, times: 2, plus: 5}
      request.distance_km: {above: 0, below: 10}
  - request: {distance: "10 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      response.minutes: {above: short_trip}
      postprocess.minutes: {equals: short_trip, plus: 14}
      forward.raw_output: {below: short_trip, times: 2}
      request.distance_km: {above: 0, below: 10}
      output.raw_output: {equals: short_trip, tol: 13.9}
)");
    CHECK(results(it.step()) == std::vector<bool>{true, true, true, true, true});
    // 25 minutes: above 11, = 11 + 14, not below 22, not < 10 km, not within 13.9 of 11.
    const StepReport r = it.step();
    CHECK(results(r) == std::vector<bool>{true, true, false, false, false});
    // A failed relation says what it was compared with.
    CHECK(r.checks[2].against == "short_trip = 11");
    CHECK(r.checks[2].expected_text() == "< 2 × short_trip (short_trip = 11)");
    CHECK(format_check(r.checks[2]).find("expected < 2 × short_trip (short_trip = 11), got 25") != std::string::npos);
    // In a Chinese lesson's terminal the words around it are Chinese.
    CHECK(format_check(r.checks[2], "zh").find("应为 < 2 × short_trip (short_trip = 11), 实际 25") != std::string::npos);
}

TEST_CASE("expect: not negates any expectation, a missing value fails either way") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      response.minutes: {not: 12}
      postprocess.minutes: {not: 11}
      respond.text: {not: {contains: "hours"}}
      postprocess.text: {not: {contains: "minutes"}}
      forward.raw_output: {not: {above: 0, below: 5}}
      train.loss: {not: 3}
      output.raw_output: {not: {equals: train.loss}}
)");
    const StepReport r = it.step();
    CHECK(results(r) == std::vector<bool>{true, false, true, false, true, false, false});
    CHECK(r.checks[6].against == "train.loss = (nothing)");
    // In a Chinese lesson the missing value's words are Chinese too, where
    // the check compares with it as where it checks it.
    CHECK(format_check(r.checks[6], "zh").find("(train.loss = （没有值）), 实际 11") != std::string::npos);
}

TEST_CASE("expect: below, above and tol on a value that is not a finite number fail, with not too") {
    // A remembered text (refused at load; here past it) and a NaN: NaN
    // passed {not: {below: x}} and {not: {above: x}} alike.
    auto it = make_remembering(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    remember: {words: response.minutes}
    expect:
      forward.raw_output: {not: {above: words}}
      output.raw_output: {not: {below: words}}
      response.minutes: {not: {equals: words}}
)",
                               0, "words", "respond.text");
    const StepReport r = it.step();
    CHECK(results(r) == std::vector<bool>{false, false, true});
    // 11 is a number: it is the remembered text that cannot be compared.
    CHECK(r.checks[0].got == "11 (what it is compared with is not a finite number: cannot compare)");
    CHECK(r.checks[0].got_text("zh") == "11 （与之比较的值不是有限数，无法比较）");
}

TEST_CASE("expect: an operand that times makes infinite is not a finite number either") {
    // 3 km × 1e308 overflows: 11 is below infinity, but the check cannot say so.
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      response.minutes: {below: request.distance_km, times: 1e308}
      postprocess.minutes: {not: {above: request.distance_km, times: 1e308}}
)");
    const StepReport r = it.step();
    CHECK(results(r) == std::vector<bool>{false, false});
    CHECK(r.checks[0].got == "11 (what it is compared with is not a finite number: cannot compare)");
}

TEST_CASE("expect: equal is 9 significant digits at any size, tol: 0 is equality, and \"-\" reads the engine's minus") {
    // Below 1 equality was an absolute 1e-9 (4e-10 equalled 1.2e-9); tol: 0
    // failed 0.1 + 0.2 against 0.3; the answer writes −20 with U+2212.
    auto tiny = make(R"(
title: t
model: {kind: delivery, weights: {bias: 4e-10, distance: 0, congestion: 0, express_lane: 0}}
steps:
  - request: {distance: "1 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      forward.raw_output: 1.2e-9
      output.raw_output: 4.0000000001e-10
)");
    CHECK(results(tiny.step()) == std::vector<bool>{false, true});
    auto sums = make(R"(
title: t
model: {kind: delivery, weights: {bias: 0.1, distance: 0.2, congestion: 0, express_lane: 0}}
steps:
  - request: {distance: "1 km", congestion: 0, express_lane: 0}
    run: forward
    expect:
      forward.raw_output: {value: 0.3, tol: 0}
)");
    CHECK(results(sums.step()) == std::vector<bool>{true});
    auto minus = make(R"(
title: t
model: {kind: delivery, weights: {bias: -30, distance: 2, congestion: 10, express_lane: -2}}
steps:
  - request: {distance: "5 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      respond.text: {contains: "-20"}
      response.minutes: -20
)");
    const StepReport r = minus.step();
    CHECK(results(r) == std::vector<bool>{true, true});
    CHECK(r.checks[0].got.find("\u221220") != std::string::npos);  // the text keeps its typographic minus
}

// A list of numbers contains an element, or a run of neighbours, as = means
// equal: as text, [6, 5, -2] contained "6, 5, -" and [13] contained "3".
TEST_CASE("expect: contains on a list of numbers matches whole elements and runs of neighbours") {
    // terms = [6, 5, -2] (3 km, half congested, express lane); then [13, 0, 0].
    const std::vector<std::pair<const char*, bool>> cases = {
        {"5", true},           {"\"5, \u22122\"", true}, {"\"[6, 5, -2]\"", true}, {"6.000000001", true},
        {"2", false},          {"\"6, -2\"", false},      {"\"6, 5, -2, 0\"", false}, {"0.5", false},
        {"\"-2\"", true},      {"-2", true},
    };
    for (const auto& c : cases) {  // not a structured binding: clang 14 cannot capture one (CAPTURE)
        const char* operand = c.first;
        const bool holds = c.second;
        CAPTURE(operand);
        auto it = make(fmt::format(R"(
title: t
model: {{kind: delivery, weights: {{bias: 5, distance: 2, congestion: 10, express_lane: -2}}}}
steps:
  - request: {{distance: "3 km", congestion: 0.5, express_lane: 1}}
    run: forward
    expect: {{forward.terms: {{contains: {}}}}}
  - request: {{distance: "6.5 km", congestion: 0, express_lane: 0}}
    run: forward
    expect: {{forward.terms: {{not: {{contains: {}}}}}}}
)",
                                   operand, operand)
                           .c_str());
        CHECK(results(it.step()) == std::vector<bool>{holds});
        CHECK(results(it.step()) == std::vector<bool>{true});  // [13, 0, 0] holds none of them
    }
    // As text, "[13, 0, 0]" contained "3".
    auto thirteen = make(R"(
title: t
model: {kind: delivery, weights: {bias: 0, distance: 2, congestion: 10, express_lane: -2}}
steps:
  - request: {distance: "6.5 km", congestion: 0, express_lane: 0}
    run: forward
    expect: {forward.terms: {contains: 3}}
  - expect: {forward.terms: {contains: 13}}
)");
    CHECK(results(thirteen.step()) == std::vector<bool>{false});
    CHECK(results(thirteen.step()) == std::vector<bool>{true});
}

// A literal is described to the digits equality compares (9 significant):
// {value: 11.0000001} failed as "expected = 11, got 11".
TEST_CASE("expect: a failed check shows a number it was given to the digits equality compares") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      postprocess.minutes: {value: 11.0000001}
      forward.raw_output: {above: 11.0000001}
)");
    const StepReport r = it.step();
    REQUIRE(r.checks.size() == 2);
    CHECK_FALSE(r.checks[0].passed);
    CHECK(r.checks[0].expected_text() == "= 11.0000001");
    CHECK(r.checks[0].got == "11");
    CHECK(r.checks[1].expected_text() == "> 11.0000001");
}

// "expected = 0.3 (…), got 0.3" says nothing: numbers that print alike but
// differ are shown with every digit that tells them apart.
TEST_CASE("expect: a failed check whose numbers print alike shows them whole") {
    auto it = make(R"(
title: t
model: {kind: delivery, weights: {bias: 0.1234567, distance: 0, congestion: 0, express_lane: 0}}
steps:
  - request: {distance: "1 km", congestion: 0, express_lane: 0}
    run: all
    remember: {b: forward.raw_output}
    expect:
      forward.raw_output: 0.123457
      output.raw_output: {equals: b, plus: 1e-7}
      postprocess.raw_output: {equals: b, plus: 1}
)");
    const StepReport r = it.step();
    REQUIRE(r.checks.size() == 3);
    CHECK_FALSE(r.checks[0].passed);
    CHECK(r.checks[0].got == "0.1234567");
    CHECK_FALSE(r.checks[1].passed);
    CHECK(r.checks[1].got == "0.1234567");
    CHECK(r.checks[1].against == "b = 0.1234567");
    // Numbers that print apart keep the usual digits.
    CHECK_FALSE(r.checks[2].passed);
    CHECK(r.checks[2].got == "0.123457");
    CHECK(r.checks[2].against == "b = 0.123457");
}

TEST_CASE("expect: equality is relative away from zero and absolute within 10^-12 of it") {
    // -30 + 2 × 5 is -20 exactly: -20.0000000001 is the same number at 9
    // significant digits, though 10^-10 apart. 0.3 − 0.1 × 3 is −5.6e-17, not
    // 0, in doubles: next to zero equality is absolute, 10^-12.
    auto it = make(R"(
title: t
model: {kind: delivery, weights: {bias: -30, distance: 2, congestion: 0, express_lane: 0}}
steps:
  - request: {distance: "5 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      forward.raw_output: -20.0000000001
      output.raw_output: {not: -20.0000001}
)");
    CHECK(results(it.step()) == std::vector<bool>{true, true});
    auto zero = make(R"(
title: t
model: {kind: delivery, weights: {bias: 0.3, distance: -0.1, congestion: 0, express_lane: 0}}
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      forward.raw_output: 0
      output.raw_output: {not: 2e-12}
)");
    const StepReport r = zero.step();
    CHECK(results(r) == std::vector<bool>{true, true});
    CHECK(r.checks[0].got != "0");  // the sum is not exactly 0
}

// The edges of each relation, and every condition of a range counted:
// 3 km answers 11 minutes, distance_km is 3.
TEST_CASE("expect: each bound at its edge, both ends of a range, tol on a text, and a near miss of equals") {
    auto it = make_remembering(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    remember: {words: response.minutes}
    expect:
      response.minutes: {value: 10, tol: 1}
      request.distance_km: {not: {above: 3}}
      postprocess.minutes: {not: {above: 11.5, below: 30}}
      output.raw_output: {not: {above: 5, below: 10}}
      forward.raw_output: {not: {equals: words, tol: 1}}
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      request.distance_km: {not: {below: 3}}
      response.minutes: {not: {equals: 11.00001}}
      postprocess.minutes: {above: 5, below: 12}
)",
                               0, "words", "respond.text");  // a text, past the loader's check
    // 10 ± 1 holds 11; 3 is not above 3; a range fails when either end
    // fails; a text with a tolerance cannot be compared, negated or not.
    CHECK(results(it.step()) == std::vector<bool>{true, true, true, true, false});
    // 3 is not below 3; 11.00001 is not 11 at 9 significant digits.
    CHECK(results(it.step()) == std::vector<bool>{true, true, true});
}

TEST_CASE("expect: times: 0 is an invalid lesson (every value would be above 0 × anything)") {
    CHECK_THROWS_WITH(parse_lesson(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      response.minutes: {above: request.distance_km, times: 0}
)",
                                   "test.yaml"),
                      doctest::Contains("\"times\" must be greater than 0"));
}

TEST_CASE("expect: a value that is not there says why — a stage not reached, or one that gave none this time") {
    auto it = make_without(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    expect: {respond.text: {contains: "11"}}
  - run: all
  - request: {distance: "4 km", congestion: 0, express_lane: 0}
    run: all
    expect: {load.cold_load_ms: {below: 5}}
  - request: {distance: "5 km", congestion: 0, express_lane: 0}
    run: all
    expect: {respond.text: {contains: "11"}}
)",
                           3, "express_lane");
    const StepReport first = it.step();
    REQUIRE(first.checks.size() == 1);
    CHECK(first.checks[0].got ==
          "(nothing: the request has not reached the respond stage; run: all, or run: respond, walks it there)");
    it.step();
    const StepReport warm = it.step();
    REQUIRE(warm.checks.size() == 1);
    CHECK(warm.checks[0].got == "(nothing: the load stage gave no cold_load_ms this time; what it holds: time of the "
                                "cold load (only when this request paid it))");
    // The step ran all, and its error stopped the request: that is the reason.
    const StepReport failed = it.step();
    REQUIRE(failed.error.has_value());
    bool said = false;
    for (const CheckResult& c : failed.checks)
        if (c.expectation.path == "respond.text") {
            CHECK(c.got == "(nothing: the step's error stopped the request before the respond stage)");
            said = true;
        }
    CHECK(said);
}

// The step ran all and failed at its first stage: its answer is missing
// because of the error, not for want of a run: all (the step has one).
TEST_CASE("expect: an answer missing after the step's error says the error stopped it") {
    auto it = make_without(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect: {response.minutes: 11}
)",
                           0, "express_lane");
    const StepReport r = it.step();
    REQUIRE(r.error.has_value());
    bool said = false;
    for (const CheckResult& c : r.checks)
        if (c.expectation.path == "response.minutes") {
            CHECK(c.got == "(nothing: the step's error stopped the request before its answer)");
            said = true;
        }
    CHECK(said);
}

// A bare "(nothing)" left the author guessing: an answer not yet given, and
// a remember: that found no value (its later check named no step).
TEST_CASE("expect: an answer not given yet, and a name remembered without a value, say why") {
    auto it = make(R"(
title: t
steps:
  - say: nothing has run
    expect: {response.minutes: 11}
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: request
    remember: {raw: forward.raw_output}
  - run: all
    expect: {forward.raw_output: {equals: raw}}
)");
    const StepReport first = it.step();
    REQUIRE(first.checks.size() == 1);
    CHECK(first.checks[0].got ==
          "(nothing: the request has not been answered yet; run: all walks it to the respond stage)");
    it.step();
    const StepReport third = it.step();
    REQUIRE(third.checks.size() == 1);
    CHECK_FALSE(third.checks[0].passed);
    CHECK(third.checks[0].against ==
          "raw = (nothing: step 2 remembered forward.raw_output when it had no value — the request has not reached "
          "the forward stage; run: all, or run: forward, walks it there)");
}

TEST_CASE("expect: a negated error expectation does not excuse an error it does not match") {
    // It holds with no error at all, so it does not expect one: a missing
    // feature failed with no check failing.
    auto it = make_without(R"(
title: t
steps:
  - request: {distance: "5 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      error: {not: {contains: "parsec"}}
  - request: {distance: "5 kg", congestion: 0, express_lane: 0}
    run: all
    expect:
      error: {contains: "not a length"}
)",
                           0, "express_lane");
    const StepReport r = it.step();
    // The unexpected error first (it explains what follows), then the step's own check, which holds.
    CHECK(results(r) == std::vector<bool>{false, true});
    CHECK(r.checks[0].got.find("missing feature \"express_lane\"") != std::string::npos);
    CHECK(results(it.step()) == std::vector<bool>{true});  // expected, and nothing more
}

TEST_CASE("expect: text against a path text, remember replaces, restart forgets") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    remember: {answer: respond.text, first: respond.text}
    expect:
      response.text: {equals: respond.text}
      respond.text: {equals: "Estimated delivery time: 11 minutes"}
  - request: {distance: "4 km", congestion: 0, express_lane: 0}
    run: all
    expect:
      respond.text: {not: {equals: first}}
      postprocess.text: {equals: answer}
    remember: {answer: respond.text}
  - expect:
      respond.text: {equals: answer}
      postprocess.text: {not: {equals: first}}
)");
    CHECK(results(it.step()) == std::vector<bool>{true, true});
    // remember runs before expect: the step compares with the name it just replaced.
    CHECK(results(it.step()) == std::vector<bool>{true, true});
    CHECK(results(it.step()) == std::vector<bool>{true, true});
    it.go_to(2);  // replayed: the names hold this run's values
    CHECK(results(it.step()) == std::vector<bool>{true, true});
}

// A meaning reads as written after "what it holds:": "it is the" before it
// read "it is the which inputs dropout kept (1) or dropped (0)".
TEST_CASE("expect: a value a stage did not give this time is named with its meaning as written") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect: {load.file: {contains: "json"}}
  - set: {dropout: 0.5}
    run: all
    expect: {forward.dropout_mask: {contains: "0"}}
)");
    const StepReport r = it.step();
    REQUIRE(r.checks.size() == 1);
    CHECK(r.checks[0].got.find("the load stage gave no file this time; what it holds: the weights file read") !=
          std::string::npos);
    const StepReport eval = it.step();
    REQUIRE(eval.checks.size() == 1);
    CHECK(eval.checks[0].got == "(nothing: the forward stage gave no dropout_mask this time; what it holds: which "
                                "inputs dropout kept (1) or dropped (0); train mode only)");
}

// served.count before any serve: a bare "(nothing)".
TEST_CASE("expect: a served path before any serve step says why it has nothing") {
    auto it = make(R"(
title: t
steps:
  - request: {distance: "3 km", congestion: 0, express_lane: 0}
    run: all
    expect: {served.count: 3}
  - serve: 2
    expect: {served.count: 2}
)");
    const StepReport first = it.step();
    REQUIRE(first.checks.size() == 1);
    CHECK(first.checks[0].got ==
          "(nothing: no step has served requests yet; serve: N sends N requests through the six steps)");
    const StepReport second = it.step();
    REQUIRE(second.checks.size() == 1);
    CHECK(second.checks[0].passed);
}
