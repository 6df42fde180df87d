// One server, one queue: a discrete-event simulation of requests arriving at
// random (a Poisson process) at a server that serves one at a time, first
// come first served — what happens to waiting time as utilization climbs.
//
// Utilization ρ = arrival rate λ × mean service time E[S]. The waiting time
// (arrival → start of service) has closed forms to compare with, for Poisson
// arrivals and any service-time distribution with squared coefficient of
// variation c² = Var[S] / E[S]² (Pollaczek–Khinchine):
//     Wq = ρ · E[S] · (1 + c²) / (2 (1 − ρ))
//     M/M/1 (exponential service, c² = 1):  Wq = ρ / (μ (1 − ρ)),   μ = 1 / E[S]
//     M/D/1 (deterministic service, c² = 0): Wq = ρ / (2 μ (1 − ρ))
// All three blow up as ρ → 1 — the hockey stick: at 50 % a request waits
// one service time (M/M/1), at 90 % nine, at 99 % ninety-nine.
//
// The simulation: two kinds of events, an arrival and the end of a service,
// taken in time order; waits recorded in order of arrival. It starts empty,
// discards a warm-up, and reports the mean wait with its standard error from
// batch means (the measured requests cut into n_batches consecutive batches;
// waits of neighbouring requests are correlated, batch means nearly are not)
// and a 95 % confidence interval (Student t). Near ρ = 1 neighbouring waits
// stay correlated for ~1/(1 − √ρ)² requests (the M/M/1 relaxation time), so
// the run is lengthened until every batch spans at least ten of them.
//
//     QueueSimParams p;  p.utilization = 0.9;  p.mean_service_ms = 12.5;
//     QueueSimResult r = simulate_queue(p);               // deterministic service
//     r.mean_wait_ms ± r.ci95_ms  vs  wait_md1(0.9, 12.5)
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace sixstep::serving {

enum class ServiceModel {
    deterministic,  // every service takes mean_service_ms (M/D/1)
    exponential,    // exponentially distributed with that mean (M/M/1)
    empirical,      // drawn, with replacement, from measured service times (M/G/1)
};
std::string_view service_model_name(ServiceModel m);  // "deterministic", "exponential", "empirical"
std::string_view queue_name(ServiceModel m);          // "M/D/1", "M/M/1", "M/G/1"

inline constexpr double min_utilization = 1e-3;  // the least load simulated (below it no request waits)

struct QueueSimParams {
    double utilization = 0.5;                // ρ, strictly between 0 and 1
    ServiceModel service = ServiceModel::deterministic;
    double mean_service_ms = 10;             // E[S] for deterministic and exponential service, > 0
    std::vector<double> service_samples_ms;  // empirical service: measured times, each > 0
    long long min_requests = 200'000;        // requests measured at least (after the warm-up), 1000 … 10^7
    long long max_requests = 50'000'000;     // the lengthening near ρ = 1 stops here (or at min_requests, if more)
    int n_batches = 20;                      // batches for the batch-means standard error, 2 … 1000
    std::uint64_t seed = 1;                  // of the arrival and service draws
};

struct QueueSimResult {
    ServiceModel service = ServiceModel::deterministic;
    double utilization = 0;         // ρ asked for
    double arrival_rate_per_s = 0;  // λ
    double mean_service_ms = 0;     // E[S] (the samples' mean for empirical service)
    double service_scv = 0;         // c² = Var[S] / E[S]² of the distribution drawn from
    long long n_warmup = 0;         // requests discarded at the start (the system starts empty)
    long long n_measured = 0;       // requests whose waits are reported
    int n_batches = 0;
    double mean_wait_ms = 0;        // Wq: arrival → start of service, mean over measured requests
    double std_error_ms = 0;        // of mean_wait_ms, from batch means
    double ci95_ms = 0;             // 95 % confidence half-width (Student t, n_batches − 1 degrees of freedom)
    double p50_wait_ms = 0, p90_wait_ms = 0, p99_wait_ms = 0;
    double zero_wait_fraction = 0;  // requests served on arrival (1 − ρ in theory)
    double busy_fraction = 0;       // time the server was busy, measured (ρ in theory)
    double mean_queue_length = 0;   // time-average number waiting, Lq (= λ · Wq by Little's law)
    double relaxation_requests = 0; // 1/(1 − √ρ)²: how long waits stay correlated
    bool batches_long_enough = true;  // every batch spans >= 10 relaxation times and the warm-up >= 5 (false when max_requests cut either short)
    std::vector<double> batch_means_ms;  // the mean wait of each batch
};

// Throws sixstep::Error for a utilization not strictly between 0 and 1 (at
// 1 and above the queue never settles: say so, never loop), non-finite or
// non-positive service times, or counts out of range.
QueueSimResult simulate_queue(const QueueSimParams& params);

// The requests simulate_queue(p) runs, warm-up included, known before it
// runs: from 2·min_requests far from ρ = 1 to 100 million near it (a
// lesson's work budget counts them). 0 for a utilization it refuses.
long long queue_requests_planned(const QueueSimParams& p);
// The same checks alone, with the same messages.
void validate_queue_params(const QueueSimParams& params);

// The mean and c² of measured service times (not empty).
struct ServiceStats {
    double mean_ms = 0;
    double scv = 0;  // Var[S] / E[S]², population variance
};
ServiceStats service_stats(const std::vector<double>& samples_ms);

// Closed forms of the mean wait Wq (ms) for Poisson arrivals (see above).
double wait_mm1(double utilization, double mean_service_ms);
double wait_md1(double utilization, double mean_service_ms);
double wait_mg1(double utilization, double mean_service_ms, double service_scv);

// The two-sided 95 % quantile of Student's t with df degrees of freedom
// (Cornish–Fisher expansion; within 0.001 for df >= 5).
double student_t_975(int df);

}  // namespace sixstep::serving
