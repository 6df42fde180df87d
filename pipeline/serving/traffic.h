// A traffic run: one workload through one model under one serving setup —
// the KV pool built, the scheduler run to the end, the report made. The
// `traffic` command, lessons and panels all call this, so a figure on screen
// is the figure in the terminal.
//
//     TrafficParams p;
//     p.workload.arrivals = {.kind = ArrivalKind::poisson, .rate = 4, .count = 100};
//     p.scheduler.policy = BatchPolicy::continuous;
//     auto reqs = make_workload(p.workload, codec, bos);
//     TrafficRun run = run_traffic(backend, codec, reqs, p);
//     run.report.latency("ttft").summary.p50;
//     KvLayoutComparison c = compare_kv_layouts(backend, codec, reqs, p);   // contiguous vs paged
#pragma once
#include <span>
#include <vector>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/serving/scheduler.h"
#include "pipeline/serving/traffic_metrics.h"
#include "pipeline/serving/workload.h"

namespace sixstep::serving {

struct TrafficParams {
    WorkloadParams workload;    // arrivals, prompts, output lengths (make_workload)
    SchedulerParams scheduler;  // policy, max batch, step budget, prefix cache, KV layout
    int kv_blocks = llm::default_kv_blocks;     // blocks in the KV pool, 1 .. llm::max_kv_blocks (llm::check_kv_pool)
    int block_size = llm::default_block_size;  // positions per block, 1 .. llm::max_block_size
    int n_ctx = 0;              // most positions per request; <= 0 → the model's context
    SloTargets targets;         // for goodput
    bool warmup = true;         // one untimed request first (pages the weights in, sizes the buffers), as benchmarks do
};

struct TrafficRun {
    std::vector<RequestRecord> requests;  // in arrival order
    std::vector<StepRecord> steps;
    RunInfo info;
    TrafficReport report;
    KvSnapshot kv_peak;  // the KV pool after the step that used the most blocks (for a block map)
    double wall_ms = 0;  // real time the run took (passes, sampling and the scheduler's bookkeeping)
};

// Runs the requests to the end on a fresh KV pool. Throws sixstep::Error
// for bad parameters (kv blocks, block size, max batch beyond the pool, a
// request that could never fit) before anything runs.
TrafficRun run_traffic(llm::Backend& backend, const llm::TextCodec& codec, const std::vector<RequestSpec>& requests,
                       const TrafficParams& params, StepCostModel cost = measured_cost);

// The same requests under several setups, each on a pool of its own, their
// forward passes taken in turn (one pass of each, round after round): a
// machine that grows busier or quieter part-way (a build starting beside a
// lesson) slows every arm alike, so a ratio of their figures measures the
// setups, not the moment each ran in. Throws as run_traffic does, before
// anything runs. The runs come back in the order of `setups`.
std::vector<TrafficRun> run_traffic_side_by_side(llm::Backend& backend, const llm::TextCodec& codec,
                                                 const std::vector<RequestSpec>& requests,
                                                 std::span<const TrafficParams> setups,
                                                 StepCostModel cost = measured_cost);

// The same requests under the two KV layouts, the rest of the setup equal
// (prefix caching off: it needs pages), side by side.
struct KvLayoutComparison {
    TrafficRun paged;
    TrafficRun contiguous;
};
KvLayoutComparison compare_kv_layouts(llm::Backend& backend, const llm::TextCodec& codec,
                                      const std::vector<RequestSpec>& requests, const TrafficParams& params,
                                      StepCostModel cost = measured_cost);

}  // namespace sixstep::serving
