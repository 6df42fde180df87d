// sixstep generate -m T.gguf --prompt TEXT --draft D.gguf [--draft-k 4] [--draft-threads 1] [...]
//   One request with speculative decoding: the text streamed, then the
//   acceptance rate, tokens per target pass and the speedup over the target
//   alone, measured on the same request right after.
//   --overlap: the draft runs ahead on a thread of its own (speculative.h).
// sixstep speculate -m T.gguf --draft D.gguf [--draft D2.gguf …] [--random-draft]
//                  [--k 1,2,4,8] [--temp 0,1] [--top-k K] [--top-p P] [--min-p M] [-n 64] [--prompt TEXT]
//                  [-t T] [-r 3] [--json]
//   The regimes side by side: every draft × temperature × k, each measured
//   against the target alone, with why the losing ones lose. --random-draft
//   adds a draft of the first draft's shape with random weights and the
//   target's vocabulary: one that costs the same and agrees with nothing.
#include "app/cli/speculate.h"

#include <algorithm>
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
#include "pipeline/llm/cpu/thread_pool.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/serving/speculative.h"
#include "pipeline/tools/random_model.h"

namespace sixstep::cli {

namespace {

using namespace sixstep::llm;
using namespace sixstep::serving;

// A model with its file name, for tables.
struct Loaded {
    RunnableModel m;
    std::string name;
};

Loaded load(const std::string& path, const std::string& backend, int threads) {
    // Printed in tables and headers: a file name's control characters escaped.
    return {load_runnable_model(path, backend, threads), printable(std::filesystem::path(path).filename().string())};
}

// Random weights in `shape`'s shape (or a small default), the target's vocabulary.
Loaded random_draft(const std::string& target_path, const LlamaModel* shape, const std::string& backend, int threads) {
    RandomModelParams p;
    if (shape) {
        const LlamaHparams& hp = shape->hparams();
        p.n_embd = hp.n_embd, p.n_layer = hp.n_layer, p.n_head = hp.n_head, p.n_head_kv = hp.n_head_kv;
        p.n_ff = hp.n_ff, p.n_ctx = hp.n_ctx;
        p.tied_output = shape->weights().tied_output;
        p.type = shape->main_type();
    } else {
        p.n_embd = 128, p.n_layer = 2, p.n_head = 4, p.n_head_kv = 2, p.n_ff = 352, p.n_ctx = 512;
        p.tied_output = true;
    }
    p.vocab_from = target_path;
    p.name = "random weights";
    Loaded l;
    l.m.model = LlamaModel::from_gguf(GGUFFile::from_bytes(random_model_bytes(p), "random draft"));
    l.m.backend = make_backend(backend_kind(backend), l.m.model, {.n_threads = threads}).backend;
    l.name = shape ? "random weights (the first draft's shape)" : "random weights";  // its parameter count is printed beside it
    return l;
}

// The target, and where the target alone runs. Overlapped, -t counts the
// draft's thread too: the target's pool has -t places, one of them kept for
// the draft's thread to lend itself to, and the target alone — the
// baseline — runs on a backend of its own with all -t threads, so both
// sides use as many cores.
struct Target {
    Loaded loaded;
    std::unique_ptr<Backend> alone;  // null: the target's own backend
    Backend* baseline() { return alone ? alone.get() : loaded.m.backend.get(); }
};

Target load_target(const std::string& path, const std::string& backend, int threads, int draft_threads, bool overlap) {
    if (!overlap) return {load(path, backend, threads), nullptr};
    if (backend != "cpu")
        throw Error(fmt::format("--overlap runs the draft on a CPU thread of its own beside the target: it needs "
                                "--backend cpu, not {}",
                                backend));
    if (draft_threads != 1)
        throw Error(fmt::format("--overlap runs the draft on one thread (it lends that thread to the target "
                                "between its passes): leave out --draft-threads {}",
                                draft_threads));
    const int total = threads > 0 ? threads : ThreadPool::default_threads();
    if (total < 2)
        throw Error(fmt::format("--overlap needs at least 2 threads (-t), one of them the draft's; this run has {}",
                                total));
    Target t{load(path, backend, total), nullptr};
    t.alone = std::move(t.loaded.m.backend);
    t.loaded.m.backend = make_backend(BackendKind::cpu, t.loaded.m.model, {.n_threads = total, .n_helpers = 1}).backend;
    return t;
}

double tok_s(std::size_t tokens, double ms) { return ms > 0 ? 1000.0 * static_cast<double>(tokens) / ms : 0; }

}  // namespace

int run_generate_with_draft(const DraftGenerateOptions& o) {
    Target t = load_target(o.model, o.backend, o.threads, o.draft_threads, o.overlap);
    Loaded& target = t.loaded;
    Loaded draft = load(o.draft, o.backend, o.draft_threads);
    const TextCodec& codec = *target.m.codec;
    SpeculativeDecoder dec(*target.m.backend, *draft.m.backend);  // refuses another vocabulary
    if (o.prompt.empty()) throw Error("prompt is empty: give at least one character to continue from");
    const std::vector<int> prompt = codec.encode(o.prompt);

    SpeculativeParams p;
    p.n_draft = o.n_draft;
    p.n_predict = o.n_predict;
    p.sampling = o.sampling;
    p.overlap = o.overlap;
    // The first run streams; then both are timed on the same request.
    bool echoed = false;
    dec.generate(codec, prompt, p, [&](const SpeculativeStep&, const std::string& text) {
        if (o.json) return true;
        if (!echoed) std::printf("%s", printable(o.prompt, true).c_str()), echoed = true;
        std::printf("%s", printable(text, true).c_str());
        std::fflush(stdout);
        return true;
    });
    const SpeculativeComparison c =
        compare_speculative(*target.m.backend, *draft.m.backend, codec, prompt, p, o.repetitions, t.baseline());
    const SpeculativeStats& s = c.speculative.stats;

    if (o.json) {
        nlohmann::ordered_json j;
        j["model"] = o.model;
        j["draft"] = o.draft;
        j["backend"] = target.m.backend->name();
        j["draft_backend"] = draft.m.backend->name();
        j["alone_backend"] = t.baseline()->name();
        j["overlap"] = o.overlap;
        j["prompt"] = o.prompt;
        j["k"] = o.n_draft;
        j["temperature"] = o.sampling.temperature;
        j["repetitions"] = o.repetitions;
        j.update(comparison_json(c, codec));
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }
    std::printf("\n\nspeculative decoding%s, k = %d: draft %s (%s), target %s (%s)\n",
                o.overlap ? ", overlapped (the draft on a thread of its own)" : "", o.n_draft, draft.name.c_str(),
                draft.m.backend->name().c_str(), target.name.c_str(), target.m.backend->name().c_str());
    // Each pass emits its accepted drafts and one token of its own, unless the
    // answer ends inside it (end of text, max_tokens): then what follows is
    // accepted but never emitted, and the "=" would not hold.
    const int cut = s.n_steps + s.n_accepted - s.n_generated;
    const double accepted_per_pass = s.n_steps ? double(s.n_accepted) / s.n_steps : 0.0;
    const std::string passes = count_of(static_cast<std::size_t>(s.n_steps), "target pass", "target passes");
    const std::string tokens = count_of(static_cast<std::size_t>(s.n_generated), "token", "tokens");
    if (cut <= 0)
        std::printf("  %s for %s: %.2f tokens per target pass (= 1 + %.2f accepted per pass)\n", passes.c_str(),
                    tokens.c_str(), s.tokens_per_pass(), accepted_per_pass);
    else
        std::printf("  %s for %s: %.2f tokens per target pass (1 + %.2f accepted per pass, less "
                    "the %d the end of the answer cut from its last pass)\n",
                    passes.c_str(), tokens.c_str(), s.tokens_per_pass(), accepted_per_pass, cut);
    if (s.n_drafted > 0)
        std::printf("  drafted %d, accepted %d: acceptance %.1f%%\n", s.n_drafted, s.n_accepted, 100 * s.acceptance_rate());
    else
        std::printf("  drafted nothing: the answer ended with the prompt's pass, before a guess was needed\n");
    // Every timed run looks for a free CPU again: say how many took turns, not only the last one.
    if (c.n_declined > 0) std::printf("  not overlapped: %s\n", took_turns_note(c).c_str());
    if (s.overlapped)
        std::printf("  time: the target waited %.2f ms for proposals, verify %.2f ms, accept/reject %.2f ms, total "
                    "%.2f ms | TTFT %.2f ms; beside it the draft ran %d passes in %.2f ms (%d proposals thrown away "
                    "or never checked)\n",
                    s.wait_ms, s.verify_ms, s.accept_ms, s.total_ms, s.ttft_ms, s.n_draft_passes, s.draft_ms,
                    s.n_draft_passes - s.n_drafted);
    else
        std::printf("  time: draft %.2f ms (%d passes), verify %.2f ms, accept/reject %.2f ms, total %.2f ms | TTFT "
                    "%.2f ms\n",
                    s.draft_ms, s.n_draft_passes, s.verify_ms, s.accept_ms, s.total_ms, s.ttft_ms);
    std::printf("speculative %.1f tok/s vs the target alone %.1f tok/s (%s; median of %s each): speedup %.2f×\n",
                tok_s(c.speculative.tokens.size(), c.speculative_ms), tok_s(c.target.tokens.size(), c.target_ms),
                t.baseline()->name().c_str(), count_of(static_cast<std::size_t>(o.repetitions), "run", "runs").c_str(), c.speedup);
    if (o.sampling.temperature <= 0)
        std::printf("greedy: the text is %s the target alone's\n", c.identical ? "identical to" : "NOT identical to");
    else
        std::printf("sampled (temperature %g): the text follows the target's distribution, not its draws\n",
                    o.sampling.temperature);
    return exit_ok;
}

namespace {

struct SpeculateOptions {
    std::string model, prompt = "Once upon a time", backend = "cpu";
    std::vector<std::string> drafts;
    bool random_draft = false, json = false;
    std::vector<int> ks = {1, 2, 4, 8};
    std::vector<float> temps = {0, 1};
    int n_predict = 64, threads = 0, draft_threads = 1, repetitions = 3;
    llm::SamplerParams sampling;  // the filters (top-k, top-p, min-p) and the seed; temperature comes from --temp
    bool overlap = false;
};

int run_speculate(const SpeculateOptions& o) {
    if (o.drafts.empty() && !o.random_draft) throw Error("speculate needs --draft D.gguf (or --random-draft)");
    // As a draft length or a temperature given twice: the same file twice
    // would measure it twice, in two columns that read as two drafts.
    for (std::size_t i = 0; i < o.drafts.size(); ++i)
        for (std::size_t j = 0; j < i; ++j) {
            std::error_code ec;
            if (o.drafts[i] == o.drafts[j] || std::filesystem::equivalent(o.drafts[i], o.drafts[j], ec))
                throw Error(fmt::format("--draft {} is given twice", printable(o.drafts[i])));
        }
    Target t = load_target(o.model, o.backend, o.threads, o.draft_threads, o.overlap);
    Loaded& target = t.loaded;
    const TextCodec& codec = *target.m.codec;
    std::vector<Loaded> drafts;
    for (const std::string& d : o.drafts) drafts.push_back(load(d, o.backend, o.draft_threads));
    if (o.random_draft)
        drafts.push_back(random_draft(o.model, drafts.empty() ? nullptr : drafts.front().m.model.get(), o.backend,
                                      o.draft_threads));
    std::vector<SpeculativeDraft> sd;
    for (Loaded& d : drafts) {
        check_same_vocabulary(*target.m.model, *d.m.model);
        sd.push_back({d.name, d.m.backend.get()});
    }
    if (o.prompt.empty()) throw Error("prompt is empty: give at least one character to continue from");
    const std::vector<int> prompt = codec.encode(o.prompt);

    SweepParams sp;
    sp.ks = o.ks;
    sp.temperatures = o.temps;
    sp.base.n_predict = o.n_predict;
    sp.base.sampling = o.sampling;
    sp.base.overlap = o.overlap;
    sp.repetitions = o.repetitions;
    sp.alone = t.baseline();
    const std::vector<SweepRow> rows = sweep_speculative(*target.m.backend, sd, codec, prompt, sp);

    if (o.json) {
        nlohmann::ordered_json j;
        j["model"] = o.model;
        j["backend"] = target.m.backend->name();
        j["alone_backend"] = t.baseline()->name();
        j["overlap"] = o.overlap;
        j["drafts"] = nlohmann::ordered_json::array();
        for (const Loaded& d : drafts) j["drafts"].push_back({{"name", d.name}, {"backend", d.m.backend->name()}, {"n_params", d.m.model->n_params()}});
        j["prompt"] = o.prompt;
        j["n_predict"] = o.n_predict;
        j["repetitions"] = o.repetitions;
        j["rows"] = sweep_json(rows);
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }
    std::printf("Speculative decoding%s on %s (%s; the target alone: %s), prompt %s, %s, median of %s\n",
                o.overlap ? ", overlapped," : "", target.name.c_str(), target.m.backend->name().c_str(),
                t.baseline()->name().c_str(), quote_text(o.prompt).c_str(),
                count_of(static_cast<std::size_t>(o.n_predict), "token", "tokens").c_str(), count_of(static_cast<std::size_t>(o.repetitions), "run", "runs").c_str());
    for (const Loaded& d : drafts)
        std::printf("  draft %s: %s parameters, %s\n", d.name.c_str(), std::to_string(d.m.model->n_params()).c_str(),
                    d.m.backend->name().c_str());
    std::printf("\n%-34s %3s %5s %9s %12s %13s %11s %8s %6s\n", "draft", "k", "temp", "accepted", "tokens/pass",
                "target tok/s", "spec. tok/s", "speedup", "same");
    for (const SweepRow& r : rows)
        std::printf("%-34s %3d %5g %8.1f%% %12.2f %13.0f %11.0f %7.2f× %6s\n", r.draft.c_str(), r.k, r.temperature,
                    100 * r.acceptance, r.tokens_per_pass, r.target_tok_s, r.speculative_tok_s, r.speedup,
                    r.temperature <= 0 ? (r.identical ? "yes" : "NO") : "-");
    std::printf("\n(same: greedy text identical to the target alone; sampled rows follow its distribution instead)\n");
    bool any_loss = false;
    for (const SweepRow& r : rows)
        if (!r.even && r.speedup < 1) {
            if (!any_loss) std::printf("\nWhere it loses:\n");
            any_loss = true;
            std::printf("  %s, k = %d, temperature %g — %s\n", r.draft.c_str(), r.k, r.temperature, r.verdict.c_str());
        }
    if (!any_loss) std::printf("\nNo regime lost on this machine in this run.\n");
    // Rows below 1× left out above: said, or a 0.91× in the table reads as
    // forgotten.
    std::string even;
    for (const SweepRow& r : rows)
        if (r.even && r.speedup < 1)
            even += fmt::format("{}{}, k = {}, temperature {:g} ({:.2f}×)", even.empty() ? "" : "; ", r.draft, r.k,
                                r.temperature, r.speedup);
    if (!even.empty())
        std::printf("About even, not counted as losses (within %.0f %% of 1×, or its rounds on both sides of 1×): %s\n",
                    100 * serving::even_band, even.c_str());
    for (const SweepRow& r : rows)
        if (r.n_declined > 0)
            std::printf("Not overlapped: %s, k = %d, temperature %g — %s\n", r.draft.c_str(), r.k, r.temperature,
                        took_turns_note(r).c_str());
    return exit_ok;
}

}  // namespace

void add_speculate(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<SpeculateOptions>();
    auto* sub = app.add_subcommand("speculate", "Speculative decoding swept over drafts, k and temperature, "
                                                "each measured against the target alone");
    sub->add_option("-m,--model", o->model, "The target model (GGUF, Llama architecture)")->required()->transform(model_file());
    sub->add_option("--draft", o->drafts, "A draft model with the target's vocabulary (repeatable)")->transform(model_file());
    sub->add_flag("--random-draft", o->random_draft,
                  "Add a draft with random weights, the first draft's shape and the target's vocabulary");
    sub->add_option("--k", o->ks, "Draft lengths to try, e.g. 1,2,4,8")
        ->delimiter(',')
        ->check(CLI::Range(1, max_draft_tokens));
    sub->add_option("--temp", o->temps, "Temperatures to try, e.g. 0,1 (0: greedy)")
        ->delimiter(',')
        ->check(CLI::Range(0.0f, 100.0f));
    // The first token comes from the prompt's pass: a run of one drafts
    // nothing, and its verdict ("the draft disagrees, 0% accepted") was made up.
    sub->add_option("-n,--n-predict", o->n_predict, "Tokens per run (2 or more: the first comes from the prompt's pass)")
        ->check(CLI::Range(2, 1 << 16));
    sub->add_option("--prompt", o->prompt, "The text to continue (default \"Once upon a time\")");
    add_threads_option(sub, o->threads, "The target's threads", "; with --overlap, the threads in all");
    sub->add_option("--draft-threads", o->draft_threads,
                    "The draft's threads (default 1: a small draft gains little from more, and two busy pools "
                    "would fight over the cores)")
        ->check(CLI::Range(1, 1024));
    sub->add_option("-r,--repetitions", o->repetitions, "Timed runs of each, median kept (default 3)")
        ->check(CLI::Range(1, 100));
    const llm::SamplerParams& d = o->sampling;  // the defaults: the filters are on
    sub->add_option("--seed", o->sampling.seed, fmt::format("Seed of the sampled runs (default {})", d.seed))
        ->check(seed_number());
    sub->add_option("--top-k", o->sampling.top_k,
                    fmt::format("Keep the K most likely tokens before sampling (0: off; default {})", d.top_k))
        ->check(CLI::Range(0, 1 << 20));
    sub->add_option("--top-p", o->sampling.top_p,
                    fmt::format("Keep the smallest set whose probability reaches P (1: off; default {})", d.top_p))
        ->check(CLI::Range(0.001f, 1.0f));
    sub->add_option("--min-p", o->sampling.min_p,
                    fmt::format("Drop tokens below M × the top probability (0: off; default {})", d.min_p))
        ->check(CLI::Range(0.0f, 0.999f));
    sub->add_flag("--overlap", o->overlap, overlap_help);
    add_backend_option(sub, o->backend);
    sub->add_flag("--json", o->json, "Print one JSON object instead");
    add_progress_option(sub);
    add_examples(sub, {"sixstep speculate -m stories-3m-f16.gguf --draft stories-draft-f16.gguf --k 1,2,4 --temp 0"});
    commands.push_back({sub, [o] { return run_speculate(*o); }});
}

}  // namespace sixstep::cli
