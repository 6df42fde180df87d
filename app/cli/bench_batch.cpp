#include "app/cli/bench_batch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/serving/batch_sweep.h"
#include "pipeline/tools/machine_peaks.h"

namespace sixstep::cli {

double load_average() {
    double load[1] = {-1};
    if (getloadavg(load, 1) != 1) return -1;
    return load[0];
}

namespace {

using nlohmann::ordered_json;

// JSON numbers must be finite: infinity (a ridge never reached) becomes null.
ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

ordered_json to_json(const serving::FitLine& l) {
    return {{"slope", l.slope}, {"intercept", l.intercept}, {"x0", l.x0}, {"x1", l.x1}};
}

ordered_json to_json(const serving::KneeResult& k, const std::string& method) {
    ordered_json j;
    j["found"] = k.found;
    j["verdict"] = k.verdict;
    j["method"] = method;
    j["n_points"] = k.n_points;
    if (k.found) j["batch"] = k.x;
    if (k.fitted) {
        j["breakpoint_batch"] = k.x;
        j["breakpoint_tokens_per_s"] = k.y;
        j["rising"] = to_json(k.rising);
        j["tail"] = to_json(k.tail);
        j["single"] = to_json(k.single);
        j["sse_single"] = k.sse_single;
        j["sse_two"] = k.sse_two;
        j["error_reduction"] = k.error_reduction;
        j["tail_slope_ratio"] = k.tail_slope_ratio;
        j["peak_tokens_per_s"] = k.peak_y;
        j["peak_fraction"] = k.peak_fraction;
    }
    return j;
}

}  // namespace

int run_bench_batch(const BenchBatchOptions& o) {
    using namespace sixstep::llm;
    using namespace sixstep::serving;
    if (o.model.empty()) throw Error("bench --batch needs --model FILE.gguf");
    const double load_before = load_average();
    const auto model = LlamaModel::load(o.model);
    BackendChoice choice = make_backend(backend_kind(o.backend), model, {.n_threads = o.threads});
    print_backend_note(choice.note);
    Backend& backend = *choice.backend;
    const auto* cpu = dynamic_cast<const CpuBackend*>(&backend);

    BatchSweepParams p;
    p.batch_sizes = o.batch_sizes;
    p.n_context = o.n_context;
    p.n_steps = o.n_steps;
    p.repetitions = o.repetitions;
    p.seed = o.seed;
    // Progress goes to the terminal's progress line (start_terminal_front_end),
    // like every long command's: on a terminal, or with --progress.
    const bool tty = isatty(STDERR_FILENO) != 0;

    // The machine's roofs, on as many threads as the backend, before the
    // sweep; the bandwidth buffer as large as a batch-1 step reads.
    check_batch_sweep_params(backend, p);  // before the roofs' buffer is sized from the context
    std::optional<MachinePeaks> peaks;
    if (cpu) {
        if (tty) std::fprintf(stderr, "measuring the machine's roofs…");
        const StepCost one = decode_step_cost(decode_shape(*model), 1, o.n_context + (o.n_steps + 1) / 2.0);
        const double mib = 1 << 20;
        MachinePeaksParams mp;
        mp.read_bytes = static_cast<std::size_t>(std::clamp(one.bytes, mib, 1024 * mib));
        ThreadPool pool(cpu->n_threads());
        peaks = measure_machine_peaks(pool, mp);
        p.roofs = MachineRoofs{peaks->read_bytes_per_s, peaks->flops_per_s};
    }
    const BatchSweepResult r = run_batch_sweep(backend, p);
    clear_progress();
    if (tty) std::fprintf(stderr, "\r\033[K");
    const double load_after = load_average();
    const std::string type(ggml_type_name(model->main_type()));

    if (o.json) {
        ordered_json j;
        j["model"] = o.model;
        j["type"] = type;
        j["n_params"] = model->n_params();
        j["backend"] = r.backend;
        if (cpu) j["threads"] = cpu->n_threads();
        j["load_average_before"] = load_before;
        j["load_average_after"] = load_after;
        j["n_context"] = r.n_context;
        j["n_steps"] = r.n_steps;
        j["repetitions"] = r.repetitions;
        j["mean_context"] = r.mean_context;
        j["weight_bytes_per_step"] = r.shape.weight_bytes;
        j["matmul_weights"] = r.shape.matmul_weights;
        j["kv_bytes_per_position"] = r.shape.kv_bytes_per_token;
        j["prefill_s"] = r.prefill_s;
        j["sweep_s"] = r.sweep_s;
        j["cpu_wait_ms"] = r.cpu_wait_ms;
        if (peaks) {
            j["machine"] = {{"read_bytes_per_s", peaks->read_bytes_per_s},
                            {"flops_per_s", peaks->flops_per_s},
                            {"read_buffer_bytes", peaks->read_bytes},
                            {"threads", peaks->n_threads},
                            {"simd", peaks->simd},
                            {"method", peaks->method}};
            j["ridge_batch"] = number(r.ridge_batch);
        } else {
            j["machine"] = nullptr;
        }
        j["points"] = ordered_json::array();
        for (const BatchSweepPoint& pt : r.points) {
            ordered_json q;
            q["batch"] = pt.n_batch;
            q["step_ms"] = pt.step_ms;
            q["tpot_ms"] = pt.step_ms;
            q["tokens_per_s"] = pt.tokens_per_s;
            q["speedup"] = pt.speedup;
            q["tpot_ratio"] = pt.tpot_ratio;
            q["run_step_ms"] = pt.run_step_ms;
            q["weight_bytes"] = pt.cost.weight_bytes;
            q["kv_bytes"] = pt.cost.kv_bytes;
            q["embd_bytes"] = pt.cost.embd_bytes;
            q["bytes"] = pt.cost.bytes;
            q["kv_to_weight_ratio"] = pt.cost.kv_bytes / pt.cost.weight_bytes;
            q["matmul_flops"] = pt.cost.matmul_flops;
            q["attention_flops"] = pt.cost.attention_flops;
            q["flops"] = pt.cost.flops;
            if (pt.roofline) {
                const RooflinePrediction& rl = *pt.roofline;
                q["roofline"] = {{"memory_ms", rl.memory_ms},
                                 {"compute_ms", rl.compute_ms},
                                 {"predicted_ms", rl.predicted_ms},
                                 {"bound", rl.compute_bound ? "compute" : "memory"},
                                 {"arithmetic_intensity", rl.arithmetic_intensity},
                                 {"ridge_intensity", rl.ridge_intensity},
                                 {"measured_over_predicted", pt.step_ms / rl.predicted_ms}};
            }
            j["points"].push_back(std::move(q));
        }
        j["knee"] = to_json(r.knee, r.knee_method);
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }

    const double mb = 1e6;
    std::printf("batched decode of %s (%s, %.1f M params) on %s\n",
                printable(std::filesystem::path(o.model).filename().string()).c_str(), type.c_str(),
                static_cast<double>(model->n_params()) / 1e6, r.backend.c_str());
    std::printf("each sequence holds %s (prefilled, untimed), then %s of one token per sequence "
                "(mean context %.1f); median of %s; load average %.2f before, %.2f after\n",
                count_of(static_cast<std::size_t>(r.n_context), "token", "tokens").c_str(),
                count_of(static_cast<std::size_t>(r.n_steps), "timed step", "timed steps").c_str(), r.mean_context,
                count_of(static_cast<std::size_t>(r.repetitions), "run", "runs").c_str(), load_before, load_after);
    std::printf("per step: weights %.1f MB read once; KV %.1f KB per position per sequence\n",
                static_cast<double>(r.shape.weight_bytes) / mb, static_cast<double>(r.shape.kv_bytes_per_token) / 1e3);
    if (peaks)
        std::printf("roofs: read bandwidth %.1f GB/s, peak %.0f GFLOP/s (%s)\n", peaks->read_bytes_per_s / 1e9,
                    peaks->flops_per_s / 1e9, peaks->method.c_str());
    std::printf("\n| batch | TPOT ms | tokens/s | × batch 1 | TPOT × | KV MB | KV/weights | GFLOP |");
    if (peaks) std::printf(" memory ms | compute ms | predicted ms | bound   | measured/predicted |");
    std::printf("\n|------:|--------:|---------:|----------:|-------:|------:|-----------:|------:|");
    if (peaks) std::printf("----------:|-----------:|-------------:|---------|-------------------:|");
    std::printf("\n");
    for (const BatchSweepPoint& pt : r.points) {
        const bool knee = r.knee.found && pt.n_batch == static_cast<int>(r.knee.x);
        std::printf("| %4d%s | %7.2f | %8.1f | %9.2f | %6.2f | %5.1f | %10.3f | %5.2f |", pt.n_batch, knee ? "*" : " ",
                    pt.step_ms, pt.tokens_per_s, pt.speedup, pt.tpot_ratio, pt.cost.kv_bytes / mb,
                    pt.cost.kv_bytes / pt.cost.weight_bytes, pt.cost.flops / 1e9);
        if (pt.roofline)
            std::printf(" %9.2f | %10.2f | %12.2f | %-7s | %18.2f |", pt.roofline->memory_ms, pt.roofline->compute_ms,
                        pt.roofline->predicted_ms, pt.roofline->compute_bound ? "compute" : "memory",
                        pt.step_ms / pt.roofline->predicted_ms);
        std::printf("\n");
    }
    std::printf("\n%s%s\n", r.knee.verdict.c_str(), r.knee.found ? " (marked *; x is the batch size, y tokens/s)" : "");
    std::printf("knee method: %s\n", r.knee_method.c_str());
    if (peaks) {
        if (std::isfinite(r.ridge_batch))
            std::printf("roofline: predicted time = max(bytes ÷ bandwidth, FLOPs ÷ peak); the roofs cross at batch "
                        "%.1f (context %.1f)\n",
                        r.ridge_batch, r.mean_context);
        else
            std::printf("roofline: predicted time = max(bytes ÷ bandwidth, FLOPs ÷ peak); at context %.1f the KV "
                        "reads grow as fast as the FLOPs, so the roofs never cross\n",
                        r.mean_context);
    } else {
        std::printf("roofline: not measured (the roofs are measured for the CPU backend only)\n");
    }
    std::printf("took %.1f s (of which %.1f s prefilling the contexts, untimed; %.1f ms of the timed steps waiting "
                "for a CPU, left out of their times)\n",
                r.sweep_s, r.prefill_s, r.cpu_wait_ms);
    return exit_ok;
}

}  // namespace sixstep::cli
