// The binary as users run it: exact commands from the README and the issues.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_command.h"
#include "temp_dir.h"

using sixstep::test::last_line;
using sixstep::test::run_command;
using sixstep::test::sixstep_cmd;

namespace {
const std::string data = SIXSTEP_TEST_DATA;
const std::string lessons = std::string(SIXSTEP_SOURCE_DIR) + "/lessons";
}  // namespace

TEST_CASE("infer delivery: 3 km, 0, 0 ends with 11 minutes") {
    const auto r = run_command(sixstep_cmd("infer delivery --distance \"3 km\" --congestion 0 --express-lane 0"));
    CHECK(r.exit_code == 0);
    CHECK(last_line(r.output) == "Estimated delivery time: 11 minutes");
    CHECK(r.output.find("5 + 2×3 + 10×0 + (−2)×0 = 11") != std::string::npos);
}

TEST_CASE("sixstep with no lesson and no display lists the lessons to choose from, exit 2") {
    const std::string no_display = "env -u DISPLAY -u WAYLAND_DISPLAY SIXSTEP_LESSONS='" + lessons + "' ";
    const auto r = run_command(no_display + sixstep_cmd(""));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("sixstep: error: give a lesson to narrate, e.g. sixstep --headless " + lessons +
                        "/01-six-steps.yaml\nthe lessons in " + lessons + ":\n") == 0);
    CHECK(r.output.find("  01-six-steps.yaml ") != std::string::npos);
    CHECK(r.output.find("One inference request, six steps\n") != std::string::npos);
    CHECK(r.output.find("  zh/01-six-steps.yaml ") != std::string::npos);
    // A lesson that does not load is listed with why, on its one line.
    const auto dir = sixstep::test::process_temp_dir("lesson-list");
    std::ofstream(dir / "a-good.yaml") << "title: Good one\nmodel: {kind: delivery}\nsteps:\n  - say: hi\n";
    std::ofstream(dir / "b-broken.yaml") << "title: [\n";
    std::ofstream(dir / "c-long.yaml") << "title: " << std::string(100000, 'x') << "\nsteps:\n  - say: hi\n";
    const auto listed = run_command("env -u DISPLAY -u WAYLAND_DISPLAY SIXSTEP_LESSONS='" + dir.string() + "' " + sixstep_cmd(""));
    CHECK(listed.exit_code == 2);
    CHECK(listed.output.find("  a-good.yaml") != std::string::npos);
    CHECK(listed.output.find("Good one\n") != std::string::npos);
    CHECK(listed.output.find("  b-broken.yaml") != std::string::npos);
    CHECK(listed.output.find("(does not load: ") != std::string::npos);
    CHECK(listed.output.find("bytes left out") != std::string::npos);  // one line, whatever the title holds
    CHECK(listed.output.size() < 2000);
    // The example to run is a lesson that loads, though a broken one comes first.
    std::ofstream(dir / "0-broken-first.yaml") << "title: Broken\nsteps:\n  - run: forwrd\n";
    const auto example = run_command("env -u DISPLAY -u WAYLAND_DISPLAY SIXSTEP_LESSONS='" + dir.string() + "' " + sixstep_cmd(""));
    CHECK(example.output.find("e.g. sixstep --headless " + (dir / "a-good.yaml").string() + "\n") != std::string::npos);
    // Its error whole, with its position: no "[4 bytes left out]".
    CHECK(example.output.find("0-broken-first.yaml:3:10: \"run\" must be") != std::string::npos);
    CHECK(example.output.find("did you mean \"forward\"?)") != std::string::npos);
}

TEST_CASE("infer delivery --no-normalize: 3000 m gives 6005 without an error") {
    const auto r = run_command(
        sixstep_cmd("infer delivery --distance \"3000 m\" --congestion 0 --express-lane 0 --no-normalize"));
    CHECK(r.exit_code == 0);
    CHECK(last_line(r.output) == "Estimated delivery time: 6005 minutes");
    CHECK(r.output.find("error") == std::string::npos);
}

