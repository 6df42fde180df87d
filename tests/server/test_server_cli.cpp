// `sixstep serve` and `sixstep load` as a user runs them: a server on an
// ephemeral loopback port, a few seconds of Poisson load against it with
// every figure checked for consistency, SIGTERM answered by a clean exit, and
// bad arguments refused with exit code 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_command.h"
#include "temp_dir.h"

using sixstep::test::run_command;
using sixstep::test::sixstep_cmd;
using Json = nlohmann::json;

namespace {

const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("cli serve + load: a few seconds of Poisson load, every request answered, then SIGTERM stops it") {
    const auto dir = sixstep::test::process_temp_dir("server-cli");
    const std::string out = (dir / "serve.out").string(), err = (dir / "serve.err").string();
    const std::string load_json = (dir / "load.json").string();
    // The server prints its port; load runs against it; then SIGTERM. The
    // whole script is bounded by timeout(1).
    const std::string script =
        "timeout 60 sh -c '" + sixstep_cmd("serve -m \"" + model + "\" --port 0 -t 1 --max-batch 4") + " >" + out +
        " 2>" + err + " & p=$!; i=0; while ! grep -q http " + out + "; do i=$((i+1)); [ $i -gt 200 ] && exit 9; sleep 0.05; done; "
        "port=$(sed -n \"s/.*127.0.0.1:\\([0-9]*\\).*/\\1/p\" " + out + "); " +
        sixstep_cmd("load --url http://127.0.0.1:$port --rate 8 --duration 3 --max-tokens 16 --json") + " >" +
        load_json + "; echo load-exit=$?; kill -TERM $p; wait $p; echo serve-exit=$?'";
    const auto r = run_command(script);
    INFO(r.output << "\nserve stderr:\n" << read_file(err));
    CHECK(r.output.find("load-exit=0") != std::string::npos);
    CHECK(r.output.find("serve-exit=0") != std::string::npos);
    CHECK(read_file(err).find("SIGTERM") != std::string::npos);
    const Json j = Json::parse(read_file(load_json), nullptr, false);
    REQUIRE(j.is_object());
    CHECK(j["model"] == "stories-3m-f16");
    std::map<std::string, double> totals;
    for (const Json& t : j["totals"]) totals[t["key"]] = t["value"];
    CHECK(totals["requests"] >= 5);  // 8/s for 3 s: about 24
    CHECK(totals["completed"] == totals["requests"]);
    CHECK(totals["failed"] == 0);
    CHECK(totals["output_throughput"] > 0);
    CHECK(totals["request_throughput"] == doctest::Approx(totals["completed"] / totals["duration"]));
    for (const Json& l : j["latencies"]) {
        INFO(l["key"]);
        if (l["key"] == "ttft" || l["key"] == "e2e") CHECK(l["count"] == totals["completed"] - totals["no_text"]);
        if (l["count"] == 0) continue;
        CHECK(l["p50"] <= l["p90"]);
        CHECK(l["p90"] <= l["p99"]);
        CHECK(l["p99"] <= l["max"]);
        // Stream events that reach the client in one read share a timestamp:
        // on a busy machine most inter-token gaps can be 0 (README, "load").
        if (l["key"] == "itl") CHECK(l["p50"].get<double>() >= 0);
        else CHECK(l["p50"].get<double>() > 0);
    }
    // TTFT never exceeds E2E, request by request.
    for (const Json& q : j["requests"]) {
        CHECK(q["ok"] == true);
        CHECK(q["ttft_ms"].get<double>() <= q["done_ms"].get<double>() - q["sent_ms"].get<double>());
    }
}

// Each header line restarts the server's read timeout: a client sending one
// every half second kept its connection's thread, and so the process, alive
// 52 s after SIGTERM. Every answer is out when the grace ends; then it exits.
TEST_CASE("cli serve: SIGTERM ends the process even while a client is still sending its header, line by line") {
    const auto dir = sixstep::test::process_temp_dir("server-cli-trickle");
    const std::string out = (dir / "serve.out").string(), err = (dir / "serve.err").string();
    // bash for /dev/tcp; the client would go on for 40 s, timeout(1) ends all at 30.
    const std::string script =
        "timeout 30 bash -c '" + sixstep_cmd("serve -m \"" + model + "\" --port 0 -t 1 --shutdown-grace 0") + " >" + out +
        " 2>" + err + " & p=$!; i=0; while ! grep -q http " + out + "; do i=$((i+1)); [ $i -gt 200 ] && exit 9; sleep 0.05; done; "
        "port=$(sed -n \"s/.*127.0.0.1:\\([0-9]*\\).*/\\1/p\" " + out + "); "
        "exec 3<>/dev/tcp/127.0.0.1/$port; printf \"GET /health HTTP/1.1\\r\\n\" >&3; "
        "(for i in $(seq 80); do printf \"X-Wait: a\\r\\n\" >&3 || exit 0; sleep 0.5; done) & t=$!; "
        "sleep 1; kill -TERM $p; wait $p; echo serve-exit=$?; kill $t 2>/dev/null; exit 0'";
    const auto r = run_command(script);
    INFO(r.output << "\nserve stderr:\n" << read_file(err));
    CHECK(r.output.find("serve-exit=0") != std::string::npos);
    // Its thread gives up reading at the stop: the listener ends by itself.
    CHECK(read_file(err).find("sixstep serve: stopped") != std::string::npos);
    CHECK(read_file(err).find("dropped the connections") == std::string::npos);
}

TEST_CASE("cli load: --model '' is refused, and counts print whole") {
    // "" fell back to the first model the server lists, without a word.
    auto r = run_command(sixstep_cmd("load --url http://127.0.0.1:1 --model '' --rate 1 --requests 1"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--model \"\": give a model name") != std::string::npos);
    // 20,000 requests to a port nobody listens on: each fails at once, and
    // the count reads 20000, not 2e+04.
    r = run_command(sixstep_cmd("load --url http://127.0.0.1:1 --model m --rate 1000000 --requests 20000"));
    INFO(r.output);
    CHECK(r.output.find("2e+04") == std::string::npos);
    CHECK(r.output.find("requests sent                 20000") != std::string::npos);
}

TEST_CASE("cli serve and load: bad arguments and unreachable servers exit 2 with one message") {
    auto r = run_command(sixstep_cmd("load --url http://127.0.0.1:1 --rate 1 --requests 1"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("cannot reach") != std::string::npos);
    r = run_command(sixstep_cmd("load --url ftp://x --rate 1 --requests 1"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--url ftp://x: use http://HOST:PORT") != std::string::npos);
    r = run_command(sixstep_cmd("load --url http://127.0.0.1:1 --rate 0 --requests 1"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--rate") != std::string::npos);
    r = run_command(sixstep_cmd("load --url http://127.0.0.1:1 --rate 1"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--duration") != std::string::npos);
    r = run_command(sixstep_cmd("load --url http://127.0.0.1:1 --rate 1 --duration 1 --exact-rate"));
    CHECK(r.exit_code == 2);  // the exact rate scales a count of requests, not a duration
    CHECK(r.output.find("--exact-rate") != std::string::npos);
    CHECK(r.output.find("--requests") != std::string::npos);
    r = run_command(sixstep_cmd("load --url http://127.0.0.1:1 --rate 1 --requests 1 --prompt-file /nonexistent/p.txt"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("/nonexistent/p.txt") != std::string::npos);
    r = run_command(sixstep_cmd("serve -m /nonexistent.gguf --port 0"));
    CHECK(r.exit_code == 2);
    r = run_command(sixstep_cmd("serve -m \"" + model + "\" --port 0 --max-batch 0"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("max batch") != std::string::npos);
    for (const char* name : {"''", "'   '", "' x'", "\"$(printf 'a\\033[31m')\""}) {
        r = run_command(sixstep_cmd("serve -m \"" + model + "\" --port 0 --name " + name));
        CHECK_MESSAGE(r.exit_code == 2, name);
        CHECK_MESSAGE(r.output.find("--name \"") != std::string::npos, name);
        CHECK(r.output.find('\x1b') == std::string::npos);
    }
    // 2^20 blocks of 4,096 positions: 8 TiB of KV cache when full, taken
    // without a word until memory ran out under load.
    r = run_command(sixstep_cmd("serve -m \"" + model + "\" --port 0 --kv-blocks 1048576 --block-size 4096"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("the KV pool holds 8 TiB when full, more than the") != std::string::npos);
    r = run_command(sixstep_cmd("serve -m \"" + model + "\" --host 203.0.113.1 --port 0"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("cannot listen") != std::string::npos);
}

TEST_CASE("cli check: a lesson whose endpoint url is malformed or answers nothing is invalid, exit 2, at the url") {
    const auto dir = sixstep::test::process_temp_dir("endpoint-cli");
    const std::string lesson = (dir / "remote.yaml").string();
    for (const auto& entry : {std::pair<std::string, std::string>{"http://127.0.0.1:1", "cannot reach"},
                              {"https://127.0.0.1:8080", "http://HOST:PORT"}}) {
        const auto& url = entry.first;
        const auto& why = entry.second;
        CAPTURE(url);
        std::ofstream(lesson) << "title: t\nmodel:\n  kind: endpoint\n  url: " << url
                              << "\nsteps:\n  - request: {utilizations: \"0.5\"}\n    run: all\n";
        for (const std::string& how : {std::string("check"), std::string("--headless")}) {
            const auto r = run_command(sixstep_cmd(how + " '" + lesson + "'"));
            INFO(r.output);
            CHECK(r.exit_code == 2);
            CHECK(r.output.find(lesson + ":4:8: ") != std::string::npos);
            CHECK(r.output.find(why) != std::string::npos);
        }
    }
}
