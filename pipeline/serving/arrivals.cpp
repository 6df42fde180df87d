#include "pipeline/serving/arrivals.h"

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::serving {

std::string_view arrival_kind_name(ArrivalKind kind) {
    switch (kind) {
    case ArrivalKind::poisson: return "poisson";
    case ArrivalKind::bursty: return "bursty";
    case ArrivalKind::trace: return "trace";
    }
    return "?";
}

void check_arrival_params(const ArrivalParams& p) {
    if (p.kind == ArrivalKind::trace) return;  // the file gives the times and the count
    if (p.count < 1 || p.count > max_request_count)
        throw Error(fmt::format("count {}: ask for 1 to {} requests", p.count, max_request_count));
    if (!(p.rate > 0) || !std::isfinite(p.rate))
        throw Error(fmt::format("rate {}: the arrival rate must be a positive number of requests per second", p.rate));
    // A request a million seconds apart or a billion a second: the virtual
    // clock's sums would print hundreds of digits, or all arrive at once.
    if (p.rate < min_arrival_rate || p.rate > max_arrival_rate)
        throw Error(fmt::format("rate {}: the arrival rate must be {:g} to {:g} requests per second", p.rate,
                                min_arrival_rate, max_arrival_rate));
    // Below 0.01 the gamma gaps are nearly all zero: every request at t = 0.
    if (p.kind == ArrivalKind::bursty && !(p.burstiness >= min_burstiness && p.burstiness <= 1))
        throw Error(fmt::format("burstiness {}: must be in [{:g}, 1] (1 is Poisson; smaller is burstier)", p.burstiness,
                                min_burstiness));
}

double rate_per_e2e_alone(double rate, double e2e_alone_ms) {
    const double per_s = rate * 1000.0 / e2e_alone_ms;
    if (!(per_s >= min_arrival_rate && per_s <= max_arrival_rate))
        throw Error(fmt::format("\"rate\" {:g} per E2E alone ({:.3g} ms here) is {:.3g} requests a second, outside "
                                "{:g} to {:g}",
                                rate, e2e_alone_ms, per_s, min_arrival_rate, max_arrival_rate));
    return per_s;
}

std::vector<double> arrival_times_ms(const ArrivalParams& p) {
    check_arrival_params(p);
    if (p.kind == ArrivalKind::trace) throw Error("arrivals: a trace's times come from its file");
    std::mt19937_64 rng(p.seed);
    const double mean_gap_ms = 1000.0 / p.rate;
    std::exponential_distribution<double> exponential(1.0 / mean_gap_ms);
    // Gamma with shape k and scale mean/k has the same mean and a coefficient
    // of variation 1/sqrt(k): k = 0.25 gives gaps twice as variable as Poisson.
    std::gamma_distribution<double> gamma(p.burstiness, mean_gap_ms / p.burstiness);
    std::vector<double> t(static_cast<std::size_t>(p.count));
    double now = 0;
    for (int i = 0; i < p.count; ++i) {
        t[static_cast<std::size_t>(i)] = now;
        now += p.kind == ArrivalKind::poisson ? exponential(rng) : gamma(rng);
    }
    return t;
}

}  // namespace sixstep::serving
