// sixstep traffic -m F.gguf [--arrivals poisson|bursty|trace:FILE] [--rate R] [--count N]
//                 [--policy static|continuous] [--max-batch B] [--kv-blocks K] [--block-size S]
//                 [--step-tokens T] [--prefix-cache] [--system-prompt TEXT | --shared-prefix N]
//                 [--shared-fraction F] [--max-tokens N] [--min-tokens N] [--ignore-eos] [--seed S]
//                 [--ttft-target MS] [--tpot-target MS] [--compare-contiguous] [--json]
// Serves a stream of requests through one model on the virtual clock (every
// step's cost measured on the engine) and prints latency percentiles,
// throughput, goodput, batch occupancy, KV use and preemptions — each with
// its definition. --compare-contiguous runs the same requests with a
// contiguous per-request KV reservation and with pages, side by side.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/latency_table.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/serving/traffic.h"

namespace sixstep::cli {

namespace {

using namespace sixstep::serving;
using json = nlohmann::ordered_json;

struct TrafficOptions {
    std::string model, arrivals = "poisson", policy = "continuous", backend = "cpu";
    std::string system_prompt;
    double rate = 4, burstiness = 0.25, shared_fraction = 1, ttft_target = 0, tpot_target = 0;
    int count = 100;
    // the engine's own defaults, shown by --help
    int max_batch = serving::SchedulerParams{}.max_batch, step_tokens = serving::SchedulerParams{}.max_step_tokens;
    int kv_blocks = llm::default_kv_blocks, block_size = llm::default_block_size;
    int shared_prefix = 0, max_tokens = 64, min_tokens = 0, threads = 0;
    std::uint64_t seed = 1;
    bool prefix_cache = false, ignore_eos = false, compare_contiguous = false, json = false;
};

TrafficParams traffic_params(const TrafficOptions& o) {
    TrafficParams p;
    WorkloadParams& w = p.workload;
    if (o.arrivals == "poisson") {
        w.arrivals.kind = ArrivalKind::poisson;
    } else if (o.arrivals == "bursty") {
        w.arrivals.kind = ArrivalKind::bursty;
    } else if (o.arrivals.rfind("trace:", 0) == 0 && o.arrivals.size() > 6) {
        w.arrivals.kind = ArrivalKind::trace;
        w.trace_file = o.arrivals.substr(6);
    } else {
        throw Error(fmt::format("--arrivals {}: use poisson, bursty or trace:FILE", o.arrivals));
    }
    w.arrivals.rate = o.rate;
    w.arrivals.burstiness = o.burstiness;
    w.arrivals.count = o.count;
    w.arrivals.seed = o.seed;
    w.max_tokens = o.max_tokens;
    w.min_tokens = o.min_tokens;
    w.system_prompt = o.system_prompt;
    w.shared_prefix = o.shared_prefix;
    w.shared_fraction = o.shared_fraction;
    const auto policy = parse_batch_policy(o.policy);
    if (!policy) throw Error(fmt::format("--policy {}: use static or continuous", o.policy));
    p.scheduler.policy = *policy;
    p.scheduler.max_batch = o.max_batch;
    p.scheduler.max_step_tokens = o.step_tokens;
    p.scheduler.prefix_cache = o.prefix_cache;
    p.scheduler.stop_at_eog = !o.ignore_eos;
    p.kv_blocks = o.kv_blocks;
    p.block_size = o.block_size;
    if (o.ttft_target < 0 || o.tpot_target < 0) throw Error("targets are milliseconds >= 0 (0: no target)");
    p.targets = {o.ttft_target, o.tpot_target};
    if (o.compare_contiguous && o.prefix_cache)
        throw Error("--compare-contiguous and --prefix-cache: prefix caching needs pages; compare without it");
    return p;
}

std::string setup_line(const TrafficParams& p, const TrafficRun& r) {
    const SchedulerParams& s = p.scheduler;
    std::string line = fmt::format("{} batching, max batch {}", batch_policy_name(s.policy), s.max_batch);
    if (s.policy == BatchPolicy::continuous)
        line += fmt::format(", {} per step", count_of(static_cast<std::size_t>(s.max_step_tokens), "token", "tokens"));
    line += fmt::format(", {} KV: {} blocks x {} positions, prefix cache {}", kv_layout_name(s.kv_layout),
                        r.info.n_blocks, r.info.block_size, s.prefix_cache ? "on" : "off");
    return line;
}

std::string workload_line(const TrafficParams& p, const std::vector<RequestSpec>& reqs) {
    const WorkloadParams& w = p.workload;
    std::string line = count_of(reqs.size(), "request", "requests") + ", ";
    if (w.arrivals.kind == ArrivalKind::trace)
        line += fmt::format("arrivals from {}", w.trace_file);
    else if (w.arrivals.kind == ArrivalKind::bursty)
        line += fmt::format("bursty arrivals {:g} req/s (gamma gaps, burstiness {:g}, seed {})", w.arrivals.rate,
                            w.arrivals.burstiness, w.arrivals.seed);
    else
        line += fmt::format("Poisson arrivals {:g} req/s (seed {})", w.arrivals.rate, w.arrivals.seed);
    int lo = 1 << 30, hi = 0, shared = 0;
    for (const RequestSpec& r : reqs) {
        lo = std::min(lo, static_cast<int>(r.prompt.size()));
        hi = std::max(hi, static_cast<int>(r.prompt.size()));
        shared += r.shares_prefix;
    }
    line += fmt::format(", prompts {}..{} tokens", lo, hi);
    if (shared > 0) line += fmt::format(" ({} share a prefix)", shared);
    if (w.arrivals.kind != ArrivalKind::trace) {
        const int min_tokens = w.min_tokens > 0 ? w.min_tokens : std::max(1, w.max_tokens / 4);
        line += fmt::format(", output {}..{} tokens (uniform)", min_tokens, w.max_tokens);
    }
    return line;
}

// A figure's value: four significant digits, but a count or anything of
// 10,000 and more as a whole number with separators ("17,870", not
// "1.787e+04": the prefill tokens the README quotes read 58,566).
std::string figure_value(double v) {
    if (std::isfinite(v) && v >= 0 && (v >= 1e4 || v == std::round(v))) return with_commas(v, 0);
    return fmt::format("{:.4g}", v);
}

void print_report(const TrafficReport& rep) {
    print_latency_table(rep.latencies, 26);
    std::printf("\n%-36s %12s  %-9s %s\n", "figure", "value", "unit", "definition");
    for (const Metric& m : rep.totals)
        std::printf("%-36s %12s  %-9s %s\n", m.name.c_str(), figure_value(m.value).c_str(), m.unit.c_str(),
                    m.definition.c_str());
}

json report_json(const TrafficRun& r) {
    json j;
    j["latencies"] = latencies_json(r.report.latencies);
    j["totals"] = totals_json(r.report.totals);
    j["requests"] = json::array();
    for (const RequestRecord& q : r.requests) {
        json spans = json::array();
        for (const PhaseSpan& s : q.spans) spans.push_back({phase_name(s.phase), s.t0_ms, s.t1_ms});
        j["requests"].push_back({{"id", q.id},
                                 {"arrival_ms", q.arrival_ms},
                                 {"n_prompt", q.n_prompt},
                                 {"n_output", q.output.size()},
                                 {"shares_prefix", q.shares_prefix},
                                 {"first_scheduled_ms", q.first_scheduled_ms},
                                 {"first_token_ms", q.first_token_ms},
                                 {"finish_ms", q.finish_ms},
                                 {"ttft_ms", measured_or_null(ttft_ms(q))},
                                 {"tpot_ms", measured_or_null(tpot_ms(q))},
                                 {"e2e_ms", measured_or_null(e2e_ms(q))},
                                 {"stop_reason", llm::stop_reason_name(q.stop_reason)},
                                 {"preemptions", q.n_preemptions},
                                 {"cached_tokens", q.n_cached_tokens},
                                 {"computed_tokens", q.n_computed_tokens},
                                 {"spans", spans}});
    }
    // The timeline: one row per forward pass, columns named once.
    j["steps"] = {{"columns", {"t_ms", "cost_ms", "forward_ms", "sample_ms", "cpu_wait_ms", "n_tokens", "n_sequences",
                               "n_running", "n_waiting", "n_preempted", "kv_blocks_used", "kv_blocks_cached",
                               "kv_slots_filled", "kv_slots_held", "kv_slots_stranded"}},
                  {"rows", json::array()}};
    for (const StepRecord& s : r.steps)
        j["steps"]["rows"].push_back({s.t_begin_ms, s.cost_ms, s.shape.forward_ms, s.shape.sample_ms,
                                      s.shape.cpu_wait_ms, s.shape.n_tokens, s.shape.n_sequences, s.n_running,
                                      s.n_waiting, s.n_preempted, s.n_blocks_used, s.n_blocks_cached,
                                      s.n_slots_filled, s.n_slots_held, s.n_slots_stranded});
    j["wall_ms"] = r.wall_ms;
    return j;
}

// The figures that tell the two layouts apart, side by side.
void print_comparison(const KvLayoutComparison& c) {
    std::printf("\n%-34s %12s %12s  %s\n", "contiguous vs paged KV", "contiguous", "paged", "definition");
    for (const char* key : {"running_peak", "running_mean", "kv_token_share", "kv_internal_waste", "kv_external_waste",
                            "kv_blocks_mean", "preemptions", "output_throughput", "duration"}) {
        const Metric& a = c.contiguous.report.total(key);
        const Metric& b = c.paged.report.total(key);
        const std::string name = a.unit.empty() ? a.name : fmt::format("{} ({})", a.name, a.unit);
        std::printf("%-34s %12s %12s  %s\n", name.c_str(), fmt::format("{:.4g}", a.value).c_str(),
                    fmt::format("{:.4g}", b.value).c_str(), a.definition.c_str());
    }
    for (const char* key : {"ttft", "queue", "e2e"}) {
        const LatencyMetric& a = c.contiguous.report.latency(key);
        const LatencyMetric& b = c.paged.report.latency(key);
        const std::string name = fmt::format("{} p50 (ms)", a.name);
        std::printf("%-34s %12.1f %12.1f  %s\n", name.c_str(), a.summary.p50, b.summary.p50, a.definition.c_str());
    }
}

int run_traffic_command(const TrafficOptions& o) {
    using llm::Backend;
    TrafficParams params = traffic_params(o);
    const RunnableModel m = load_runnable_model(o.model, o.backend, o.threads);
    params.workload.n_ctx = params.n_ctx > 0 ? params.n_ctx : m.model->hparams().n_ctx;
    Backend& backend = *m.backend;
    const auto& codec = m.codec;
    const std::vector<RequestSpec> reqs = make_workload(params.workload, *codec, m.bos());

    const std::string clock_line =
        "virtual: arrivals as drawn, each step advances it by its measured forward pass + sampling, less the "
        "time the engine's thread waited for a CPU";
    if (o.compare_contiguous) {
        const KvLayoutComparison c = compare_kv_layouts(backend, *codec, reqs, params);
        if (o.json) {
            json j;
            j["model"] = o.model;
            j["backend"] = backend.name();
            j["setup"] = setup_line(params, c.paged);
            j["workload"] = workload_line(params, reqs);
            j["clock"] = clock_line;
            j["contiguous"] = report_json(c.contiguous);
            j["paged"] = report_json(c.paged);
            std::printf("%s\n", app::dump_json(j).c_str());
            return exit_ok;
        }
        std::printf("traffic: %s on %s\nsetup: %s\nworkload: %s\nclock: %s\n", printable(o.model).c_str(), backend.name().c_str(),
                    setup_line(params, c.paged).c_str(), workload_line(params, reqs).c_str(), clock_line.c_str());
        std::printf("contiguous: each request reserves prompt + max tokens in one run of blocks when admitted "
                    "(first fit); paged: blocks taken as it grows\n");
        print_comparison(c);
        return exit_ok;
    }

    const TrafficRun run = run_traffic(backend, *codec, reqs, params);
    if (o.json) {
        json j;
        j["model"] = o.model;
        j["backend"] = backend.name();
        j["setup"] = setup_line(params, run);
        j["workload"] = workload_line(params, reqs);
        j["clock"] = clock_line;
        j.update(report_json(run));
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }
    std::printf("traffic: %s on %s\nsetup: %s\nworkload: %s\nclock: %s\n", printable(o.model).c_str(), backend.name().c_str(),
                setup_line(params, run).c_str(), workload_line(params, reqs).c_str(), clock_line.c_str());
    std::printf("ran %s in %s of virtual time (%s wall)\n", count_of(run.requests.size(), "request", "requests").c_str(),
                duration(run.info.duration_ms / 1000.0).c_str(), duration(run.wall_ms / 1000.0).c_str());
    print_report(run.report);
    return exit_ok;
}

}  // namespace

void add_traffic(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand(
        "traffic", "Serve a stream of requests through one model on a virtual clock: latency, throughput, KV use");
    auto o = std::make_shared<TrafficOptions>();
    sub->add_option("-m,--model", o->model, "A GGUF model (Llama architecture)")->required()->transform(model_file());
    sub->add_option("--arrivals", o->arrivals, "poisson, bursty (gamma gaps) or trace:FILE (arrival_ms max_tokens prompt)");
    sub->add_option("--rate", o->rate, "Mean arrivals per second of virtual time (poisson, bursty)");
    sub->add_option("--burstiness", o->burstiness, "bursty: gamma shape in [0.01, 1]; smaller is clumpier");
    sub->add_option("--count", o->count, "Requests (poisson, bursty)");
    sub->add_option("--policy", o->policy, "static (a batch ends with its longest request) or continuous");
    sub->add_option("--max-batch", o->max_batch, "Most requests running at once");
    sub->add_option("--kv-blocks", o->kv_blocks, "Blocks in the KV pool");
    sub->add_option("--block-size", o->block_size, "Positions per KV block");
    sub->add_option("--step-tokens", o->step_tokens, "continuous: most tokens per forward pass (prefill chunks + decode)");
    sub->add_flag("--prefix-cache", o->prefix_cache, "Reuse KV blocks of identical prompt prefixes");
    sub->add_option("--system-prompt", o->system_prompt, "Text in front of every prompt (a shared prefix)");
    sub->add_option("--shared-prefix", o->shared_prefix, "Or: that many tokens of a built-in system prompt in front");
    sub->add_option("--shared-fraction", o->shared_fraction,
                    "Share of requests that carry the prefix (--system-prompt or --shared-prefix), 0..1");
    sub->add_option("--max-tokens", o->max_tokens,
                    "Most tokens per request (each draws its own from min..max; poisson, bursty)");
    sub->add_option("--min-tokens", o->min_tokens, "Fewest tokens drawn (0: max / 4; poisson, bursty)");
    sub->add_flag("--ignore-eos", o->ignore_eos, "Generate every drawn token, past the end-of-text token");
    sub->add_option("--seed", o->seed, "Seed of the arrivals, prompts and lengths")->check(seed_number());
    sub->add_option("--ttft-target", o->ttft_target, "Goodput: TTFT target in ms (0: none)")->check(finite_number(0, 1e9));
    sub->add_option("--tpot-target", o->tpot_target, "Goodput: TPOT target in ms (0: none)")->check(finite_number(0, 1e9));
    sub->add_flag("--compare-contiguous", o->compare_contiguous,
                  "Run twice: contiguous per-request KV reservation vs pages, side by side");
    add_threads_option(sub, o->threads);
    add_backend_option(sub, o->backend);
    sub->add_flag("--json", o->json, "Print machine-readable JSON instead");
    add_progress_option(sub);
    add_examples(sub, {"sixstep traffic -m stories-3m-f16.gguf --rate 50 --count 40 --max-batch 8",
                      "sixstep traffic -m stories-3m-f16.gguf --rate 100000 --count 32 --max-batch 16 --kv-blocks 24 --compare-contiguous",
                      "sixstep traffic -m stories-3m-f16.gguf --count 40 --shared-prefix 200 --prefix-cache --ttft-target 50"});
    commands.push_back({sub, [o, sub] {
        // Options the chosen arrivals do not read are refused, not ignored.
        const bool trace = o->arrivals.rfind("trace:", 0) == 0;
        for (const char* opt : {"--rate", "--count"})
            if (trace && sub->count(opt) > 0)
                throw Error(fmt::format("{}: trace arrivals take their times and count from the file", opt));
        for (const char* opt : {"--max-tokens", "--min-tokens"})
            if (trace && sub->count(opt) > 0)
                throw Error(fmt::format("{}: trace arrivals take each request's tokens from the file (arrival_ms "
                                        "max_tokens prompt)",
                                        opt));
        if (o->policy == "static" && sub->count("--step-tokens") > 0)
            throw Error("--step-tokens: static batching reads whole prompts in one pass; the token budget per pass "
                        "is continuous batching's (--policy continuous)");
        if (sub->count("--system-prompt") > 0 && o->system_prompt.empty())
            throw Error("--system-prompt: an empty text puts nothing in front of the prompts; give some text, or "
                        "leave the option out");
        if (sub->count("--shared-fraction") > 0 && o->system_prompt.empty() && o->shared_prefix == 0)
            throw Error("--shared-fraction: there is no shared prefix to share; add --system-prompt TEXT or "
                        "--shared-prefix N");
        if (o->arrivals != "bursty" && sub->count("--burstiness") > 0)
            throw Error("--burstiness: only bursty arrivals have a burstiness (--arrivals bursty)");
        return run_traffic_command(*o);
    }});
}

}  // namespace sixstep::cli
