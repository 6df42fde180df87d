// The serving model: the serving lab behind the six stages, as lessons drive
// it. Each experiment runs on a tiny random model; what it emits must be what
// its description declares (both ways), the exhibit must carry the full
// runs, and bad requests must fail in stage 1 with one clear message.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "description_coverage.h"
#include "error_of.h"
#include "temp_dir.h"

#include "pipeline/core/pipeline.h"
#include "pipeline/serving/arrivals.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"
#include "pipeline/serving/speculative.h"
#include "pipeline/tools/random_model.h"

namespace sixstep::test {

namespace {

using serving::ServingExhibit;
using serving::ServingModel;

std::filesystem::path tiny_model() {
    const auto path = process_temp_dir("serving-model") / "tiny-512.gguf";
    if (!std::filesystem::exists(path)) {
        llm::RandomModelParams p = llm::random_model_preset("tiny");
        p.n_ctx = 512;
        llm::write_random_model(path, p);
    }
    return path;
}

Request request(std::initializer_list<std::pair<const char*, const char*>> fields) {
    Request r;
    for (const auto& [k, v] : fields) r.set(k, v);
    return r;
}

const ServingExhibit& exhibit_of(const ServingModel& m) {
    const auto* e = dynamic_cast<const ServingExhibit*>(m.exhibit().get());
    REQUIRE(e != nullptr);
    return *e;
}

}  // namespace

TEST_CASE("serving model: every experiment emits what the description declares, and nothing else") {
    ServingModel m({tiny_model(), 2});
    EmittedPaths seen;
    const Request runs[] = {
        request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "1000"}, {"max_tokens", "6"}}),
        request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "1000"}, {"max_tokens", "6"},
                 {"compare", "policy"}}),
        request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "1000"}, {"max_tokens", "6"},
                 {"shared_prefix", "40"}, {"prefix_cache", "true"}, {"compare", "prefix_cache"}}),
        // Goodput: targets in ms without a baseline, then relative to a request alone with one.
        request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "1000"}, {"max_tokens", "6"},
                 {"ttft_target", "1000"}}),
        request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "1000"}, {"max_tokens", "6"},
                 {"compare", "policy"}, {"ttft_target", "1000"}, {"tpot_target", "1000"}, {"target_unit", "alone"}}),
        request({{"experiment", "batch_sweep"}, {"batch_sizes", "1,2,4,8,16"}, {"context", "8"}, {"steps", "2"},
                 {"repetitions", "1"}}),
        request({{"experiment", "queue"}, {"utilizations", "0.2,0.5,0.8"}, {"utilization", "0.6"},
                 {"samples", "8"}, {"context", "8"}, {"sim_requests", "2000"}}),
        // The later experiments (serving_lab.h); the draft is the target itself, beside itself.
        request({{"experiment", "quantization"}, {"ppl_docs", "2"}, {"bench_tokens", "4"}}),
        request({{"experiment", "speculative"}, {"draft", "tiny-512.gguf"}, {"draft_ks", "1,2"},
                 {"temperatures", "0,1"}, {"spec_tokens", "8"}}),
        request({{"experiment", "cold_start"}, {"cold_tokens", "2"}, {"idle_gaps", "0,90,5"}}),
        request({{"experiment", "bill"}, {"bench_tokens", "4"}}),
        request({{"experiment", "waits"}, {"chat_tokens", "4"}, {"agent_calls", "2"}, {"agent_tokens", "3"},
                 {"batch_requests", "2"}, {"batch_tokens", "3"}}),
        request({{"experiment", "canary"}, {"canary_requests", "400"}}),
    };
    for (const Request& r : runs) {
        Pipeline p(m, r);
        p.run();
        seen.add(p);
    }
    seen.check_declared(ServingModel::describe());
    seen.check_all_emitted(ServingModel::describe());
}

