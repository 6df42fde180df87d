// sixstep bench --model FILE.gguf [-p 128] [-n 128] [-t THREADS] [-r 5] [--observer none|idle|panels] [--json]
//   Prefill (pp) and decode (tg) tokens/s, median of repeats, like llama-bench.
// sixstep bench --batch 1,2,4,8,16,32,64 --model FILE.gguf [--context 128] [--steps 32]
//   Batched decode, the knee and the roofline (bench_batch.h).
// sixstep bench --model FILE.gguf --contention [--hogs N] [-n 32] [-t THREADS] [--slices 32]
//   Decode on 1 thread and on THREADS, first on a quiet machine, then beside
//   one spinning process per CPU (CpuHogs): what a busy laptop does to it.
//   -r rounds, each decoding --slices times per thread count, interleaved
//   (run_contention); -t 1 sets 1 thread against 1 thread: the method's noise.
// sixstep bench --random 110m --type q8_0 --out FILE.gguf
//   Writes a random-weight Llama model to benchmark (and to compare with
//   llama.cpp on identical weights); with --model too, it then benchmarks it.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/bench_batch.h"
#include "app/cli/commands.h"
#include "app/core/report.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "pipeline/core/error.h"
#include "pipeline/core/file.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/panel_capture.h"
#include "pipeline/tools/bench.h"
#include "pipeline/tools/cpu_hogs.h"
#include "pipeline/tools/random_model.h"
#include "pipeline/tools/thread_times.h"

