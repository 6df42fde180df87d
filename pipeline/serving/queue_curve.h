// The hockey stick: mean waiting time vs utilization for one server whose
// service time was measured on the engine, simulated (queue_sim.h) beside
// the closed forms, and the headroom that keeps waits bounded — as plain
// data a panel can draw and a lesson can check.
//
// At each utilization the simulation runs with deterministic service (every
// step takes the measured mean: M/D/1) and exponential service of the same
// mean (M/M/1); with measured samples, also with service times drawn from
// them (M/G/1, compared with Pollaczek–Khinchine). `formula` samples the
// closed forms finely for smooth curves; `headroom` answers "how busy may
// the server be if requests should wait at most k service times?".
//
//     QueueCurveParams p;  p.mean_service_ms = 12.5;
//     QueueCurve c = run_queue_curve(p);
//     for (auto& pt : c.points) plot(pt.utilization, pt.deterministic.mean_wait_ms, pt.md1_ms);
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/serving/queue_sim.h"

namespace sixstep::serving {

struct QueueCurveParams {
    std::vector<double> utilizations = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99};  // each in (0, 1)
    double mean_service_ms = 0;              // the service time; with samples, their mean is used instead
    std::vector<double> service_samples_ms;  // measured service times (optional): adds the M/G/1 runs
    long long min_requests = 200'000;        // requests measured per simulation at least (see QueueSimParams)
    int n_batches = 20;                      // batch means for the standard errors
    std::uint64_t seed = 1;                  // each simulation gets its own stream derived from it
    std::vector<double> headroom_waits = {0.5, 1, 2, 5, 10};  // wait limits, in mean service times, > 0
};

struct QueuePoint {
    double utilization = 0;
    double arrival_rate_per_s = 0;
    QueueSimResult deterministic;                // simulated M/D/1
    QueueSimResult exponential;                  // simulated M/M/1
    std::optional<QueueSimResult> empirical;     // simulated M/G/1, with samples
    double md1_ms = 0, mm1_ms = 0;               // the closed forms
    double mg1_ms = 0;                           // Pollaczek–Khinchine with the samples' c² (with samples)
};

// The closed forms on a fine grid, for smooth curves.
struct QueueFormulaSample {
    double utilization = 0;
    double md1_ms = 0, mm1_ms = 0, mg1_ms = 0;
};

// The highest utilization at which the mean wait stays within a limit.
struct HeadroomRow {
    double wait_limit_services = 0;  // the limit in mean service times
    double wait_limit_ms = 0;
    double max_utilization_md1 = 0;  // Wq <= limit for ρ up to this
    double max_utilization_mm1 = 0;
    double max_utilization_mg1 = 0;  // with the samples' c² (0 without samples)
};

struct QueueCurve {
    double mean_service_ms = 0;
    double service_scv = 0;          // c² of the measured samples (0 without samples)
    int n_service_samples = 0;
    std::vector<double> service_samples_ms;  // the measured service times, as given (a histogram's)
    std::vector<QueuePoint> points;
    std::vector<QueueFormulaSample> formula;  // ρ = 0.01 … 0.99 by 0.01
    std::vector<HeadroomRow> headroom;
};

// Throws sixstep::Error on bad input (see simulate_queue), before simulating.
QueueCurve run_queue_curve(const QueueCurveParams& params);
// The same checks alone, with the same messages.
void validate_queue_curve(const QueueCurveParams& params);

// ρ such that the M/G/1 mean wait equals wait_services mean service times.
double max_utilization_for_wait(double wait_services, double service_scv);

// Simulations of the curve whose request cap cut the warm-up or the batches
// short (QueueSimResult::batches_long_enough): near ρ = 1 their mean is how
// long the run lasted, not the wait.
int unsettled_simulations(const QueueCurve& curve);
// The same for one utilization: whether the cap cut any of its simulations short.
bool hit_request_cap(const QueuePoint& point);

// A utilization in whole percent, with the decimals it needs below 100:
// 0.9999999 is "99.99999", not "100" (a server never idle, which no queue is).
std::string busy_percent(double utilization);
// A utilization in percent for a table: three significant digits ("12.3",
// "0.1"), more where three would round it up to 100 ("99.99" for 0.9999).
std::string utilization_percent(double utilization);

}  // namespace sixstep::serving
