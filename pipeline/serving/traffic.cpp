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

TrafficRun run_traffic(llm::Backend& backend, const llm::TextCodec& codec, const std::vector<RequestSpec>& requests,
                       const TrafficParams& params, StepCostModel cost) {
    llm::check_kv_pool(params.kv_blocks, params.block_size);
    const llm::LlamaHparams& hp = backend.model().hparams();
    llm::KvCacheParams kp = llm::kv_cache_params(hp, params.n_ctx, 1, params.block_size);
    kp.n_blocks = params.kv_blocks;
    std::unique_ptr<llm::KvCache> kv = backend.make_kv_cache(kp);
    // Tens of milliseconds of buffers touched for the first time belong to
    // the cold start, not to the first request: a pass the size of the
    // first prompt's opening pays them (llm::warm_up).
    if (params.warmup && !requests.empty())
        llm::warm_up(backend, static_cast<int>(std::min<std::size_t>(requests.front().prompt.size(), 16)));

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
