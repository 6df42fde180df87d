// `sixstep generate` and `sixstep bench` as a user runs them: exit codes,
// streamed text and timings, JSON, clear errors.
#include <doctest/doctest.h>

#include "temp_dir.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

struct Run {
    int rc = -1;
    std::string out;  // stdout and stderr together
};

Run run(const std::string& args) {
    Run r;
    const std::string cmd = std::string("\"") + SIXSTEP_BINARY + "\" " + args + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    std::array<char, 4096> buf{};
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = ::pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string tiny_model() {
    const fs::path dir = sixstep::test::process_temp_dir("cli");
    const fs::path path = dir / "tiny.gguf";
    if (!fs::exists(path)) {
        const Run w = run("bench --random tiny --type q8_0 --out \"" + path.string() + "\"");
        REQUIRE(w.rc == 0);
    }
    return path.string();
}

}  // namespace

TEST_CASE("cli generate: streams the text, then TTFT, TPOT and tokens/s") {
    const std::string model = tiny_model();
    const Run r = run("generate --model \"" + model + "\" --prompt \"Hello\" -n 5 --temp 0 --threads 2");
    CHECK(r.rc == 0);
    CHECK(r.out.rfind("Hello", 0) == 0);
    CHECK(r.out.find("TTFT") != std::string::npos);
    CHECK(r.out.find("TPOT") != std::string::npos);
    CHECK(r.out.find("tok/s") != std::string::npos);
    CHECK(r.out.find("stop: max_tokens") != std::string::npos);

    const Run top = run("generate --model \"" + model + "\" --prompt \"Hi\" -n 3 --top 4 --seed 1");
    CHECK(top.rc == 0);
    CHECK(top.out.find("[  2]") != std::string::npos);

    const Run js = run("generate --model \"" + model + "\" --prompt \"Hi\" -n 4 --temp 0 --top 2 --json");
    REQUIRE(js.rc == 0);
    const auto j = nlohmann::json::parse(js.out);
    CHECK(j["tokens"].size() == 4);
    CHECK(j["tokens"][0]["top"].size() == 2);
    CHECK(j["timings"]["ttft_ms"].get<double>() > 0);
    CHECK(j["stop_reason"] == "max_tokens");
}

// TPOT is the time per token after the first: one token has none, and
// "TPOT 0.00 ms (0.0 tok/s)" was a made-up figure.
TEST_CASE("cli generate: one token has no TPOT, in the text and in the JSON") {
    const std::string model = tiny_model();
    const Run r = run("generate --model \"" + model + "\" --prompt \"Hello\" -n 1 --temp 0");
    CHECK(r.rc == 0);
    CHECK(r.out.find("no TPOT (one token)") != std::string::npos);
    CHECK(r.out.find("TPOT 0.00") == std::string::npos);
    CHECK(r.out.find("| 1 token in") != std::string::npos);  // not "1 tokens"
    const Run js = run("generate --model \"" + model + "\" --prompt \"Hello\" -n 1 --temp 0 --json");
    REQUIRE(js.rc == 0);
    const auto j = nlohmann::json::parse(js.out);
    CHECK(j["timings"]["n_generated"] == 1);
    CHECK(j["timings"]["tpot_ms"].is_null());
    CHECK(j["timings"]["decode_tok_s"].is_null());
    // Two tokens or more: a TPOT, a number.
    const auto two = nlohmann::json::parse(run("generate --model \"" + model + "\" --prompt \"Hello\" -n 2 --temp 0 --json").out);
    CHECK(two["timings"]["tpot_ms"].is_number());
}

TEST_CASE("cli generate: a context past the trained one runs with a warning, and within it with none") {
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";  // trained on 512
    const Run past = run("generate --model \"" + model + "\" --prompt \"Once upon a time\" -n 2 --temp 0 -c 1000");
    CHECK(past.rc == 0);
    CHECK(past.out.find("sixstep: warning: -c 1000 is past the 512 positions the model was trained on") !=
          std::string::npos);
    const Run within = run("generate --model \"" + model + "\" --prompt \"Once upon a time\" -n 2 --temp 0 -c 512");
    CHECK(within.rc == 0);
    CHECK(within.out.find("warning") == std::string::npos);
}

