// `sixstep coldstart`, `waits` and `canary` as a user runs them: the JSON's
// structure and the relations that tie it together (never absolute speed),
// and one clear error with exit code 2 for each bad input.
#include <doctest/doctest.h>

#include <cstdio>
#include <regex>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/cli_checks.h"
#include "run_command.h"

using sixstep::test::run_command;
using sixstep::test::sixstep_cmd;
using sixstep::test::bad_input;
using sixstep::test::has;
using sixstep::test::run_json;
using Json = nlohmann::json;

namespace {

const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";

}  // namespace

TEST_CASE("cli canary: v2 trained on metres is rolled back, every request answered, versions by checksum") {
    const Json j = run_json("canary --requests 600 --json");
    CHECK(j["deployment"]["alarm"] == true);
    CHECK(j["deployment"]["rolled_back"] == true);
    CHECK(j["deployment"]["promoted"] == false);
    CHECK(j["serving"]["lost"] == 0);
    CHECK(j["serving"]["answered_v1"].get<int>() + j["serving"]["answered_v2"].get<int>() == 600);
    CHECK(j["versions"][0]["checksum"] != j["versions"][1]["checksum"]);
    CHECK(j["versions"][1]["distance_unit"] == "m");

    const Json sound = run_json("canary --requests 600 --v2-unit km --json");
    CHECK(sound["deployment"]["rolled_back"] == false);
    CHECK(sound["deployment"]["promoted"] == true);
    CHECK(sound["serving"]["lost"] == 0);

    const auto t = run_command(sixstep_cmd("canary --requests 600"));
    CHECK(t.exit_code == 0);
    CHECK(has(t.output, "0 lost"));
    CHECK(has(t.output, "INFERENCE"));
    CHECK(has(t.output, "DEPLOYMENT"));
}

// One answer, one request: singular; a window a version did not answer in
// has no mean ("0.0" before).
TEST_CASE("cli canary: an alarm after one v2 answer is told in the singular, and an empty window has no mean") {
    const auto t = run_command(sixstep_cmd("canary --requests 20 --baseline 2 --fraction 1 --min-samples 1"));
    CAPTURE(t.output);
    CHECK(t.exit_code == 0);
    CHECK(has(t.output, "monitor alarm after 1 v2 answer: "));
    CHECK(has(t.output, "1 of v2's 1 request out of range against 0 of v1's 2 requests"));
    CHECK(has(t.output, "\n  1 request was answered by v2 before the rollback\n"));
    const auto promoted = run_command(
        sixstep_cmd("canary --requests 1 --baseline 0 --fraction 1 --min-samples 1 --v2-unit km --promote-after 1"));
    CAPTURE(promoted.output);
    CHECK(has(promoted.output, "SERVING \u2014 1 request: 0 answered by v1, 1 by v2, 0 lost"));
    CHECK(has(promoted.output, "\n      0\u20130            0        -      1 "));  // v1 answered none: "-"
}

TEST_CASE("cli canary: bad input is one clear error, exit 2") {
    bad_input("canary --fraction 1.5", "canary fraction 1.5: give a share of traffic in [0, 1]");
    bad_input("canary --requests 0", "canary: 0 requests");
    bad_input("canary --v2-unit ft", "give m or km");
    bad_input("canary --mean-threshold nan", "mean threshold nan");
}

TEST_CASE("cli waits: chat, agent and batch job, each with its headline metric") {
    const Json j = run_json("waits -m '" + model +
                            "' --chat-tokens 12 --agent-calls 2 --agent-tokens 6 --batch-requests 4 --batch-tokens 6 "
                            "-t 1 --json");
    CHECK(j["chat"]["headline"]["metric"] == "TTFT");
    CHECK(j["agent"]["headline"]["metric"] == "end-to-end");
    CHECK(j["batch"]["headline"]["metric"] == "throughput");
    REQUIRE(j["agent"]["calls"].size() == 2);
    double sum = 0;
    for (const Json& c : j["agent"]["calls"]) sum += c["total_ms"].get<double>();
    CHECK(j["agent"]["end_to_end_ms"].get<double>() == doctest::Approx(sum));
    CHECK(j["batch"]["n_tokens"] == 4 * 6);
}

