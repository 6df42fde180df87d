#include "pipeline/serving/traffic.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/progress.h"
#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/llm/stepper.h"

namespace sixstep::serving {

namespace {

// A first forward pass pays for page faults on the weights and for buffers
// sized on first use: tens of milliseconds that belong to the cold start, not
// to the first request. One short request through a scratch cache pays them.
void warm_up(llm::Backend& backend, const llm::TextCodec& codec, const RequestSpec& r, const llm::KvCacheParams& kp) {
    auto kv = backend.make_kv_cache(kp);
    llm::Stepper st(backend, *kv);
    llm::GenerateParams gp;
    gp.n_predict = 2;
    gp.sampling = greedy_sampling();
    gp.stop_at_eog = false;
    const std::size_t n = std::min<std::size_t>(r.prompt.size(), 16);
    llm::Generation g(codec, std::vector<int>(r.prompt.begin(), r.prompt.begin() + static_cast<std::ptrdiff_t>(n)), gp);
    st.attach(g);
    while (!g.done()) {
        st.forward_all();
        g.sample();
    }
}

}  // namespace

TrafficRun run_traffic(llm::Backend& backend, const llm::TextCodec& codec, const std::vector<RequestSpec>& requests,
                       const TrafficParams& params, StepCostModel cost) {
    llm::check_kv_pool(params.kv_blocks, params.block_size);
    const llm::LlamaHparams& hp = backend.model().hparams();
    llm::KvCacheParams kp = llm::kv_cache_params(hp, params.n_ctx, 1, params.block_size);
    kp.n_blocks = params.kv_blocks;
    std::unique_ptr<llm::KvCache> kv = backend.make_kv_cache(kp);
    if (params.warmup && !requests.empty() && !requests.front().prompt.empty())
        warm_up(backend, codec, requests.front(), kp);

    const auto t0 = std::chrono::steady_clock::now();
    TrafficRun run;
    {
        Scheduler s(backend, *kv, codec, params.scheduler, std::move(cost));
        // Progress for the front end, once per forward pass: also where
        // Ctrl+C (the window's Esc) stops a long run between passes.
        std::uint64_t n_finished = 0;
        s.set_observer({nullptr, [&](const RequestRecord&) { ++n_finished; }});
        s.submit(requests);
        int peak = -1;
        while (s.step()) {
            report_progress("serving traffic (requests finished)", n_finished, requests.size());
            // A snapshot costs a walk over the pool: take one only when a new peak is reached.
            if (const int used = s.steps().back().n_blocks_used; used > peak) {
                peak = used;
                run.kv_peak = s.kv_snapshot();
            }
        }
        run.requests = s.requests();
        run.steps = s.steps();
        run.info = s.run_info();
    }
    run.wall_ms = ms_since(t0);
    run.report = make_report(run.requests, run.steps, run.info, params.targets);
    return run;
}

KvLayoutComparison compare_kv_layouts(llm::Backend& backend, const llm::TextCodec& codec,
                                      const std::vector<RequestSpec>& requests, const TrafficParams& params,
                                      StepCostModel cost) {
    TrafficParams p = params;
    p.scheduler.prefix_cache = false;
    KvLayoutComparison c;
    p.scheduler.kv_layout = KvLayout::paged;
    c.paged = run_traffic(backend, codec, requests, p, cost);
    p.scheduler.kv_layout = KvLayout::contiguous;
    c.contiguous = run_traffic(backend, codec, requests, p, cost);
    return c;
}

}  // namespace sixstep::serving