// One utilization has no growth to speak of: the answer said "From 50% to
// 50% busy the mean wait grew 1×".
TEST_CASE("serving model: a queue of one utilization answers with its wait, not a growth") {
    ServingModel m({tiny_model(), 2});
    for (const char* utilizations : {"0.5", "0.2,0.5"}) {
        CAPTURE(utilizations);
        Pipeline p(m, request({{"experiment", "queue"}, {"utilizations", utilizations}, {"utilization", "0.5"},
                               {"samples", "8"}, {"context", "8"}, {"sim_requests", "2000"}}));
        p.run();
        REQUIRE(p.response());
        const std::string& text = p.response()->text;
        CAPTURE(text);
        const bool one = std::string(utilizations) == "0.5";
        CHECK((text.rfind("At 50% busy a request waits ", 0) == 0) == one);
        CHECK((text.rfind("From 20% to 50% busy the mean wait grew ", 0) == 0) == !one);
    }
}

TEST_CASE("serving model: a comparison runs the same arrivals twice and keeps both runs for the panels") {
    ServingModel m({tiny_model(), 2});
    Pipeline p(m, request({{"experiment", "traffic"}, {"requests", "8"}, {"rate", "50"}, {"max_tokens", "6"},
                           {"shared_prefix", "40"}, {"prefix_cache", "true"}, {"compare", "prefix_cache"}}));
    CHECK(m.exhibit() == nullptr);  // nothing to draw before the experiment ran
    p.run();
    const ServingExhibit& e = exhibit_of(m);
    REQUIRE(e.run);
    REQUIRE(e.baseline);
    CHECK(e.run_label == "prefix cache on");
    CHECK(e.baseline_label == "prefix cache off");
    REQUIRE(e.run->requests.size() == 8);
    REQUIRE(e.baseline->requests.size() == 8);
    for (std::size_t i = 0; i < 8; ++i) {
        CAPTURE(i);
        CHECK(e.run->requests[i].arrival_ms == e.baseline->requests[i].arrival_ms);
        CHECK(e.run->requests[i].output == e.baseline->requests[i].output);  // the cache changes time, not text
    }
    // The cache took the shared blocks: the run computed fewer prompt positions.
    const double cached = std::get<double>(*p.trace().lookup("output.prefix_cached"));
    CHECK(cached >= 7 * 32);  // 7 later requests × the prefix's two full 16-position blocks at least
    CHECK(std::get<double>(*p.trace().lookup("output.baseline_prefix_cached")) == 0);
    CHECK(std::get<double>(*p.trace().lookup("postprocess.prefill_computed_ratio")) < 1);
    // The block map: the pool at its fullest, shared prefix blocks among them.
    CHECK(e.run->kv_peak.n_blocks == 256);
    CHECK(e.run->kv_peak.n_used() > 0);
}

// Both arms judged by the same targets: targets no request can miss give
// 100 % on both sides, targets none can meet 0 % on both (a baseline left
// without them would show 100 %).
TEST_CASE("serving model: the traffic targets reach both runs of a comparison, and goodput is emitted only with one") {
    ServingModel m({tiny_model(), 2});
    const auto value = [](const Pipeline& p, const char* path) { return std::get<double>(*p.trace().lookup(path)); };
    Pipeline all(m, request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "1000"}, {"max_tokens", "6"},
                             {"compare", "policy"}, {"ttft_target", "1000000"}, {"tpot_target", "1000000"}}));
    all.run();
    CHECK(value(all, "forward.ttft_target_ms") == 1000000);
    CHECK(value(all, "forward.tpot_target_ms") == 1000000);
    CHECK(value(all, "output.goodput_share") == 100);
    CHECK(value(all, "output.baseline_goodput_share") == 100);
    // Everyone met them: goodput is the request throughput, 6 ÷ duration.
    CHECK(value(all, "output.goodput") == doctest::Approx(6 / value(all, "output.duration_s")));
    CHECK(value(all, "output.baseline_goodput") == doctest::Approx(6 / value(all, "output.baseline_duration_s")));
    CHECK(value(all, "postprocess.goodput_ratio") ==
          doctest::Approx(value(all, "output.goodput") / value(all, "output.baseline_goodput")));

    Pipeline none(m, request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "1000"}, {"max_tokens", "6"},
                              {"compare", "policy"}, {"ttft_target", "0.000001"}, {"tpot_target", "0.000001"}}));
    none.run();
    CHECK(value(none, "output.goodput") == 0);
    CHECK(value(none, "output.baseline_goodput") == 0);
    CHECK_FALSE(none.trace().lookup("postprocess.goodput_ratio").has_value());  // no ratio to a zero

    // Relative to a request alone: the targets in ms are the multiples of what it took.
    Pipeline alone(m, request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "1000"}, {"max_tokens", "6"},
                               {"ttft_target", "3"}, {"tpot_target", "2.5"}, {"target_unit", "alone"}}));
    alone.run();
    CHECK(value(alone, "forward.ttft_alone_ms") > 0);
    CHECK(value(alone, "forward.tpot_alone_ms") > 0);
    CHECK(value(alone, "forward.ttft_target_ms") == 3 * value(alone, "forward.ttft_alone_ms"));
    CHECK(value(alone, "forward.tpot_target_ms") == 2.5 * value(alone, "forward.tpot_alone_ms"));

    // Without a target: no goodput, no targets, nothing measured alone.
    Pipeline plain(m, request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "1000"}, {"max_tokens", "6"},
                               {"compare", "policy"}, {"target_unit", "alone"}}));
    plain.run();
    for (const char* path : {"output.goodput", "output.baseline_goodput", "output.goodput_share",
                             "postprocess.goodput_ratio", "forward.ttft_target_ms", "forward.ttft_alone_ms"}) {
        CAPTURE(path);
        CHECK_FALSE(plain.trace().lookup(path).has_value());
    }
}

