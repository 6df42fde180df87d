// ServerMetrics: what a running server exposes for Prometheus to scrape —
// gauges (requests running and waiting, KV blocks used), counters (requests
// by how they ended, prompt and generated tokens) and histograms of TTFT,
// inter-token latency and end-to-end latency — and the text exposition format
// (version 0.0.4) it is read in. Latency definitions are the serving lab's
// (traffic_metrics.h) on the server's wall clock: TTFT = first token sampled
// − request received; ITL = each gap between a request's tokens; E2E = last
// token − received. The engine thread records; any thread renders.
//
//     metrics.on_finish(record);                       // engine thread
//     std::string body = metrics.prometheus_text();    // GET /metrics
#pragma once
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline/llm/stop_reason.h"
#include "pipeline/serving/scheduler.h"

namespace sixstep::server {

// A Prometheus histogram: cumulative counts per upper bound.
class Histogram {
public:
    explicit Histogram(std::vector<double> bounds);  // ascending upper bounds (the +Inf bucket is implicit)
    void observe(double value);
    const std::vector<double>& bounds() const { return bounds_; }
    const std::vector<long long>& counts() const { return counts_; }  // per bucket, not cumulative; last is +Inf
    long long count() const { return count_; }
    double sum() const { return sum_; }

private:
    std::vector<double> bounds_;
    std::vector<long long> counts_;
    long long count_ = 0;
    double sum_ = 0;
};

// The engine's state at the end of a step.
struct EngineGauges {
    int n_running = 0;        // requests in the batch
    int n_waiting = 0;        // received, not running (queued or preempted)
    int n_blocks_used = 0;    // KV blocks with an owner
    int n_blocks_cached = 0;  // of them, kept only by the prefix cache
    int n_blocks = 0;         // KV pool
};

class ServerMetrics {
public:
    ServerMetrics();
    void set_gauges(const EngineGauges& g);
    void on_finish(const serving::RequestRecord& r);  // a request ended (any reason)
    void on_tokens(double now_ms, int n);             // n tokens were sampled in a step ending at now_ms
    void on_rejected(const std::string& reason);      // refused before it ran ("queue_full", "bad_request", …)
    EngineGauges gauges() const;
    long long finished(llm::StopReason reason) const;  // requests that ended with this stop reason
    // Generated tokens per second over the last window_ms of the wall clock.
    double tokens_per_s(double now_ms) const;
    std::string prometheus_text(double now_ms) const;

    static constexpr double window_ms = 10000;  // the tokens/s gauge's window

private:
    mutable std::mutex mutex_;
    EngineGauges gauges_;
    Histogram ttft_, itl_, e2e_;
    std::map<llm::StopReason, long long> finished_;  // by stop reason
    std::map<std::string, long long> rejected_;  // by reason
    long long prompt_tokens_ = 0, generated_tokens_ = 0, cached_tokens_ = 0;
    std::deque<std::pair<double, int>> recent_;  // (step end ms, tokens) within the window
};

}  // namespace sixstep::server