TEST_CASE("infer delivery normalizes metres and answers in Chinese") {
    const auto r = run_command(
        sixstep_cmd("infer delivery --distance \"3000 m\" --congestion 0 --express-lane 0 --lang zh"));
    CHECK(r.exit_code == 0);
    CHECK(last_line(r.output) == "预计送达时间：11 分钟");
}

TEST_CASE("infer delivery --json is machine-readable") {
    const auto r = run_command(sixstep_cmd("infer delivery --distance \"3 km\" --congestion 0 --express-lane 0 --json"));
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.output);
    CHECK(j["response"]["minutes"] == 11);
    CHECK(j["events"].size() == 6);
    CHECK(j["events"][2]["stage"] == "forward");
    CHECK(j["events"][2]["outputs"]["raw_output"] == 11);
}

TEST_CASE("infer delivery --train-mode: identical requests can differ, eval never does") {
    // In train mode at p = 0.5 the answer for 3 km is 5 + 2·(3 or 0)·2 = 17
    // or 5 — never the eval answer 11. Dropout's stream starts from the
    // default seed (42) in every process, whose first draw drops the distance.
    const auto r = run_command(
        sixstep_cmd("infer delivery --distance \"3 km\" --congestion 0 --express-lane 0 --train-mode"));
    CHECK(r.exit_code == 0);
    CHECK(last_line(r.output) == "Estimated delivery time: 5 minutes");
    CHECK(r.output.find("dropout is active") != std::string::npos);
}

TEST_CASE("bad requests: one clear message, exit 2") {
    struct Case {
        const char* args;
        const char* message;
    } cases[] = {
        {"--distance \"3 kg\" --congestion 0 --express-lane 0",
         "sixstep: error: distance: unit \"kg\" is not a length (use km, m or mi)"},
        {"--distance \"3 km\" --express-lane 0",
         "sixstep: error: missing feature \"congestion\" (the model needs distance, congestion and express_lane)"},
        {"--distance \"three km\" --congestion 0 --express-lane 0",
         "sixstep: error: distance: \"three km\" is not a number with an optional unit (e.g. \"3 km\", \"3000 m\", "
         "\"1.9 mi\")"},
        {"--distance \"3 km\" --congestion 0 --express-lane 2", "sixstep: error: express_lane: \"2\" must be 0 or 1"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.args);
        const auto r = run_command(sixstep_cmd(std::string("infer delivery ") + c.args));
        CHECK(r.exit_code == 2);
        CHECK(last_line(r.output) == c.message);
    }
}

TEST_CASE("bad command lines exit 2") {
    CHECK(run_command(sixstep_cmd("infer delivery --distance")).exit_code == 2);
    CHECK(run_command(sixstep_cmd("infer delivery --lang fr --distance 3")).exit_code == 2);
    CHECK(run_command(sixstep_cmd("--no-such-flag")).exit_code == 2);
    CHECK(run_command(sixstep_cmd("--headless")).exit_code == 2);
}

