// sixstep bill --preset stories-3m [--requests-per-day R] [--tokens-per-request T] [--days D]
// sixstep bill --model F.gguf --train-tokens D [...]
// sixstep bill --params N --train-tokens D --decode-tok-s X [--load-s L] [...]
//   Training FLOPs ≈ 6·N·D against inference ≈ 2·N per token over the
//   model's life, with the crossover day; machine time from the engine's own
//   decode rate (measured here with tools/bench unless --decode-tok-s is
//   given); load once, serve many as time per request against the number of
//   requests. Every formula printed with its numbers. --json for one object.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/serving/bill.h"
#include "pipeline/serving/bundled_model.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/tools/bench.h"

namespace sixstep::cli {

namespace {

struct BillOptions {
    std::string preset, model;
    double params = 0, train_tokens = 0, decode_tok_s = 0, load_s = 0;
    double requests_per_day = 10000, tokens_per_request = 200, days = 365, price_per_hour = 0;
    int threads = 0, n_gen = 64;
    CLI::Option *params_opt = nullptr, *train_tokens_opt = nullptr, *decode_opt = nullptr, *load_opt = nullptr;
    CLI::Option *threads_opt = nullptr, *n_gen_opt = nullptr;  // the measurement's
    bool json = false;
};

// What the bill was built from, for the header line and the JSON.
struct BillSource {
    std::string model_name = "typed";
    std::string n_params_from = "typed", train_tokens_from = "typed", decode_from = "typed", load_from = "typed";
};

int run_bill(const BillOptions& o) {
    using namespace sixstep::serving;
    using namespace sixstep::llm;
    if (!o.preset.empty() && !o.model.empty()) throw Error("bill: give --preset or --model, not both");
    if (!o.preset.empty() && o.preset != "stories-3m")
        throw Error(fmt::format("bill: unknown preset \"{}\" (presets: stories-3m)", o.preset));

    BillParams p;
    p.requests_per_day = o.requests_per_day;
    p.tokens_per_request = o.tokens_per_request;
    p.days = o.days;
    p.price_per_hour = o.price_per_hour;
    BillSource src;

    const std::string model_path = !o.preset.empty() ? bundled_model_path("stories-3m-f16.gguf").string() : o.model;
    // The decode rate is measured only on a model and without a typed one:
    // otherwise -n and -t would change nothing, and are refused.
    for (const CLI::Option* opt : {o.n_gen_opt, o.threads_opt})
        if (opt->count() > 0 && (model_path.empty() || *o.decode_opt))
            throw Error(fmt::format("{} belongs to measuring the decode rate, and nothing is measured here: {}",
                                    opt->get_name(),
                                    model_path.empty() ? "measure on --model F.gguf or --preset stories-3m"
                                                       : "--decode-tok-s gives the rate"));
    if (!o.preset.empty()) {
        p.n_train_tokens = static_cast<double>(bundled_model_recipe.tokens());
        src.train_tokens_from = fmt::format("the recipe: {} steps × {} windows × {} tokens", bundled_model_recipe.steps,
                                            bundled_model_recipe.batch, bundled_model_recipe.seq);
    }
    if (!model_path.empty()) {
        // Measure on the engine: the load, then decode tokens/s with tools/bench.
        const auto t0 = std::chrono::steady_clock::now();
        const auto model = LlamaModel::load(model_path);
        model->prepare_for_cpu();  // part of a CPU instance's start: the copy its matmuls read
        const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        src.model_name = printable(std::filesystem::path(model_path).filename().string());
        p.n_params = static_cast<double>(model->n_params());
        src.n_params_from = "counted from " + src.model_name;
        p.load_s = load_s;
        src.load_from = "measured: LlamaModel::load of " + src.model_name + " and the CPU's copy of its matrices";
        if (!*o.decode_opt) {
            CpuBackend cpu(model, {o.threads});
            BenchParams bp;
            bp.n_prompt = 0;
            bp.n_gen = o.n_gen;
            bp.repetitions = 3;
            const BenchResult r = run_bench(cpu, bp);
            p.decode_tok_s = r.decode.median_tok_s;
            src.decode_from = fmt::format("measured: tools/bench {} on {}, median of {}", r.decode.name, cpu.name(),
                                          bp.repetitions);
        }
    }
    // A typed figure replaces the one the preset or the model gave, and the
    // source says which it replaced: N = 5 beside "the bill for
    // stories-3m-f16.gguf" must not read as that model's own count.
    const auto typed = [](bool replaced, const std::string& what) {
        return replaced ? "typed, in place of " + what : std::string("typed");
    };
    if (*o.params_opt) {
        src.n_params_from = typed(!model_path.empty(), fmt::format("the {} {}", with_commas(p.n_params), src.n_params_from));
        p.n_params = o.params;
    }
    if (*o.train_tokens_opt) {
        src.train_tokens_from =
            typed(!o.preset.empty(), fmt::format("{} from {}", with_commas(p.n_train_tokens), src.train_tokens_from));
        p.n_train_tokens = o.train_tokens;
    }
    if (*o.decode_opt) p.decode_tok_s = o.decode_tok_s, src.decode_from = "typed";
    if (*o.load_opt) {
        src.load_from = typed(!model_path.empty(), fmt::format("the {} measured on {}", duration(p.load_s), src.model_name));
        p.load_s = o.load_s;
    }
    if (!*o.params_opt && model_path.empty()) throw Error("bill needs --params N (or --model F.gguf, or --preset stories-3m)");
    if (!*o.train_tokens_opt && o.preset.empty()) throw Error("bill needs --train-tokens D (tokens seen in training)");
    if (!*o.decode_opt && model_path.empty())
        throw Error("bill needs a decode rate: --decode-tok-s X, or --model F.gguf to measure it");

    const BillResult b = bill(p);
    if (o.json) {
        nlohmann::ordered_json j;
        j["model"] = src.model_name;
        j["sources"] = {{"n_params", src.n_params_from},
                        {"n_train_tokens", src.train_tokens_from},
                        {"decode_tok_s", src.decode_from},
                        {"load_s", src.load_from}};
        j.update(bill_json(b));
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }
    std::printf("The bill for %s\n", src.model_name.c_str());
    std::printf("  N = %s parameters (%s)\n", with_commas(p.n_params).c_str(), src.n_params_from.c_str());
    std::printf("  D = %s training tokens (%s)\n", with_commas(p.n_train_tokens).c_str(), src.train_tokens_from.c_str());
    std::printf("  decode rate %s tokens/s (%s)\n", significant(p.decode_tok_s, 4).c_str(), src.decode_from.c_str());
    if (p.load_s > 0) std::printf("  load %s (%s)\n", duration(p.load_s).c_str(), src.load_from.c_str());
    std::printf("  %s requests/day × %s tokens/request × %s\n\n", with_commas(p.requests_per_day).c_str(),
                with_commas(p.tokens_per_request).c_str(), serving::days_text(with_commas(p.days), p.days).c_str());
    for (const auto& line : b.formula) std::printf("  %s\n", line.c_str());

    std::printf("\nInference against training, cumulative:\n  %8s  %16s  %12s\n", "day", "inference", "× training");
    for (const BillDay& d : b.timeline)
        std::printf("  %8s  %16s  %12s%s\n", with_commas(d.day).c_str(), flops(d.inference_flops).c_str(),
                    readable(d.inference_to_training, 3).c_str(), d.crossover ? "  ← crossover" : "");
    if (!b.crossover_within_life)
        std::printf("  (no crossover within %s: it would come on day %s)\n", serving::days_text(with_commas(p.days), p.days).c_str(),
                    readable(b.crossover_day, 4).c_str());

    if (!b.load_once.empty()) {
        std::printf("\nLoad once, serve many (load %s, %s of compute per request):\n  %10s  %16s  %10s%s\n",
                    duration(p.load_s).c_str(), duration(b.seconds_per_request).c_str(), "requests",
                    "time per request", "load share", p.price_per_hour > 0 ? "  cost per request" : "");
        for (const LoadOncePoint& l : b.load_once) {
            const std::string share = l.load_share >= 1e-4 ? significant(100 * l.load_share, 3) + "%" : "< 0.01%";
            std::printf("  %10s  %16s  %10s", with_commas(l.n_requests).c_str(), duration(l.seconds_per_request).c_str(),
                        share.c_str());
            if (p.price_per_hour > 0) std::printf("  %s", readable(l.cost_per_request, 3).c_str());
            std::printf("\n");
        }
    }
    std::printf("\nNotes:\n");
    for (const auto& n : b.notes) std::printf("  - %s\n", n.c_str());
    return exit_ok;
}

}  // namespace

void add_bill(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<BillOptions>();
    auto* sub = app.add_subcommand("bill", "Training vs lifetime inference compute, and load once, serve many");
    sub->add_option("--preset", o->preset,
                    "stories-3m: the bundled model (N from its file, D from its recipe; a typed --params, "
                    "--train-tokens, --decode-tok-s or --load-s replaces its figure)");
    sub->add_option("-m,--model", o->model, "A GGUF model: N counted from it, load and decode measured on it")->transform(model_file());
    o->params_opt = sub->add_option("--params", o->params, "N: parameters");
    o->train_tokens_opt = sub->add_option("--train-tokens", o->train_tokens, "D: tokens seen in training");
    o->decode_opt = sub->add_option("--decode-tok-s", o->decode_tok_s, "Decode tokens/s of one stream (skips the measurement)");
    o->load_opt = sub->add_option("--load-s", o->load_s, "Cold load in seconds, in place of the one measured with --model or --preset (0: no load-once table)");
    sub->add_option("--requests-per-day", o->requests_per_day, "Requests per day (default 10,000)");
    sub->add_option("--tokens-per-request", o->tokens_per_request, "Tokens per request, prompt and output (default 200)");
    sub->add_option("--days", o->days, "Service life in days (default 365)");
    sub->add_option("--price-per-hour", o->price_per_hour, "Price of one machine-hour, any currency (default: times only)");
    o->threads_opt = add_threads_option(sub, o->threads, "Threads for the measurement");
    o->n_gen_opt = sub->add_option("-n,--n-gen", o->n_gen, "Tokens decoded per measurement run (default 64)")
                       ->check(CLI::Range(1, 1 << 16));
    sub->add_flag("--json", o->json, "Print one JSON object instead");
    add_examples(sub, {"sixstep bill --preset stories-3m --requests-per-day 10",
                      "sixstep bill --params 8e9 --train-tokens 15e12 --decode-tok-s 50 --requests-per-day 1e6"});
    commands.push_back({sub, [o] { return run_bill(*o); }});
}

}  // namespace sixstep::cli
