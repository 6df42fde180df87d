// The virtual clock and the metrics built on it: with an injected step cost,
// every TTFT, TPOT, ITL and queue time is exact arithmetic.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "error_of.h"
#include "serving_fixture.h"
#include "shared_cpu.h"

#include <chrono>
#include <cmath>
#include <limits>

#include "pipeline/core/cpu_wait.h"
#include "pipeline/core/error.h"
#include "pipeline/serving/serving_model.h"
#include "pipeline/serving/traffic.h"
#include "pipeline/serving/traffic_metrics.h"
#include "pipeline/serving/virtual_clock.h"

using namespace sixstep::serving;
using sixstep::test::EchoBackend;
using sixstep::test::TinyModel;
using sixstep::test::error_of;
using sixstep::test::request;

TEST_CASE("virtual clock: steps add their cost, idle time jumps, nothing goes backwards") {
    VirtualClock c;
    c.advance(4.5);
    c.advance_to(10);   // idle until an arrival at 10
    c.advance_to(3);    // in the past: no-op
    c.advance(0.5);
    CHECK(c.now_ms() == 10.5);
    CHECK(c.busy_ms() == 5.0);
    CHECK(c.idle_ms() == 5.5);
    CHECK(error_of([&] { c.advance(-1); }) == "virtual clock: a step cannot take -1 ms (finite, >= 0)");
    CHECK(error_of([&] { c.advance(std::numeric_limits<double>::infinity()); }) ==
          "virtual clock: a step cannot take inf ms (finite, >= 0)");
    CHECK(c.now_ms() == 10.5);

    StepShape s;
    s.n_tokens = 12;
    s.forward_ms = 3;
    s.sample_ms = 0.25;
    CHECK(measured_cost(s) == 3.25);
    s.cpu_wait_ms = 1;  // the OS ran another program for 1 ms of the 3.25: not the step's cost
    CHECK(measured_cost(s) == 2.25);
    s.cpu_wait_ms = 4;  // more than the step (two clocks read a microsecond apart): never below zero
    CHECK(measured_cost(s) == 0);
    CHECK(linear_cost(2, 0.5)(s) == 8.0);
    CHECK(error_of([] { linear_cost(-1, 0); }) == "step cost: -1 ms + 0 ms per token must be finite and >= 0");
}

namespace {

// The echo backend with work in its passes: each spins for 1 ms of wall time
// first, so a wait for the CPU lands inside the pass the scheduler times.
class SpinningEcho : public sixstep::test::EchoBackend {
public:
    using EchoBackend::EchoBackend;
    void forward(sixstep::llm::KvCache& kv, const sixstep::llm::Batch& batch, std::vector<float>& logits,
                 sixstep::llm::TensorObserver* observer) override {
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
        while (std::chrono::steady_clock::now() < end) {
        }
        EchoBackend::forward(kv, batch, logits, observer);
    }
};

}  // namespace

TEST_CASE("virtual clock: a pass's wait for a CPU is measured, and the measured cost leaves it out") {
    if (!sixstep::thread_cpu_wait_ms()) {
        MESSAGE("no /proc/thread-self/schedstat here: nothing to measure");
        return;
    }
    sixstep::test::TinyModel m;
    SpinningEcho echo{m.model};
    const auto kv = sixstep::test::make_pool(echo, 32, 16);
    SchedulerParams p;
    p.max_batch = 2;
    p.stop_at_eog = false;
    Scheduler s(echo, *kv, *m.codec, p, measured_cost);
    s.submit({sixstep::test::request(0, 0, {1, 2, 3}, 30), sixstep::test::request(1, 0, {4, 5}, 30)});
    // And one that does not read the waits (a server on the wall clock).
    const auto kv_off = sixstep::test::make_pool(echo, 32, 16);
    p.time_cpu_waits = false;
    Scheduler off(echo, *kv_off, *m.codec, p, measured_cost);
    off.submit({sixstep::test::request(0, 0, {1, 2, 3}, 5)});
    {
        const sixstep::test::SharedCpu shared(3);  // this thread gets about a quarter of its CPU
        if (!shared.ok()) {
            MESSAGE("cannot pin threads to a CPU here");
            return;
        }
        s.run();
        off.run();
    }
    for (const StepRecord& r : off.steps()) CHECK(r.shape.cpu_wait_ms == 0);
    double measured = 0, waited = 0, cost = 0;
    for (const StepRecord& r : s.steps()) {
        const double m_ms = r.shape.forward_ms + r.shape.sample_ms;
        CHECK(r.shape.cpu_wait_ms >= 0);
        CHECK(r.cost_ms == doctest::Approx(std::max(0.0, m_ms - r.shape.cpu_wait_ms)));
        measured += m_ms, waited += r.shape.cpu_wait_ms, cost += r.cost_ms;
    }
    REQUIRE(s.steps().size() >= 30);
    // About three quarters of each pass was spent waiting; the clock counts the rest.
    CHECK(waited > 0.4 * measured);
    CHECK(s.clock().busy_ms() == doctest::Approx(cost));
    CHECK(s.clock().busy_ms() < 0.6 * measured);
}