// CLI11's own words ("--n-predict: At Most 1 required but received 2", "The
// following argument was not expected: b") in the words of the rest.
TEST_CASE("a repeated option and an argument too many are said plainly, exit 2") {
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    auto r = run_command(sixstep_cmd("generate -m '" + model + "' --prompt a -n 2 -n 3"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--n-predict is given 2 times: give it once") != std::string::npos);
    r = run_command(sixstep_cmd("tokenize -m '" + model + "' a b"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("b was not expected (a value with spaces in it goes in quotes: \"a b\")") != std::string::npos);
    r = run_command(sixstep_cmd("tokenize -m '" + model + "' a b c"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(" were not expected") != std::string::npos);
}

TEST_CASE("a mistyped command or lesson name says which one was meant, exit 2") {
    const auto cmd = run_command(sixstep_cmd("--headless infr"));
    CHECK(cmd.exit_code == 2);
    CHECK(cmd.output.find("no command or lesson file \"infr\" — did you mean the command \"infer\"?") !=
          std::string::npos);
    const auto file = run_command(sixstep_cmd("--headless '" + lessons + "/01-six-step.yaml'"));
    CHECK(file.exit_code == 2);
    CHECK(file.output.find("01-six-step.yaml: no such lesson file — did you mean " + lessons + "/01-six-steps.yaml?") !=
          std::string::npos);
    const auto neither = run_command(sixstep_cmd("--headless '" + lessons + "/zz-nothing-like-it.yaml'"));
    CHECK(neither.exit_code == 2);
    CHECK(neither.output.find("did you mean") == std::string::npos);
}

TEST_CASE("every option's help shows its default, and a list that starts empty shows none") {
    const auto serve = run_command(sixstep_cmd("serve --help"));
    CHECK(serve.exit_code == 0);
    CHECK(serve.output.find("--max-batch INT=8") != std::string::npos);
    CHECK(serve.output.find("--host TEXT=127.0.0.1") != std::string::npos);
    const auto generate = run_command(sixstep_cmd("generate --help"));
    CHECK(generate.output.find("--stop TEXT ...") != std::string::npos);
    CHECK(generate.output.find("=[]") == std::string::npos);
}

TEST_CASE("output that cannot be written is an error, not an empty success") {
    // { …; } keeps stderr on the pipe while stdout goes to the full device.
    const auto r = run_command("{ " + sixstep_cmd("--headless '" + lessons + "/01-six-steps.yaml' > /dev/full; }"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("sixstep: error: writing the output: No space left on device") != std::string::npos);
    CHECK(run_command("{ " + sixstep_cmd("infer delivery --distance 3 --congestion 0 --express-lane 0 > /dev/full; }"))
              .exit_code == 2);
}

TEST_CASE("--headless: a refusal the step asks for is marked apart from a failure") {
    const auto r = run_command(sixstep_cmd("--headless '" + lessons + "/02-training-serving-skew.yaml'"));
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("⊘ refused, as this step expects: distance: unit \"kg\" is not a length") != std::string::npos);
    CHECK(r.output.find("✗") == std::string::npos);
}

TEST_CASE("check: a failing expectation exits 1 and names file:line, expected vs got") {
    const std::string f = data + "/failing-lessons/wrong-answer.yaml";
    const auto r = run_command(sixstep_cmd("check '" + f + "'"));
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("✗ " + f + ":8:7: postprocess.minutes: expected = 12, got 11") != std::string::npos);
}

TEST_CASE("check: an invalid lesson exits 2, even beside passing ones") {
    const auto r = run_command(sixstep_cmd("check '" + lessons + "/01-six-steps.yaml' '" + data +
                                           "/bad-lessons/unknown-top-key.yaml'"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("unknown-top-key.yaml:1:1: unknown key \"titel\"") != std::string::npos);
    CHECK(last_line(r.output) == "lessons: 1 passed, 0 failed, 1 invalid");
}

// "congestion: 30" (meant as 30 %) passed with nothing said: the warning was
// printed only beside a failed check.
TEST_CASE("check: a passing lesson's warnings are said under its tick, at their step") {
    const auto f = sixstep::test::process_temp_dir("cli-check") / "warned.yaml";
    std::ofstream(f) << "title: warned\nsteps:\n  - request: {distance: \"3 km\", congestion: 30, express_lane: 0}\n"
                        "    run: all\n    expect: {response.minutes: {above: 10}}\n";
    const auto r = run_command(sixstep_cmd("check '" + f.string() + "'"));
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("✓ " + f.string() + " (1 step, 1 check)\n  ⚠ " + f.string() +
                        ":3:5: step 1 warned: congestion = 30 is outside the training range 0–1") != std::string::npos);
}

TEST_CASE("check: a passing lesson's line counts its steps and checks in words") {
    const auto f = sixstep::test::process_temp_dir("cli-check") / "one-step.yaml";
    std::ofstream(f) << "title: one step\nmodel: {kind: delivery}\nsteps:\n"
                        "  - request: {distance: 3, congestion: 0, express_lane: 0}\n";
    const auto r = run_command(sixstep_cmd("check '" + f.string() + "'"));
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("✓ " + f.string() + " (1 step, 0 checks)") != std::string::npos);
}

// --attempts: a lesson whose checks fail runs again (timing claims on a busy
// machine); one that fails every time still fails, with every run's lines.
TEST_CASE("check --attempts: a failing lesson runs again and says what each run found, a passing one runs once") {
    const std::string f = data + "/failing-lessons/wrong-answer.yaml";
    const auto r = run_command(sixstep_cmd("check --attempts 3 '" + f + "'"));
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("✗ " + f + " — 1 of 3 checks failed (in run 3 of 3)") != std::string::npos);
    CHECK(r.output.find("  run 1: 1 of 3 checks failed") != std::string::npos);
    CHECK(r.output.find("  run 2: 1 of 3 checks failed") != std::string::npos);
    CHECK(r.output.find("  run 3:\n") != std::string::npos);
    const auto js = run_command(sixstep_cmd("check --attempts 2 --json '" + f + "'") + " 2>/dev/null");
    REQUIRE(js.exit_code == 1);
    const auto j = nlohmann::json::parse(js.output);
    CHECK(j["lessons"][0]["runs"] == 2);
    CHECK(j["lessons"][0]["earlier_failures"].size() == 2);  // run 1's heading and its one failure
    const auto pass = run_command(sixstep_cmd("check --attempts 3 '" + lessons + "/01-six-steps.yaml'"));
    CHECK(pass.exit_code == 0);
    CHECK(pass.output.find("passed in run") == std::string::npos);
    for (const char* bad : {"0", "11", "two"})
        CHECK(run_command(sixstep_cmd(std::string("check --attempts ") + bad + " '" + f + "'")).exit_code == 2);
}

// --repeat: every run of a lesson side by side, so an author sees how much
// room a claim has: each check's passes, and the range of its values.
TEST_CASE("check --repeat: each check's passes in N runs and the range of its values") {
    const std::string f = data + "/failing-lessons/wrong-answer.yaml";
    const auto r = run_command(sixstep_cmd("check --repeat 3 '" + f + "'"));
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("✗ " + f + ": 1 check failed in some of 3 runs") != std::string::npos);
    CHECK(r.output.find("  ✓ 3/3  " + f + ":7:7 forward.raw_output = 11 — got 11\n") != std::string::npos);
    CHECK(r.output.find("  ✗ 0/3  " + f + ":8:7 postprocess.minutes = 12 — got 11\n") != std::string::npos);
    CHECK(r.output.find("respond.text") == std::string::npos);  // a text that held every time: not listed
    CHECK(r.output.find("lessons: 0 passed in every run, 1 failed in some, 0 invalid") != std::string::npos);
    // A measured time (a prefill, some 0.5 ms, to the microsecond: the
    // delivery model's 20 ns load came out equal in every run now and then):
    // its range and median over the runs.
    const auto timed = sixstep::test::process_temp_dir("cli-repeat") / "timed.yaml";
    std::ofstream(timed) << "title: timed\nmodel: {kind: llm, file: stories-3m-f16.gguf, threads: 1}\nsteps:\n"
                            "  - request: {prompt: \"Once upon a time\", max_tokens: 2, temperature: 0}\n"
                            "    run: all\n    expect: {respond.ttft_ms: {above: 0}}\n";
    const auto t = run_command(sixstep_cmd("check --repeat 4 '" + timed.string() + "'"));
    CHECK(t.exit_code == 0);
    CHECK(t.output.find(": every check held in all 4 runs") != std::string::npos);
    CHECK(t.output.find("respond.ttft_ms > 0 — got ") != std::string::npos);
    CHECK(t.output.find("(median ") != std::string::npos);
    // Against a remembered value: < and > show the margin as a ratio; = shows
    // both values, as a ratio of two token ids (or minutes) means nothing.
    const auto against = timed.parent_path() / "against.yaml";
    std::ofstream(against) << "title: against\nmodel: {kind: delivery}\nsteps:\n"
                              "  - request: {distance: 3 km, congestion: 0, express_lane: 0}\n    run: all\n"
                              "    remember: {m: postprocess.minutes}\n  - expect:\n"
                              "      forward.raw_output: {below: m, times: 2}\n      postprocess.minutes: {equals: m}\n";
    const auto a = run_command(sixstep_cmd("check --repeat 2 '" + against.string() + "'"));
    CHECK(a.exit_code == 0);
    CHECK(a.output.find("forward.raw_output < 2 × m — got ÷ m 1\n") != std::string::npos);
    CHECK(a.output.find("postprocess.minutes = m — got 11; m 11\n") != std::string::npos);
    CHECK(run_command(sixstep_cmd("check --repeat 3 --attempts 2 '" + f + "'")).exit_code == 2);
    CHECK(run_command(sixstep_cmd("check --repeat 0 '" + f + "'")).exit_code == 2);
}