TEST_CASE("cli generate: bad input exits 2 with one clear message") {
    const std::string model = tiny_model();
    Run r = run("generate --model \"" + model + "\" --prompt \"\"");
    CHECK(r.rc == 2);
    CHECK(r.out == "sixstep: error: prompt is empty: give at least one character to continue from\n");
    r = run("generate --model \"" + model + "\" --prompt \"Hello\" -n 1000");
    CHECK(r.rc == 2);
    CHECK(r.out.find("sixstep: error: prompt (5 tokens) + n (1000) does not fit in the context of 256 tokens") == 0);
    r = run("generate --model \"" + model + "\" --prompt \"Hello\" -c 4");
    CHECK(r.rc == 2);
    CHECK(r.out.find("sixstep: error: prompt is 5 tokens but the context holds 4 (n_ctx)") == 0);
    r = run("generate --model /nonexistent.gguf --prompt \"Hello\"");
    CHECK(r.rc == 2);
    CHECK(r.out.find("sixstep: error: ") == 0);
    r = run("generate --prompt \"Hello\"");
    CHECK(r.rc == 2);
}

TEST_CASE("cli bench: prefill and decode tokens/s, as a table and as JSON") {
    const std::string model = tiny_model();
    const Run t = run("bench --model \"" + model + "\" -p 16 -n 8 -r 2 -t 2");
    CHECK(t.rc == 0);
    CHECK(t.out.find("pp16") != std::string::npos);
    CHECK(t.out.find("tg8") != std::string::npos);
    CHECK(t.out.find("passes on one thread: ") != std::string::npos);  // two threads: how often the pool used one
    {
        // A table: the header, the rule and both rows equally wide, counted
        // in characters ("±" is two bytes), whatever the rates' widths.
        std::istringstream lines(t.out);
        std::string line;
        std::vector<std::size_t> widths;
        while (std::getline(lines, line) && line.rfind('|', 0) == 0) {
            std::size_t chars = 0;
            for (const unsigned char c : line) chars += (c & 0xC0) != 0x80;
            widths.push_back(chars);
        }
        REQUIRE(widths.size() == 4);
        CHECK(widths[1] == widths[0]);
        CHECK(widths[2] == widths[0]);
        CHECK(widths[3] == widths[0]);
    }
    const Run js = run("bench --model \"" + model + "\" -p 16 -n 8 -r 2 -t 2 --json");
    REQUIRE(js.rc == 0);
    const auto j = nlohmann::json::parse(js.out);
    REQUIRE(j["results"].size() == 2);
    CHECK(j["results"][0]["test"] == "pp16");
    CHECK(j["results"][0]["tokens_per_s"].get<double>() > 0);
    CHECK(j["type"] == "q8_0");
    const double one = j["passes_on_one_thread"].get<double>(), no_cpu = j["passes_on_one_thread_no_cpu_free"].get<double>();
    CHECK(one >= 0);
    CHECK(one <= 1);
    CHECK(no_cpu <= one);
    // Decode reads every tensor except the embedding table, of which one row:
    // tiny is untied, its table 512 rows of 64 values in Q8_0 (2 blocks, 68 bytes).
    CHECK(j["decode_weight_bytes"].get<std::uint64_t>() == j["size_bytes"].get<std::uint64_t>() - 512 * 68 + 68);
    // The CPU's copy: every matrix a pass multiplies, interleaved (Q8_0), not
    // the embedding table; some of it on huge pages, never more than all.
    const auto copied = j["cpu_weights_bytes"].get<std::uint64_t>();
    CHECK(copied >= j["decode_weight_bytes"].get<std::uint64_t>() - 68 - 4096);  // less the norms and one row
    CHECK(copied < j["size_bytes"].get<std::uint64_t>());
    CHECK(j["cpu_weights_on_huge_pages_bytes"].get<std::uint64_t>() <= copied);
    CHECK(t.out.find("the CPU's copy of the weights: ") != std::string::npos);
    const Run bad = run("bench --model \"" + model + "\" -p 100000");
    CHECK(bad.rc == 2);
    CHECK(bad.out.find("do not fit in the model's context") != std::string::npos);
}

