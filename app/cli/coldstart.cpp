// sixstep coldstart -m F.gguf [--requests N] [--idle 0,20,300,5,900,30] [--unload-after 60]
//                  [--prompt TEXT] [-n 16] [-t T] [--no-drop] [--json]
//   The first request to a fresh instance against the warm ones: from disk
//   (the file evicted from the page cache first, when the kernel allows it),
//   from the page cache, warm; then requests after idle gaps served by an
//   instance that unloads when idle against one kept warm.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/tools/cold_start.h"

namespace sixstep::cli {

namespace {

struct ColdStartOptions {
    llm::ColdStartParams params;
    bool no_drop = false, json = false;
};

int run_coldstart(ColdStartOptions o) {
    using namespace sixstep::llm;
    using serving::bytes_decimal;
    using serving::with_commas;
    o.params.drop_cache = !o.no_drop;
    const ColdStartResult r = measure_cold_start(o.params);
    if (o.json) {
        std::printf("%s\n", app::dump_json(cold_start_json(r)).c_str());
        return exit_ok;
    }
    std::printf("Cold start vs warm: %s (%s, %s parameters), %s per request\n", printable(r.model).c_str(),
                bytes_decimal(static_cast<double>(r.file_bytes)).c_str(), with_commas(r.n_params).c_str(),
                count_of(static_cast<std::size_t>(o.params.n_predict), "token", "tokens").c_str());
    if (!o.params.drop_cache)
        std::printf("page cache: left as it was (--no-drop)\n");
    else if (r.drop.verified)
        std::printf("page cache: dropped before the first request (mincore: %.0f%% → %.0f%% of the file resident)\n",
                    100 * r.drop.before, 100 * r.drop.after);
    else
        std::printf("page cache: NOT dropped — %s\n", r.drop.note.c_str());
    std::printf("\n%3s  %-18s %6s %9s %9s %11s %10s %8s %9s\n", "#", "start", "cached", "load ms", "TTFT ms",
                "request ms", "total ms", "major pf", "minor pf");
    for (const RequestTiming& t : r.requests)
        std::printf("%3d  %-18s %5.0f%% %9.2f %9.2f %11.2f %10.2f %8ld %9ld\n", t.index, start_name(t.start),
                    100 * t.resident_before, t.load_ms, t.ttft_ms, t.request_ms, t.total_ms, t.major_faults,
                    t.minor_faults);
    std::printf("\nthe first request waited %.1f× a warm one (%.2f ms against a median warm %.2f ms)\n",
                r.cold_over_warm, r.requests[0].total_ms, r.warm_median_ms);
    // From the load column: the requests' own parts vary from run to run.
    if (const std::optional<double> disk = disk_read_ms(r))
        std::printf("reading the file from disk: %.2f ms (load from disk − load from the page cache)\n", *disk);
    else if (compares_disk_and_cache(r))
        // A negative difference is not a time: the machine's noise was larger than the disk's share.
        std::printf("reading the file from disk: not measured — the load from disk (%.2f ms) and the load from the "
                    "page cache (%.2f ms) were within the noise of each other\n",
                    r.requests[0].load_ms, r.requests[1].load_ms);
    std::printf("mapping, checking and copying the weights, building the instance: %.2f ms (the load from the page "
                "cache)\n",
                r.requests[1].load_ms);
    std::printf("before all of these, the process's own first load and request: %.2f ms (its code, memory and threads "
                "cold as well, once per process; not in the table)\n",
                r.process_first.total_ms);

    const KeepWarm& kw = r.keep_warm;
    if (!kw.rows.empty()) {
        std::printf("\nKeep instances warm: requests after idle gaps; one instance unloads after %g s idle, the other "
                    "stays loaded\n",
                    o.params.unload_after_s);
        std::printf("%3s %9s  %-28s %14s\n", "#", "idle s", "unloads when idle", "kept warm");
        for (const KeepWarmRow& row : kw.rows)
            std::printf("%3d %9g  %10.2f ms %-14s %11.2f ms\n", row.index, row.idle_s, row.scale_to_zero_ms,
                        row.unloaded ? (kw.cold_from_disk ? "(cold, disk)" : "(cold)") : "(warm)", row.kept_warm_ms);
        std::printf("total wait: %.2f ms (worst %.2f ms, %d cold) against %.2f ms (worst %.2f ms)\n",
                    kw.scale_to_zero_total_ms, kw.scale_to_zero_worst_ms, kw.n_cold, kw.kept_warm_total_ms,
                    kw.kept_warm_worst_ms);
        std::printf("weights held in memory: %s s × %s = %s·s against %s s × %s = %s·s\n",
                    with_commas(kw.scale_to_zero_held_s, 0).c_str(), bytes_decimal(kw.weight_bytes).c_str(),
                    bytes_decimal(kw.scale_to_zero_held_s * kw.weight_bytes).c_str(),
                    with_commas(kw.kept_warm_held_s, 0).c_str(), bytes_decimal(kw.weight_bytes).c_str(),
                    bytes_decimal(kw.kept_warm_held_s * kw.weight_bytes).c_str());
    }
    std::printf("\nNotes:\n");
    for (const std::string& n : r.notes) std::printf("  - %s\n", n.c_str());
    return exit_ok;
}

}  // namespace

void add_coldstart(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<ColdStartOptions>();
    llm::ColdStartParams& p = o->params;
    auto* sub = app.add_subcommand("coldstart", "Cold start vs warm requests, and keeping instances warm");
    sub->add_option("-m,--model", p.model, "A GGUF model (Llama architecture)")->required()->transform(model_file());
    sub->add_option("--requests", p.n_warm, "Warm requests after the cold ones (default 3)")->check(CLI::Range(1, 1000));
    sub->add_option("--idle", p.idle_s, "Idle gaps before each keep-warm request, seconds (default 0,20,300,5,900,30)")
        ->delimiter(',');
    sub->add_option("--unload-after", p.unload_after_s, "The scale-to-zero instance unloads after this many idle seconds (default 60)");
    sub->add_option("--prompt", p.prompt, "The request's prompt (default \"Once upon a time\")");
    sub->add_option("-n,--n-predict", p.n_predict, "Tokens per request (default 16)")->check(CLI::Range(1, 4096));
    add_threads_option(sub, p.n_threads);
    sub->add_flag("--no-drop", o->no_drop, "Leave the page cache alone (no cold-from-disk request)");
    sub->add_flag("--json", o->json, "Print one JSON object instead");
    add_progress_option(sub);
    add_examples(sub, {"sixstep coldstart -m stories-3m-f16.gguf --no-drop --requests 2"});
    commands.push_back({sub, [o] { return run_coldstart(*o); }});
}

}  // namespace sixstep::cli