TEST_CASE("virtual clock: two requests, 10 ms per step — TTFT, queue, ITL, TPOT, E2E exactly") {
    sixstep::test::EchoScheduler e(32, 4, 4, linear_cost(10, 0));
    Scheduler& s = e.s;
    // A at 0 (5 prompt tokens, 3 new); B at 5 ms (3 prompt tokens, 2 new); C at 100 ms.
    s.submit({request(0, 0, {1, 2, 3, 4, 5}, 3),
              request(1, 5, {6, 7, 8}, 2),
              request(2, 100, {9}, 1)});
    s.run();
    // Pass 1 [0,10): A's prompt.  Pass 2 [10,20): A decodes, B (waiting since 5)
    // reads its prompt.  Pass 3 [20,30): both decode and finish.  Idle until
    // 100.  Pass 4 [100,110): C.
    const auto& r = s.requests();
    REQUIRE(r.size() == 3);
    CHECK(r[0].token_ms == std::vector<double>{10, 20, 30});
    CHECK(r[1].token_ms == std::vector<double>{20, 30});
    CHECK(r[2].token_ms == std::vector<double>{110});
    CHECK(ttft_ms(r[0]) == 10);
    CHECK(queue_ms(r[0]) == 0);
    CHECK(queue_ms(r[1]) == 5);
    CHECK(ttft_ms(r[1]) == 15);        // from arrival: includes the 5 ms wait
    CHECK(ttft_sched_ms(r[1]) == 10);  // from scheduling: does not
    CHECK(e2e_ms(r[0]) == 30);
    CHECK(e2e_ms(r[1]) == 25);
    CHECK(tpot_ms(r[0]) == 10);        // (30 − 10) / (3 − 1)
    CHECK(tpot_ms(r[1]) == 10);        // (25 − 15) / (2 − 1)
    CHECK(tpot_ms(r[2]) == -1);        // one token: no TPOT
    CHECK(s.clock().now_ms() == 110);
    CHECK(s.clock().busy_ms() == 40);
    CHECK(s.clock().idle_ms() == 70);
    REQUIRE(r[1].spans.size() == 3);
    CHECK(r[1].spans[0].phase == Phase::queued);
    CHECK(r[1].spans[0].t0_ms == 5);
    CHECK(r[1].spans[0].t1_ms == 10);
    CHECK(r[1].spans[1].phase == Phase::prefill);
    CHECK(r[1].spans[2].phase == Phase::decode);

    const TrafficReport rep = make_report(r, s.steps(), s.run_info(), {.ttft_ms = 12, .tpot_ms = 0});
    CHECK(rep.total("duration").value == doctest::Approx(0.110));
    CHECK(rep.total("output_throughput").value == doctest::Approx(6 / 0.110));
    CHECK(rep.total("total_throughput").value == doctest::Approx((6 + 9) / 0.110));
    CHECK(rep.total("request_throughput").value == doctest::Approx(3 / 0.110));
    CHECK(rep.total("busy").value == doctest::Approx(100.0 * 40 / 110));
    // TTFTs 10, 15, 10: two meet 12 ms.
    CHECK(rep.total("goodput").value == doctest::Approx(2 / 0.110));
    CHECK(rep.total("goodput_share").value == doctest::Approx(100.0 * 2 / 3));
    CHECK(rep.total("goodput").definition ==
          "requests meeting every target (TTFT <= 12 ms) / duration (DistServe; vLLM --goodput)");
    // ITL pools every gap: A 10, 10; B 10.
    CHECK(rep.latency("itl").summary.count == 3);
    CHECK(rep.latency("itl").summary.mean == 10);
    CHECK(rep.latency("ttft").summary.p50 == 10);
    CHECK(rep.latency("ttft").summary.max == 15);
    // Occupancy: passes of 1, 2, 2, 1 requests, 10 ms each, max batch 4.
    CHECK(rep.total("batch_occupancy").value == doctest::Approx(100.0 * 6 / 16));
    CHECK(rep.total("prefill_computed").value == 9);
    // B waited 5 ms, during pass 1, and pass 2 admitted it: sampled at the
    // passes it was never waiting. Little's law: 5 ms waited over 110 ms.
    CHECK(rep.total("waiting_mean").value == doctest::Approx(5.0 / 110));
    for (const Metric& t : rep.totals) CHECK_FALSE(t.definition.empty());
    for (const LatencyMetric& l : rep.latencies) CHECK_FALSE(l.definition.empty());
}

