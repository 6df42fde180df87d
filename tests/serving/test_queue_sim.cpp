// The queue simulator against the closed forms (fixed seeds): the simulated
// mean wait lies within 4 standard errors of M/M/1, M/D/1 and M/G/1, and the
// standard error is small enough (under 4 % of the value) that agreement
// means something. Plus the laws any correct run obeys (Little's law, the
// busy fraction and the share served on arrival), and every bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "error_of.h"
#include "pipeline/serving/queue_curve.h"
#include "pipeline/serving/queue_sim.h"

using namespace sixstep::serving;
using sixstep::test::error_of;

namespace {

// |simulated − formula| within this many standard errors.
constexpr double tolerance_se = 4;

void check_agrees(const QueueSimResult& r, double formula) {
    INFO(queue_name(r.service) << " at ρ = " << r.utilization << ": simulated " << r.mean_wait_ms << " ± "
                               << r.std_error_ms << " (1 SE), formula " << formula);
    CHECK(std::fabs(r.mean_wait_ms - formula) <= tolerance_se * r.std_error_ms);
    CHECK(r.std_error_ms < 0.04 * formula);
    CHECK(r.batches_long_enough);
}

QueueSimResult sim(ServiceModel m, double rho, std::uint64_t seed = 7) {
    QueueSimParams p;
    p.service = m;
    p.utilization = rho;
    p.mean_service_ms = 10;
    p.min_requests = 400'000;
    p.seed = seed;
    return simulate_queue(p);
}

}  // namespace

TEST_CASE("queue: M/M/1 simulation agrees with ρ/(μ(1−ρ))") {
    for (double rho : {0.3, 0.5, 0.8, 0.9}) {
        const QueueSimResult r = sim(ServiceModel::exponential, rho);
        check_agrees(r, wait_mm1(rho, 10));
        CHECK(r.service_scv == 1);
    }
    CHECK(wait_mm1(0.5, 10) == 10);  // one service time at half load
    CHECK(wait_mm1(0.9, 10) == doctest::Approx(90));
}

TEST_CASE("queue: M/D/1 simulation agrees with ρ/(2μ(1−ρ)), half of M/M/1") {
    for (double rho : {0.3, 0.5, 0.8, 0.9}) {
        const QueueSimResult r = sim(ServiceModel::deterministic, rho);
        check_agrees(r, wait_md1(rho, 10));
        CHECK(r.service_scv == 0);
    }
    CHECK(wait_md1(0.8, 10) == doctest::Approx(wait_mm1(0.8, 10) / 2));
}

TEST_CASE("queue: drawn service times agree with Pollaczek–Khinchine") {
    QueueSimParams p;
    p.service = ServiceModel::empirical;
    p.service_samples_ms = {5, 15, 5, 15};  // mean 10, variance 25: c² = 0.25
    p.utilization = 0.7;
    p.min_requests = 400'000;
    p.seed = 3;
    const QueueSimResult r = simulate_queue(p);
    CHECK(r.mean_service_ms == 10);
    CHECK(r.service_scv == doctest::Approx(0.25));
    check_agrees(r, wait_mg1(0.7, 10, 0.25));
}

TEST_CASE("queue: a run obeys Little's law and the busy fraction") {
    for (ServiceModel m : {ServiceModel::deterministic, ServiceModel::exponential}) {
        const QueueSimResult r = sim(m, 0.6);
        CHECK(r.arrival_rate_per_s == doctest::Approx(60));          // 0.6 / 10 ms
        CHECK(r.mean_queue_length == doctest::Approx(r.arrival_rate_per_s / 1000 * r.mean_wait_ms).epsilon(0.02));
        CHECK(r.busy_fraction == doctest::Approx(0.6).epsilon(0.01));
        CHECK(r.zero_wait_fraction == doctest::Approx(0.4).epsilon(0.02));  // P(no wait) = 1 − ρ
        CHECK(r.p50_wait_ms <= r.p90_wait_ms);
        CHECK(r.p90_wait_ms <= r.p99_wait_ms);
        CHECK(r.n_measured % r.n_batches == 0);
        CHECK(static_cast<int>(r.batch_means_ms.size()) == r.n_batches);
    }
}