namespace {

// A short bench of the tiny model with one environment variable set.
Run bench_with(const char* variable, const char* value, const std::string& flags) {
    ::setenv(variable, value, 1);
    const Run r = run("bench --model \"" + tiny_model() + "\" -p 4 -n 2 -r 1" + flags);
    ::unsetenv(variable);
    return r;
}

}  // namespace

TEST_CASE("cli bench: SIXSTEP_CPU forces the CPU kernels, and names a bad value in one clear error") {
    const Run scalar = bench_with("SIXSTEP_CPU", "scalar", " --json");
    const Run bad = bench_with("SIXSTEP_CPU", "avx9", "");
    REQUIRE(scalar.rc == 0);
    CHECK(nlohmann::json::parse(scalar.out)["backend"].get<std::string>().find("scalar") != std::string::npos);
    CHECK(bad.rc == 2);
    CHECK(bad.out.find("SIXSTEP_CPU=\"avx9\" is not a CPU level (use scalar, avx2 or avx512)") != std::string::npos);
}

TEST_CASE("cli bench: SIXSTEP_WEIGHTS=mapped leaves the weights in the mapping, and a bad value is one clear error") {
    // tiny is Q8_0: its interleaved rows are still made, on plain pages.
    const Run mapped = bench_with("SIXSTEP_WEIGHTS", "mapped", " --json");
    const Run bad = bench_with("SIXSTEP_WEIGHTS", "paged", "");
    REQUIRE(mapped.rc == 0);
    CHECK(nlohmann::json::parse(mapped.out)["cpu_weights_on_huge_pages_bytes"] == 0);
    CHECK(bad.rc == 2);
    CHECK(bad.out.find("SIXSTEP_WEIGHTS=\"paged\" is not a choice (use copied or mapped)") != std::string::npos);
}

TEST_CASE("cli bench: a 100 kB value of SIXSTEP_CPU or SIXSTEP_WEIGHTS is named in one short line") {
    const std::string long_value(100000, 'x');
    for (const char* variable : {"SIXSTEP_CPU", "SIXSTEP_WEIGHTS"}) {
        CAPTURE(variable);
        const Run r = bench_with(variable, long_value.c_str(), "");
        CHECK(r.rc == 2);
        CHECK(r.out.find(std::string(variable) + "=\"xxx") != std::string::npos);
        CHECK(r.out.find("bytes left out") != std::string::npos);
        CHECK(r.out.size() < 300);
    }
}

TEST_CASE("cli bench --contention: decode on 1 and N threads, quiet and beside CPU hogs") {
    const std::string model = tiny_model();
    const Run js = run("bench --model \"" + model + "\" --contention --hogs 1 -n 4 -r 3 --slices 2 -t 2 --json");
    REQUIRE(js.rc == 0);
    const auto j = nlohmann::json::parse(js.out);
    CHECK(j["hogs"] == 1);
    CHECK(j["test"] == "tg4");
    CHECK(j["rounds"] == 3);
    CHECK(j["slices"] == 2);
    REQUIRE(j["results"].size() == 2);
    CHECK(j["results"][0]["threads"] == 1);
    CHECK(j["results"][1]["threads"] == 2);
    // Every round measured both counts; the reported figures are the rounds' medians.
    for (const std::string phase : {"quiet", "hogged"}) {
        std::vector<double> rounds[2];
        for (std::size_t i = 0; i < 2; ++i) {
            rounds[i] = j["results"][i][phase + "_rounds"].get<std::vector<double>>();
            REQUIRE(rounds[i].size() == 3);
            for (double x : rounds[i]) CHECK(x > 0);
            auto sorted = rounds[i];
            std::sort(sorted.begin(), sorted.end());
            CHECK(j["results"][i][phase + "_tokens_per_s"].get<double>() == doctest::Approx(sorted[1]));
        }
        std::vector<double> r;
        for (std::size_t k = 0; k < 3; ++k) r.push_back(rounds[1][k] / rounds[0][k]);
        std::sort(r.begin(), r.end());
        CHECK(j["ratio"][phase + "_median"].get<double>() == doctest::Approx(r[1]));
        CHECK(j["ratio"][phase + "_lowest"].get<double>() == doctest::Approx(r[0]));
        // Our threads' seconds on a CPU and waiting for one, per second: runs
        // this short say nothing (null; the kernel updates a running
        // thread's sums only every few ms); the sums themselves are tested in
        // tests/tools/test_thread_times.cpp.
        for (std::size_t i = 0; i < 2; ++i) {
            CHECK(j["results"][i][phase + "_on_cpu_per_s"].is_null());
            CHECK(j["results"][i][phase + "_waiting_per_s"].is_null());
        }
        // The share of passes the 2-thread pool ran on one thread; one thread has no choice.
        CHECK(j["results"][0][phase + "_passes_on_one_thread"] == 0.0);
        const double solo = j["results"][1][phase + "_passes_on_one_thread"].get<double>();
        CHECK(solo >= 0.0);
        CHECK(solo <= 1.0);
    }
    const Run table = run("bench --model \"" + model + "\" --contention --hogs 1 -n 4 -r 1 --slices 1 -t 2");
    CHECK(table.rc == 0);
    CHECK(table.out.find("beside 1 CPU hog |") != std::string::npos);
    CHECK(table.out.find("2 threads ÷ 1 thread, round by round:") != std::string::npos);
    CHECK(table.out.find("our threads per second of decode") == std::string::npos);
    // Too short to time the threads (or no per-thread schedstat): said, not left out.
    CHECK(table.out.find("our threads' time on a CPU and waiting for one: not measured (") != std::string::npos);
    CHECK(table.out.find("passes 2 threads ran on one thread (no CPU free, or timed faster there): quiet ") !=
          std::string::npos);
    // Without -n, slices of 32 tokens.
    const Run short_slices = run("bench --model \"" + model + "\" --contention --hogs 1 -r 1 --slices 1 -t 2 --json");
    REQUIRE(short_slices.rc == 0);
    CHECK(nlohmann::json::parse(short_slices.out)["test"] == "tg32");
}