// rate_unit alone: the rate counts arrivals per the E2E of the workload's
// first request served alone, so the same lesson loads a slow machine and a
// fast one alike. The requests are those a rate in req/s would draw, only
// their arrivals scaled.
TEST_CASE("serving model: a rate per E2E alone is that many arrivals in the time one request alone took") {
    ServingModel m({tiny_model(), 2});
    Pipeline p(m, request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "2"}, {"rate_unit", "alone"},
                           {"max_tokens", "6"}, {"compare", "policy"}}));
    p.run();
    const auto value = [&](const char* path) { return std::get<double>(*p.trace().lookup(path)); };
    const double e2e = value("forward.e2e_alone_ms");
    CHECK(value("forward.ttft_alone_ms") > 0);
    CHECK(e2e > value("forward.ttft_alone_ms"));  // six tokens: five decode steps after the first
    CHECK(value("request.rate") == 2);
    const double per_s = value("forward.rate_req_s");
    CHECK(per_s == doctest::Approx(2 * 1000 / e2e));
    CHECK(p.trace().lookup("forward.ttft_target_ms") == std::nullopt);  // no target: the alone run was for the rate

    serving::ArrivalParams a;
    a.rate = per_s;
    a.count = 6;
    a.seed = 1;
    const std::vector<double> expected = serving::arrival_times_ms(a);
    const ServingExhibit& e = exhibit_of(m);
    REQUIRE(e.run->requests.size() == 6);
    REQUIRE(e.baseline->requests.size() == 6);
    for (std::size_t i = 0; i < 6; ++i) {
        CAPTURE(i);
        CHECK(e.run->requests[i].arrival_ms == doctest::Approx(expected[i]));
        CHECK(e.baseline->requests[i].arrival_ms == e.run->requests[i].arrival_ms);
    }

    // In req/s (the default) nothing is measured alone and the rate is as given.
    Pipeline plain(m, request({{"experiment", "traffic"}, {"requests", "6"}, {"rate", "2"}, {"max_tokens", "6"}}));
    plain.run();
    CHECK(std::get<double>(*plain.trace().lookup("forward.rate_req_s")) == 2);
    CHECK(plain.trace().lookup("forward.e2e_alone_ms") == std::nullopt);
}