TEST_CASE("check: a path that does not exist exits 2") {
    const auto r = run_command(sixstep_cmd("check /nonexistent/lessons"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("/nonexistent/lessons: no such lesson file or folder") != std::string::npos);
}

TEST_CASE("--headless narrates every stage and exits with the checks' verdict") {
    const auto r = run_command(sixstep_cmd("--headless '" + lessons + "/01-six-steps.yaml'"));
    CHECK(r.exit_code == 0);
    for (const char* s : {"1 · request", "2 · load", "3 · forward", "4 · raw output", "5 · postprocess", "6 · respond"})
        CHECK(r.output.find(s) != std::string::npos);
    CHECK(r.output.find("⇒ Estimated delivery time: 11 minutes") != std::string::npos);
    CHECK(last_line(r.output).find(" passed, 0 failed") != std::string::npos);

    const auto f = run_command(sixstep_cmd("--headless '" + data + "/failing-lessons/wrong-answer.yaml'"));
    CHECK(f.exit_code == 1);
    // The failures again under the tally, where the eye lands last.
    CHECK(last_line(f.output).find("wrong-answer.yaml:8:7: postprocess.minutes: expected = 12, got 11") !=
          std::string::npos);
    // …in the lesson's language, as the step's own line was.
    const auto dir = sixstep::test::process_temp_dir("headless-zh");
    std::ofstream(dir / "zh.yaml") << "title: t\nlanguage: zh\nsteps:\n  - request: {distance: \"3 km\", congestion: 0, "
                                      "express_lane: 0}\n    run: all\n    expect:\n      postprocess.minutes: 12\n";
    const auto z = run_command(sixstep_cmd("--headless '" + (dir / "zh.yaml").string() + "'"));
    CHECK(z.exit_code == 1);
    CHECK(last_line(z.output).find("postprocess.minutes: 应为 = 12, 实际 11") != std::string::npos);
}

// The window draws the transformer's panels; the terminal says what they
// hold, or a step would show only the checks made on them. Lesson 05 times
// the cache on and off: on a busy machine a timed claim may miss once, so a
// lesson gets three runs to pass, as `check --attempts 3` gives the bundled ones.
TEST_CASE("--headless: the calculator, the cache switched off, attention and the lens say what they show") {
    const auto headless = [&](const std::string& lesson) {
        sixstep::test::CommandResult r;
        for (int attempt = 0; attempt < 3; ++attempt) {
            r = run_command(sixstep_cmd("--headless '" + lessons + "/" + lesson + "'"));
            if (r.exit_code == 0) break;
            MESSAGE(lesson << ", attempt " << attempt + 1 << ": exit " << r.exit_code);
        }
        return r;
    };
    const auto kv = headless("06-kv-memory.yaml");
    CHECK(kv.exit_code == 0);
    CHECK(kv.output.find("▦ KV memory: 36 layers × 8 KV heads × head_dim 128, f16") != std::string::npos);
    CHECK(kv.output.find("2 × 36 × 8 × 128 × 2 B = 147,456 B") != std::string::npos);
    const auto cache = headless("05-prefill-decode-kv-cache.yaml");
    CHECK(cache.exit_code == 0);
    CHECK(cache.output.find("▦ the KV cache on and off, 48 tokens") != std::string::npos);
    CHECK(cache.output.find("    without it: ") != std::string::npos);
    CHECK(cache.output.find("    the same tokens both ways") != std::string::npos);
    const auto lens = headless("04-one-token-at-a-time.yaml");
    CHECK(lens.exit_code == 0);
    CHECK(lens.output.find("the last token \" the\" looks most at") != std::string::npos);
    CHECK(lens.output.find("    layer 3: \" mat\" 0.43") != std::string::npos);
}

TEST_CASE("--headless: what the lesson says fits the terminal's width ($COLUMNS when not a terminal)") {
    const auto narrow = run_command("COLUMNS=40 " + sixstep_cmd("--headless '" + lessons + "/01-six-steps.yaml'"));
    REQUIRE(narrow.exit_code == 0);
    const size_t from = narrow.output.find("── Step 1/8"), to = narrow.output.find("✉", from);
    REQUIRE(to != std::string::npos);
    std::istringstream said(narrow.output.substr(from, to - from));
    int lines = 0;
    for (std::string line; std::getline(said, line); ++lines) {
        CAPTURE(line);
        if (line.rfind("──", 0) != 0) CHECK(line.size() <= 40);  // English: a byte a column
    }
    CHECK(lines > 5);
    // A pipe without $COLUMNS keeps the author's lines.
    const auto piped = run_command("env -u COLUMNS " + sixstep_cmd("--headless '" + lessons + "/01-six-steps.yaml'"));
    CHECK(piped.output.find("  A customer wants to know: how long for a 3 km delivery, no congestion,\n") !=
          std::string::npos);
}

TEST_CASE("--headless: numbers with the digits that matter, powers of ten as a class writes them, one token") {
    const auto r = run_command(sixstep_cmd("--headless '" + lessons + "/07-sampling.yaml'"));
    REQUIRE(r.exit_code == 0);
    CHECK(r.output.find("its probability = 0.4311;") != std::string::npos);  // not 0.43107
    CHECK(r.output.find("n_generated = 1 token;") != std::string::npos);
    CHECK(r.output.find("×10⁻") != std::string::npos);
    for (const char* exponent : {"e-0", "e-1", "e+0", "e+1"}) {
        CAPTURE(exponent);
        CHECK(r.output.find(exponent) == std::string::npos);
    }
}

TEST_CASE("--headless --json prints the whole run") {
    const auto r = run_command(sixstep_cmd("--headless --json '" + lessons + "/02-training-serving-skew.yaml'"));
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.output);
    CHECK(j["failed"] == 0);
    CHECK(j["steps"][1]["events"][2]["outputs"]["raw_output"] == 6005);
    CHECK(j["language"] == "en");
    CHECK(j["steps"][0]["request"]["distance"] == "3000 m");  // as the lesson wrote it
    // A whole number is a JSON integer, and a field's unit is beside it.
    CHECK(r.output.find("\"raw_output\": 6005,") != std::string::npos);
    CHECK(j["steps"][1]["events"][0]["units"]["distance_km"] == "km");
    bool answered = false;
    for (const auto& st : j["steps"]) answered |= st.contains("response");
    CHECK(answered);
}

