// sixstep perplexity -m F.gguf [--text FILE] [--ref R.gguf] [--docs N] [--ctx N] [-t THREADS] [--json]
//   Teacher-forced perplexity of a model on a text (default: the held-out
//   stories in assets/data), documents split at "<|doc|>" lines; with --ref,
//   also the reference's perplexity and how far the model's predictions are
//   from it (KL divergence, max logit difference, top-1 agreement).
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/data_dir.h"
#include "pipeline/core/error.h"
#include "pipeline/core/file.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/tools/perplexity.h"

namespace sixstep::cli {

namespace {

struct PerplexityOptions {
    std::string model, text, ref;
    int docs = 0, ctx = 0, batch = 256, threads = 0;
    bool json = false;
};

// A UTF-8 byte-order mark, as some Windows editors save text, is no part of
// the text: scored, its three bytes made 13 tokens 16 and the perplexity 33×.
std::string read_text(const std::string& path) {
    std::string text = read_regular_file(path, "the text file", 256u << 20);
    if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
    return text;
}

int run_perplexity(const PerplexityOptions& o) {
    using namespace sixstep::llm;
    const std::string text_path = o.text.empty() ? data_path("assets/data/heldout-stories.txt").string() : o.text;
    const std::string text = read_text(text_path);
    const auto model = LlamaModel::load(o.model);
    const Vocab vocab = Vocab::from_gguf(model->file());
    CpuBackend cpu(model, {o.threads});
    std::unique_ptr<CpuBackend> ref;
    if (!o.ref.empty()) ref = std::make_unique<CpuBackend>(LlamaModel::load(o.ref), CpuBackendParams{o.threads});
    PerplexityParams pp;
    pp.n_ctx = o.ctx;
    pp.n_batch = o.batch;
    pp.max_docs = o.docs;
    const PerplexityResult r = perplexity(cpu, vocab, text, pp, ref.get());

    if (o.json) {
        nlohmann::ordered_json j;
        j["model"] = o.model;
        j["text"] = text_path;
        j["n_docs"] = r.n_docs;
        j["n_windows"] = r.n_windows;
        j["n_ctx"] = r.n_ctx;
        j["n_tokens"] = r.n_tokens;
        j["n_scored"] = r.n_scored;
        j["mean_nll"] = r.model.mean_nll;
        j["perplexity"] = r.perplexity;
        j["seconds"] = r.seconds;
        if (r.reference) {
            j["reference"] = {{"model", o.ref}, {"mean_nll", r.reference->mean_nll}, {"perplexity", r.reference->perplexity}};
            j["compare"] = {{"kl_mean", r.compare->kl_mean},
                            {"kl_max", r.compare->kl_max},
                            {"max_abs_logit_diff", r.compare->max_abs_logit_diff},
                            {"mean_max_logit_diff", r.compare->mean_max_logit_diff},
                            {"top1_agreement", r.compare->top1_agreement}};
        }
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }
    std::printf("%s on %s: %s, %s, %s scored (window %d, %s)\n", printable(o.model).c_str(),
                printable(text_path).c_str(), count_of(r.n_docs, "document", "documents").c_str(),
                count_of(r.n_tokens, "token", "tokens").c_str(),
                count_of(r.n_scored, "prediction", "predictions").c_str(), r.n_ctx,
                count_of(r.n_windows, "window", "windows").c_str());
    std::printf("  mean NLL %.4f nats/token → perplexity exp(%.4f) = %.4f\n", r.model.mean_nll, r.model.mean_nll,
                r.perplexity);
    if (r.reference) {
        std::printf("  reference %s: mean NLL %.4f → perplexity %.4f\n", printable(o.ref).c_str(), r.reference->mean_nll,
                    r.reference->perplexity);
        std::printf("  KL(reference ‖ model): mean %.3g nats, max %.3g; max |logit difference| %.4g (mean per position "
                    "%.4g); same top-1 token at %.2f%% of positions\n",
                    r.compare->kl_mean, r.compare->kl_max, r.compare->max_abs_logit_diff, r.compare->mean_max_logit_diff,
                    100 * r.compare->top1_agreement);
    }
    std::printf("  (%.2f s)\n", r.seconds);
    return exit_ok;
}

}  // namespace

void add_perplexity(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<PerplexityOptions>();
    auto* sub = app.add_subcommand("perplexity", "Perplexity of a model on a text, and its distance from a reference model");
    sub->add_option("-m,--model", o->model, "The GGUF model to score")->required()->transform(model_file());
    sub->add_option("--text", o->text, "A text file; \"<|doc|>\" lines separate documents (default: assets/data/heldout-stories.txt)")
        ->transform(data_file());
    sub->add_option("--ref", o->ref, "A reference model (e.g. the F16 file) to compare the predictions with")->transform(model_file());
    sub->add_option("--docs", o->docs, "Score only the first N documents (0: all)")->check(CLI::Range(0, 1 << 30));
    sub->add_option("--ctx", o->ctx, "Window in tokens (0: the model's context)")->check(CLI::Range(0, 1 << 24));
    sub->add_option("-b,--batch", o->batch, "Positions per forward call")->check(CLI::Range(1, 1 << 16));
    add_threads_option(sub, o->threads);
    sub->add_flag("--json", o->json, "Print one JSON object instead");
    add_progress_option(sub);
    sub->footer(
        "Each document is scored as [BOS] text [EOS]: every token after BOS is predicted, EOS included; a document "
        "longer than the window is read in windows that overlap by half, each scoring its new tokens. llama.cpp's "
        "perplexity cuts one stream into windows and scores their second halves: compare figures from one tool.");
    add_examples(sub, {"sixstep perplexity -m stories-3m-q8_0.gguf --ref stories-3m-f16.gguf --docs 4"});
    commands.push_back({sub, [o] { return run_perplexity(*o); }});
}

}  // namespace sixstep::cli