namespace sixstep::cli {

namespace {

struct BenchOptions {
    std::string model;
    int n_prompt = 128, n_gen = 128, threads = 0, repetitions = 5;
    bool json = false, contention = false;
    int hogs = 0, slices = 32;
    std::string random_preset, type = "f32", out, backend = "cpu";
    std::uint64_t seed = 1;
    bool force = false;
    BenchBatchOptions batch;  // --batch: the batched-decode sweep instead
    std::string observer = "none";  // none, idle or panels
};

// An observer that wants nothing: the cost of being asked, with no copy.
class IdleObserver : public sixstep::llm::TensorObserver {
public:
    bool wants(std::string_view, int) override { return false; }
};

// Decode tokens/s on 1 thread and on o.threads, quiet and beside CPU hogs,
// in rounds: beside the hogs each round starts hogs of its own, and within
// a round the thread counts take turns, slice by slice (o.slices decodes of
// -n tokens each; which goes first alternates), so both see the same
// placements of the hogs. Why: where the OS puts the hogs decides a run —
// on 2 CPUs with 2 hogs, one thread shares its core with a hog or, if both
// hogs landed on the other core, has one to itself for as long as they stay
// — and the machine drifts. Measured one whole run per count per round
// (slices 1), 1 thread against 1 thread (-t 1, two backends alike) gave
// rounds from 0.63× to 1.40× and medians of 9 rounds from 0.80× to 1.03×
// on the bundled model; a round's figure is its slices' tokens over their
// time. Each count keeps one backend for all rounds, as a running app keeps
// its thread pool.
int run_contention(const BenchOptions& o, const std::shared_ptr<const llm::LlamaModel>& model) {
    using namespace sixstep::llm;
    if (CpuHogs::caller_is_realtime())
        throw Error("bench --contention: this process runs at real-time priority (chrt), so the CPU hogs, at normal "
                    "priority, could never take a CPU from it; run it without chrt");
    const int n_threads = o.threads > 0 ? o.threads : ThreadPool::default_threads();
    // A few hogs a CPU is contention; more only spend the run starting and
    // stopping them (1024 on 2 CPUs ran for minutes, printing nothing).
    const int most_hogs = 4 * std::max(1, CpuHogs::cpus_available());
    if (o.hogs > most_hogs)
        throw Error(fmt::format("--hogs {} is more than 4 a CPU ({} CPUs here): at most {}", o.hogs,
                                CpuHogs::cpus_available(), most_hogs));
    const int n_hogs = o.hogs > 0 ? o.hogs : CpuHogs::cpus_available();
    const int rounds = o.repetitions;
    // -t 1: a second 1-thread backend against the first, the noise of the method.
    const std::vector<int> thread_counts = {1, n_threads};
    const std::size_t n_counts = thread_counts.size();
    const int slices = o.slices;
    std::vector<std::unique_ptr<CpuBackend>> backends;
    for (int t : thread_counts) backends.push_back(std::make_unique<CpuBackend>(model, CpuBackendParams{t}));
    BenchParams bp;
    bp.n_prompt = 0;
    bp.n_gen = o.n_gen > 0 ? o.n_gen : 32;
    bp.repetitions = 1;  // one timed run per count per slice
    const double load_before = load_average();

    constexpr double min_times_wall_s = 0.05;
    // tok_s[count][round]; per second of a round, the seconds our threads
    // ran on a CPU and waited for one (empty where the system does not say or
    // the runs were short).
    struct Phase {
        std::vector<std::vector<double>> tok_s, on_cpu, waiting;
        std::vector<double> solo_share;  // per count: its passes the pool ran on one thread (timing said faster)
    };
    const auto run_phase = [&](bool with_hogs) {
        Phase ph;
        ph.tok_s.resize(n_counts);
        ph.on_cpu.resize(n_counts);
        ph.waiting.resize(n_counts);
        std::vector<ThreadPool::Stats> pool_before;
        for (const auto& b : backends) pool_before.push_back(b->pool_stats());
        for (int r = 0; r < rounds; ++r) {
            std::optional<CpuHogs> hogs;
            if (with_hogs) hogs.emplace(n_hogs);
            std::vector<double> seconds(n_counts, 0.0), wall(n_counts, 0.0), on_cpu(n_counts, 0.0), waiting(n_counts, 0.0);
            bool times_known = true;
            for (int slice = 0; slice < slices; ++slice)
                for (std::size_t j = 0; j < n_counts; ++j) {
                    const std::size_t i = (r * slices + slice) % 2 ? n_counts - 1 - j : j;
                    const auto times_before = thread_times_now();
                    const auto start = std::chrono::steady_clock::now();
                    // A warm-up before a count's first slice of the round only.
                    BenchParams slice_params = bp;
                    slice_params.warm_up = slice == 0;
                    seconds[i] += run_bench(*backends[i], slice_params).decode.median_ms / 1000;
                    wall[i] += ms_since(start) / 1000;
                    const auto times_after = thread_times_now();
                    if (times_before && times_after) {
                        const ThreadTimes t = times_between(*times_before, *times_after);
                        on_cpu[i] += t.on_cpu_s;
                        waiting[i] += t.waiting_s;
                    } else {
                        times_known = false;
                    }
                }
            for (std::size_t i = 0; i < n_counts; ++i) {
                ph.tok_s[i].push_back(slices * bp.n_gen / seconds[i]);
                // The kernel brings a running thread's sums up to date at its
                // ticks (a few ms), so runs shorter than many ticks say nothing.
                if (times_known && wall[i] >= min_times_wall_s) {
                    ph.on_cpu[i].push_back(on_cpu[i] / wall[i]);
                    ph.waiting[i].push_back(waiting[i] / wall[i]);
                }
            }
        }
        for (std::size_t i = 0; i < n_counts; ++i) {
            const ThreadPool::Stats after = backends[i]->pool_stats();
            const auto lists = after.lists - pool_before[i].lists;
            ph.solo_share.push_back(lists ? static_cast<double>(after.solo_lists - pool_before[i].solo_lists) / lists : 0.0);
        }
        return ph;
    };
    const Phase quiet = run_phase(false), hogged = run_phase(true);

    // The last count against 1 thread, round by round: median and lowest.
    struct Ratios {
        double median = 0, lowest = 0;
    };
    const auto ratios = [&](const Phase& ph) {
        std::vector<double> v;
        for (int r = 0; r < rounds; ++r) v.push_back(ph.tok_s.back()[r] / ph.tok_s.front()[r]);
        return Ratios{sixstep::median(v), *std::min_element(v.begin(), v.end())};
    };
    // Medians of a count's per-round figures, or nothing when not measured.
    const auto median_of = [](const std::vector<double>& v) -> std::optional<double> {
        if (v.empty()) return std::nullopt;
        return sixstep::median(v);
    };
    const auto json_or_null = [](std::optional<double> v) {
        return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();  // null
    };
    const std::string test = fmt::format("tg{}", bp.n_gen);
    const std::string simd = cpu_simd_name();
    if (o.json) {
        nlohmann::ordered_json j;
        j["model"] = o.model;
        j["type"] = std::string(ggml_type_name(model->main_type()));
        j["simd"] = simd;
        j["test"] = test;
        j["hogs"] = n_hogs;
        j["rounds"] = rounds;
        j["slices"] = slices;
        j["load_average_before"] = load_before;
        j["results"] = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < n_counts; ++i)
            j["results"].push_back({{"threads", thread_counts[i]},
                                    {"quiet_tokens_per_s", sixstep::median(quiet.tok_s[i])},
                                    {"hogged_tokens_per_s", sixstep::median(hogged.tok_s[i])},
                                    {"quiet_rounds", quiet.tok_s[i]},
                                    {"hogged_rounds", hogged.tok_s[i]},
                                    {"quiet_on_cpu_per_s", json_or_null(median_of(quiet.on_cpu[i]))},
                                    {"quiet_waiting_per_s", json_or_null(median_of(quiet.waiting[i]))},
                                    {"hogged_on_cpu_per_s", json_or_null(median_of(hogged.on_cpu[i]))},
                                    {"hogged_waiting_per_s", json_or_null(median_of(hogged.waiting[i]))},
                                    {"quiet_passes_on_one_thread", quiet.solo_share[i]},
                                    {"hogged_passes_on_one_thread", hogged.solo_share[i]}});
        const Ratios q = ratios(quiet), h = ratios(hogged);
        j["ratio"] = {{"quiet_median", q.median}, {"quiet_lowest", q.lowest},
                      {"hogged_median", h.median}, {"hogged_lowest", h.lowest}};
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }
    std::printf("decode %s of %s (%s, %s), tokens/s, median of %d round%s; load average before: %.2f\n", test.c_str(),
                std::filesystem::path(o.model).filename().string().c_str(),
                std::string(ggml_type_name(model->main_type())).c_str(), simd.c_str(), rounds, rounds == 1 ? "" : "s",
                load_before);
    const std::string hogs_head = fmt::format("beside {} CPU hog{}", n_hogs, n_hogs == 1 ? "" : "s");
    std::printf("| threads | %9s | %18s |\n", "quiet", hogs_head.c_str());
    std::printf("|--------:|----------:|-------------------:|\n");
    for (std::size_t i = 0; i < n_counts; ++i)
        std::printf("| %7d | %9.1f | %18.1f |\n", thread_counts[i], sixstep::median(quiet.tok_s[i]),
                    sixstep::median(hogged.tok_s[i]));
    const Ratios q = ratios(quiet), h = ratios(hogged);
    const int n_last = thread_counts.back();
    std::printf("%d thread%s ÷ 1 thread, round by round%s: quiet %.2f× (lowest %.2f×), beside the hogs %.2f× (lowest "
                "%.2f×)\n",
                n_last, n_last == 1 ? "" : "s", n_last == 1 ? " (a second backend alike: the noise of the method)" : "",
                q.median, q.lowest, h.median, h.lowest);
    // What the hogs did to our threads: each thread count's seconds on a CPU
    // and waiting for one, per second of decode; no line unless every run
    // was measured.
    bool measured = true;
    std::string times;
    for (const auto& [name, ph] : {std::pair{"quiet", &quiet}, std::pair{"beside the hogs", &hogged}}) {
        std::string counts;
        for (std::size_t i = 0; i < n_counts; ++i) {
            const auto on = median_of(ph->on_cpu[i]), wait = median_of(ph->waiting[i]);
            measured = measured && on && wait;
            if (measured)
                counts += fmt::format("{}{} thread{} {:.2f} / {:.2f}", counts.empty() ? "" : ", ", thread_counts[i],
                                      thread_counts[i] == 1 ? "" : "s", *on, *wait);
        }
        times += fmt::format("{}{}: {}", times.empty() ? "" : "; ", name, counts);
    }
    if (measured)
        std::printf("our threads per second of decode, on a CPU / waiting for one (medians): %s\n", times.c_str());
    else
        // Said, not left out: the line README promises is missing for a reason.
        std::printf("our threads' time on a CPU and waiting for one: not measured (%s)\n",
                    thread_times_now() ? fmt::format("a run shorter than {} s says nothing: decode more tokens (-n)",
                                                     min_times_wall_s)
                                             .c_str()
                                       : "this system keeps no per-thread schedstat in /proc/self/task");
    // The pool runs a pass on one thread while no CPU is free for another,
    // or while its timing says that is faster (thread_pool.h): how often.
    if (n_last > 1)
        std::printf("passes %d threads ran on one thread (no CPU free, or timed faster there): quiet %.0f %%, beside the "
                    "hogs %.0f %%\n",
                    n_last, 100 * quiet.solo_share.back(), 100 * hogged.solo_share.back());
    return exit_ok;
}

int run_bench_command(const BenchOptions& o) {
    using namespace sixstep::llm;
    if (!o.random_preset.empty()) {
        if (o.out.empty()) throw Error("bench --random needs --out FILE.gguf");
        RandomModelParams p = random_model_preset(o.random_preset);
        const auto type = ggml_type_from_name(o.type);
        if (!type || !ggml_type_supported(*type))
            throw Error(fmt::format("bench: --type {} is not one of f32, f16, q8_0, q4_0", o.type));
        p.type = *type;
        p.seed = o.seed;
        // Never over a device, a FIFO, a folder or a link, nor silently over a file.
        check_output_file(o.out, o.force, "--force");
        write_random_model(o.out, p);
        if (!o.json) std::printf("wrote %s (%s, %s)\n", printable(o.out).c_str(), o.random_preset.c_str(), o.type.c_str());
        if (o.model.empty()) return exit_ok;
    }
    if (o.model.empty()) throw Error("bench needs --model FILE.gguf (or --random PRESET --out FILE.gguf)");
    if (!o.batch.batch_sizes.empty()) {
        BenchBatchOptions b = o.batch;
        b.model = o.model;
        b.backend = o.backend;
        b.threads = o.threads;
        b.json = o.json;
        return run_bench_batch(b);
    }

    if (!o.contention && o.n_prompt == 0 && o.n_gen == 0)
        throw Error("bench: -p 0 and -n 0 leave nothing to measure; give prompt tokens, tokens to generate, or both");
    const auto t0 = std::chrono::steady_clock::now();
    const auto model = LlamaModel::load(o.model);
    if (o.contention) return run_contention(o, model);
    BackendChoice choice = make_backend(backend_kind(o.backend), model, {.n_threads = o.threads});
    // Until the first token can run: the file mapped and checked, and the
    // backend built (on the CPU that copies the matrices to huge pages,
    // interleaving Q4_0 and Q8_0 rows; on the GPU it uploads the weights).
    const double load_ms = ms_since(t0);
    print_backend_note(choice.note);
    Backend& backend = *choice.backend;
    BenchParams bp;
    bp.n_prompt = o.n_prompt;
    bp.n_gen = o.n_gen;
    bp.repetitions = o.repetitions;
    // What the transformer panels cost the forward pass: nothing set (no panel
    // listens), an observer that declines every tensor, or the panels' capture
    // (one layer's attention and every layer's residual for the logit lens).
    IdleObserver idle;
    PanelCapture capture({.attention_layer = 0, .window = 64, .logit_lens = true});
    if (o.observer == "idle") bp.observer = &idle;
    else if (o.observer == "panels") bp.observer = &capture;
    else if (o.observer != "none") throw Error(fmt::format("bench: --observer {} is not one of none, idle, panels", o.observer));
    const auto* cpu = dynamic_cast<const CpuBackend*>(&backend);
    const ThreadPool::Stats pool_before = cpu ? cpu->pool_stats() : ThreadPool::Stats{};
    const BenchResult r = run_bench(backend, bp);
    // The passes the adaptive pool ran on the caller alone (timing said
    // faster, or no CPU was free): a figure on a busy machine is read with it.
    std::optional<std::pair<double, double>> one_thread;  // share of passes, of which for want of a CPU
    if (cpu && cpu->n_threads() > 1) {
        const ThreadPool::Stats after = cpu->pool_stats();
        const auto lists = static_cast<double>(after.lists - pool_before.lists);
        if (lists > 0)
            one_thread = {static_cast<double>(after.solo_lists - pool_before.solo_lists) / lists,
                          static_cast<double>(after.crowded_lists - pool_before.crowded_lists) / lists};
    }

    // The CPU's copy of the weights, read after the runs (the kernel may
    // have gathered more onto huge pages meanwhile).
    std::optional<CpuWeightsMemory> copy;
    if (cpu) copy = model->cpu_weights_memory();

    const double size_mib = static_cast<double>(model->file().n_tensor_bytes()) / (1024.0 * 1024.0);
    const double params_m = static_cast<double>(model->n_params()) / 1e6;
    const std::string type(ggml_type_name(model->main_type()));
    if (o.json) {
        nlohmann::ordered_json j;
        j["model"] = o.model;
        j["type"] = type;
        j["n_params"] = model->n_params();
        j["size_bytes"] = model->file().n_tensor_bytes();
        j["decode_weight_bytes"] = decode_weight_bytes(*model);
        j["backend"] = backend.name();
        if (cpu) j["threads"] = cpu->n_threads();
        if (one_thread) {
            j["passes_on_one_thread"] = one_thread->first;
            j["passes_on_one_thread_no_cpu_free"] = one_thread->second;
        }
        if (copy) {
            j["cpu_weights_bytes"] = copy->bytes;
            j["cpu_weights_on_huge_pages_bytes"] = copy->huge_page_bytes;
        }
        j["load_ms"] = load_ms;
        j["observer"] = o.observer;
        j["results"] = nlohmann::ordered_json::array();
        for (const BenchTest* t : {&r.prefill, &r.decode}) {
            if (t->n_tokens == 0) continue;
            j["results"].push_back({{"test", t->name},
                                    {"n_tokens", t->n_tokens},
                                    {"tokens_per_s", t->median_tok_s},
                                    {"ms", t->median_ms},
                                    {"samples_tokens_per_s", t->tok_s}});
        }
        // Token pieces may hold half a UTF-8 character: replace, never throw.
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }
    // The t/s column as wide as its widest cell ("33182.0 ± 4526.5" on a
    // fast machine), so the table stays a table; fmt pads by characters, and
    // "±" is one character of two bytes.
    std::vector<std::string> rates;
    for (const BenchTest* t : {&r.prefill, &r.decode}) {
        if (t->n_tokens == 0) continue;
        double lo = t->tok_s.front(), hi = lo;
        for (double v : t->tok_s) lo = std::min(lo, v), hi = std::max(hi, v);
        rates.push_back(fmt::format("{:.1f} ± {:.1f}", t->median_tok_s, (hi - lo) / 2));
    }
    std::size_t rate_w = 12;
    for (const auto& cell : rates) rate_w = std::max(rate_w, cell.size() - 1);  // "±" counted once
    fmt::print("| {:<28} | {:>9} | {:>7} | {:<5} | {:<24} | {:>7} | {:>{}} |\n", "model", "size", "params", "type", "backend",
               "test", "t/s", rate_w);
    fmt::print("|{}|{}|{}|{}|{}|{}|{}|\n", std::string(30, '-'), std::string(11, '-'), std::string(9, '-'), std::string(7, '-'),
               std::string(26, '-'), std::string(9, '-'), std::string(rate_w + 2, '-'));
    std::size_t row = 0;
    for (const BenchTest* t : {&r.prefill, &r.decode}) {
        if (t->n_tokens == 0) continue;
        fmt::print("| {:<28} | {:5.1f} MiB | {:5.1f} M | {:<5} | {:<24} | {:>7} | {:>{}} |\n",
                   printable(std::filesystem::path(o.model).filename().string()).substr(0, 28), size_mib, params_m, type,
                   backend.name(), t->name, rates[row++], rate_w);
    }
    std::fflush(stdout);
    std::printf("(median of %d run%s after a warm-up; ± is half the range; load %.0f ms; observer: %s", o.repetitions,
                o.repetitions == 1 ? "" : "s", load_ms, o.observer.c_str());
    if (one_thread)
        std::printf("; passes on one thread: %.0f %%, %.0f %% for want of a free CPU", one_thread->first * 100,
                    one_thread->second * 100);
    if (copy)
        std::printf("; the CPU's copy of the weights: %.1f MiB, %.1f MiB of it on huge pages",
                    static_cast<double>(copy->bytes) / (1 << 20), static_cast<double>(copy->huge_page_bytes) / (1 << 20));
    std::printf(")\n");
    return exit_ok;
}

}  // namespace

