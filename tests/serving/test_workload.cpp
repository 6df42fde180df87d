// Arrivals, trace files and workloads: seeded, checked, and every bad line
// named by file:line:column.
#include <doctest/doctest.h>

#include "error_of.h"
#include "serving_fixture.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <numeric>

#include "pipeline/core/error.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/text_codec.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/serving/bundled_model.h"
#include "pipeline/serving/arrivals.h"
#include "pipeline/serving/trace_file.h"
#include "pipeline/serving/workload.h"

using namespace sixstep::serving;
using sixstep::test::error_of;

namespace {

// Mean and coefficient of variation of the gaps.
std::pair<double, double> gap_stats(const std::vector<double>& t) {
    std::vector<double> gaps;
    for (std::size_t i = 1; i < t.size(); ++i) gaps.push_back(t[i] - t[i - 1]);
    const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / static_cast<double>(gaps.size());
    double var = 0;
    for (double g : gaps) var += (g - mean) * (g - mean);
    var /= static_cast<double>(gaps.size() - 1);
    return {mean, std::sqrt(var) / mean};
}

}  // namespace

TEST_CASE("arrivals: Poisson and bursty keep the mean rate, bursty gaps vary more, a seed repeats") {
    ArrivalParams p{.kind = ArrivalKind::poisson, .rate = 4, .count = 20000, .seed = 3};
    const std::vector<double> t = arrival_times_ms(p);
    CHECK(t.front() == 0);
    CHECK(std::is_sorted(t.begin(), t.end()));
    const auto [mean, cv] = gap_stats(t);
    MESSAGE("poisson: mean gap " << mean << " ms (expect 250), CV " << cv << " (expect 1)");
    CHECK(mean == doctest::Approx(250).epsilon(0.03));  // 20,000 gaps: standard error ~0.7%
    CHECK(cv == doctest::Approx(1).epsilon(0.05));
    CHECK(arrival_times_ms(p) == t);
    p.seed = 4;
    CHECK(arrival_times_ms(p) != t);

    p.kind = ArrivalKind::bursty;
    p.burstiness = 0.25;
    const auto [bmean, bcv] = gap_stats(arrival_times_ms(p));
    MESSAGE("bursty 0.25: mean gap " << bmean << " ms, CV " << bcv << " (expect 2)");
    CHECK(bmean == doctest::Approx(250).epsilon(0.06));
    CHECK(bcv == doctest::Approx(2).epsilon(0.1));
}

TEST_CASE("arrivals: a rate <= 0, a count of 0 or an absurd one, a bad burstiness are errors") {
    ArrivalParams p;
    p.rate = 0;
    CHECK(error_of([&] { arrival_times_ms(p); }) ==
          "rate 0: the arrival rate must be a positive number of requests per second");
    p.rate = -2;
    CHECK(error_of([&] { arrival_times_ms(p); }) ==
          "rate -2: the arrival rate must be a positive number of requests per second");
    p.rate = std::nan("");
    CHECK(error_of([&] { arrival_times_ms(p); }) ==
          "rate nan: the arrival rate must be a positive number of requests per second");
    p.rate = 1;
    p.count = 0;
    CHECK(error_of([&] { arrival_times_ms(p); }) == "count 0: ask for 1 to 100000 requests");
    p.count = 100000000;
    CHECK(error_of([&] { arrival_times_ms(p); }) == "count 100000000: ask for 1 to 100000 requests");
    p.count = 10;
    p.kind = ArrivalKind::bursty;
    p.burstiness = 0;
    CHECK(error_of([&] { arrival_times_ms(p); }) == "burstiness 0: must be in [0.01, 1] (1 is Poisson; smaller is burstier)");
    p.burstiness = 1e-300;  // every gap ~0: all 200 requests at t = 0, "3051 req/s" for a rate of 1
    CHECK(error_of([&] { arrival_times_ms(p); }) ==
          "burstiness 1e-300: must be in [0.01, 1] (1 is Poisson; smaller is burstier)");
    p.burstiness = 0.5;
    p.rate = 1e-300;  // a virtual clock of 10³⁰⁰ seconds, printed in full
    CHECK(error_of([&] { arrival_times_ms(p); }) ==
          "rate 1e-300: the arrival rate must be 1e-06 to 1e+09 requests per second");
}

