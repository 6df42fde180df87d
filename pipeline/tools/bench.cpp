#include "pipeline/tools/bench.h"

#include <algorithm>
#include <chrono>
#include <random>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/progress.h"

namespace sixstep::llm {

BenchResult run_bench(Backend& backend, const BenchParams& params) {
    const LlamaHparams& hp = backend.model().hparams();
    const int n_ctx = std::max(params.n_prompt, params.n_gen);
    if (n_ctx > hp.n_ctx)
        throw Error(fmt::format("bench: {} tokens do not fit in the model's context of {} (n_ctx)", n_ctx, hp.n_ctx));
    if (params.n_prompt < 0 || params.n_gen < 0 || params.repetitions < 1)
        throw Error("bench: token counts must be >= 0 and repetitions >= 1");
    auto kv = backend.make_kv_cache(std::max(1, n_ctx));
    std::mt19937_64 rng(params.seed);
    std::uniform_int_distribution<int> any_token(0, hp.n_vocab - 1);
    std::vector<float> logits;

    // One test: a warm-up, then `repetitions` timed runs of `run_once` on a
    // fresh sequence each time (`setup` runs before the clock starts);
    // tokens/s from `n_tokens` per run.
    auto measure = [&](BenchTest& t, const char* kind, int n_tokens, auto&& setup, auto&& run_once) {
        t.name = fmt::format("{}{}", kind, n_tokens);
        t.n_tokens = n_tokens;
        if (n_tokens <= 0) return;
        std::vector<double> ms;
        for (int rep = params.warm_up ? -1 : 0; rep < params.repetitions; ++rep) {  // rep -1: warm-up
            report_progress(t.name + " (runs)", static_cast<std::uint64_t>(rep + 1),
                            static_cast<std::uint64_t>(params.repetitions + 1));
            setup();
            const int s = kv->add_sequence();
            const auto t0 = std::chrono::steady_clock::now();
            run_once(s);
            const double dt = ms_since(t0);
            kv->free_sequence(s);
            if (rep >= 0) {
                ms.push_back(dt);
                t.tok_s.push_back(n_tokens * 1000.0 / dt);
            }
        }
        t.median_ms = median(ms);
        t.median_tok_s = median(t.tok_s);
        clear_progress();
    };

    BenchResult r;
    // pp: the whole prompt in one batch, into an empty sequence.
    std::vector<int> tokens(static_cast<std::size_t>(params.n_prompt));
    auto random_prompt = [&] {
        for (auto& t : tokens) t = any_token(rng);
    };
    measure(r.prefill, "pp", params.n_prompt, random_prompt,
            [&](int s) { backend.forward(*kv, Batch::prefill(tokens, s), logits, params.observer); });
    // tg: one token at a time from an empty context, as llama-bench does.
    measure(r.decode, "tg", params.n_gen, [] {}, [&](int s) {
        for (int i = 0; i < params.n_gen; ++i) {
            throw_if_cancelled();  // a 110M decode run takes seconds: stop between tokens
            Batch b;
            b.add(any_token(rng), i, s, true);
            backend.forward(*kv, b, logits, params.observer);
        }
    });
    return r;
}

}  // namespace sixstep::llm