void add_bench(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("bench", "Measure prefill and decode tokens/s");
    auto o = std::make_shared<BenchOptions>();
    sub->add_option("-m,--model", o->model, "A GGUF model (Llama architecture)")->transform(model_file());
    sub->add_option("-p,--n-prompt", o->n_prompt, "Prefill test: prompt tokens in one batch (0: skip)")
        ->check(CLI::Range(0, 1 << 20));
    auto* n_gen = sub->add_option("-n,--n-gen", o->n_gen,
                                  "Decode test: tokens generated one by one (0: skip; --contention: per slice, 32 unless given)")
                      ->check(CLI::Range(0, 1 << 20));
    add_threads_option(sub, o->threads);
    auto* reps = sub->add_option("-r,--repetitions", o->repetitions, "Timed runs per test (--batch: 3 unless given, at most 100; --contention: rounds, each --slices runs per thread count)")
                     ->check(CLI::Range(1, 1000));
    add_backend_option(sub, o->backend);
    sub->add_flag("--json", o->json, "Print machine-readable JSON instead");
    sub->add_option("--random", o->random_preset, "Write a random-weight model first: tiny, 15m, 110m or 1b");
    sub->add_option("--type", o->type, "Weight type of the random model: f32, f16, q8_0, q4_0");
    sub->add_option("--seed", o->seed, "Seed of the random weights")->check(seed_number());
    sub->add_option("--out", o->out, "Where to write the random model (a new file; see --force)");
    sub->add_flag("--force", o->force, "Overwrite --out when it exists (a regular file only)");
    add_progress_option(sub);
    sub->add_option("--observer", o->observer,
                    "none (default), idle (an observer that declines every tensor) or panels (the panels' capture)");
    sub->add_option("--batch", o->batch.batch_sizes,
                    "Batched decode instead: batch sizes, e.g. 1,2,4,8,16,32,64 (tokens/s, TPOT, knee, roofline)")
        ->delimiter(',');
    sub->add_option("--context", o->batch.n_context, "--batch: tokens each sequence holds before the timed steps")
        ->check(CLI::Range(1, 1 << 20));
    sub->add_option("--steps", o->batch.n_steps, "--batch: timed decode steps per run")->check(CLI::Range(1, 4096));
    sub->add_flag("--contention", o->contention,
                  "Decode on 1 thread and on --threads, quiet and beside one spinning process per CPU");
    sub->add_option("--hogs", o->hogs, "With --contention: how many CPU hogs (0: one per CPU; at most 4 a CPU)")->check(CLI::Range(0, 1024));
    sub->add_option("--slices", o->slices,
                    "With --contention: decodes of -n tokens per thread count per round, the counts taking turns")
        ->check(CLI::Range(1, 1000));
    add_examples(sub, {"sixstep bench -m stories-3m-f16.gguf -p 64 -n 64 -r 3",
                      "sixstep bench -m stories-3m-f16.gguf --batch 1,4,16 --context 32 --steps 8",
                      "sixstep bench --random 15m --type q8_0 --out r15m-q8_0.gguf",
                      "sixstep bench -m r15m-q8_0.gguf -r 1"});
    commands.push_back({sub, [o, reps, n_gen, sub] {
                            // A mode's options without their mode are refused, not ignored.
                            const bool batch = !o->batch.batch_sizes.empty();
                            if (batch && o->contention) throw Error("--batch and --contention: choose one");
                            for (const char* opt : {"--context", "--steps"})
                                if (!batch && sub->count(opt) > 0)
                                    throw Error(fmt::format("{} belongs to a batched run: add --batch SIZES", opt));
                            for (const char* opt : {"--hogs", "--slices"})
                                if (!o->contention && sub->count(opt) > 0)
                                    throw Error(fmt::format("{} belongs to a contention run: add --contention", opt));
                            const bool writes = !o->random_preset.empty();
                            for (const char* opt : {"--type", "--out", "--force"})
                                if (!writes && sub->count(opt) > 0)
                                    throw Error(fmt::format("{} belongs to writing a random model: add --random PRESET", opt));
                            // --random --out F writes F and measures nothing unless -m names a model:
                            // a measuring option without -m would be silently ignored.
                            if (writes && o->model.empty() && !o->out.empty())  // no --out: its own error
                                for (const char* opt : {"-p", "-n", "-r", "-t", "--batch", "--contention", "--observer", "--backend"})
                                    if (sub->count(opt) > 0)
                                        throw Error(fmt::format("{} measures a model, and --random --out only writes one: "
                                                                "add -m {} to measure the file it writes",
                                                                opt, printable(o->out)));
                            if (reps->count() > 0) o->batch.repetitions = o->repetitions;
                            // Short slices interleave the thread counts finely (run_contention).
                            if (o->contention && n_gen->count() == 0) o->n_gen = 32;
                            o->batch.seed = o->seed;
                            return run_bench_command(*o);
                        }});
}

}  // namespace sixstep::cli