// Passes of different cost (10 ms + 1 ms per row), a TPOT target, a TTFT
// exactly on its target, and TTFT split by the shared prefix.
TEST_CASE("metrics: goodput with TPOT and TTFT targets, figures weighted by each pass's cost") {
    sixstep::test::EchoScheduler e(32, 4, 4, linear_cost(10, 1));
    Scheduler& s = e.s;
    RequestSpec b = request(1, 5, {6, 7, 8}, 2);
    b.shares_prefix = true;
    s.submit({request(0, 0, {1, 2, 3, 4, 5}, 3), b, request(2, 100, {9, 1, 2, 3, 4, 5, 6, 7, 8}, 1)});
    s.run();
    // Pass 1 [0,15): A's 5 prompt rows.  Pass 2 [15,29): A decodes, B's 3
    // prompt rows.  Pass 3 [29,41): both decode.  Pass 4 [100,119): C's 9 rows.
    const auto& r = s.requests();
    REQUIRE(r.size() == 3);
    CHECK(r[0].token_ms == std::vector<double>{15, 29, 41});
    CHECK(r[1].token_ms == std::vector<double>{29, 41});
    CHECK(r[2].token_ms == std::vector<double>{119});
    // TTFT A 15, B 24, C 19; TPOT A (41 − 15) ÷ 2 = 13, B 41 − 29 = 12, C none.
    const auto share = [&](SloTargets t) { return make_report(r, s.steps(), s.run_info(), t).total("goodput_share").value; };
    CHECK(share({.ttft_ms = 0, .tpot_ms = 12.5}) == doctest::Approx(100.0 * 2 / 3));  // A misses; C has no TPOT
    CHECK(share({.ttft_ms = 0, .tpot_ms = 12}) == doctest::Approx(100.0 * 2 / 3));    // B's 12 meets 12
    CHECK(share({.ttft_ms = 15, .tpot_ms = 0}) == doctest::Approx(100.0 / 3));        // A's 15 meets 15
    CHECK(share({.ttft_ms = 20, .tpot_ms = 12}) == doctest::Approx(100.0 / 3));       // C only: A's TPOT, B's TTFT
    const TrafficReport rep = make_report(r, s.steps(), s.run_info(), {});
    // Passes of 1, 2, 2, 1 requests costing 15, 14, 12, 19 ms: weighted by
    // cost, not one vote each (that would be 6 ÷ 16 = 37.5 %).
    CHECK(rep.total("batch_occupancy").value == doctest::Approx(100.0 * (15 + 2 * 14 + 2 * 12 + 19) / 60 / 4));
    CHECK(rep.total("running_mean").value == doctest::Approx((15.0 + 2 * 14 + 2 * 12 + 19) / 60));
    // TTFT from arrival on both sides of the split: B waited 10 ms in the queue.
    CHECK(rep.latency("ttft_shared_prefix").summary.p50 == 24);
    CHECK(rep.latency("ttft_own_prompt").summary.p50 == 17);  // A 15, C 19
}

