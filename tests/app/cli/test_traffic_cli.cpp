// `sixstep traffic` as a user runs it: the metrics table with definitions,
// JSON, the contiguous vs paged comparison, and one clear error (exit 2) for
// each kind of bad input.
#include <doctest/doctest.h>

#include "run_command.h"
#include "temp_dir.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using sixstep::test::run_command;
using sixstep::test::sixstep_cmd;

namespace traffic_cli_test {

namespace {

const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";

sixstep::test::CommandResult traffic(const std::string& args) {
    return run_command(sixstep_cmd("traffic -m '" + model + "' --threads 2 " + args));
}

}  // namespace

TEST_CASE("cli traffic: the metrics table, each figure with its definition") {
    const auto r = traffic("--rate 20 --count 12 --max-tokens 8 --max-batch 4 --kv-blocks 64 --ttft-target 500");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    for (const char* s : {"continuous batching, max batch 4", "TTFT (from arrival)", "TTFT (from scheduling)",
                          "first token sampled - request arrived", "(E2E - TTFT) / (output tokens - 1)", "ITL",
                          "goodput", "batch occupancy", "KV blocks used (peak)", "preemptions", "virtual"})
        CHECK(r.output.find(s) != std::string::npos);
}

// Counts past 9,999 were printed as "1.787e+04".
TEST_CASE("cli traffic: counts are written out with separators, never in e-notation") {
    const auto r = traffic("--rate 400 --count 200 --max-tokens 64 --min-tokens 60");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(r.output.find("e+0") == std::string::npos);
    const auto at = r.output.find("output tokens  ");
    REQUIRE(at != std::string::npos);
    const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
    CHECK(line.find(',') != std::string::npos);  // 200 × 60–64 tokens: five digits, with a separator
}

TEST_CASE("cli traffic: a distribution with nothing in it prints dashes, not measured zeros") {
    // One token each: no request has a TPOT or an ITL gap ("0.0 0.0 0.0" before).
    const auto r = traffic("--count 5 --min-tokens 1 --max-tokens 1");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    for (const char* row : {"\nITL  ", "\nTPOT  "}) {
        const auto at = r.output.find(row);
        REQUIRE(at != std::string::npos);
        const std::string line = r.output.substr(at + 1, r.output.find('\n', at + 1) - at - 1);
        CHECK(line.find("        -         -         -         -         -  ") != std::string::npos);
        CHECK(line.find("(none measured in this run)") != std::string::npos);
    }
    CHECK(r.output.find("\nTTFT (from arrival)  ") != std::string::npos);
    // And in JSON, null where the table has dashes (it had 0.0 ms, and -1
    // for a request's TPOT).
    const auto j = nlohmann::json::parse(traffic("--count 5 --min-tokens 1 --max-tokens 1 --json").output);
    for (const auto& l : j["latencies"]) {
        CAPTURE(l.dump());
        const bool none = l["key"] == "itl" || l["key"] == "tpot";
        CHECK(l["count"] == (none ? 0 : 5));
        for (const char* figure : {"mean", "p50", "p90", "p99", "max"}) CHECK(l[figure].is_null() == none);
    }
    REQUIRE(j["requests"].size() == 5);
    for (const auto& q : j["requests"]) {
        CHECK(q["tpot_ms"].is_null());
        CHECK(q["ttft_ms"].get<double>() > 0);
    }
}

TEST_CASE("cli traffic: --json carries definitions, requests and the step timeline") {
    const auto r = traffic("--rate 20 --count 6 --max-tokens 6 --policy static --prefix-cache --shared-prefix 40 --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.output);
    CHECK(j["requests"].size() == 6);
    CHECK(j["latencies"][0]["key"] == "ttft");
    CHECK_FALSE(j["latencies"][0]["definition"].get<std::string>().empty());
    bool cached = false;
    for (const auto& t : j["totals"])
        if (t["key"] == "prefix_cached") cached = t["value"].get<double>() > 0;
    CHECK(cached);
    CHECK(j["steps"]["rows"].size() > 0);
    CHECK(j["steps"]["columns"][0] == "t_ms");
}

TEST_CASE("cli traffic: --compare-contiguous prints both layouts side by side") {
    const auto r = traffic("--rate 50 --count 10 --max-tokens 16 --kv-blocks 32 --compare-contiguous");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(r.output.find("contiguous vs paged KV") != std::string::npos);
    CHECK(r.output.find("internal fragmentation") != std::string::npos);
    CHECK(r.output.find("external fragmentation") != std::string::npos);
}

TEST_CASE("cli traffic: bad input is one clear error and exit code 2") {
    const fs::path dir = sixstep::test::process_temp_dir("traffic-cli");
    const std::string trace = (dir / "bad.txt").string();
    std::ofstream(trace) << "0 4 fine\n10 x broken\n";
    const std::pair<std::string, std::string> cases[] = {
        {"--rate 0", "rate 0: the arrival rate must be a positive number of requests per second"},
        {"--rate -3", "rate -3: the arrival rate must be a positive number of requests per second"},
        {"--count 0", "count 0: ask for 1 to 100000 requests"},
        {"--count 1000000000", "count 1000000000: ask for 1 to 100000 requests"},
        {"--max-batch 64 --kv-blocks 16", "max batch 64 is beyond the KV capacity: 16 blocks"},
        {"--arrivals trace:" + trace, trace + ":2:4: max tokens 'x' must be a whole number from 1 to 1048576"},
        {"--arrivals trace:/nonexistent.txt", "/nonexistent.txt: cannot open the trace file: No such file or directory"},
        {"--arrivals sometimes", "--arrivals sometimes: use poisson, bursty or trace:FILE"},
        {"--policy greedy", "--policy greedy: use static or continuous"},
        {"--kv-blocks 2 --max-batch 1 --max-tokens 64", "it could never finish; raise kv_blocks or lower max_tokens (--kv-blocks, --max-tokens on the command line)"},
        {"--block-size 0", "block size 0: a block holds 1 to 4096 positions"},
        {"--block-size 2147483647", "block size 2147483647: a block holds 1 to 4096 positions"},
        {"--arrivals trace:" + trace + " --rate 5", "--rate: trace arrivals take their times and count from the file"},
        {"--burstiness 0.5", "--burstiness: only bursty arrivals have a burstiness (--arrivals bursty)"},
        // Options the run would not read, refused rather than ignored.
        {"--arrivals trace:" + trace + " --max-tokens 5", "--max-tokens: trace arrivals take each request's tokens from the file"},
        {"--arrivals trace:" + trace + " --min-tokens 2", "--min-tokens: trace arrivals take each request's tokens from the file"},
        {"--policy static --step-tokens 16", "--step-tokens: static batching reads whole prompts in one pass"},
        {"--shared-fraction 0.5", "--shared-fraction: there is no shared prefix to share; add --system-prompt TEXT or --shared-prefix N"},
        {"--shared-prefix 0 --shared-fraction 0.5", "--shared-fraction: there is no shared prefix to share"},
        {"--system-prompt ''", "--system-prompt: an empty text puts nothing in front of the prompts"},
    };
    for (const auto& entry : cases) {
        const auto& args = entry.first;
        const auto& message = entry.second;
        const bool sized = args.find("--count") != std::string::npos || args.find("trace:") != std::string::npos;
        const auto r = traffic(sized ? args : "--count 3 " + args);
        INFO(args << " → " << r.output);
        CHECK(r.exit_code == 2);
        CHECK(r.output.find(message) != std::string::npos);
        CHECK(r.output.find("sixstep: error:") != std::string::npos);
    }
}

}  // namespace traffic_cli_test