TEST_CASE("arrivals: a rate per E2E alone is that many requests in the time one took, within the same range") {
    CHECK(rate_per_e2e_alone(2, 12.5) == 160);  // two per 12.5 ms
    CHECK(rate_per_e2e_alone(0.5, 1000) == 0.5);
    CHECK(error_of([] { rate_per_e2e_alone(1000000, 0.5); }) ==
          "\"rate\" 1e+06 per E2E alone (0.5 ms here) is 2e+09 requests a second, outside 1e-06 to 1e+09");
    CHECK(error_of([] { rate_per_e2e_alone(1e-6, 2000); }).find("is 5e-07 requests a second, outside") !=
          std::string::npos);
    CHECK(error_of([] { rate_per_e2e_alone(1, 0); }).find("outside") != std::string::npos);  // an instant E2E
}

TEST_CASE("arrivals: the ends of each documented range are accepted") {
    // count 1 .. 100,000, rate 1e-6 .. 1e9 per second, burstiness 0.01 .. 1: inclusive.
    ArrivalParams p{.kind = ArrivalKind::bursty, .rate = 1, .burstiness = 0.01, .count = max_request_count};
    CHECK(arrival_times_ms(p).size() == 100000u);
    p.count = 1;
    p.burstiness = 1;
    CHECK(arrival_times_ms(p) == std::vector<double>{0});
    p.count = 3;
    p.rate = min_arrival_rate;
    CHECK(arrival_times_ms(p).size() == 3u);
    p.rate = max_arrival_rate;
    CHECK(arrival_times_ms(p).size() == 3u);
}

TEST_CASE("trace files: fields, escapes, comments and blank lines") {
    const auto e = parse_trace("# arrival_ms max_tokens prompt\n"
                               "0 32 Once upon a time\n"
                               "\n"
                               "   # indented comment\r\n"
                               "12.5\t4\tThe cat  sat\\non the \\\\ mat\r\n"
                               "12.5 1 x",
                               "t.txt");
    REQUIRE(e.size() == 3);
    CHECK(e[0].arrival_ms == 0);
    CHECK(e[0].max_tokens == 32);
    CHECK(e[0].prompt == "Once upon a time");
    CHECK(e[0].line == 2);
    CHECK(e[1].arrival_ms == 12.5);
    CHECK(e[1].prompt == "The cat  sat\non the \\ mat");
    CHECK(e[1].line == 5);
    CHECK(e[2].prompt == "x");
}

// Saved by an editor that writes a UTF-8 byte-order mark: the mark is not
// part of the first arrival time, and columns on line 1 count after it.
TEST_CASE("trace files: a UTF-8 byte-order mark before the first line is skipped") {
    const auto e = parse_trace("\xEF\xBB\xBF" "0 8 Once upon a time\n5 4 The cat\n", "t.txt");
    REQUIRE(e.size() == 2);
    CHECK(e[0].arrival_ms == 0);
    CHECK(e[0].prompt == "Once upon a time");
    CHECK(error_of([] { parse_trace("\xEF\xBB\xBF" "0 many hello", "t.txt"); }) ==
          "t.txt:1:3: max tokens 'many' must be a whole number from 1 to 1048576");
}