// The targets as a traffic run takes them (TrafficParams::targets, what the
// serving lab's traffic experiment sets for both arms), read back through
// the lab's figures. Each request misses a different target, so ignoring
// either target, or counting a one-token request as missing TPOT, changes
// the count.
TEST_CASE("metrics: goodput through run_traffic counts only the requests that meet both targets") {
    TinyModel m;
    EchoBackend echo(m.model);
    TrafficParams p;
    p.kv_blocks = 32;
    p.block_size = 4;
    p.scheduler.max_batch = 4;
    p.scheduler.stop_at_eog = false;
    p.warmup = false;
    const std::vector<RequestSpec> reqs = {request(0, 0, {1, 2, 3, 4, 5}, 3), request(1, 5, {6, 7, 8}, 2),
                                           request(2, 100, {9, 1, 2, 3, 4, 5, 6, 7, 8}, 1)};
    const auto run = [&](SloTargets t) {
        p.targets = t;
        return run_traffic(echo, *m.codec, reqs, p, linear_cost(10, 1));
    };
    const auto figure = [](const TrafficReport& r, std::string_view key) {
        for (const TrafficFigure& f : traffic_figures())
            if (f.key == key) {
                CHECK(f.needs_target);
                return f.get(r);
            }
        FAIL("no figure ", key);
        return -1.0;
    };
    // As in the case above: TTFT A 15, B 24, C 19; TPOT A 13, B 12, C none;
    // 119 ms from the first arrival to the last token.
    const TrafficRun both = run({.ttft_ms = 20, .tpot_ms = 12.5});
    CHECK(both.info.duration_ms == 119);
    // A misses TPOT, B misses TTFT, C meets TTFT and has no TPOT: one of three.
    CHECK(figure(both.report, "goodput") == doctest::Approx(1 / 0.119));
    CHECK(figure(both.report, "goodput_share") == doctest::Approx(100.0 / 3));
    CHECK(both.report.total("goodput").definition ==
          "requests meeting every target (TTFT <= 20 ms and TPOT <= 12.5 ms) / duration (DistServe; vLLM --goodput)");
    // Either target alone lets a second request through.
    CHECK(figure(run({.ttft_ms = 20, .tpot_ms = 0}).report, "goodput") == doctest::Approx(2 / 0.119));  // A, C
    CHECK(figure(run({.ttft_ms = 0, .tpot_ms = 12.5}).report, "goodput") == doctest::Approx(2 / 0.119));  // B, C
    CHECK(figure(run({.ttft_ms = 24, .tpot_ms = 13}).report, "goodput") == doctest::Approx(3 / 0.119));  // on the targets
    // No target, no goodput: the report leaves it out rather than equal request throughput.
    const TrafficRun none = run({});
    CHECK_FALSE(none.report.has_total("goodput"));
    CHECK_FALSE(none.report.has_total("goodput_share"));
    CHECK(none.report.has_total("request_throughput"));
    for (const TrafficFigure& f : traffic_figures())
        if (f.key != std::string_view("goodput") && f.key != std::string_view("goodput_share")) {
            CAPTURE(f.key);
            CHECK_FALSE(f.needs_target);
            CHECK_NOTHROW(f.get(none.report));
        }
}

TEST_CASE("metrics: a request still running is left out of every figure, and passes that cost nothing count alike") {
    RequestRecord a;  // TTFT 10, three tokens
    a.first_scheduled_ms = 0, a.first_token_ms = 10, a.finish_ms = 30;
    a.token_ms = {10, 20, 30}, a.output = {1, 2, 3}, a.n_prompt = 4;
    RequestRecord b;  // TTFT 20, one token
    b.id = 1, b.arrival_ms = 5, b.first_scheduled_ms = 5, b.first_token_ms = 25, b.finish_ms = 25;
    b.token_ms = {25}, b.output = {4}, b.n_prompt = 2;
    RequestRecord running;  // TTFT 2, not finished
    running.id = 2, running.arrival_ms = 26, running.first_scheduled_ms = 26, running.first_token_ms = 28;
    running.token_ms = {28}, running.output = {5}, running.n_prompt = 3;
    StepRecord one, two;  // a test model's passes: no cost
    one.shape.n_sequences = 1;
    two.shape.n_sequences = 2;
    RunInfo run;
    run.params.max_batch = 4, run.n_blocks = 8, run.block_size = 4, run.duration_ms = 30;

    const TrafficReport rep = make_report({a, b, running}, {one, two}, run, {.ttft_ms = 15, .tpot_ms = 0});
    CHECK(rep.total("completed").value == 2);
    CHECK(rep.latency("ttft").summary.count == 2);
    CHECK(rep.total("goodput_share").value == 50);  // a of a and b
    CHECK(rep.total("output_tokens").value == 4);
    // 1 and 2 requests of 4, one vote each.
    CHECK(rep.total("batch_occupancy").value == doctest::Approx(37.5));
    CHECK(make_report({a, b}, {}, run, {}).total("batch_occupancy").value == 0);
}

