// `sixstep generate --draft` and `sixstep speculate` as a user runs them: the
// statistics in the JSON tie together (never speed), greedy text equals the
// target alone's, and every bad input is one clear error with exit code 2.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "app/cli/cli_checks.h"
#include "run_command.h"
#include "temp_dir.h"

using sixstep::test::run_command;
using sixstep::test::sixstep_cmd;
using sixstep::test::bad_input;
using sixstep::test::bad_option;
using sixstep::test::has;
using sixstep::test::run_json;
using Json = nlohmann::json;

namespace {

const std::string models = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/";
const std::string target = models + "stories-3m-f16.gguf";
const std::string draft = models + "stories-draft-f16.gguf";

}  // namespace

TEST_CASE("cli generate --draft: greedy text is the target's, and the statistics add up") {
    const Json j = run_json("generate -m '" + target + "' --draft '" + draft +
                            "' --draft-k 4 --prompt 'Once upon a time' -n 24 --temp 0 -t 1 --json");
    CHECK(j["k"] == 4);
    CHECK(j["identical_to_target"] == true);
    CHECK(j["speculative"]["text"] == j["target_alone"]["text"]);
    const Json& s = j["speculative"]["stats"];
    CHECK(s["n_generated"] == 24);
    CHECK(s["n_generated"].get<int>() == s["n_steps"].get<int>() + s["n_accepted"].get<int>());
    CHECK(s["acceptance_rate"].get<double>() ==
          doctest::Approx(s["n_accepted"].get<double>() / s["n_drafted"].get<double>()));
    CHECK(s["tokens_per_pass"].get<double>() ==
          doctest::Approx(s["n_generated"].get<double>() / s["n_steps"].get<double>()));
    CHECK(s["n_drafted"].get<int>() <= 4 * s["n_steps"].get<int>());
    CHECK(j["speedup"].get<double>() > 0);

    // The text form streams the continuation and prints the statistics.
    const auto t = run_command(sixstep_cmd("generate -m '" + target + "' --draft '" + draft +
                                           "' --prompt 'Once upon a time' -n 12 --temp 0 -t 1"));
    CHECK(t.exit_code == 0);
    CHECK(has(t.output, "Once upon a time"));
    CHECK(has(t.output, "tokens per target pass"));
    CHECK(has(t.output, "acceptance"));
    CHECK(has(t.output, "greedy: the text is identical to the target alone's"));
}

TEST_CASE("cli generate --draft: the per-pass equation holds, or says what the end of the answer cut") {
    // Drafts accepted after the end-of-text token are never emitted: "7.73
    // tokens per target pass (= 1 + 8.09 accepted per pass)" did not add up.
    const auto t = run_command(sixstep_cmd("generate -m '" + target + "' --draft '" + draft +
                                           "' --draft-k 8 --prompt 'Once upon a time' -n 400 --temp 0 -t 1"));
    REQUIRE(t.exit_code == 0);
    int passes = 0, tokens = 0, drafted = 0, accepted = 0;
    const auto at = t.output.find(" target passes for ");
    REQUIRE(at != std::string::npos);
    const auto line_start = t.output.rfind('\n', at) + 1;
    REQUIRE(std::sscanf(t.output.c_str() + line_start, " %d target passes for %d tokens", &passes, &tokens) == 2);
    const auto d = t.output.find("drafted ");
    REQUIRE(d != std::string::npos);
    REQUIRE(std::sscanf(t.output.c_str() + d, "drafted %d, accepted %d", &drafted, &accepted) == 2);
    const int cut = passes + accepted - tokens;
    CAPTURE(t.output);
    if (cut > 0) CHECK(has(t.output, "less the " + std::to_string(cut) + " the end of the answer cut from its last pass)"));
    else CHECK(has(t.output, "(= 1 + "));
}

TEST_CASE("cli speculate: one row per draft, k and temperature, each with its verdict") {
    const Json j = run_json("speculate -m '" + target + "' --draft '" + draft +
                            "' --random-draft --k 1,4 --temp 0 -n 12 -r 1 -t 1 --json");
    REQUIRE(j["rows"].size() == 4);  // 2 drafts × 2 k × 1 temperature
    for (const Json& r : j["rows"]) {
        CHECK(r["identical"] == true);  // greedy rows
        CHECK(r["verdict"].get<std::string>().size() > 0);
    }
    // The random draft agrees with (almost) nothing; the trained twin with most.
    CHECK(j["rows"][0]["acceptance"].get<double>() > j["rows"][2]["acceptance"].get<double>());
    // It has the first draft's shape, and says so (it said "the target's").
    REQUIRE(j["drafts"].size() == 2);
    CHECK(j["drafts"][1]["name"] == "random weights (the first draft's shape)");
    CHECK(j["drafts"][1]["n_params"] == j["drafts"][0]["n_params"]);
}