TEST_CASE("trace files: each bad line gives file:line(:column) and what is wrong") {
    auto bad = [](const std::string& text) { return error_of([&] { parse_trace(text, "t.txt"); }); };
    CHECK(bad("0 4 ok\nsoon 4 hello\n") == "t.txt:2:1: arrival time 'soon' is not a number of milliseconds");
    CHECK(bad("  -5 4 hello") == "t.txt:1:3: arrival time -5 ms is before the start (>= 0)");
    CHECK(bad("10 4 a\n5 4 b") == "t.txt:2:1: arrival time 5 ms comes before line 1's 10 ms (a trace is in arrival order)");
    CHECK(bad("0 0 hello") == "t.txt:1:3: max tokens '0' must be a whole number from 1 to 1048576");
    CHECK(bad("0 2.5 hello") == "t.txt:1:3: max tokens '2.5' must be a whole number from 1 to 1048576");
    CHECK(bad("0 many hello") == "t.txt:1:3: max tokens 'many' must be a whole number from 1 to 1048576");
    CHECK(bad("0 99999999999 hello") == "t.txt:1:3: max tokens '99999999999' must be a whole number from 1 to 1048576");
    CHECK(bad("1e308 4 hello") == "t.txt:1:1: arrival time 1e308 ms is after the longest trace (1e+09 ms, 11.6 days)");
    CHECK(bad("0") == "t.txt:1: no max tokens and prompt after the arrival time");
    CHECK(bad("0 4   ") == "t.txt:1: no prompt after the max tokens");
    CHECK(bad("0 4 say \\q") == "t.txt:1:9: unknown escape '\\q' in the prompt (use \\n, \\t or \\\\)");
    // Columns count characters, as a lesson's errors do: é is two bytes, one column.
    CHECK(bad("0 4 h\u00e9llo \\x") == "t.txt:1:11: unknown escape '\\x' in the prompt (use \\n, \\t or \\\\)");
    CHECK(bad("12abc 4 x") == "t.txt:1:1: arrival time '12abc' is not a number of milliseconds");
    CHECK(bad("# nothing\n\n") == "t.txt: no requests (every line is blank or a comment)");
    CHECK(error_of([] { load_trace("/nonexistent/trace.txt"); }) == "/nonexistent/trace.txt: cannot open the trace file: No such file or directory");
}

TEST_CASE("workload: a shared prefix is the same tokens in every prompt that carries it, with one BOS") {
    sixstep::test::TinyModel m;
    WorkloadParams w;
    w.arrivals = {.kind = ArrivalKind::poisson, .rate = 10, .count = 40, .seed = 2};
    w.max_tokens = 16;
    w.shared_prefix = 30;
    w.shared_fraction = 0.5;
    const auto reqs = make_workload(w, *m.codec, m.bos());
    REQUIRE(reqs.size() == 40);
    int shared = 0;
    const RequestSpec* first = nullptr;
    for (const RequestSpec& r : reqs) {
        CHECK(r.max_tokens >= 4);  // max / 4
        CHECK(r.max_tokens <= 16);
        if (!r.shares_prefix) continue;
        ++shared;
        if (!first) first = &r;
        CHECK(std::equal(first->prompt.begin(), first->prompt.begin() + 30, r.prompt.begin()));
        CHECK(r.prompt.size() > 30u);
        if (m.bos() >= 0) CHECK(std::count(r.prompt.begin(), r.prompt.end(), m.bos()) == 1);
    }
    CHECK(shared > 10);
    CHECK(shared < 30);
    CHECK(make_workload(w, *m.codec, m.bos())[7].prompt == reqs[7].prompt);  // seeded

    w.system_prompt = "Be kind.";
    CHECK(error_of([&] { make_workload(w, *m.codec, m.bos()); }) ==
          "give either a system prompt or a shared prefix length, not both");
    w.system_prompt.clear();
    w.shared_fraction = 2;
    CHECK(error_of([&] { make_workload(w, *m.codec, m.bos()); }) == "shared fraction 2: must be in [0, 1]");
    w.shared_fraction = 1;
    w.max_tokens = 0;
    CHECK(error_of([&] { make_workload(w, *m.codec, m.bos()); }) == "max tokens 0: ask for at least one token");
}

