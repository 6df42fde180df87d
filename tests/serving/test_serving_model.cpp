// The serving model: the serving lab behind the six stages, as lessons drive
// it. Each experiment runs on a tiny random model; what it emits must be what
// its description declares (both ways), the exhibit must carry the full
// runs, and bad requests must fail in stage 1 with one clear message.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "description_coverage.h"
#include "error_of.h"
#include "temp_dir.h"

#include "pipeline/core/pipeline.h"
#include "pipeline/serving/serving_model.h"
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
        request({{"experiment", "batch_sweep"}, {"batch_sizes", "1,2,4,8,16"}, {"context", "8"}, {"steps", "2"},
                 {"repetitions", "1"}}),
        request({{"experiment", "queue"}, {"utilizations", "0.2,0.5,0.8"}, {"utilization", "0.6"},
                 {"samples", "8"}, {"context", "8"}, {"sim_requests", "2000"}}),
    };
    for (const Request& r : runs) {
        Pipeline p(m, r);
        p.run();
        seen.add(p);
    }
    seen.check_declared(ServingModel::describe());
    seen.check_all_emitted(ServingModel::describe());
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

TEST_CASE("serving model: bad requests fail in stage 1 with one message") {
    ServingModel m({tiny_model(), 2});
    auto first_stage_error = [&](Request r) {
        Pipeline p(m, std::move(r));
        return error_of([&] { p.step(); });
    };
    CHECK(first_stage_error(request({{"experiment", "trafic"}})) ==
          "\"experiment\" must be one of traffic, batch_sweep, queue, got \"trafic\"");
    CHECK(first_stage_error(request({{"rat", "4"}})).find("did you mean \"rate\"") != std::string::npos);
    CHECK(first_stage_error(request({{"rate", "0"}})) == "\"rate\" must be above 0 and at most 1000000, got 0");
    CHECK(first_stage_error(request({{"experiment", "batch_sweep"}, {"batch_sizes", "4,2"}})) ==
          "\"batch_sizes\" must ascend: 2 after 4");
    CHECK(first_stage_error(request({{"experiment", "batch_sweep"}, {"batch_sizes", "1,x"}})) ==
          "\"batch_sizes\": \"x\" is not a number (write them like 1,2,4)");
    CHECK(first_stage_error(request({{"experiment", "queue"}, {"utilizations", "0.5,1"}})).find("utilization") !=
          std::string::npos);
    CHECK(first_stage_error(request({{"kv_layout", "contiguous"}, {"compare", "prefix_cache"}})) ==
          "compare: prefix_cache needs the paged KV layout");
    CHECK(first_stage_error(request({{"max_tokens", "4"}, {"min_tokens", "8"}})) ==
          "\"min_tokens\" 8 is above \"max_tokens\" 4");
}

}  // namespace sixstep::test
