// TrafficReport: what a serving run measured, every figure with its
// definition. Serving tools use the same words for different things (vLLM's
// TPOT excludes the first token, GuideLLM's includes it; TTFT counts from
// sending in one tool and from scheduling in another), so each metric here
// carries the one line that says what it is, and the front ends print it.
// Where a choice was needed, the definitions follow vLLM's `bench serve`.
//
// All times are on the virtual clock (virtual_clock.h): arrivals as drawn,
// service as measured on the engine. "Time-weighted" means each forward pass
// counts in proportion to its cost, so a long prefill weighs more than a
// short decode step.
//
//     TrafficReport r = make_report(s.requests(), s.steps(), s.run_info(), {.ttft_ms = 200, .tpot_ms = 100});
//     r.latency("ttft").summary.p50;   r.total("goodput").value;   r.total("goodput").definition;
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/serving/percentiles.h"
#include "pipeline/serving/scheduler.h"

namespace sixstep::serving {

// One figure of a run.
struct Metric {
    std::string key;         // stable name for JSON and lessons: "output_throughput"
    std::string name;        // for people: "output throughput"
    std::string unit;        // "tok/s", "ms", "%", "" for counts
    std::string definition;  // one line: what exactly was counted
    double value = 0;
};

// A latency over requests (or token gaps): its distribution.
struct LatencyMetric {
    std::string key;         // "ttft", "ttft_sched", "queue", "itl", "tpot", "e2e", …
    std::string name;        // "TTFT (from arrival)"
    std::string definition;  // one line
    Summary summary;         // in milliseconds
};

// Service-level targets for goodput; 0 leaves a target out.
struct SloTargets {
    double ttft_ms = 0;  // a request meets it when its TTFT from arrival is at most this
    double tpot_ms = 0;  // … and its TPOT at most this (a one-token request has no TPOT and meets it)
};

struct TrafficReport {
    std::vector<LatencyMetric> latencies;
    std::vector<Metric> totals;
    // Throws sixstep::Error for a key the report does not have.
    const LatencyMetric& latency(std::string_view key) const;
    const Metric& total(std::string_view key) const;
    bool has_latency(std::string_view key) const;
    bool has_total(std::string_view key) const;  // goodput: only with a target
};

TrafficReport make_report(const std::vector<RequestRecord>& requests, const std::vector<StepRecord>& steps,
                          const RunInfo& run, const SloTargets& targets);

// Per request, as vLLM defines them (ms; -1 when the request has not got there).
double ttft_ms(const RequestRecord& r);        // first token − arrival
double ttft_sched_ms(const RequestRecord& r);  // first token − first scheduling
double queue_ms(const RequestRecord& r);       // first scheduling − arrival
double e2e_ms(const RequestRecord& r);         // last token − arrival
double tpot_ms(const RequestRecord& r);        // (E2E − TTFT) / (output tokens − 1); -1 with one token

// The decode-only passes of a run (no prompt rows), split by what ran just
// before: on a CPU the decode passes right after a long prefill cost more
// than later ones (lesson 11: about twice as much after a 200-token prefill
// as after a 20-token one, the excess fading over the next few passes), so
// a shorter prefill also lowers TPOT when no request ever shares a pass.
struct DecodePassCosts {
    double after_prefill_ms = 0;  // median cost of a decode-only pass whose previous pass had prompt rows
    double later_ms = 0;          // median cost of the other decode-only passes
    int n_after_prefill = 0;      // passes counted in each (0: that median is 0)
    int n_later = 0;
};
DecodePassCosts decode_pass_costs(const std::vector<StepRecord>& steps);

}  // namespace sixstep::serving
