#include "pipeline/serving/queue_sim.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"
#include "pipeline/serving/percentiles.h"

namespace sixstep::serving {

std::string_view service_model_name(ServiceModel m) {
    switch (m) {
        case ServiceModel::deterministic: return "deterministic";
        case ServiceModel::exponential: return "exponential";
        case ServiceModel::empirical: return "empirical";
    }
    return "?";
}

std::string_view queue_name(ServiceModel m) {
    switch (m) {
        case ServiceModel::deterministic: return "M/D/1";
        case ServiceModel::exponential: return "M/M/1";
        case ServiceModel::empirical: return "M/G/1";
    }
    return "?";
}

ServiceStats service_stats(const std::vector<double>& samples) {
    ServiceStats st;
    if (samples.empty()) return st;
    double sum = 0, sum2 = 0;
    for (double s : samples) sum += s, sum2 += s * s;
    const double n = static_cast<double>(samples.size());
    st.mean_ms = sum / n;
    st.scv = std::max(0.0, sum2 / n / (st.mean_ms * st.mean_ms) - 1);
    return st;
}

double wait_mg1(double rho, double s, double scv) { return rho * s * (1 + scv) / (2 * (1 - rho)); }
double wait_mm1(double rho, double s) { return wait_mg1(rho, s, 1); }
double wait_md1(double rho, double s) { return wait_mg1(rho, s, 0); }

double student_t_975(int df) {
    static const double exact[] = {0, 12.7062, 4.3027, 3.1824, 2.7764};
    if (df < 1) return std::numeric_limits<double>::infinity();
    if (df <= 4) return exact[df];
    const double z = 1.959963985, z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
    const double n = df;
    return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
           (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n) +
           (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * n * n * n * n);
}

void validate_queue_params(const QueueSimParams& p) {
    const double rho = p.utilization;
    if (!std::isfinite(rho)) throw Error(fmt::format("queue: utilization must be a finite number, not {}", rho));
    if (rho >= 1)
        throw Error(fmt::format(
            "queue: utilization {:g} is not below 1: requests would arrive at least as fast as the server finishes "
            "them, so the queue grows without bound and the mean wait is infinite (Wq = ρ/(μ(1−ρ)) has no finite "
            "value at ρ >= 1); a simulation would only measure how long it ran. Use a value below 1, e.g. 0.99",
            rho));
    if (rho <= 0)
        throw Error(fmt::format("queue: utilization {:g} is not above 0: at 0 no request ever arrives (and a negative "
                                "arrival rate means nothing); use a value between 0 and 1, e.g. 0.5",
                                rho));
    // Below this nearly no request waits: the mean wait is a few billionths
    // of a service, the simulation's waits are all 0 and its interval has no
    // width, so nothing can be compared.
    if (rho < min_utilization)
        throw Error(fmt::format("queue: utilization {:g} is below {:g}: almost no request ever waits there; use a "
                                "value from {:g} to just below 1",
                                rho, min_utilization, min_utilization));
    if (p.service == ServiceModel::empirical) {
        if (p.service_samples_ms.empty()) throw Error("queue: empirical service needs measured service times, none given");
        for (double s : p.service_samples_ms)
            if (!std::isfinite(s) || s <= 0)
                throw Error(fmt::format("queue: a measured service time is {} ms; every one must be a positive number", s));
    } else if (!std::isfinite(p.mean_service_ms) || p.mean_service_ms <= 0) {
        throw Error(fmt::format("queue: the service time must be a positive number of ms, not {}", p.mean_service_ms));
    } else if (p.mean_service_ms < 1e-6 || p.mean_service_ms > 1e9) {
        // Beyond these the simulated clock's sums lose the service time (or the waits overflow).
        throw Error(fmt::format("queue: a service time of {:g} ms is out of range (1e-6 … 1e9 ms)", p.mean_service_ms));
    }
    // At most 10^7, as a lesson's sim_requests: each measured wait is kept
    // (8 bytes) for the percentiles, and 10^9 ran for minutes toward 8 GB.
    if (p.min_requests < 1000 || p.min_requests > 10'000'000)
        throw Error(fmt::format("queue: {} requests is out of range (1000 … 10000000)", p.min_requests));
    if (p.n_batches < 2 || p.n_batches > 1000)
        throw Error(fmt::format("queue: {} batches is out of range (2 … 1000)", p.n_batches));
}

namespace {

struct RunLength {
    double relaxation_requests = 0;
    long long n_measured = 0, n_warmup = 0;
    bool long_enough = false;  // each batch >= 10 relaxation times, and the warm-up whole
};

// How many requests: enough that each batch spans >= 10 relaxation times.
RunLength run_length(const QueueSimParams& p) {
    RunLength L;
    const double sq = std::sqrt(p.utilization);
    L.relaxation_requests = 1 / ((1 - sq) * (1 - sq));
    const double wanted = std::max(static_cast<double>(p.min_requests), 10.0 * L.relaxation_requests * p.n_batches);
    long long n_measured =
        static_cast<long long>(std::min(wanted, static_cast<double>(std::max(p.max_requests, p.min_requests))));
    L.n_measured = (n_measured + p.n_batches - 1) / p.n_batches * p.n_batches;
    // The warm-up (five relaxation times) stops at the same cap: near ρ = 1
    // it wanted 2·10⁹ requests at ρ = 0.9999 (a run of minutes) and past the
    // range of a long long closer still. Cut short, the run says so.
    const double warmup_wanted = std::ceil(5 * L.relaxation_requests);
    const double most = static_cast<double>(std::max({p.max_requests, p.min_requests, 1000LL}));
    L.n_warmup = static_cast<long long>(std::clamp(warmup_wanted, 1000.0, most));
    L.long_enough = static_cast<double>(L.n_measured / p.n_batches) >= 10 * L.relaxation_requests &&
                    warmup_wanted <= static_cast<double>(L.n_warmup);
    return L;
}

}  // namespace

long long queue_requests_planned(const QueueSimParams& p) {
    if (!(p.utilization > 0 && p.utilization < 1) || p.n_batches < 1) return 0;  // refused before it runs
    const RunLength L = run_length(p);
    return L.n_warmup + L.n_measured;
}

QueueSimResult simulate_queue(const QueueSimParams& p) {
    validate_queue_params(p);
    QueueSimResult r;
    r.service = p.service;
    r.utilization = p.utilization;
    r.n_batches = p.n_batches;

    // The service distribution: its mean and c².
    if (p.service == ServiceModel::empirical) {
        const ServiceStats st = service_stats(p.service_samples_ms);
        r.mean_service_ms = st.mean_ms;
        r.service_scv = st.scv;
    } else {
        r.mean_service_ms = p.mean_service_ms;
        r.service_scv = p.service == ServiceModel::exponential ? 1 : 0;
    }
    const double lambda = p.utilization / r.mean_service_ms;  // arrivals per ms
    r.arrival_rate_per_s = lambda * 1000;

    const RunLength length = run_length(p);
    r.relaxation_requests = length.relaxation_requests;
    const long long n_measured = length.n_measured;
    r.n_measured = n_measured;
    r.n_warmup = length.n_warmup;
    r.batches_long_enough = length.long_enough;
    const long long n_total = r.n_warmup + n_measured;

    std::mt19937_64 rng(p.seed);
    std::exponential_distribution<double> interarrival(lambda);
    std::exponential_distribution<double> exp_service(1 / r.mean_service_ms);
    std::uniform_int_distribution<std::size_t> pick(0, p.service_samples_ms.empty() ? 0 : p.service_samples_ms.size() - 1);
    const auto service = [&]() -> double {
        switch (p.service) {
            case ServiceModel::deterministic: return r.mean_service_ms;
            case ServiceModel::exponential: return exp_service(rng);
            case ServiceModel::empirical: return p.service_samples_ms[pick(rng)];
        }
        return r.mean_service_ms;
    };

    // The event loop. Only two events can be next: the next arrival, or the
    // end of the service in progress (infinity when the server is idle).
    constexpr double never = std::numeric_limits<double>::infinity();
    std::deque<double> waiting;  // arrival times of queued requests, oldest first
    std::vector<double> waits;   // measured requests' waits, in order of service
    waits.reserve(static_cast<std::size_t>(n_measured));
    double now = 0, next_arrival = interarrival(rng), departure = never;
    long long started = 0;
    double t_measure = 0, queue_area = 0, busy_time = 0;
    bool measuring = false;
    const auto begin_service = [&](double arrived) {
        if (!measuring && started == r.n_warmup) {
            measuring = true;
            t_measure = now;
        }
        if (measuring) waits.push_back(now - arrived);
        ++started;
        const double s = service();
        departure = now + s;
    };
    const auto advance = [&](double t) {
        if (measuring) {
            queue_area += static_cast<double>(waiting.size()) * (t - now);
            if (departure != never) busy_time += t - now;
        }
        now = t;
    };
    while (started < n_total) {
        // Up to 50 million requests take seconds: a place for Ctrl+C (and the
        // window's Esc) to stop them, checked rarely enough to cost nothing.
        if ((started & 0xFFFF) == 0) throw_if_cancelled();
        if (next_arrival <= departure) {
            advance(next_arrival);
            if (departure == never)
                begin_service(now);
            else
                waiting.push_back(now);
            next_arrival = now + interarrival(rng);
        } else {
            advance(departure);
            departure = never;
            if (!waiting.empty()) {
                const double arrived = waiting.front();
                waiting.pop_front();
                begin_service(arrived);
            }
        }
    }
    const double span = now - t_measure;
    r.busy_fraction = span > 0 ? busy_time / span : 0;
    r.mean_queue_length = span > 0 ? queue_area / span : 0;

    // Mean, batch means, percentiles.
    const std::size_t per_batch = waits.size() / static_cast<std::size_t>(p.n_batches);
    double sum = 0;
    long long zero = 0;
    for (std::size_t b = 0; b < static_cast<std::size_t>(p.n_batches); ++b) {
        double s = 0;
        for (std::size_t i = b * per_batch; i < (b + 1) * per_batch; ++i) {
            s += waits[i];
            zero += waits[i] == 0;
        }
        r.batch_means_ms.push_back(s / static_cast<double>(per_batch));
        sum += s;
    }
    r.mean_wait_ms = sum / static_cast<double>(waits.size());
    double var = 0;
    for (double m : r.batch_means_ms) var += (m - r.mean_wait_ms) * (m - r.mean_wait_ms);
    var /= p.n_batches - 1;
    r.std_error_ms = std::sqrt(var / p.n_batches);
    r.ci95_ms = student_t_975(p.n_batches - 1) * r.std_error_ms;
    r.zero_wait_fraction = static_cast<double>(zero) / static_cast<double>(waits.size());
    // Interpolated between ranks, as every other percentile here (percentiles.h).
    r.p50_wait_ms = percentile_unsorted(waits, 50);
    r.p90_wait_ms = percentile_unsorted(waits, 90);
    r.p99_wait_ms = percentile_unsorted(waits, 99);
    return r;
}

}  // namespace sixstep::serving