TEST_CASE("queue: a seed names a run, and the interval is Student's t") {
    const QueueSimResult a = sim(ServiceModel::exponential, 0.5, 11), b = sim(ServiceModel::exponential, 0.5, 11);
    const QueueSimResult c = sim(ServiceModel::exponential, 0.5, 12);
    CHECK(a.mean_wait_ms == b.mean_wait_ms);
    CHECK(a.mean_wait_ms != c.mean_wait_ms);
    CHECK(a.ci95_ms == doctest::Approx(student_t_975(19) * a.std_error_ms));
    CHECK(student_t_975(19) == doctest::Approx(2.0930).epsilon(1e-4));
    CHECK(student_t_975(9) == doctest::Approx(2.2622).epsilon(1e-3));
    CHECK(student_t_975(4) == 2.7764);
    CHECK(student_t_975(10000) == doctest::Approx(1.9602).epsilon(1e-4));
}

TEST_CASE("queue: near ρ = 1 the run lengthens, and says when it could not") {
    QueueSimParams p;
    p.utilization = 0.99;
    p.min_requests = 1000;
    p.max_requests = 20'000;
    const QueueSimResult r = simulate_queue(p);
    CHECK(r.relaxation_requests == doctest::Approx(1 / std::pow(1 - std::sqrt(0.99), 2)));
    CHECK(r.n_measured == 20'000);
    CHECK_FALSE(r.batches_long_enough);
    p.utilization = 0.5;
    p.min_requests = 1000;
    const QueueSimResult s = simulate_queue(p);
    CHECK(s.n_measured >= static_cast<long long>(10 * s.relaxation_requests * s.n_batches));
    CHECK(s.batches_long_enough);
}

TEST_CASE("queue: a utilization next to 1 stops its warm-up at the cap too, and says it was cut short") {
    // The warm-up wanted five relaxation times: 2·10⁹ requests at 0.9999, and
    // past a long long's range here (it wrapped to the 1,000 minimum and
    // reported a settled-looking wait 10⁶ times too small).
    QueueSimParams p;
    p.utilization = 0.99999999999;
    p.min_requests = 1000;
    p.max_requests = 20'000;
    const QueueSimResult r = simulate_queue(p);
    CHECK(r.n_warmup == 20'000);
    CHECK(r.n_measured == 20'000);
    CHECK_FALSE(r.batches_long_enough);
    p.utilization = 0.9;  // 5 relaxation times ≈ 1,870 requests: within the cap
    const QueueSimResult s = simulate_queue(p);
    CHECK(s.n_warmup == static_cast<long long>(std::ceil(5 * s.relaxation_requests)));
}

TEST_CASE("queue: the curve, the formula samples and the headroom") {
    QueueCurveParams p;
    p.utilizations = {0.5, 0.9};
    p.mean_service_ms = 10;
    p.min_requests = 50'000;
    const QueueCurve c = run_queue_curve(p);
    REQUIRE(c.points.size() == 2);
    CHECK(c.points[0].md1_ms == 5);
    CHECK(c.points[0].mm1_ms == 10);
    CHECK_FALSE(c.points[0].empirical.has_value());
    CHECK(c.points[1].arrival_rate_per_s == doctest::Approx(90));
    CHECK(c.formula.size() == 99);
    CHECK(c.formula.back().utilization == 0.99);
    REQUIRE(c.headroom.size() == 5);
    // "Wait at most one service time": 50 % for M/M/1, 2/3 for M/D/1.
    CHECK(c.headroom[1].wait_limit_services == 1);
    CHECK(c.headroom[1].max_utilization_mm1 == doctest::Approx(0.5));
    CHECK(c.headroom[1].max_utilization_md1 == doctest::Approx(2.0 / 3));
    for (const HeadroomRow& h : c.headroom) {
        CHECK(wait_mm1(h.max_utilization_mm1, 10) == doctest::Approx(h.wait_limit_ms));
        CHECK(wait_md1(h.max_utilization_md1, 10) == doctest::Approx(h.wait_limit_ms));
    }
    // With measured samples the M/G/1 runs join, at the samples' mean.
    p.service_samples_ms = {8, 12};
    p.mean_service_ms = 0;
    const QueueCurve g = run_queue_curve(p);
    CHECK(g.mean_service_ms == 10);
    CHECK(g.service_scv == doctest::Approx(0.04));
    REQUIRE(g.points[0].empirical.has_value());
    CHECK(g.points[0].mg1_ms == doctest::Approx(wait_mg1(0.5, 10, 0.04)));
}

TEST_CASE("queue: bad input is refused with one clear message, never simulated") {
    const auto msg = [](double rho, double service = 10, long long n = 1000) {
        return error_of([&] {
            QueueSimParams p;
            p.utilization = rho;
            p.mean_service_ms = service;
            p.min_requests = n;
            simulate_queue(p);
        });
    };
    CHECK(msg(1).find("queue: utilization 1 is not below 1: requests would arrive at least as fast as the server "
                      "finishes them, so the queue grows without bound") == 0);
    CHECK(msg(1.5).find("utilization 1.5 is not below 1") != std::string::npos);
    CHECK(msg(0).find("utilization 0 is not above 0: at 0 no request ever arrives") != std::string::npos);
    CHECK(msg(-0.2).find("utilization -0.2 is not above 0") != std::string::npos);
    CHECK(msg(std::nan("")) == "queue: utilization must be a finite number, not nan");
    CHECK(msg(std::numeric_limits<double>::infinity()) == "queue: utilization must be a finite number, not inf");
    CHECK(msg(0.5, 0) == "queue: the service time must be a positive number of ms, not 0");
    CHECK(msg(0.5, -3) == "queue: the service time must be a positive number of ms, not -3");
    CHECK(msg(0.5, std::numeric_limits<double>::infinity()) ==
          "queue: the service time must be a positive number of ms, not inf");
    CHECK(msg(0.5, 10, 999) == "queue: 999 requests is out of range (1000 … 10000000)");
    CHECK(msg(0.5, 10, 10'000'001) == "queue: 10000001 requests is out of range (1000 … 10000000)");
    CHECK(error_of([] {
              QueueSimParams p;
              p.service = ServiceModel::empirical;
              p.service_samples_ms = {3, 0};
              simulate_queue(p);
          }) == "queue: a measured service time is 0 ms; every one must be a positive number");
    CHECK(error_of([] {
              QueueSimParams p;
              p.n_batches = 1;
              simulate_queue(p);
          }) == "queue: 1 batches is out of range (2 … 1000)");
    // A curve checks every utilization before simulating any.
    CHECK(error_of([] {
              QueueCurveParams p;
              p.mean_service_ms = 10;
              p.utilizations = {0.5, 0.9, 1.0};
              run_queue_curve(p);
          }).find("utilization 1 is not below 1") != std::string::npos);
    CHECK(error_of([] {
              QueueCurveParams p;
              p.mean_service_ms = 10;
              p.headroom_waits = {1, -2};
              run_queue_curve(p);
          }) == "queue: a wait limit must be a positive number of service times, not -2");
}

// A lesson near ρ = 1 answered "at 100% a request waits 1,509 ms" from
// simulations cut short by their cap, without a word (the CLI warned).
TEST_CASE("queue curve: simulations cut short are counted, and a utilization below 1 never reads 100%") {
    QueueCurve c;
    c.points.resize(2);
    CHECK(unsettled_simulations(c) == 0);
    c.points[1].exponential.batches_long_enough = false;
    c.points[1].empirical = QueueSimResult{};
    c.points[1].empirical->batches_long_enough = false;
    CHECK(unsettled_simulations(c) == 2);
    CHECK(busy_percent(0.5) == "50");
    CHECK(busy_percent(0.99) == "99");
    CHECK(busy_percent(0.999) == "99.9");
    CHECK(busy_percent(0.9999999) == "99.99999");
    CHECK(busy_percent(0.996) == "99.6");
    CHECK(!hit_request_cap(c.points[0]));
    CHECK(hit_request_cap(c.points[1]));
}

// `queue --utilization 0.9999` printed its row as "100 %", a load the command refuses.
TEST_CASE("queue curve: a utilization in a table keeps three digits, and more where three would read 100") {
    CHECK(utilization_percent(0.5) == "50");
    CHECK(utilization_percent(0.123) == "12.3");
    CHECK(utilization_percent(0.001) == "0.1");
    CHECK(utilization_percent(0.985) == "98.5");
    CHECK(utilization_percent(0.999) == "99.9");
    CHECK(utilization_percent(0.9999) == "99.99");
    CHECK(utilization_percent(0.99995) == "99.995");
    CHECK(utilization_percent(0.9999999) == "99.99999");
}

TEST_CASE("queue curve: a utilization given twice is refused, before any simulation") {
    QueueCurveParams p;
    p.mean_service_ms = 1;
    p.utilizations = {0.5, 0.9, 0.5};
    CHECK(error_of([&] { validate_queue_curve(p); }) == "queue: utilization 0.5 is given twice");
    CHECK(error_of([&] { run_queue_curve(p); }) == "queue: utilization 0.5 is given twice");
    p.utilizations = {0.5, 0.9};
    CHECK(error_of([&] { validate_queue_curve(p); }).empty());
}