TEST_CASE("workload: a trace gives the times, prompts and lengths, and its errors keep file:line") {
    sixstep::test::TinyModel m;
    const auto dir = sixstep::test::process_temp_dir("serving");
    const auto path = (dir / "trace.txt").string();
    std::ofstream(path) << "0 3 hello\n40 5 world\n";
    WorkloadParams w;
    w.arrivals.kind = ArrivalKind::trace;
    w.trace_file = path;
    const auto reqs = make_workload(w, *m.codec, m.bos());
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[1].arrival_ms == 40);
    CHECK(reqs[1].max_tokens == 5);
    CHECK(reqs[1].prompt == m.codec->encode("world"));
    CHECK(reqs[1].origin == path + ":2");
    std::ofstream(path) << "0 3 hello\nforty 5 world\n";
    CHECK(error_of([&] { make_workload(w, *m.codec, m.bos()); }) ==
          path + ":2:1: arrival time 'forty' is not a number of milliseconds");
}

TEST_CASE("workload: lengths are drawn from min to max tokens, min defaulting to a quarter of max") {
    sixstep::test::TinyModel m;
    WorkloadParams w;
    w.arrivals = {.kind = ArrivalKind::poisson, .rate = 10, .count = 400, .seed = 3};
    w.max_tokens = 16;
    const auto lengths = [&] {
        std::vector<int> n;
        for (const RequestSpec& r : make_workload(w, *m.codec, m.bos())) n.push_back(r.max_tokens);
        return n;
    };
    // 400 uniform draws from 4..16: each end is drawn (missing one has odds of (12/13)^400).
    std::vector<int> n = lengths();
    CHECK(*std::min_element(n.begin(), n.end()) == 4);
    CHECK(*std::max_element(n.begin(), n.end()) == 16);
    // min = max: every request asks for exactly that many.
    w.min_tokens = 16;
    n = lengths();
    CHECK(std::count(n.begin(), n.end(), 16) == 400);
    w.min_tokens = 17;
    CHECK(error_of([&] { make_workload(w, *m.codec, m.bos()); }) == "min tokens 17: must be in 1 .. max tokens (16)");
}

TEST_CASE("workload: a shared prefix is exactly its length in tokens, shorter than the context, with one BOS") {
    // The bundled vocabulary puts a BOS first: the joined prompts keep one, at the start.
    const auto file = sixstep::llm::GGUFFile::open(bundled_model_path());
    const auto vocab = std::make_shared<const sixstep::llm::Vocab>(sixstep::llm::Vocab::from_gguf(file));
    const auto codec = sixstep::llm::make_vocab_codec(vocab);
    const int bos = vocab->bos();
    REQUIRE(vocab->add_bos());
    WorkloadParams w;
    w.arrivals = {.kind = ArrivalKind::poisson, .rate = 10, .count = 20, .seed = 5};
    w.shared_prefix = 200;  // longer than the built-in text: it repeats, cut at 200
    w.n_ctx = 201;
    for (const RequestSpec& r : make_workload(w, *codec, bos)) {
        REQUIRE(r.shares_prefix);  // shared_fraction 1
        CHECK(r.prompt.front() == bos);
        CHECK(std::count(r.prompt.begin(), r.prompt.end(), bos) == 1);
        // After the 200 prefix tokens comes the request's own opening, without its BOS.
        const std::vector<int> own(r.prompt.begin() + 200, r.prompt.end());
        bool is_opening = false;
        for (const std::string& text : story_openings()) {
            std::vector<int> t = codec->encode(text);
            t.erase(t.begin());
            is_opening = is_opening || t == own;
        }
        CHECK(is_opening);
    }
    w.n_ctx = 200;
    CHECK(error_of([&] { make_workload(w, *codec, bos); }) ==
          "shared prefix 200: the context holds 200 tokens, prefix and prompt together");
    // No prefix: no request carries one, whatever the fraction.
    w.shared_prefix = 0;
    for (const RequestSpec& r : make_workload(w, *codec, bos)) {
        CHECK_FALSE(r.shares_prefix);
        CHECK(r.prompt.front() == bos);
    }
}