TEST_CASE("paths: every path of a kind with its type, unit and meaning, and its knobs") {
    const auto r = run_command(sixstep_cmd("paths --model delivery"));
    CHECK(r.exit_code == 0);
    CHECK(r.output.rfind("delivery — ", 0) == 0);
    auto line_of = [&](const std::string& out, const std::string& start) {
        const auto at = out.find("\n  " + start + " ");
        if (at == std::string::npos) return std::string();
        return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
    };
    const std::string raw = line_of(r.output, "forward.raw_output");
    CHECK(raw.find("number") != std::string::npos);
    CHECK(raw.find("the model's bare number") != std::string::npos);
    CHECK(line_of(r.output, "request.distance_km").find(" km ") != std::string::npos);
    CHECK(!line_of(r.output, "served.minutes").empty());
    CHECK(!line_of(r.output, "train.grad_bias").empty());
    const std::string dropout = line_of(r.output, "dropout");
    CHECK(dropout.find("setting") != std::string::npos);
    CHECK(dropout.find("number, 0 ≤ x < 1") != std::string::npos);
    CHECK(r.output.find("top1_piece") == std::string::npos);  // the other kind's

    const auto l = run_command(sixstep_cmd("paths --model llm"));
    CHECK(l.exit_code == 0);
    CHECK(!line_of(l.output, "output.top1_piece").empty());
    CHECK(line_of(l.output, "respond.ttft_ms").find(" ms ") != std::string::npos);
    CHECK(l.output.find("raw_output") == std::string::npos);
}

