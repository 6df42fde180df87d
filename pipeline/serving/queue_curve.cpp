#include "pipeline/serving/queue_curve.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"
#include "pipeline/serving/quantity.h"

namespace sixstep::serving {

double max_utilization_for_wait(double k, double scv) {
    // ρ(1 + c²) / (2(1 − ρ)) = k  ⇔  ρ = 2k / (1 + c² + 2k)
    return 2 * k / (1 + scv + 2 * k);
}

void validate_queue_curve(const QueueCurveParams& p) {
    if (p.utilizations.empty()) throw Error("queue: no utilizations given");
    if (p.utilizations.size() > 1000)
        throw Error(fmt::format("queue: {} utilizations is too many (at most 1000)", p.utilizations.size()));
    for (double k : p.headroom_waits)
        if (!std::isfinite(k) || k <= 0)
            throw Error(fmt::format("queue: a wait limit must be a positive number of service times, not {}", k));
    // Every check before any simulation: one bad value, one message, no work.
    const bool with_samples = !p.service_samples_ms.empty();
    QueueSimParams base;
    base.mean_service_ms = p.mean_service_ms;
    base.service_samples_ms = p.service_samples_ms;
    base.min_requests = p.min_requests;
    base.n_batches = p.n_batches;
    for (double u : p.utilizations) {
        base.utilization = u;
        base.service = with_samples ? ServiceModel::empirical : ServiceModel::deterministic;
        validate_queue_params(base);
    }
    // Each utilization is a row of simulations: one given twice would only
    // run them again, in a second row that reads as another load. (Sorted
    // once each is known to be a number.)
    std::vector<double> sorted = p.utilizations;
    std::sort(sorted.begin(), sorted.end());
    if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
        throw Error(fmt::format("queue: utilization {:g} is given twice", *twice));
}

QueueCurve run_queue_curve(const QueueCurveParams& p) {
    validate_queue_curve(p);
    const bool with_samples = !p.service_samples_ms.empty();
    QueueSimParams base;
    base.service_samples_ms = p.service_samples_ms;
    base.min_requests = p.min_requests;
    base.n_batches = p.n_batches;

    QueueCurve c;
    c.n_service_samples = static_cast<int>(p.service_samples_ms.size());
    c.service_samples_ms = p.service_samples_ms;
    if (with_samples) {
        const ServiceStats st = service_stats(p.service_samples_ms);
        c.mean_service_ms = st.mean_ms;
        c.service_scv = st.scv;
    } else {
        c.mean_service_ms = p.mean_service_ms;
    }
    base.mean_service_ms = c.mean_service_ms;
    const double s = c.mean_service_ms;

    std::uint64_t stream = 0;
    const std::uint64_t n_runs = p.utilizations.size() * (with_samples ? 3 : 2);
    const auto run = [&](double u, ServiceModel m) {
        report_progress("queue simulations", stream, n_runs);
        QueueSimParams q = base;
        q.utilization = u;
        q.service = m;
        // Independent streams: the three models never share draws.
        q.seed = p.seed * 0x9E3779B97F4A7C15ull + ++stream;
        return simulate_queue(q);
    };
    for (double u : p.utilizations) {
        QueuePoint pt;
        pt.utilization = u;
        pt.arrival_rate_per_s = u / s * 1000;
        pt.deterministic = run(u, ServiceModel::deterministic);
        pt.exponential = run(u, ServiceModel::exponential);
        pt.md1_ms = wait_md1(u, s);
        pt.mm1_ms = wait_mm1(u, s);
        if (with_samples) {
            pt.empirical = run(u, ServiceModel::empirical);
            pt.mg1_ms = wait_mg1(u, s, c.service_scv);
        }
        c.points.push_back(std::move(pt));
    }
    for (int i = 1; i <= 99; ++i) {
        const double u = i / 100.0;
        c.formula.push_back({u, wait_md1(u, s), wait_mm1(u, s), with_samples ? wait_mg1(u, s, c.service_scv) : 0});
    }
    for (double k : p.headroom_waits)
        c.headroom.push_back({k, k * s, max_utilization_for_wait(k, 0), max_utilization_for_wait(k, 1),
                              with_samples ? max_utilization_for_wait(k, c.service_scv) : 0});
    return c;
}

int unsettled_simulations(const QueueCurve& curve) {
    int n = 0;
    for (const QueuePoint& p : curve.points)
        n += !p.deterministic.batches_long_enough + !p.exponential.batches_long_enough +
             (p.empirical && !p.empirical->batches_long_enough);
    return n;
}

bool hit_request_cap(const QueuePoint& p) {
    return !p.deterministic.batches_long_enough || !p.exponential.batches_long_enough ||
           (p.empirical && !p.empirical->batches_long_enough);
}

std::string utilization_percent(double u) {
    // Every utilization simulated is below 1: "100" would read as one the command refuses.
    int digits = 3;
    while (digits < 17 && std::stod(significant(100 * u, digits)) >= 100) ++digits;
    return significant(100 * u, digits);
}

std::string busy_percent(double u) {
    int decimals = 0;
    while (decimals < 9 && u < 1 && std::round(100 * u * std::pow(10, decimals)) >= 100 * std::pow(10, decimals))
        ++decimals;
    return fmt::format("{:.{}f}", 100 * u, decimals);
}

}  // namespace sixstep::serving