TEST_CASE("virtual clock: a run whose first arrival is late counts its duration from that arrival") {
    // A trace that starts at 5 s: the seconds before its first request are
    // not part of the run (its throughputs were 238× too low when they were).
    sixstep::test::EchoScheduler e(32, 4, SchedulerParams{}.max_batch, linear_cost(10, 0));
    Scheduler& s = e.s;
    s.submit({request(0, 5000, {1, 2, 3}, 2), request(1, 5010, {4, 5}, 2)});
    s.run();
    const RunInfo info = s.run_info();
    CHECK(info.start_ms == 5000);
    CHECK(info.end_ms == s.requests()[1].finish_ms);
    CHECK(info.duration_ms == info.end_ms - 5000);
    const TrafficReport rep = make_report(s.requests(), s.steps(), info, {});
    CHECK(rep.total("duration").value == doctest::Approx(info.duration_ms / 1000));
    CHECK(rep.total("request_throughput").value == doctest::Approx(2 / (info.duration_ms / 1000)));
    CHECK(rep.total("busy").value == doctest::Approx(100.0 * s.clock().busy_ms() / info.duration_ms));
    CHECK(rep.total("busy").value <= 100.0);
}

// Lesson 11 explains its TPOT by these two medians: the decode passes right
// after a prefill against the later ones.
TEST_CASE("metrics: decode-only passes split by whether a prefill ran just before") {
    const auto step = [](int prefill, int decode, double cost) {
        StepRecord r;
        r.shape.n_prefill_tokens = prefill;
        r.shape.n_decode = decode;
        r.shape.n_tokens = prefill + decode;
        r.cost_ms = cost;
        return r;
    };
    const std::vector<StepRecord> steps = {
        step(200, 0, 25), step(0, 1, 0.4), step(0, 1, 0.3), step(0, 1, 0.2),  // a long prefill, then decodes
        step(20, 1, 2),   step(0, 2, 0.6), step(0, 2, 0.1),                     // a prefill beside a decode row
        step(0, 0, 9),                                                         // an idle pass counts as neither
    };
    const DecodePassCosts c = decode_pass_costs(steps);
    CHECK(c.n_after_prefill == 2);
    CHECK(c.after_prefill_ms == doctest::Approx(0.5));  // 0.4 and 0.6
    CHECK(c.n_later == 3);
    CHECK(c.later_ms == doctest::Approx(0.2));  // 0.3, 0.2, 0.1
    const DecodePassCosts none = decode_pass_costs({step(10, 0, 1)});
    CHECK(none.n_after_prefill == 0);
    CHECK(none.n_later == 0);
    CHECK(none.after_prefill_ms == 0);
}

TEST_CASE("percentiles: linear interpolation between closest ranks, as numpy and vLLM") {
    const Summary s = summarize({40, 10, 30, 20});
    CHECK(s.count == 4);
    CHECK(s.mean == 25);
    CHECK(s.p50 == 25);
    CHECK(s.p90 == doctest::Approx(37));
    CHECK(s.p99 == doctest::Approx(39.7));
    CHECK(s.max == 40);
    const Summary one = summarize({7});
    CHECK(one.p50 == 7);
    CHECK(one.p99 == 7);
    CHECK(summarize({}).count == 0);
    CHECK(error_of([] { percentile({}, 50); }) == "percentile of no values");
    // Without sorting (the queue simulation's millions of waits), the same
    // figures: it took the rank above before (p50 of 10..40 was 30, not 25).
    std::vector<double> v = {40, 10, 30, 20};
    CHECK(percentile_unsorted(v, 50) == 25);
    CHECK(percentile_unsorted(v, 90) == doctest::Approx(37));
    CHECK(percentile_unsorted(v, 99) == doctest::Approx(39.7));
    CHECK(percentile_unsorted(v, 100) == 40);
    CHECK(percentile_unsorted(v, 0) == 10);
    std::vector<double> many;
    for (int i = 0; i < 1001; ++i) many.push_back((i * 7919) % 1001);  // 0..1000, shuffled
    std::vector<double> sorted = many;
    std::sort(sorted.begin(), sorted.end());
    for (double q : {1.0, 33.3, 50.0, 90.0, 99.0, 99.9}) CHECK(percentile_unsorted(many, q) == doctest::Approx(percentile(sorted, q)));
}