TEST_CASE("serving model: bad requests fail in stage 1 with one message") {
    ServingModel m({tiny_model(), 2});
    auto first_stage_error = [&](Request r) {
        Pipeline p(m, std::move(r));
        return error_of([&] { p.step(); });
    };
    CHECK(first_stage_error(request({{"experiment", "trafic"}})) ==
          "\"experiment\" must be one of traffic, batch_sweep, queue, quantization, speculative, cold_start, bill, "
          "waits, canary, got \"trafic\" — did you mean \"traffic\"?");
    CHECK(first_stage_error(request({{"rat", "4"}})).find("did you mean \"rate\"") != std::string::npos);
    CHECK(first_stage_error(request({{"rate", "0"}})) == "\"rate\" must be from 1e-06 to 1000000, got 0");
    CHECK(first_stage_error(request({{"experiment", "batch_sweep"}, {"batch_sizes", "4,2"}})) ==
          "\"batch_sizes\" must ascend: 2 after 4");
    CHECK(first_stage_error(request({{"experiment", "batch_sweep"}, {"batch_sizes", "1,x"}})) ==
          "\"batch_sizes\": \"x\" is not a number (write them like 1,2,4)");
    CHECK(first_stage_error(request({{"experiment", "batch_sweep"}, {"batch_sizes", "1,2, "}})) ==
          "\"batch_sizes\" has an empty item: a value is missing (write them like 1,2,4)");
    CHECK(first_stage_error(request({{"experiment", "batch_sweep"}, {"batch_sizes", "1,2,"}})) ==
          "\"batch_sizes\" has an empty item: a value is missing (write them like 1,2,4)");
    CHECK(first_stage_error(request({{"experiment", "queue"}, {"utilizations", "0.5,,0.7"}})) ==
          "\"utilizations\" has an empty item: a value is missing (write them like 1,2,4)");
    CHECK(first_stage_error(request({{"experiment", "queue"}, {"utilizations", "0.5,1"}})).find("utilization") !=
          std::string::npos);
    CHECK(first_stage_error(request({{"kv_layout", "contiguous"}, {"compare", "prefix_cache"}})) ==
          "compare: prefix_cache needs the paged KV layout");
    CHECK(first_stage_error(request({{"max_tokens", "4"}, {"min_tokens", "8"}})) ==
          "\"min_tokens\" 8 is above \"max_tokens\" 4");
    CHECK(first_stage_error(request({{"ttft_target", "-1"}})) == "\"ttft_target\" must be from 0 to 1000000, got -1");
    CHECK(first_stage_error(request({{"target_unit", "s"}})) == "\"target_unit\" must be ms or alone, got \"s\" — did you mean \"ms\"?");
    CHECK(first_stage_error(request({{"rate_unit", "alon"}})) ==
          "\"rate_unit\" must be req/s or alone, got \"alon\" — did you mean \"alone\"?");
    CHECK(first_stage_error(request({{"experiment", "speculative"}, {"draft_ks", "0,2"}})) ==
          "\"draft_ks\": 0 is not a draft length (whole, 1 to 64)");
    CHECK(first_stage_error(request({{"experiment", "cold_start"}, {"idle_gaps", "0,-5"}})) ==
          "\"idle_gaps\": an idle gap of -5 s is negative");
    CHECK(first_stage_error(request({{"experiment", "bill"}, {"days", "0"}})) ==
          "\"days\" must be from 1 to 1000000, got 0");
}

TEST_CASE("serving model: the canary experiment rolls the metre-trained v2 back and loses nothing") {
    ServingModel m({tiny_model(), 2});
    Pipeline p(m, request({{"experiment", "canary"}}));
    p.run();
    const auto& t = p.trace();
    CHECK(std::get<std::string>(*t.lookup("output.rolled_back")) == "yes");
    CHECK(std::get<double>(*t.lookup("output.lost")) == 0);
    CHECK(std::get<double>(*t.lookup("postprocess.answered_share")) == 1);
    CHECK(std::get<std::string>(*t.lookup("postprocess.same_weights")) == "no");
    REQUIRE(exhibit_of(m).canary.has_value());
    CHECK(exhibit_of(m).canary->answered_v1 + exhibit_of(m).canary->answered_v2 == 1000);
    const serving::CanaryResult rolled = *exhibit_of(m).canary;
    CHECK(t.last(Stage::postprocess)->summary ==
          fmt::format("1000 of 1000 requests answered; v2 answered {} before it was rolled back", rolled.exposed));
    // A sound v2 (trained on kilometres) passes and is promoted; every answer
    // of v2 counts then, most of them after the promotion — the summary must
    // not say they came before it.
    Pipeline q(m, request({{"experiment", "canary"}, {"v2_unit", "km"}}));
    q.run();
    CHECK(std::get<std::string>(*q.trace().lookup("output.promoted")) == "yes");
    const serving::CanaryResult& promoted = *exhibit_of(m).canary;
    CHECK(promoted.exposed == promoted.answered_v2);
    CHECK(q.trace().last(Stage::postprocess)->summary ==
          fmt::format("1000 of 1000 requests answered; v2 answered {}, promoted at request {}", promoted.exposed,
                      promoted.decided_at));
}

