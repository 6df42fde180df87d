// sixstep canary [--fraction 0.1] [--requests 1000] [--seed 7] [--v2-unit m|km] [--baseline 100]
//               [--min-samples 20] [--mean-threshold 0.25] [--range-threshold 0.1] [--promote-after 50]
//               [--json [--every-request]]
//   Inference, serving and deployment with the delivery model: one request
//   through each version; a stream of requests routed between v1 and a
//   canary v2 (trained on metres, or on kilometres with --v2-unit km);
//   the monitor's alarm, the rollback (or promotion), and every request counted.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"
#include "pipeline/core/model.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/canary.h"

namespace sixstep::cli {

namespace {

struct CanaryOptions {
    serving::CanaryParams params;
    bool json = false, every_request = false;
};

void print_version(const serving::ModelVersion& v, const serving::VersionTally& t) {
    std::printf("  %s %s  b = %.4g, w = (%.4g, %.4g, %.4g) — %s\n", v.name.c_str(), checksum_hex(v.checksum).c_str(),
                v.params.bias, v.params.w[0], v.params.w[1], v.params.w[2], v.trained_on.c_str());
    // A version that answered nothing has no mean: said so, not "mean 0.0 min".
    const std::string served = t.answered == 0
                                   ? std::string("served no request")
                                   : fmt::format("served {} request{}, mean {:.1f} min, {} out of range", t.answered,
                                                 t.answered == 1 ? "" : "s", t.mean_minutes, t.out_of_range);
    std::printf("      trained on distances %g–%g %s, loss %.3f on its own data; %s\n", v.train_min[0], v.train_max[0],
                v.distance_unit.c_str(), v.train_loss, served.c_str());
}

int run_canary_command(const CanaryOptions& o) {
    using namespace sixstep::serving;
    const CanaryResult r = run_canary(o.params);
    if (o.json) {
        std::printf("%s\n", app::dump_json(canary_json(r, o.every_request)).c_str());
        return exit_ok;
    }
    std::printf("INFERENCE — one request (3 km, no congestion, no express lane) through the six steps:\n");
    std::printf("  v1 %s: %s\n", checksum_hex(r.v1.checksum).c_str(), r.inference_v1.c_str());
    std::printf("  v2 %s: %s\n", checksum_hex(r.v2.checksum).c_str(), r.inference_v2.c_str());
    std::printf("\nVERSIONS (identified by the checksum of their weights):\n");
    print_version(r.v1, r.tally_v1);
    print_version(r.v2, r.tally_v2);
    std::printf("\nSERVING — %s: %d answered by v1, %d by v2, %d lost\n",
                count_of(static_cast<std::size_t>(r.n_requests), "request", "requests").c_str(), r.answered_v1,
                r.answered_v2, r.lost);
    std::printf("\nDEPLOYMENT:\n");
    for (const CanaryEvent& e : r.events) std::printf("  [request %4d] %s\n", e.request, e.what.c_str());
    if (r.rolled_back)
        std::printf("  %s answered by v2 before the rollback\n",
                    (count_of(static_cast<std::size_t>(r.exposed), "request", "requests") + (r.exposed == 1 ? " was" : " were")).c_str());
    std::printf("\nTimeline (mean predicted minutes per window):\n  %-13s %6s %8s %6s %8s\n", "requests", "v1", "mean",
                "v2", "mean");
    // A window a version did not answer in has no mean: a dash, not 0.0.
    const auto mean = [](int n, double m) { return n ? fmt::format("{:.1f}", m) : std::string("-"); };
    for (const CanaryWindow& w : r.windows)
        std::printf("  %5d–%-7d %6d %8s %6d %8s\n", w.first, w.last, w.n_v1, mean(w.n_v1, w.v1_mean).c_str(), w.n_v2,
                    mean(w.n_v2, w.v2_mean).c_str());
    return exit_ok;
}

}  // namespace

void add_canary(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<CanaryOptions>();
    serving::CanaryParams& p = o->params;
    auto* sub = app.add_subcommand("canary", "Inference vs serving vs deployment: a canary v2 trained on metres, "
                                             "monitored, rolled back, nothing lost");
    sub->add_option("--fraction", p.fraction, "Share of traffic for the canary, 0..1 (default 0.1)");
    sub->add_option("--requests", p.n_requests, "Requests in the stream (default 1000)");
    auto* baseline =
        sub->add_option("--baseline", p.baseline_requests, "Requests served by v1 alone before the canary (default 100)");
    sub->add_option("--seed", p.seed, "Seed of the traffic and the routing (default 7)")->check(seed_number());
    sub->add_option("--v2-unit", p.v2_unit, "Distance unit of v2's training data: m (the skew) or km (a sound v2)");
    sub->add_option("--min-samples", p.min_samples, "Canary answers before the monitor judges (default 20)");
    sub->add_option("--mean-threshold", p.mean_threshold, "Alarm when the mean predicted minutes differ by more than "
                                                          "this share (default 0.25)");
    sub->add_option("--range-threshold", p.range_threshold, "Alarm when the out-of-range share exceeds v1's by more "
                                                            "than this (default 0.1)");
    sub->add_option("--promote-after", p.promote_after, "Canary answers without an alarm before promotion (0: never; "
                                                        "default 50)");
    sub->add_flag("--json", o->json, "Print one JSON object instead");
    add_progress_option(sub);
    sub->add_flag("--every-request", o->every_request, "With --json: include every request");
    add_examples(sub, {"sixstep canary",
                      "sixstep canary --v2-unit km"});
    commands.push_back({sub, [o, baseline] {
                            // An option of the other mode is refused, not ignored.
                            if (o->every_request && !o->json)
                                throw Error("--every-request belongs to a JSON run: add --json");
                            // In the options' words: "100 baseline requests" blamed a default nobody typed.
                            const serving::CanaryParams& cp = o->params;
                            if (cp.n_requests >= 1 && cp.baseline_requests > cp.n_requests)
                                throw Error(
                                    baseline->count() > 0
                                        ? fmt::format("--baseline {} is more than the {} in the stream (--requests): "
                                                      "give --baseline 0..{}",
                                                      cp.baseline_requests,
                                                      count_of(static_cast<std::size_t>(cp.n_requests), "request", "requests"),
                                                      cp.n_requests)
                                        : fmt::format("--requests {} is fewer than the {} requests v1 serves alone "
                                                      "before the canary (--baseline, default {}): give --requests {} "
                                                      "or more, or a smaller --baseline",
                                                      cp.n_requests, cp.baseline_requests, cp.baseline_requests,
                                                      cp.baseline_requests));
                            return run_canary_command(*o);
                        }});
}

}  // namespace sixstep::cli