TEST_CASE("paths --json lists every kind, and an unknown kind is exit 2 with did you mean") {
    const auto r = run_command(sixstep_cmd("paths --json"));
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.output);
    REQUIRE(j["models"].size() == 4);
    CHECK(j["models"][0]["kind"] == "delivery");
    CHECK(j["models"][1]["kind"] == "llm");
    CHECK(j["models"][2]["kind"] == "serving");
    CHECK(j["models"][3]["kind"] == "endpoint");
    bool found = false;
    for (const auto& p : j["models"][1]["paths"])
        if (p["path"] == "forward.kv_used_tokens") {
            found = true;
            CHECK(p["unit"] == "tokens");
            CHECK(p["type"] == "number");
        }
    CHECK(found);
    CHECK(j["models"][0]["knobs"][0]["name"] == "distance");

    const auto bad = run_command(sixstep_cmd("paths --model lm"));
    CHECK(bad.exit_code == 2);
    CHECK(bad.output.find("unknown model kind \"lm\" — did you mean \"llm\"?") != std::string::npos);
}

TEST_CASE("paths --markdown --update rewrites a file's marked tables, and a file without markers is exit 2") {
    const auto dir = sixstep::test::process_temp_dir("paths-markdown");
    const std::string md = (dir / "ref.md").string();
    const std::string begin = "<!-- BEGIN generated: sixstep paths --markdown --model llm -->";
    const std::string end = "<!-- END generated: sixstep paths --markdown --model llm -->";
    std::ofstream(md) << "# Mine\n" << begin << "\nstale\n" << end << "\ntail\n";
    auto r = run_command(sixstep_cmd("paths --markdown --update '" + md + "'"));
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("1 reference table section rewritten") != std::string::npos);
    std::stringstream ss;
    ss << std::ifstream(md).rdbuf();
    const std::string text = ss.str();
    CHECK(text.find("stale") == std::string::npos);
    CHECK(text.find("| `forward.kv_used_tokens` | number | tokens |") != std::string::npos);
    CHECK(text.rfind("\ntail\n") == text.size() - 6);
    r = run_command(sixstep_cmd("paths --markdown --update '" + md + "'"));
    CHECK(r.output.find("1 reference table section up to date") != std::string::npos);

    const std::string plain = (dir / "plain.md").string();
    std::ofstream(plain) << "no markers\n";
    r = run_command(sixstep_cmd("paths --markdown --update '" + plain + "'"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(plain + ": no reference markers") != std::string::npos);
    CHECK(run_command(sixstep_cmd("paths --json --markdown")).exit_code == 2);
    // --update rewrites every kind's section in the file: a --model beside it did nothing.
    r = run_command(sixstep_cmd("paths --markdown --update '" + md + "' --model llm"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--model: --update rewrites the tables of every kind the file holds") != std::string::npos);
}

// An empty kind listed every kind, as if none had been given; a repeated one was taken.
TEST_CASE("paths --model: an empty or repeated kind is refused, exit 2") {
    auto r = run_command(sixstep_cmd("paths --model ''"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--model: give a model kind: delivery, llm") != std::string::npos);
    r = run_command(sixstep_cmd("paths --markdown --model llm --model llm"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--model is given 2 times: give it once") != std::string::npos);
}

// A lesson checked from its own folder resolves "trained.json" to itself:
// the message says the whole folder it looked in.
TEST_CASE("check: a missing file of a lesson in the current folder names the folder it looked in") {
    const auto dir = sixstep::test::process_temp_dir("missing-weights");
    std::ofstream(dir / "wf.yaml") << "title: t\nmodel: {kind: delivery, weights_file: trained.json}\nsteps:\n  - say: hi\n";
    const auto r = run_command("cd '" + dir.string() + "' && " + sixstep_cmd("check wf.yaml"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("weights file \"trained.json\" not found (relative to the lesson's folder: " +
                        (dir / "trained.json").lexically_normal().string() + ")") != std::string::npos);
}
