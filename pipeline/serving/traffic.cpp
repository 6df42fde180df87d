#include "pipeline/serving/traffic.h"

#include <chrono>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::serving {

TrafficRun run_traffic(llm::Backend& backend, const llm::TextCodec& codec, const std::vector<RequestSpec>& requests,
                       const TrafficParams& params, StepCostModel cost) {
    if (params.kv_blocks < 1 || params.kv_blocks > max_kv_blocks)
        throw Error(fmt::format("kv blocks {}: the pool needs 1 to {} blocks", params.kv_blocks, max_kv_blocks));
    if (params.block_size < 1)
        throw Error(fmt::format("block size {}: a block holds at least one position", params.block_size));
    const llm::LlamaHparams& hp = backend.model().hparams();
    llm::KvCacheParams kp = llm::kv_cache_params(hp, params.n_ctx, 1, params.block_size);
    kp.n_blocks = params.kv_blocks;
    std::unique_ptr<llm::KvCache> kv = backend.make_kv_cache(kp);

    const auto t0 = std::chrono::steady_clock::now();
    TrafficRun run;
    {
        Scheduler s(backend, *kv, codec, params.scheduler, std::move(cost));
        s.submit(requests);
        s.run();
        run.requests = s.requests();
        run.steps = s.steps();
        run.info = s.run_info();
    }
    run.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
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