// One streamed token has no gap to time: "TPOT 0.000 ms = 0 tokens/s".
TEST_CASE("cli waits: a chat of one token gives no TPOT") {
    const auto r = run_command(sixstep_cmd("waits -m '" + model +
                                           "' --chat-tokens 1 --agent-calls 1 --agent-tokens 2 --batch-requests 1 "
                                           "--batch-tokens 2 -t 1"));
    CHECK(r.exit_code == 0);
    // A rate of zero, not one that ends in 0 (the batch job's "2710 tokens/s").
    CHECK_FALSE(std::regex_search(r.output, std::regex(R"((^|[^0-9.])0 tokens/s)")));
    CHECK(r.output.find("no TPOT") != std::string::npos);
    CHECK(r.output.find("1 request \u00d7 2 tokens batched") != std::string::npos);  // not "1 requests"
    // In JSON: null, not a TPOT of 0 ms and a stream of 0 tokens/s.
    const Json j = run_json("waits -m '" + model + "' --chat-tokens 1 --agent-calls 1 --agent-tokens 2 "
                            "--batch-requests 1 --batch-tokens 2 -t 1 --json");
    for (const char* figure : {"tpot_ms", "decode_tok_s", "stream_over_reading", "stream_over_fast"})
        CHECK(j["chat"][figure].is_null());
    CHECK(j["chat"]["ttft_ms"].get<double>() > 0);
}

TEST_CASE("cli waits and coldstart: bad input is one clear error, exit 2") {
    bad_input("waits -m '" + model + "' --chat-tokens 0", "give 1..4096");
    bad_input("waits -m '" + model + "' --batch-requests 1000", "give 1..256");
    bad_input("waits -m '" + std::string(SIXSTEP_SOURCE_DIR) + "/README.md'", "not a GGUF file");
    bad_input("coldstart -m '" + model + "' --idle=-5", "idle gap -5 s");
    bad_input("coldstart -m '" + model + "' --unload-after 0", "unload after 0 s");
    bad_input("coldstart -m '" + model + "' --unload-after 1e-300", "unload after 1e-300 s: give a finite number of seconds, 0.001 to 1e9");
    bad_input("coldstart -m '" + std::string(SIXSTEP_SOURCE_DIR) + "/README.md'", "not a GGUF file");
}

TEST_CASE("cli coldstart: cold requests first, then warm, keep-warm rows for every idle gap") {
    const Json j = run_json("coldstart -m '" + model + "' --no-drop --requests 2 -n 4 --idle 0,100,5 "
                            "--unload-after 60 -t 1 --json");
    REQUIRE(j["requests"].size() >= 3);
    CHECK(j["requests"].back()["start"] == "warm");
    REQUIRE(j["keep_warm"]["rows"].size() == 3);
    CHECK(j["keep_warm"]["rows"][0]["unloaded"] == false);
    CHECK(j["keep_warm"]["rows"][1]["unloaded"] == true);   // 100 s idle > 60 s
    CHECK(j["keep_warm"]["rows"][2]["unloaded"] == false);  // 5 s after the last request
    CHECK(j["process_first"]["index"] == -1);
    CHECK(j["process_first"]["load_ms"].get<double>() > 0);
}

// The lines under the table are read from its load column (they took the
// requests' totals, and so counted one request's noise as the disk's).
TEST_CASE("cli coldstart: building the instance is the fresh instance's load, as the table prints it") {
    const auto r = run_command(sixstep_cmd("coldstart -m '" + model + "' --no-drop --requests 1 -n 2 --idle 0 -t 1"));
    CAPTURE(r.output);
    REQUIRE(r.exit_code == 0);
    const std::size_t row = r.output.find("\n  1  cold (page cache)");
    REQUIRE(row != std::string::npos);
    double load_ms = 0;
    REQUIRE(std::sscanf(r.output.c_str() + row, "\n  1  cold (page cache) %*f%% %lf", &load_ms) == 1);
    CHECK(has(r.output, fmt::format("building the instance: {:.2f} ms (the load from the page cache)\n", load_ms)));
    CHECK(has(r.output, "the process's own first load and request: "));
}
