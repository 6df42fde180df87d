#include "pipeline/serving/traffic.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/progress.h"
#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/llm/stepper.h"

namespace sixstep::serving {

TrafficRun run_traffic(llm::Backend& backend, const llm::TextCodec& codec, const std::vector<RequestSpec>& requests,
                       const TrafficParams& params, StepCostModel cost) {
    return std::move(run_traffic_side_by_side(backend, codec, requests, {&params, 1}, std::move(cost)).front());
}

std::vector<TrafficRun> run_traffic_side_by_side(llm::Backend& backend, const llm::TextCodec& codec,
                                                 const std::vector<RequestSpec>& requests,
                                                 std::span<const TrafficParams> setups, StepCostModel cost) {
    struct Arm {
        std::unique_ptr<llm::KvCache> kv;
        std::unique_ptr<Scheduler> scheduler;
        TrafficRun run;
        int peak = -1;
        bool done = false;
    };
    const llm::LlamaHparams& hp = backend.model().hparams();
    std::vector<Arm> arms(setups.size());
    // Every pool is checked before any is built or anything runs.
    for (const TrafficParams& p : setups) llm::check_kv_pool(p.kv_blocks, p.block_size);
    std::uint64_t n_finished = 0;
    for (std::size_t i = 0; i < setups.size(); ++i) {
        const TrafficParams& p = setups[i];
        llm::KvCacheParams kp = llm::kv_cache_params(hp, p.n_ctx, 1, p.block_size);
        kp.n_blocks = p.kv_blocks;
        arms[i].kv = backend.make_kv_cache(kp);
        arms[i].scheduler = std::make_unique<Scheduler>(backend, *arms[i].kv, codec, p.scheduler, cost);
        // Progress for the front end, once per forward pass: also where
        // Ctrl+C (the window's Esc) stops a long run between passes.
        arms[i].scheduler->set_observer({nullptr, [&n_finished](const RequestRecord&) { ++n_finished; }});
        arms[i].scheduler->submit(requests);
    }
    // Tens of milliseconds of buffers touched for the first time belong to
    // the cold start, not to the first request: a pass the size of the
    // first prompt's opening pays them (llm::warm_up).
    const bool warmup = std::any_of(setups.begin(), setups.end(), [](const TrafficParams& p) { return p.warmup; });
    if (warmup && !requests.empty())
        llm::warm_up(backend, static_cast<int>(std::min<std::size_t>(requests.front().prompt.size(), 16)));

    const std::uint64_t n_total = requests.size() * setups.size();
    for (std::size_t left = arms.size(); left > 0;) {
        for (Arm& a : arms) {
            if (a.done) continue;
            const auto t0 = std::chrono::steady_clock::now();
            a.done = !a.scheduler->step();
            a.run.wall_ms += ms_since(t0);
            if (a.done) {
                --left;
                continue;
            }
            report_progress("serving traffic (requests finished)", n_finished, n_total);
            // A snapshot costs a walk over the pool: take one only when a new peak is reached.
            if (const int used = a.scheduler->steps().back().n_blocks_used; used > a.peak) {
                a.peak = used;
                a.run.kv_peak = a.scheduler->kv_snapshot();
            }
        }
    }
    std::vector<TrafficRun> out;
    for (std::size_t i = 0; i < arms.size(); ++i) {
        Arm& a = arms[i];
        a.run.requests = a.scheduler->requests();
        a.run.steps = a.scheduler->steps();
        a.run.info = a.scheduler->run_info();
        a.scheduler.reset();  // before its pool
        a.run.report = make_report(a.run.requests, a.run.steps, a.run.info, setups[i].targets);
        out.push_back(std::move(a.run));
    }
    return out;
}

KvLayoutComparison compare_kv_layouts(llm::Backend& backend, const llm::TextCodec& codec,
                                      const std::vector<RequestSpec>& requests, const TrafficParams& params,
                                      StepCostModel cost) {
    TrafficParams p = params;
    p.scheduler.prefix_cache = false;
    TrafficParams both[2] = {p, p};
    both[0].scheduler.kv_layout = KvLayout::paged;
    both[1].scheduler.kv_layout = KvLayout::contiguous;
    std::vector<TrafficRun> runs = run_traffic_side_by_side(backend, codec, requests, both, std::move(cost));
    return {std::move(runs[0]), std::move(runs[1])};
}

}  // namespace sixstep::serving
