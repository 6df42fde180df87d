// The batch sweep on a tiny random model: the structure and the arithmetic
// that tie its figures together (never its speed), and its errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "error_of.h"
#include "temp_dir.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/serving/batch_sweep.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep::serving;
using namespace sixstep::llm;
using sixstep::test::error_of;

namespace {
std::shared_ptr<const LlamaModel> tiny() {
    static std::shared_ptr<const LlamaModel> m = [] {
        const auto path = sixstep::test::process_temp_dir("serving") / "sweep-tiny.gguf";
        write_random_model(path, random_model_preset("tiny"));
        return std::shared_ptr<const LlamaModel>(LlamaModel::load(path));
    }();
    return m;
}
}  // namespace

TEST_CASE("batch sweep: one point per batch size, figures that add up") {
    CpuBackend cpu(tiny(), {.n_threads = 2});
    BatchSweepParams p;
    p.batch_sizes = {4, 1, 2};  // sorted by the sweep
    p.n_context = 8;
    p.n_steps = 3;
    p.repetitions = 2;
    p.roofs = MachineRoofs{.bytes_per_s = 10e9, .flops_per_s = 100e9};
    std::vector<std::string> stages;
    std::vector<SweepProgress> reports;
    p.progress = [&](const SweepProgress& s) { stages.push_back(s.stage), reports.push_back(s); };
    const BatchSweepResult r = run_batch_sweep(cpu, p);

    CHECK(r.mean_context == 10);  // steps attend to 9, 10, 11 positions
    CHECK(r.shape.weight_bytes == decode_shape(*tiny()).weight_bytes);
    REQUIRE(r.points.size() == 3);
    for (std::size_t i = 0; i < r.points.size(); ++i) {
        const BatchSweepPoint& pt = r.points[i];
        CHECK(pt.n_batch == (1 << i));
        CHECK(pt.run_step_ms.size() == 2);
        CHECK(pt.step_ms > 0);
        CHECK(pt.tokens_per_s == doctest::Approx(pt.n_batch * 1000.0 / pt.step_ms));
        CHECK(pt.speedup == doctest::Approx(pt.tokens_per_s / r.points[0].tokens_per_s));
        CHECK(pt.cost.weight_bytes == static_cast<double>(r.shape.weight_bytes));
        CHECK(pt.cost.kv_bytes == pt.n_batch * 10.0 * r.shape.kv_bytes_per_token);
        REQUIRE(pt.roofline.has_value());
        CHECK(pt.roofline->predicted_ms == predict_roofline(pt.cost, *p.roofs).predicted_ms);
    }
    CHECK(r.points[0].speedup == 1);
    CHECK(r.ridge_batch == ridge_batch(r.shape, 10, *p.roofs));
    // Three points: the knee finder says it will not guess.
    CHECK_FALSE(r.knee.found);
    CHECK(r.knee.verdict.find("too few points (3;") != std::string::npos);
    CHECK(r.knee_method == knee_method());
    CHECK(stages.front() == "prefill");
    // The runs go in rounds, every batch size once per round, so a load that
    // comes and goes meets them all alike; not one size's runs back to back.
    std::vector<std::string> runs;
    for (const SweepProgress& s : reports)
        if (s.stage != "prefill") runs.push_back(fmt::format("{} {}/{}", s.stage, s.done, s.total));
    CHECK(runs == std::vector<std::string>{"round 1 of 2, batch 1 0/6", "round 1 of 2, batch 2 1/6",
                                           "round 1 of 2, batch 4 2/6", "round 2 of 2, batch 1 3/6",
                                           "round 2 of 2, batch 2 4/6", "round 2 of 2, batch 4 5/6", "done 6/6"});
}

TEST_CASE("batch sweep: without roofs there is no prediction") {
    CpuBackend cpu(tiny(), {.n_threads = 1});
    BatchSweepParams p;
    p.batch_sizes = {1, 2};
    p.n_context = 4;
    p.n_steps = 1;
    p.repetitions = 1;
    const BatchSweepResult r = run_batch_sweep(cpu, p);
    CHECK_FALSE(r.points[0].roofline.has_value());
    CHECK(r.ridge_batch == 0);
}

TEST_CASE("batch sweep: decode step samples for the queue") {
    CpuBackend cpu(tiny(), {.n_threads = 1});
    const std::vector<double> ms = measure_decode_steps(cpu, 3, 5, 7);
    CHECK(ms.size() == 7);
    for (double v : ms) CHECK(v > 0);
}

TEST_CASE("batch sweep: bad parameters are refused before any work") {
    CpuBackend cpu(tiny(), {.n_threads = 1});
    const auto msg = [&](std::vector<int> sizes, int n_context = 8, int n_steps = 2, int reps = 1) {
        return error_of([&] {
            BatchSweepParams p;
            p.batch_sizes = sizes;
            p.n_context = n_context;
            p.n_steps = n_steps;
            p.repetitions = reps;
            run_batch_sweep(cpu, p);
        });
    };
    CHECK(msg({}) == "batch sweep: no batch sizes given");
    CHECK(msg({1, 0}) == "batch sweep: batch size 0 is out of range (1 … 4096)");
    CHECK(msg({1, 5000}) == "batch sweep: batch size 5000 is out of range (1 … 4096)");
    CHECK(msg({2, 1, 2}) == "batch sweep: batch size 2 is given twice");
    CHECK(msg({1}, 250, 10) == "batch sweep: a context of 250 tokens plus 10 decode steps needs 260 positions, more "
                               "than the model's context of 256 (n_ctx)");
    CHECK(msg({1}, 0) == "batch sweep: the context must hold at least 1 token, not 0");
    CHECK(msg({1}, 8, 0) == "batch sweep: at least 1 decode step is needed, not 0");
    CHECK(msg({1}, 8, 2, 0) == "batch sweep: repetitions must be 1 … 100, not 0");
}