TEST_CASE("serving model: without a file it loads nothing, runs the canary, and refuses the others in stage 1") {
    ServingModel m({});
    CHECK_FALSE(m.has_llm());
    CHECK(m.loaded());  // nothing to wait for
    Pipeline p(m, request({{"experiment", "canary"}, {"canary_requests", "400"}}));
    p.run();
    const auto& t = p.trace();
    CHECK(std::get<std::string>(*t.lookup("load.status")) == serving::nothing_to_load);
    CHECK_FALSE(t.lookup("load.file").has_value());  // no language model's file named
    CHECK_FALSE(t.lookup("load.cold").has_value());  // neither paid nor reused
    CHECK(std::get<std::string>(*t.lookup("output.rolled_back")) == "yes");
    // No weights of its own: no checksum of nothing to prove them unchanged.
    CHECK_FALSE(t.lookup("load.weights_checksum").has_value());
    CHECK_FALSE(t.lookup("respond.weights_unchanged").has_value());
    for (const char* experiment : {"traffic", "batch_sweep", "queue", "quantization", "speculative", "cold_start",
                                   "bill", "waits"}) {
        CAPTURE(experiment);
        Pipeline q(m, request({{"experiment", experiment}}));
        CHECK(error_of([&] { q.step(); }) ==
              fmt::format("experiment {} runs on the serving model's language model, and it has none: give the "
                          "lesson's model a GGUF \"file\" (or \"random\"); only canary runs without one",
                          experiment));
    }
    CHECK(error_of([&] { (void)m.llm(); }).find("no GGUF file") != std::string::npos);
}

// The quantization's work (a lesson's budget) counts every held-out story
// as at most heldout_story_bytes_at_most bytes: the shipped stories must be.
TEST_CASE("serving model: every held-out story is within the bytes the quantization's work counts") {
    std::ifstream in(std::filesystem::path(SIXSTEP_SOURCE_DIR) / "assets" / "data" / "heldout-stories.txt");
    REQUIRE(in);
    std::string line, story;
    std::size_t longest = 0, stories = 0;
    const auto end_story = [&] {
        if (story.empty()) return;
        ++stories, longest = std::max(longest, story.size());
        story.clear();
    };
    while (std::getline(in, line)) {
        if (line == "<|doc|>") end_story();
        else story += line + "\n";
    }
    end_story();
    CHECK(stories >= 200);
    CHECK(longest > 0);
    CHECK(static_cast<long long>(longest) <= serving::heldout_story_bytes_at_most);
}

// The cache a decode step reads grows with batch × context; the weights do
// not. Context 8 and 2 timed steps: the steps attend 9 and 10 positions.
TEST_CASE("serving model: the batch sweep's KV read at the largest batch is batch × mean context × KV bytes, beside the weights") {
    ServingModel m({tiny_model(), 2});
    Pipeline p(m, request({{"experiment", "batch_sweep"}, {"batch_sizes", "1,4,16"}, {"context", "8"}, {"steps", "2"},
                          {"repetitions", "1"}}));
    p.run();
    REQUIRE_FALSE(p.failed());
    const ServingExhibit& e = exhibit_of(m);
    REQUIRE(e.sweep);
    const double per_position = static_cast<double>(e.sweep->shape.kv_bytes_per_token);
    CHECK(per_position == std::get<double>(*p.trace().lookup("load.kv_bytes_per_token")));
    const auto kv = std::get<std::vector<double>>(*p.trace().lookup("output.kv_bytes"));
    REQUIRE(kv.size() == 3);
    CHECK(kv[0] == doctest::Approx(1 * 9.5 * per_position));
    CHECK(kv[2] == doctest::Approx(16 * 9.5 * per_position));
    const double weights = std::get<double>(*p.trace().lookup("output.weight_bytes"));
    CHECK(std::get<double>(*p.trace().lookup("postprocess.kv_to_weights_at_largest")) ==
          doctest::Approx(16 * 9.5 * per_position / weights));
}

