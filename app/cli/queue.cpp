// sixstep queue --service-ms X | --model F.gguf [--batch 1] [--context 128] [--samples 200]
//               [--utilization 0.1,…,0.99] [--requests N] [--seed S] [--json]
//   Waiting time vs utilization for one server (serving/queue_curve.h): the
//   discrete-event simulation beside the M/D/1, M/M/1 (and, with a measured
//   model, M/G/1) closed forms, with 95 % confidence intervals, and the
//   headroom that keeps waits short.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/batch_sweep.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/serving/queue_curve.h"

namespace sixstep::cli {

namespace {

using nlohmann::ordered_json;
using namespace sixstep::serving;

struct QueueOptions {
    double service_ms = 0;       // --service-ms
    bool service_given = false;
    std::string model;           // --model: measure the service time instead
    std::string backend = "cpu";
    int n_batch = 1, n_context = 128, n_samples = 200, threads = 0;
    QueueCurveParams curve;      // utilizations, requests, seed
    bool json = false;
    std::vector<const CLI::Option*> measure_opts;  // --batch, --context, --samples, -t, --backend: only with --model
};

// The fewest decode steps --samples takes (and the service-time statistics need).
constexpr int min_queue_samples = 2;

ordered_json to_json(const QueueSimResult& r, double formula_ms) {
    return {{"queue", queue_name(r.service)},
            {"service", service_model_name(r.service)},
            {"mean_wait_ms", r.mean_wait_ms},
            {"std_error_ms", r.std_error_ms},
            {"ci95_ms", r.ci95_ms},
            {"formula_ms", formula_ms},
            {"within_ci95", std::fabs(r.mean_wait_ms - formula_ms) <= r.ci95_ms},
            {"p50_wait_ms", r.p50_wait_ms},
            {"p90_wait_ms", r.p90_wait_ms},
            {"p99_wait_ms", r.p99_wait_ms},
            {"zero_wait_fraction", r.zero_wait_fraction},
            {"busy_fraction", r.busy_fraction},
            {"mean_queue_length", r.mean_queue_length},
            {"n_warmup", r.n_warmup},
            {"n_measured", r.n_measured},
            {"n_batches", r.n_batches},
            {"relaxation_requests", r.relaxation_requests},
            {"batches_long_enough", r.batches_long_enough},
            {"batch_means_ms", r.batch_means_ms}};
}

// "12.3 ± 0.4", marked † when the formula lies outside the interval.
std::string cell(const QueueSimResult& r, double formula) {
    const bool off = std::fabs(r.mean_wait_ms - formula) > r.ci95_ms;
    // Significant digits, not e-notation: "1950 ± 210", not "1.95e+03 ± 2.1e+02".
    return fmt::format("{} ± {}{}", serving::significant(r.mean_wait_ms, 3), serving::significant(r.ci95_ms, 2),
                       off ? " †" : "");
}

int run_queue(QueueOptions& o) {
    const bool have_model = !o.model.empty();
    if (have_model == o.service_given)
        throw Error(have_model ? "queue: give either --service-ms or --model, not both"
                               : "queue needs a service time: --service-ms X, or --model F.gguf to measure one");
    // The measurement's options do nothing with a given service time: refused, not ignored.
    if (!have_model)
        for (const CLI::Option* opt : o.measure_opts)
            if (opt->count() > 0)
                throw Error(fmt::format("{} belongs to a measured service time (--model F.gguf); with --service-ms "
                                        "nothing is measured",
                                        opt->get_name()));
    std::string source;
    if (have_model) {
        // Check the simulation's inputs first: no measuring for a run that would fail anyway.
        QueueCurveParams check = o.curve;
        check.mean_service_ms = 1;
        validate_queue_curve(check);
        const auto model = llm::LlamaModel::load(o.model);
        // The samples are decode steps after --context tokens (and one warm-up step): in the options' own words.
        const long long n_ctx = model->hparams().n_ctx;
        if (static_cast<long long>(o.n_context) + o.n_samples + 1 > n_ctx)
        {
            // The advice names a value that works: at least 2 samples are
            // needed, so past a context of n_ctx − 3 only a smaller
            // --context fixes it ("at most --samples 0" fixed nothing).
            const long long most_samples = n_ctx - o.n_context - 1, most_context = n_ctx - o.n_samples - 1;
            std::vector<std::string> fixes;
            if (most_samples >= min_queue_samples) fixes.push_back(fmt::format("at most --samples {}", most_samples));
            if (most_context >= 1) fixes.push_back(fmt::format("at most --context {}", most_context));
            if (fixes.empty())  // a context of 1 and 2 samples need 4 positions
                fixes.push_back("a model with a longer context");
            std::string advice = "use " + fixes[0];
            if (fixes.size() > 1) advice += ", or " + fixes[1];
            throw Error(fmt::format("--context {} and --samples {}: the decode steps need {} positions (one more for "
                                    "the warm-up), more than the model's context of {}; {}",
                                    o.n_context, o.n_samples, static_cast<long long>(o.n_context) + o.n_samples + 1,
                                    n_ctx, advice));
        }
        llm::BackendChoice choice = llm::make_backend(backend_kind(o.backend), model, {.n_threads = o.threads});
        print_backend_note(choice.note);
        o.curve.service_samples_ms = measure_decode_steps(*choice.backend, o.n_batch, o.n_context, o.n_samples);
        source = fmt::format("measured: {} decode steps of batch {} at a context of {}, {} on {}", o.n_samples,
                             o.n_batch, count_of(static_cast<std::size_t>(o.n_context), "token", "tokens"),
                             std::filesystem::path(o.model).filename().string(),
                             choice.backend->name());
    } else {
        o.curve.mean_service_ms = o.service_ms;
        source = "given (--service-ms)";
    }
    const QueueCurve c = run_queue_curve(o.curve);
    const bool g = c.n_service_samples > 0;

    if (o.json) {
        ordered_json j;
        j["service"] = {{"mean_ms", c.mean_service_ms},
                        {"scv", c.service_scv},
                        {"n_samples", c.n_service_samples},
                        {"source", source},
                        {"samples_ms", o.curve.service_samples_ms}};
        j["method"] = "discrete-event simulation of one FIFO server with Poisson arrivals; mean wait (arrival to "
                      "start of service) with a 95 % confidence interval from batch means (Student t)";
        j["points"] = ordered_json::array();
        for (const QueuePoint& pt : c.points) {
            ordered_json q = {{"utilization", pt.utilization},
                              {"arrival_rate_per_s", pt.arrival_rate_per_s},
                              {"md1", to_json(pt.deterministic, pt.md1_ms)},
                              {"mm1", to_json(pt.exponential, pt.mm1_ms)}};
            if (pt.empirical) q["mg1"] = to_json(*pt.empirical, pt.mg1_ms);
            j["points"].push_back(std::move(q));
        }
        j["formula"] = ordered_json::array();
        for (const QueueFormulaSample& f : c.formula) {
            ordered_json q = {{"utilization", f.utilization}, {"md1_ms", f.md1_ms}, {"mm1_ms", f.mm1_ms}};
            if (g) q["mg1_ms"] = f.mg1_ms;
            j["formula"].push_back(std::move(q));
        }
        j["headroom"] = ordered_json::array();
        for (const HeadroomRow& h : c.headroom) {
            ordered_json q = {{"wait_limit_services", h.wait_limit_services},
                              {"wait_limit_ms", h.wait_limit_ms},
                              {"max_utilization_md1", h.max_utilization_md1},
                              {"max_utilization_mm1", h.max_utilization_mm1}};
            if (g) q["max_utilization_mg1"] = h.max_utilization_mg1;
            j["headroom"].push_back(std::move(q));
        }
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }

    std::printf("one server, Poisson arrivals, first come first served; service time %.3f ms (%s)", c.mean_service_ms,
                printable(source).c_str());
    if (g) std::printf(", c² = %.4f", c.service_scv);
    std::printf("\nmean wait before service (ms): simulated ± 95 %% confidence (batch means) beside the closed form; "
                "† = the formula is outside the interval\n\n");
    std::printf("| utilization | arrivals/s | M/D/1 sim | M/D/1 formula | M/M/1 sim | M/M/1 formula |");
    if (g) std::printf(" M/G/1 sim | M/G/1 formula |");
    std::printf(" wait ÷ service (M/D/1, M/M/1) | requests |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|%s---:|---:|\n", g ? "---:|---:|" : "");
    int n_sims = 0, n_off = 0;
    for (const QueuePoint& pt : c.points) {
        // A service of 10⁹ ms at 50 % has 5×10⁻⁷ arrivals/s, which %.1f wrote "0.0".
        const std::string rate = pt.arrival_rate_per_s >= 0.1 ? fmt::format("{:.1f}", pt.arrival_rate_per_s)
                                                              : readable_number(pt.arrival_rate_per_s, 3);
        // "99.99 %", not "100 %": a queue at 100 % has no steady state, and the command refuses it.
        std::printf("| %s %% | %s | %s | %.4g | %s | %.4g |", utilization_percent(pt.utilization).c_str(), rate.c_str(),
                    cell(pt.deterministic, pt.md1_ms).c_str(), pt.md1_ms, cell(pt.exponential, pt.mm1_ms).c_str(),
                    pt.mm1_ms);
        if (pt.empirical) std::printf(" %s | %.4g |", cell(*pt.empirical, pt.mg1_ms).c_str(), pt.mg1_ms);
        // ‡: the request cap cut this row's runs short (the note under the table says what that means).
        std::printf(" %s, %s | %lld%s |\n", significant(pt.md1_ms / c.mean_service_ms, 3).c_str(),
                    significant(pt.mm1_ms / c.mean_service_ms, 3).c_str(), pt.deterministic.n_measured,
                    hit_request_cap(pt) ? " ‡" : "");
        const auto tally = [&](const QueueSimResult& r, double f) {
            ++n_sims;
            n_off += std::fabs(r.mean_wait_ms - f) > r.ci95_ms;
        };
        tally(pt.deterministic, pt.md1_ms);
        tally(pt.exponential, pt.mm1_ms);
        if (pt.empirical) tally(*pt.empirical, pt.mg1_ms);
    }
    std::printf("\n%d of %d simulations within their 95 %% interval of the formula (about 1 in 20 may fall outside "
                "by chance)\n",
                n_sims - n_off, n_sims);
    const int n_short = unsettled_simulations(c);
    if (n_short > 0) {
        std::string rows;
        for (const QueuePoint& pt : c.points)
            if (hit_request_cap(pt)) rows += (rows.empty() ? "" : ", ") + utilization_percent(pt.utilization) + " %";
        std::printf("%d simulation%s hit the cap of %s requests before the queue settled (a warm-up of 5 relaxation "
                    "times, batches of 10), in the rows marked ‡ (%s): their means and intervals are not to be "
                    "trusted\n",
                    n_short, n_short == 1 ? "" : "s", with_commas(static_cast<std::uint64_t>(QueueSimParams{}.max_requests)).c_str(),
                    rows.c_str());
    }
    std::printf("\nkeep headroom — the highest utilization at which the mean wait stays within a limit:\n\n");
    std::printf("| mean wait at most | M/D/1 | M/M/1 |%s\n", g ? " measured service (M/G/1) |" : "");
    std::printf("|---|---:|---:|%s\n", g ? "---:|" : "");
    for (const HeadroomRow& h : c.headroom) {
        std::printf("| %g × service (%.3g ms) | %.0f %% | %.0f %% |", h.wait_limit_services, h.wait_limit_ms,
                    100 * h.max_utilization_md1, 100 * h.max_utilization_mm1);
        if (g) std::printf(" %.0f %% |", 100 * h.max_utilization_mg1);
        std::printf("\n");
    }
    return exit_ok;
}

}  // namespace

void add_queue(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("queue", "Waiting time vs utilization: simulation beside M/D/1 and M/M/1");
    auto o = std::make_shared<QueueOptions>();
    auto* service = sub->add_option("--service-ms", o->service_ms, "Service time of one request, ms (deterministic mean)");
    sub->add_option("-m,--model", o->model, "Measure the service time: decode steps of this GGUF model")->transform(model_file());
    o->measure_opts.push_back(sub->add_option("--batch", o->n_batch, "With --model: sequences per measured decode step")
                                  ->check(CLI::Range(1, 4096)));
    o->measure_opts.push_back(
        sub->add_option("--context", o->n_context, "With --model: tokens each sequence holds")->check(CLI::Range(1, 1 << 20)));
    o->measure_opts.push_back(sub->add_option("--samples", o->n_samples, "With --model: decode steps measured")
                                  ->check(CLI::Range(min_queue_samples, 100000)));
    o->measure_opts.push_back(add_threads_option(sub, o->threads, "With --model: CPU threads"));
    CLI::Option* backend = add_backend_option(sub, o->backend);
    std::string said = backend->get_description();  // "Where the forward pass runs: …"
    if (!said.empty()) said[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(said[0])));
    backend->description("With --model: " + said);
    o->measure_opts.push_back(backend);
    sub->add_option("--utilization", o->curve.utilizations, "Utilizations to simulate, each in (0, 1), each once")
        ->delimiter(',');
    sub->add_option("--requests", o->curve.min_requests,
                    fmt::format("Requests measured per simulation at least, 1000 … 10000000; near utilization 1 a run "
                                "is lengthened until each batch spans ten relaxation times, up to {} (rows that reach "
                                "that cap are marked ‡)",
                                QueueSimParams{}.max_requests));
    sub->add_option("--seed", o->curve.seed, "Seed of the arrival and service draws")->check(seed_number());
    sub->add_flag("--json", o->json, "Print machine-readable JSON instead");
    add_progress_option(sub);
    add_examples(sub, {"sixstep queue --service-ms 5",
                      "sixstep queue -m stories-3m-f16.gguf --utilization 0.5 --utilization 0.9 --samples 50"});
    commands.push_back({sub, [o, service] {
                            o->service_given = service->count() > 0;
                            return run_queue(*o);
                        }});
}

}  // namespace sixstep::cli