TEST_CASE("cli bench --contention -t 1: one thread against a second 1-thread backend, the noise of the method") {
    const std::string model = tiny_model();
    const Run js = run("bench --model \"" + model + "\" --contention --hogs 1 -n 4 -r 2 --slices 2 -t 1 --json");
    REQUIRE(js.rc == 0);
    const auto j = nlohmann::json::parse(js.out);
    REQUIRE(j["results"].size() == 2);
    CHECK(j["results"][0]["threads"] == 1);
    CHECK(j["results"][1]["threads"] == 1);
    CHECK(j["ratio"]["hogged_median"].get<double>() > 0);
    const Run table = run("bench --model \"" + model + "\" --contention --hogs 1 -n 4 -r 1 --slices 1 -t 1");
    CHECK(table.rc == 0);
    CHECK(table.out.find("1 thread ÷ 1 thread, round by round (a second backend alike: the noise of the method)") !=
          std::string::npos);
    CHECK(table.out.find("ran on one thread") == std::string::npos);
    const Run bad = run("bench --model \"" + model + "\" --contention --slices 0");
    CHECK(bad.rc == 2);
}

#if defined(__linux__)
TEST_CASE("cli bench --contention: runs long enough report our threads' seconds on a CPU and waiting for one") {
    // Eight decodes of 200 tokens of the bundled model take well over the
    // 50 ms a figure needs (one took 20 ms at 10,000 tokens/s, and the
    // seconds on a CPU come in ticks of 10 ms).
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    const Run js = run("bench --model \"" + model + "\" --contention --hogs 1 -n 200 -r 1 --slices 8 -t 2 --json");
    REQUIRE(js.rc == 0);
    const auto j = nlohmann::json::parse(js.out);
    REQUIRE(j["results"].size() == 2);
    for (const std::string phase : {"quiet", "hogged"})
        for (std::size_t i = 0; i < 2; ++i) {
            INFO(phase << ", " << j["results"][i]["threads"]);
            const double on = j["results"][i][phase + "_on_cpu_per_s"].get<double>();
            const double wait = j["results"][i][phase + "_waiting_per_s"].get<double>();
            // Some CPU time for a decode, and never more than one second per
            // thread per second (a fifth of slack: the sums lag by a tick).
            CHECK(on > 0);
            CHECK(on <= 1.2 * j["results"][i]["threads"].get<double>());
            CHECK(wait >= 0);
        }
}
#endif
