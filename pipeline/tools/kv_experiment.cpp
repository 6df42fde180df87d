#include "pipeline/tools/kv_experiment.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/llm/generation.h"
#include "pipeline/llm/sampler.h"
#include "pipeline/llm/stepper.h"

namespace sixstep::llm {

namespace {

// Medians of the first and last quarter of the decode steps (1..n).
void summarize(KvExperiment& e) {
    for (const auto& s : e.steps) e.cached_total_ms += s.cached_ms, e.uncached_total_ms += s.uncached_ms;
    const int n_decode = static_cast<int>(e.steps.size()) - 1;
    if (n_decode < 1) return;
    const int q = std::max(1, n_decode / 4);
    auto med = [&](int first, bool cached) {
        std::vector<double> v;
        for (int k = first; k < first + q; ++k) v.push_back(cached ? e.steps[k].cached_ms : e.steps[k].uncached_ms);
        return median(std::move(v));
    };
    e.cached_early_ms = med(1, true);
    e.cached_late_ms = med(n_decode + 1 - q, true);
    e.uncached_early_ms = med(1, false);
    e.uncached_late_ms = med(n_decode + 1 - q, false);
}

}  // namespace

KvExperiment run_kv_experiment(Backend& backend, const TextCodec& codec, std::string_view prompt, int n_tokens) {
    GenerateParams params;
    params.n_predict = n_tokens;
    params.sampling.temperature = 0;
    params.stop_at_eog = false;
    const int n_vocab = backend.model().hparams().n_vocab;

    // With the cache: the ordinary loop.
    auto kv = backend.make_kv_cache();
    Generation g(codec, prompt, params);
    Stepper stepper(backend, *kv);
    stepper.attach(g);
    KvExperiment e;
    e.prompt_tokens = g.prompt_tokens();
    std::vector<std::vector<float>> cached_logits;
    while (!g.done()) {
        KvExperimentStep step;
        step.index = static_cast<int>(g.tokens().size());
        step.n_context = g.n_past() + static_cast<int>(g.pending().size());
        const StepStats st = stepper.forward_all();
        step.cached_ms = st.ms;
        e.forward_tokens_cached += st.n_tokens;
        cached_logits.push_back(g.logits());
        step.token = g.sample().token;
        e.steps.push_back(step);
    }
    e.tokens_cached = g.tokens();

    // Without: a fresh sequence every step, the whole context read again.
    auto kv_fresh = backend.make_kv_cache();
    std::vector<int> context = e.prompt_tokens;
    std::vector<float> logits;
    for (KvExperimentStep& step : e.steps) {
        const int seq = kv_fresh->add_sequence();
        const auto t0 = std::chrono::steady_clock::now();
        backend.forward(*kv_fresh, Batch::prefill(context, seq), logits);
        step.uncached_ms = ms_since(t0);
        kv_fresh->free_sequence(seq);
        e.forward_tokens_uncached += static_cast<int>(context.size());
        const std::vector<float>& want = cached_logits[static_cast<std::size_t>(step.index)];
        for (int i = 0; i < n_vocab; ++i) e.max_logit_diff = std::max(e.max_logit_diff, std::fabs(logits[i] - want[i]));
        const int token = argmax(logits);
        e.tokens_uncached.push_back(token);
        context.push_back(token);
    }
    e.identical_tokens = e.tokens_cached == e.tokens_uncached;
    summarize(e);
    return e;
}

}  // namespace sixstep::llm
