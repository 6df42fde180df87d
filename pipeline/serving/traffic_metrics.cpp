#include "pipeline/serving/traffic_metrics.h"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"

namespace sixstep::serving {

double ttft_ms(const RequestRecord& r) { return r.first_token_ms < 0 ? -1 : r.first_token_ms - r.arrival_ms; }
double ttft_sched_ms(const RequestRecord& r) {
    return r.first_token_ms < 0 || r.first_scheduled_ms < 0 ? -1 : r.first_token_ms - r.first_scheduled_ms;
}
double queue_ms(const RequestRecord& r) { return r.first_scheduled_ms < 0 ? -1 : r.first_scheduled_ms - r.arrival_ms; }
double e2e_ms(const RequestRecord& r) { return r.finish_ms < 0 ? -1 : r.finish_ms - r.arrival_ms; }
double tpot_ms(const RequestRecord& r) {
    if (!r.finished() || r.output.size() < 2) return -1;
    return (e2e_ms(r) - ttft_ms(r)) / static_cast<double>(r.output.size() - 1);
}

const LatencyMetric& TrafficReport::latency(std::string_view key) const {
    for (const LatencyMetric& m : latencies)
        if (m.key == key) return m;
    throw Error(fmt::format("traffic report: no latency '{}'", key));
}

bool TrafficReport::has_latency(std::string_view key) const {
    return std::any_of(latencies.begin(), latencies.end(), [&](const LatencyMetric& m) { return m.key == key; });
}

bool TrafficReport::has_total(std::string_view key) const {
    return std::any_of(totals.begin(), totals.end(), [&](const Metric& m) { return m.key == key; });
}

const Metric& TrafficReport::total(std::string_view key) const {
    for (const Metric& m : totals)
        if (m.key == key) return m;
    throw Error(fmt::format("traffic report: no figure '{}'", key));
}

namespace {

// Mean of f over the steps, each weighted by its cost (by one when no step
// cost anything, as a deterministic test model may do).
template <typename F>
double time_weighted(const std::vector<StepRecord>& steps, F f) {
    double sum = 0, weight = 0;
    for (const StepRecord& s : steps) sum += f(s) * s.cost_ms, weight += s.cost_ms;
    if (weight > 0) return sum / weight;
    for (const StepRecord& s : steps) sum += f(s), weight += 1;
    return weight > 0 ? sum / weight : 0;
}

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace

TrafficReport make_report(const std::vector<RequestRecord>& requests, const std::vector<StepRecord>& steps,
                          const RunInfo& run, const SloTargets& targets) {
    TrafficReport rep;
    std::vector<double> ttft, ttft_sched, queue, itl, tpot, e2e, ttft_shared, ttft_own;
    long long n_out = 0, n_prompt = 0, n_cached = 0, n_computed = 0, n_decode_rows = 0, n_preempt = 0;
    int n_done = 0, n_good = 0, n_shared = 0;
    for (const RequestRecord& r : requests) {
        if (!r.finished()) continue;
        ++n_done;
        ttft.push_back(ttft_ms(r));
        ttft_sched.push_back(ttft_sched_ms(r));
        queue.push_back(queue_ms(r));
        e2e.push_back(e2e_ms(r));
        (r.shares_prefix ? ttft_shared : ttft_own).push_back(ttft_ms(r));
        n_shared += r.shares_prefix;
        const double t = tpot_ms(r);
        if (t >= 0) tpot.push_back(t);
        for (std::size_t i = 1; i < r.token_ms.size(); ++i) itl.push_back(r.token_ms[i] - r.token_ms[i - 1]);
        n_out += static_cast<long long>(r.output.size());
        n_prompt += r.n_prompt;
        n_cached += r.n_cached_tokens;
        n_computed += r.n_computed_tokens;
        n_decode_rows += static_cast<long long>(r.output.size()) - 1;  // the last token is never fed back
        n_preempt += r.n_preemptions;
        const bool good = (targets.ttft_ms <= 0 || ttft_ms(r) <= targets.ttft_ms) &&
                          (targets.tpot_ms <= 0 || t < 0 || t <= targets.tpot_ms);
        n_good += good;
    }

    auto lat = [&](std::string key, std::string name, std::string def, std::vector<double>& v) {
        rep.latencies.push_back({std::move(key), std::move(name), std::move(def), summarize(std::move(v))});
    };
    lat("ttft", "TTFT (from arrival)",
        "first token sampled - request arrived; includes queueing (vLLM bench's TTFT, counted from sending)", ttft);
    lat("ttft_sched", "TTFT (from scheduling)",
        "first token sampled - request first joined a forward pass (vLLM server's per-request TTFT)", ttft_sched);
    lat("queue", "queue time", "request first joined a forward pass - request arrived", queue);
    lat("itl", "ITL", "every gap between consecutive tokens of a request, pooled over all requests (vLLM)", itl);
    lat("tpot", "TPOT",
        "per request (E2E - TTFT) / (output tokens - 1), first token excluded; one-token requests left out (vLLM)",
        tpot);
    lat("e2e", "E2E latency", "last token sampled - request arrived", e2e);
    if (n_shared > 0) {
        lat("ttft_shared_prefix", "TTFT, sharing the prefix",
            "TTFT from arrival of the requests whose prompt starts with the shared prefix", ttft_shared);
        if (!ttft_own.empty())
            lat("ttft_own_prompt", "TTFT, own prompt only", "TTFT from arrival of the requests without the shared prefix",
                ttft_own);
    }

    const double dur_s = run.duration_ms / 1000.0;
    auto tot = [&](std::string key, std::string name, std::string unit, std::string def, double value) {
        rep.totals.push_back({std::move(key), std::move(name), std::move(unit), std::move(def), value});
    };
    tot("completed", "completed requests", "", "requests that sampled their last token", n_done);
    tot("duration", "duration", "s", "virtual time from the first arrival to the last token of the last request",
        dur_s);
    tot("busy", "engine busy", "%",
        "share of the duration spent in forward passes and sampling (the rest: idle, waiting for arrivals)",
        100 * ratio(run.busy_ms, run.duration_ms));
    tot("request_throughput", "request throughput", "req/s", "completed requests / duration", ratio(n_done, dur_s));
    tot("output_throughput", "output throughput", "tok/s", "output tokens / duration", ratio(n_out, dur_s));
    tot("total_throughput", "total token throughput", "tok/s", "(prompt + output tokens) / duration",
        ratio(n_prompt + n_out, dur_s));
    if (targets.ttft_ms > 0 || targets.tpot_ms > 0) {
        std::string slo;
        if (targets.ttft_ms > 0) slo += fmt::format("TTFT <= {:g} ms", targets.ttft_ms);
        if (targets.tpot_ms > 0) slo += fmt::format("{}TPOT <= {:g} ms", slo.empty() ? "" : " and ", targets.tpot_ms);
        tot("goodput", "goodput", "req/s",
            fmt::format("requests meeting every target ({}) / duration (DistServe; vLLM --goodput)", slo),
            ratio(n_good, dur_s));
        tot("goodput_share", "requests meeting the targets", "%", fmt::format("share of requests with {}", slo),
            100 * ratio(n_good, n_done));
    }
    tot("output_tokens", "output tokens", "", "tokens generated, all requests", static_cast<double>(n_out));
    tot("prompt_tokens", "prompt tokens", "", "prompt tokens, all requests", static_cast<double>(n_prompt));
    tot("prefill_computed", "prefill tokens computed", "",
        "prompt (and, after a preemption, recomputed) positions read by forward passes",
        static_cast<double>(n_computed - n_decode_rows));
    tot("prefix_cached", "prompt tokens from the prefix cache", "",
        "prompt positions adopted from cached KV blocks instead of computed", static_cast<double>(n_cached));
    tot("prefix_hit_rate", "prefix cache hit rate", "%", "prompt tokens from the prefix cache / prompt tokens",
        100 * ratio(static_cast<double>(n_cached), static_cast<double>(n_prompt)));
    tot("preemptions", "preemptions", "",
        "times a running request gave its KV blocks back to make room and went back to the queue (recomputed later)",
        static_cast<double>(n_preempt));
    tot("steps", "forward passes", "", "forward passes run (each one step of the scheduler)",
        static_cast<double>(steps.size()));
    const double max_batch = run.params.max_batch;
    tot("batch_occupancy", "batch occupancy", "%",
        "requests in a forward pass / max batch, time-weighted over passes",
        100 * time_weighted(steps, [&](const StepRecord& s) { return s.shape.n_sequences / max_batch; }));
    tot("step_tokens_mean", "tokens per pass", "", "rows in a forward pass (prefill chunks + decode rows), time-weighted",
        time_weighted(steps, [](const StepRecord& s) { return static_cast<double>(s.shape.n_tokens); }));
    int peak_running = 0, peak_blocks = 0;
    for (const StepRecord& s : steps) {
        peak_running = std::max(peak_running, s.n_running);
        peak_blocks = std::max(peak_blocks, s.n_blocks_used);
    }
    tot("running_mean", "requests running (mean)", "",
        "requests holding a batch slot and KV memory, time-weighted over passes",
        time_weighted(steps, [](const StepRecord& s) { return static_cast<double>(s.n_running); }));
    tot("running_peak", "requests running (peak)", "", "most requests holding a batch slot and KV memory at once",
        peak_running);
    // From the requests' own spans, not sampled at passes: a request that
    // arrives during a pass waits for its end, and the next pass admits it
    // before any sample is taken (the mean read 0 beside a queue time of
    // 0.05 ms). Little's law: the time spent waiting ÷ the run's length.
    double waited_ms = 0;
    for (const RequestRecord& r : requests)
        for (const PhaseSpan& sp : r.spans)
            if (sp.phase == Phase::queued || sp.phase == Phase::preempted) waited_ms += sp.t1_ms - sp.t0_ms;
    tot("waiting_mean", "requests waiting (mean)", "",
        "arrived requests not running (queued or preempted), averaged over the run: time spent waiting / duration",
        ratio(waited_ms, run.duration_ms));
    tot("kv_blocks_mean", "KV blocks used (mean)", "",
        fmt::format("blocks with an owner (a request or the prefix cache) of {}, time-weighted", run.n_blocks),
        time_weighted(steps, [](const StepRecord& s) { return static_cast<double>(s.n_blocks_used); }));
    tot("kv_blocks_peak", "KV blocks used (peak)", "", fmt::format("most blocks with an owner at once, of {}", run.n_blocks),
        peak_blocks);
    const double pool = static_cast<double>(run.n_blocks) * run.block_size;
    tot("kv_token_share", "KV memory holding tokens", "%",
        "positions holding keys and values / positions set aside for requests (PagedAttention's measure), time-weighted",
        100 * time_weighted(steps, [](const StepRecord& s) {
            return ratio(static_cast<double>(s.n_slots_filled), static_cast<double>(s.n_slots_held));
        }));
    tot("kv_internal_waste", "internal fragmentation", "% of pool",
        "positions set aside for requests but empty (a partial last block; a reservation beyond the answer's end) "
        "/ pool, time-weighted",
        100 * time_weighted(steps, [&](const StepRecord& s) {
            return static_cast<double>(std::max(0LL, s.n_slots_held - s.n_slots_filled)) / pool;
        }));
    tot("kv_external_waste", "external fragmentation", "% of pool",
        "free positions in holes too small for the request at the head of the queue while the free total would "
        "hold it / pool, time-weighted (pages leave no holes)",
        100 * time_weighted(steps, [&](const StepRecord& s) { return static_cast<double>(s.n_slots_stranded) / pool; }));
    return rep;
}

DecodePassCosts decode_pass_costs(const std::vector<StepRecord>& steps) {
    std::vector<double> after, later;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const StepShape& s = steps[i].shape;
        if (s.n_prefill_tokens > 0 || s.n_decode == 0) continue;
        (i > 0 && steps[i - 1].shape.n_prefill_tokens > 0 ? after : later).push_back(steps[i].cost_ms);
    }
    DecodePassCosts c;
    c.n_after_prefill = static_cast<int>(after.size());
    c.n_later = static_cast<int>(later.size());
    if (!after.empty()) c.after_prefill_ms = median(std::move(after));
    if (!later.empty()) c.later_ms = median(std::move(later));
    return c;
}

}  // namespace sixstep::serving