TEST_CASE("cli --overlap: the draft on one of the threads, greedy text still the target's, the target alone on all") {
    const Json j = run_json("generate -m '" + target + "' --draft '" + draft +
                            "' --draft-k 2 --overlap --prompt 'Once upon a time' -n 24 --temp 0 -t 2 --json");
    CHECK(j["overlap"] == true);
    CHECK(j["identical_to_target"] == true);
    CHECK(has(j["backend"].get<std::string>(), "2 threads, 1 of them lent"));
    CHECK(has(j["alone_backend"].get<std::string>(), "2 threads"));
    const Json& s = j["speculative"]["stats"];
    // Overlapped, unless the machine (ctest runs suites side by side) had no
    // CPU free for the draft's thread at the time; then it says so.
    CHECK(s["overlapped"] == s["overlap_declined"].get<std::string>().empty());
    if (s["overlapped"] == false) CHECK(has(s["overlap_declined"].get<std::string>(), "no CPU free for the draft's thread"));
    CHECK(s["n_generated"] == 24);
    CHECK(s["n_draft_passes"].get<int>() >= s["n_drafted"].get<int>());
    // The stats are the last timed run's; the counts cover every timed run
    // (each looks for a free CPU again), so the text can say "2 of 3".
    CHECK(j["timed_runs"] == j["repetitions"]);
    CHECK(j["timed_runs_declined"].get<int>() <= j["timed_runs"].get<int>());
    if (s["overlapped"] == false) CHECK(j["timed_runs_declined"].get<int>() >= 1);
    if (j["timed_runs_declined"] == j["timed_runs"]) CHECK(s["overlapped"] == false);

    const Json sw = run_json("speculate -m '" + target + "' --draft '" + draft +
                             "' --k 2 --temp 0 -n 12 -r 1 -t 2 --overlap --json");
    CHECK(sw["overlap"] == true);
    REQUIRE(sw["rows"].size() == 1);
    CHECK(sw["rows"][0]["identical"] == true);

    const std::string base = "generate -m '" + target + "' --prompt Once -n 4 ";
    bad_option(base + "--overlap", "--overlap requires --draft");
    bad_input(base + "--draft '" + draft + "' --overlap -t 1", "--overlap needs at least 2 threads");
    bad_input(base + "--draft '" + draft + "' --overlap -t 2 --draft-threads 2", "--overlap runs the draft on one thread");
    bad_input("speculate -m '" + target + "' --draft '" + draft + "' --overlap -t 1 -n 4",
              "--overlap needs at least 2 threads");
}

TEST_CASE("cli generate --draft: bad input is one clear error, exit 2") {
    const std::string base = "generate -m '" + target + "' --prompt Once -n 4 ";
    bad_option(base + "--draft '" + draft + "' --draft-k 0", "--draft-k: Value 0 not in range 1 to 64");
    bad_option(base + "--draft '" + draft + "' --draft-k 1000", "--draft-k: Value 1000 not in range 1 to 64");
    bad_option(base + "--draft-k 4", "--draft-k requires --draft");  // k without a draft
    bad_input(base + "--draft '" + draft + "' --top 3", "--top is not available with --draft");

    // A draft with another vocabulary: the tiny random model's 512 byte tokens.
    const auto other = sixstep::test::process_temp_dir("speculate-cli") / "tiny.gguf";
    REQUIRE(run_command(sixstep_cmd("bench --random tiny --type f32 --out '" + other.string() + "'")).exit_code == 0);
    bad_input(base + "--draft '" + other.string() + "'", "speculative decoding needs the same tokenizer");
    bad_input("speculate -m '" + target + "' --draft '" + other.string() + "' -n 4",
              "speculative decoding needs the same tokenizer");
    bad_option("speculate -m '" + target + "' --draft '" + draft + "' --k 0", "Value 0 not in range 1 to 64");
    bad_input("speculate -m '" + target + "'", "speculate needs --draft");
    // One token comes from the prompt's pass: nothing is drafted to judge.
    bad_option("speculate -m '" + target + "' --draft '" + draft + "' -n 1", "Value 1 not in range 2 to 65536");
}

// A run too short to draft anything said "acceptance 0.0%", and a sweep's
// verdict spoke of "a verify pass of 65 rows" where no pass had more than 3.
TEST_CASE("cli speculate and generate --draft: what a short run drafted and checked, as it was") {
    const auto one = run_command(sixstep_cmd("generate -m '" + target + "' --draft '" + draft +
                                             "' --prompt Once -n 1 --temp 0 -t 1"));
    CHECK(one.exit_code == 0);
    CHECK(one.output.find("drafted nothing") != std::string::npos);
    CHECK(one.output.find("acceptance 0.0%") == std::string::npos);
    const Json j = run_json("speculate -m '" + target + "' --draft '" + draft + "' --k 64 --temp 0 -n 3 -r 1 -t 1 --json");
    REQUIRE(j["rows"].size() == 1);
    const std::string verdict = j["rows"][0]["verdict"];
    CAPTURE(verdict);
    CHECK(verdict.find("65 rows") == std::string::npos);
    CHECK(verdict.find("a verify pass of 3 rows") != std::string::npos);
}

// The target and the draft each choose a backend: without a GPU, --backend
// auto said "…; using the CPU" twice, once per model.
TEST_CASE("cli speculate --backend auto: a backend note is printed once") {
    const auto r = run_command(sixstep_cmd("speculate -m '" + target + "' --draft '" + draft +
                                           "' --backend auto --k 1 --temp 0 -n 4 -r 1 -t 1"));
    CAPTURE(r.output);
    CHECK(r.exit_code == 0);
    std::size_t notes = 0;
    for (std::size_t at = r.output.find("using the CPU"); at != std::string::npos;
         at = r.output.find("using the CPU", at + 1))
        ++notes;
    CHECK(notes <= 1);  // none where a GPU took both
}
