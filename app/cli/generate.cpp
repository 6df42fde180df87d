// sixstep generate --model FILE.gguf --prompt TEXT [-n N] [--temp T] [--top-k K]
//                  [--top-p P] [--min-p M] [--seed S] [--top N] [--threads T] [--backend B] [--json]
//                  [--draft D.gguf [--draft-k K] [--draft-threads T]]
// Streams the generated text token by token, then prints TTFT, TPOT and
// tokens/s. --top N prints the N most likely next tokens at every step.
// --temp 0 is greedy. With --draft, speculative decoding (speculate.cpp).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/core/report.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "app/cli/speculate.h"
#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/backend.h"
#include "pipeline/llm/generator.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/serving/speculative.h"

namespace sixstep::cli {

namespace {

struct GenerateOptions {
    std::string model, prompt;
    int n_predict = 64, top = 0, threads = 0, ctx = 0;
    std::string backend = "cpu";
    llm::SamplerParams sampling;  // the sampler's own defaults
    std::vector<std::string> stop;
    bool json = false;
    std::string draft;              // --draft: speculative decoding
    int draft_k = 4, draft_threads = 1;
    bool overlap = false;           // --overlap
    CLI::Option *top_opt = nullptr, *stop_opt = nullptr, *ctx_opt = nullptr;
};

int run_generate(const GenerateOptions& o) {
    using namespace sixstep::llm;
    if (o.model.empty()) throw Error("generate needs --model FILE.gguf");
    if (!o.draft.empty()) {
        for (const CLI::Option* opt : {o.top_opt, o.stop_opt, o.ctx_opt})
            if (opt->count() > 0) throw Error(fmt::format("{} is not available with --draft", opt->get_name()));
        DraftGenerateOptions d;
        d.model = o.model, d.draft = o.draft, d.prompt = o.prompt, d.backend = o.backend;
        d.n_predict = o.n_predict, d.n_draft = o.draft_k, d.threads = o.threads, d.draft_threads = o.draft_threads;
        d.sampling = o.sampling, d.json = o.json, d.overlap = o.overlap;
        return run_generate_with_draft(d);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const RunnableModel m = load_runnable_model(o.model, o.backend, o.threads);
    Backend& backend = *m.backend;
    const double load_ms = ms_since(t0);
    const auto& codec = m.codec;
    // Allowed (llama.cpp allows it too), but past the trained length the
    // positions are ones the model never saw: say so rather than answer quietly.
    if (const int trained = m.model->hparams().n_ctx; trained > 0 && o.ctx > trained)
        std::fprintf(stderr,
                     "sixstep: warning: -c %d is past the %d positions the model was trained on "
                     "(llama.context_length): positions past %d were never trained\n",
                     o.ctx, trained, trained);

    GenerateParams p;
    p.n_predict = o.n_predict;
    p.sampling = o.sampling;
    p.stop = o.stop;
    p.top_n = o.top;
    p.n_ctx = o.ctx;

    Generator gen(backend, *codec);
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    const GenerateResult r = gen.generate(o.prompt, p, [&](const TokenEvent& e) {
        if (o.json) {
            nlohmann::ordered_json s = {{"index", e.index}, {"id", e.token},    {"piece", e.piece}, {"p", e.p},
                                        {"text", e.text},   {"t_ms", e.t_ms}, {"dt_ms", e.dt_ms}};
            if (!e.top.empty()) {
                s["top"] = nlohmann::ordered_json::array();
                for (const auto& c : e.top) s["top"].push_back({{"id", c.id}, {"piece", codec->piece(c.id)}, {"p", c.p}});
            }
            steps.push_back(std::move(s));
        } else if (o.top > 0) {
            std::string line = fmt::format("[{:3}] ", e.index);
            for (const auto& c : e.top) line += fmt::format("{} {:.3f}  ", quote_text(codec->piece(c.id)), c.p);
            std::printf("%s→ %s\n", line.c_str(), quote_text(e.piece).c_str());
        } else {
            // The prompt is echoed only once it is known to fit.
            // Text as written, line breaks included; escape sequences from the
            // prompt or the model's vocabulary are shown, never obeyed.
            if (e.index == 0) std::printf("%s", printable(o.prompt, true).c_str());
            std::printf("%s", printable(e.text, true).c_str());
            std::fflush(stdout);
        }
        return true;
    });

    const GenerateTimings& t = r.timings;
    // TPOT is the time per token after the first: with fewer than two there is none.
    const bool decoded = t.n_generated >= 2;
    if (o.json) {
        nlohmann::ordered_json j;
        j["model"] = o.model;
        j["backend"] = backend.name();
        j["prompt"] = o.prompt;
        j["prompt_tokens"] = r.prompt_tokens;
        j["text"] = r.text;
        j["stop_reason"] = stop_reason_name(r.stop_reason);
        j["tokens"] = steps;
        // One token has no gap after it to time: null, as `waits` writes it, not 0.
        const auto decode_figure = [&](double v) { return decoded ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
        j["timings"] = {{"load_ms", load_ms},         {"tokenize_ms", t.tokenize_ms},
                        {"prefill_ms", t.prefill_ms}, {"ttft_ms", t.ttft_ms},
                        {"tpot_ms", decode_figure(t.tpot_ms)}, {"total_ms", t.total_ms},
                        {"n_prompt", t.n_prompt},     {"n_generated", t.n_generated},
                        {"prefill_tok_s", t.prefill_tok_s()}, {"decode_tok_s", decode_figure(t.decode_tok_s())}};
        // Token pieces may hold half a UTF-8 character: replace, never throw.
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }
    if (o.top > 0) std::printf("%s", printable(o.prompt + r.text, true).c_str());
    std::printf("\n\n");
    const std::string tpot = decoded ? fmt::format("TPOT {:.2f} ms ({:.1f} tok/s)", t.tpot_ms, t.decode_tok_s())
                                     : fmt::format("no TPOT ({})", t.n_generated == 1 ? "one token" : "no token");
    std::printf("load %.1f ms | prompt %s, prefill %.1f ms (%.1f tok/s) | TTFT %.1f ms | %s | %s in %.1f ms | stop: "
                "%s | %s\n",
                load_ms, count_of(static_cast<std::size_t>(t.n_prompt), "token", "tokens").c_str(), t.prefill_ms,
                t.prefill_tok_s(), t.ttft_ms, tpot.c_str(),
                count_of(static_cast<std::size_t>(t.n_generated), "token", "tokens").c_str(), t.total_ms,
                std::string(stop_reason_name(r.stop_reason)).c_str(), backend.name().c_str());
    return exit_ok;
}

}  // namespace

void add_generate(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("generate", "Generate text with a GGUF model, token by token");
    auto o = std::make_shared<GenerateOptions>();
    sub->add_option("-m,--model", o->model, "A GGUF model (Llama architecture)")->required()->transform(model_file());
    sub->add_option("--prompt", o->prompt, "The text to continue")->required();
    sub->add_option("-n,--n-predict", o->n_predict, "Most tokens to generate")->check(CLI::Range(1, 1 << 24));
    // The filters are on by default (llama.cpp's defaults): --temp 1 alone
    // does not draw from the model's own distribution; the help says so.
    const llm::SamplerParams& d = o->sampling;
    sub->add_option("--temp", o->sampling.temperature,
                    fmt::format("Temperature; 0 is greedy, and so is a tiny one (default {})", d.temperature))
        ->check(finite_number(0.0, 1e6));
    sub->add_option("--top-k", o->sampling.top_k, fmt::format("Keep the K most likely tokens (0: off; default {})", d.top_k))
        ->check(CLI::Range(0, 1 << 24));
    sub->add_option("--top-p", o->sampling.top_p,
                    fmt::format("Nucleus: keep the smallest set with probability P (1: off; default {})", d.top_p))
        ->check(finite_number(1e-6, 1.0));
    sub->add_option("--min-p", o->sampling.min_p,
                    fmt::format("Drop tokens below M × the top probability (0: off; default {}). The model's own "
                                "distribution: --top-k 0 --top-p 1 --min-p 0",
                                d.min_p))
        ->check(finite_number(0.0, 0.999));
    sub->add_option("--seed", o->sampling.seed, fmt::format("Seed of the random draw (default {})", d.seed))
        ->check(seed_number());
    o->top_opt = sub->add_option("--top", o->top, "Print the N most likely next tokens at every step")->check(CLI::Range(0, 100));
    add_threads_option(sub, o->threads);
    o->ctx_opt = sub->add_option("-c,--ctx", o->ctx, "Context size (0: the model's)")->check(CLI::Range(0, 1 << 24));
    o->stop_opt = sub->add_option("--stop", o->stop, "Stop when the text contains this (repeatable)")
                      ->check(CLI::Validator(
                          [](const std::string& s) {
                              // As the server says of "stop": [""]: every text contains it, and it stops nothing.
                              return s.empty() ? std::string("an empty stop string would stop nothing: give some text")
                                               : std::string();
                          },
                          ""));  // no word of its own in the help: "--stop TEXT ..."
    auto* draft = sub->add_option("--draft", o->draft,
                                  "Speculative decoding with this draft model (the target's vocabulary); "
                                  "prints acceptance, tokens per target pass and the speedup")
                      ->transform(model_file());
    sub->add_option("--draft-k", o->draft_k, "Tokens the draft proposes per step (1..64, default 4)")
        ->check(CLI::Range(1, serving::max_draft_tokens))
        ->needs(draft);
    sub->add_option("--draft-threads", o->draft_threads, "The draft's threads (default 1)")
        ->check(CLI::Range(1, 1024))
        ->needs(draft);
    sub->add_flag("--overlap", o->overlap, overlap_help)->needs(draft);
    add_backend_option(sub, o->backend);
    sub->add_flag("--json", o->json, "Print machine-readable JSON instead");
    add_progress_option(sub);
    add_examples(sub, {"sixstep generate -m stories-3m-f16.gguf --prompt \"Once upon a time\" -n 32",
                      "sixstep generate -m stories-3m-f16.gguf --prompt \"The cat sat on the\" --temp 0 --top 5 -n 4",
                      "sixstep generate -m stories-3m-f16.gguf --prompt \"Once upon a time\" --temp 0 --draft stories-draft-f16.gguf"});
    commands.push_back({sub, [o] { return run_generate(*o); }});
}

}  // namespace sixstep::cli