TEST_CASE("serving model: the bill's crossover is 6·N·D ÷ (2·N·tokens/day), exactly") {
    ServingModel m({tiny_model(), 2});
    Pipeline p(m, request({{"experiment", "bill"}, {"bench_tokens", "4"}, {"train_tokens", "1000000"},
                          {"requests_per_day", "500"}, {"tokens_per_request", "100"}}));
    p.run();
    const auto& t = p.trace();
    const double n = std::get<double>(*t.lookup("output.n_params"));
    CHECK(std::get<double>(*t.lookup("output.train_flops")) == doctest::Approx(6 * n * 1e6));
    CHECK(std::get<double>(*t.lookup("output.crossover_day")) == doctest::Approx(3 * 1e6 / (500 * 100)));
}

}  // namespace sixstep::test

namespace sixstep::test {

// The bill's answer says whether inference caught up with training within
// the days asked about, and by how much — never "as much by day 1229" with
// "0× after 365 days".
TEST_CASE("serving model: the bill's answer words a crossover after the period as not reached") {
    ServingModel m({tiny_model(), 2});
    const auto answer = [&m](const char* requests_per_day) {
        Pipeline p(m, request({{"experiment", "bill"}, {"bench_tokens", "4"}, {"train_tokens", "1000000"},
                              {"requests_per_day", requests_per_day}, {"tokens_per_request", "100"}, {"days", "365"}}));
        return p.run().text;
    };
    const std::string late = answer("10");  // crossover on day 3 × 10⁶ ÷ 1,000 = 3,000
    CAPTURE(late);
    CHECK(late.find("so after 365 days inference has cost 0.122× training; it would catch up only on day 3000, beyond "
                    "those 365 days.") !=
          std::string::npos);
    CHECK(late.find("by day") == std::string::npos);
    // 3,650 requests carry the training: 3000 ÷ 365 = 8.22× each one's own compute.
    CHECK(late.find(" Spread over the 3,650 requests of those 365 days, the training is 8.22× each request's own "
                    "compute.") != std::string::npos);
    const std::string early = answer("500");  // day 60
    CAPTURE(early);
    CHECK(early.find("so inference has cost as much as training by day 60 and 6.08× as much after 365 days.") !=
          std::string::npos);
    // Before the first day ends there is no day to count: "by day 0.2" was said.
    const std::string first_day = answer("150000");  // day 3 × 10⁶ ÷ (1.5 × 10⁷) = 0.2
    CAPTURE(first_day);
    CHECK(first_day.find("so inference has cost as much as training within the first day (0.2 of it) and ") !=
          std::string::npos);
    CHECK(first_day.find("by day") == std::string::npos);
}

// A service life of one day is "1 day", in the answer and its summary:
// "after 1 days" was said.
TEST_CASE("serving model: the bill over a single day says day, not days") {
    ServingModel m({tiny_model(), 2});
    Pipeline p(m, request({{"experiment", "bill"}, {"bench_tokens", "4"}, {"train_tokens", "1000000"},
                          {"requests_per_day", "10"}, {"tokens_per_request", "100"}, {"days", "1"}}));
    const std::string text = p.run().text;
    CAPTURE(text);
    CHECK(text.find("so after 1 day inference has cost") != std::string::npos);
    CHECK(text.find("beyond those 1 day.") != std::string::npos);
    CHECK(text.find("of those 1 day,") != std::string::npos);
    CHECK(text.find("days") == std::string::npos);
}

// Without a greedy row the speculative lab compares no text: it must not
// say the text was identical.
// Lesson 12 printed "perplexity 3.6782867177533136 / 3.6787714440612 / …".
TEST_CASE("serving model: the quantization's perplexities read to five digits, as its lines give them") {
    ServingExhibit ex;
    const double ppl[] = {3.6782867177533136, 3.6787714440612, 3.1e115};
    for (double v : ppl) {
        serving::QuantizationRow r;
        r.type = "F16";
        r.perplexity = v;
        ex.quantization.push_back(r);
    }
    TraceEvent ev;
    serving::make_quantization_lab()->output(ex, ev);
    CHECK(ev.summary == "perplexity 3.6783 / 3.6788 / 3.1×10¹¹⁵");
    REQUIRE(ev.arithmetic.size() == 3);
    CHECK(ev.arithmetic[0].find("perplexity 3.6783,") != std::string::npos);
}

// The lesson-14 lines: parts rounded as printed, and the total their sum.
TEST_CASE("serving model: a cold-start request's load and request add up to its printed total") {
    ServingExhibit ex;
    llm::ColdStartResult r;
    for (int i = 0; i < 3; ++i) {
        llm::RequestTiming t;
        t.index = i;
        t.start = i < 2 ? llm::Start::cold_cached : llm::Start::warm;
        t.load_ms = i < 2 ? 16.454 : 0;  // 16.45, and 2.114 → 2.11: 18.56, not the unrounded 18.568 → 18.57
        t.request_ms = 2.114;
        t.total_ms = t.load_ms + t.request_ms;
        r.requests.push_back(t);
    }
    ex.cold_start = r;
    TraceEvent ev;
    serving::make_cold_start_lab()->output(ex, ev);
    CAPTURE(ev.arithmetic);
    CHECK(std::find(ev.arithmetic.begin(), ev.arithmetic.end(),
                    "request 0 cold (page cache): load 16.45 ms + request 2.11 ms = 18.56 ms") != ev.arithmetic.end());
    CHECK(std::find(ev.arithmetic.begin(), ev.arithmetic.end(),
                    "request 2 warm: load 0.00 ms + request 2.11 ms = 2.11 ms") != ev.arithmetic.end());
    // The cold starts counted are the instance's that scales to zero, and named so.
    CHECK(ev.find("scale_to_zero_cold_starts") != nullptr);
    CHECK(ev.find("keep_warm_cold_starts") == nullptr);
}

// Lesson 14 printed "fresh instance ÷ warm = 9.04 ÷ 1.51 ms = 5.98": the
// quotient of the unrounded times, which a calculator makes 5.99.
TEST_CASE("serving model: the cold start's fresh ÷ warm divides on a calculator to the quotient it prints") {
    ServingExhibit ex;
    llm::ColdStartResult r;
    for (int i = 0; i < 3; ++i) {
        llm::RequestTiming t;
        t.index = i;
        t.start = i < 2 ? llm::Start::cold_cached : llm::Start::warm;
        t.total_ms = i < 2 ? 9.0449 : 1.5124;
        r.requests.push_back(t);
    }
    r.warm_median_ms = 1.5124;  // 9.0449 ÷ 1.5124 = 5.9805; 9.04 ÷ 1.51 = 5.9868
    ex.cold_start = r;
    TraceEvent ev;
    (void)serving::make_cold_start_lab()->compare(ex, ev);
    CAPTURE(ev.arithmetic);
    CHECK(std::find(ev.arithmetic.begin(), ev.arithmetic.end(), "fresh instance ÷ warm = 9.045 ÷ 1.512 ms = 5.98") !=
          ev.arithmetic.end());
    CHECK(std::get<double>(ev.find("cached_over_warm")->value) == doctest::Approx(9.0449 / 1.5124));  // unrounded
}

TEST_CASE("serving model: a speculative sweep without a greedy row claims nothing about identical text") {
    ServingModel m({tiny_model(), 2});
    Pipeline p(m, request({{"experiment", "speculative"}, {"draft", "tiny-512.gguf"}, {"draft_ks", "1"},
                          {"temperatures", "1"}, {"spec_tokens", "4"}, {"spec_repetitions", "1"}}));
    const std::string text = p.run().text;
    CAPTURE(text);
    CHECK(std::get<std::string>(*p.trace().lookup("postprocess.greedy_identical")) == "no greedy row");
    CHECK(text.find("greedy") == std::string::npos);
    CHECK(text.find("on average") != std::string::npos);  // tokens per pass: a row's mean, not a single pass's
}

// A lesson that copied only its target model into a folder of its own: the
// draft it names (by default the bundled one) is found among the bundled models.
TEST_CASE("serving model: a draft not beside the target is the bundled draft of that name") {
    const auto target = process_temp_dir("serving-draft") / "stories-3m-f16.gguf";
    if (!std::filesystem::exists(target))
        std::filesystem::copy_file(std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf", target);
    ServingModel m({target, 1});
    Pipeline p(m, request({{"experiment", "speculative"}, {"draft_ks", "1"}, {"temperatures", "0"},
                          {"spec_tokens", "4"}, {"spec_repetitions", "1"}}));
    p.run();
    CHECK(std::get<std::string>(*p.trace().lookup("postprocess.greedy_identical")) == "yes");
    ServingModel none({target, 1});
    Pipeline q(none, request({{"experiment", "speculative"}, {"draft", "no-such-draft.gguf"}, {"draft_ks", "1"},
                             {"temperatures", "0"}, {"spec_tokens", "4"}, {"spec_repetitions", "1"}}));
    CHECK(error_of([&] { q.run(); }).find("(the draft is looked up beside the target's file, then among the bundled "
                                          "models)") != std::string::npos);
}

TEST_CASE("serving model: a sweep row's overlap note counts the timed runs that took turns") {
    serving::SweepRow r;
    r.n_timed = 3;
    CHECK(serving::took_turns_note(r).empty());
    r.overlap_declined = "no CPU free for the draft's thread (2 other runnable tasks on 2 CPUs): it took turns";
    r.n_declined = 2;
    CHECK(serving::took_turns_note(r) == "2 of 3 timed runs: " + r.overlap_declined);
    r.n_declined = 3;
    CHECK(serving::took_turns_note(r) == r.overlap_declined);
}

// The waits lab words what it measured: one token has no decode speed (not
// "0× faster than reading"), one call is one call.
TEST_CASE("serving model: the waits answer for one token and one call claims no decode speed and no chain") {
    ServingModel m({tiny_model(), 2});
    Pipeline p(m, request({{"experiment", "waits"}, {"chat_tokens", "1"}, {"agent_calls", "1"}, {"agent_tokens", "3"},
                          {"batch_requests", "2"}, {"batch_tokens", "3"}}));
    const std::string text = p.run().text;
    CAPTURE(text);
    CHECK(text.find("the answer was one token, so there is no decode speed to compare with reading.") !=
          std::string::npos);
    CHECK(text.find("faster than a person reads") == std::string::npos);
    CHECK(text.find("for its one call, of which") != std::string::npos);
    CHECK(text.find("chained calls") == std::string::npos);
    // The TTFT as the output card writes it, three digits (it read "0.4 ms" beside "0.373 ms").
    const Value ttft = *p.trace().lookup("output.chat_ttft_ms");
    CHECK(text.find("sees the first token after " + format_value(ttft, 3) + " ms") != std::string::npos);
}

// A canary too short for the monitor decides nothing, and says so — not
// "v2 agreed with v1" beside means of 10 and 29 minutes.
TEST_CASE("serving model: a canary the monitor could not decide is neither called agreed nor promoted") {
    ServingModel m({tiny_model(), 2});
    Pipeline p(m, request({{"experiment", "canary"}, {"canary_requests", "20"}}));
    const std::string text = p.run().text;
    CAPTURE(text);
    REQUIRE(std::get<std::string>(*p.trace().lookup("output.promoted")) == "no");
    REQUIRE(std::get<std::string>(*p.trace().lookup("output.rolled_back")) == "no");
    CHECK(text.find("too few for the monitor to decide") != std::string::npos);
    CHECK(text.find("agreed") == std::string::npos);
}

}  // namespace sixstep::test
