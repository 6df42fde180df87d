// thread_cpu_wait_ms: the schedstat text read right, and a thread made to
// share one CPU with a spinning one is seen waiting for it.
#include <doctest/doctest.h>

#include <chrono>

#include "shared_cpu.h"

#include "pipeline/core/cpu_wait.h"

namespace sixstep::test {

TEST_CASE("cpu wait: the run delay is the second of schedstat's three numbers") {
    CHECK(parse_schedstat_run_delay_ns("7218745 34920 12\n") == 34920);
    CHECK(parse_schedstat_run_delay_ns("5 0 1") == 0);
    CHECK(parse_schedstat_run_delay_ns("0 0 0") == std::nullopt);  // no statistics kept, not "never waited"
    CHECK(parse_schedstat_run_delay_ns("1 2") == std::nullopt);
    CHECK(parse_schedstat_run_delay_ns("1 2 3 4\n") == std::nullopt);
    CHECK(parse_schedstat_run_delay_ns("1 x 3\n") == std::nullopt);
    CHECK(parse_schedstat_run_delay_ns("1 -2 3\n") == std::nullopt);
    CHECK(parse_schedstat_run_delay_ns("") == std::nullopt);
    CHECK(parse_schedstat_run_delay_ns("1 99999999999999999999 3") == std::nullopt);  // past a long long
}

namespace {

void spin_for(std::chrono::milliseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
    }
}

}  // namespace

TEST_CASE("cpu wait: a thread sharing its CPU with three spinning threads waits about three quarters of the time") {
    if (!thread_cpu_wait_ms()) {
        MESSAGE("no /proc/thread-self/schedstat here: nothing to measure");
        return;
    }
    // Four threads on one CPU, each spinning: the OS gives them turns, so
    // this one waits for the other three's (and runs a quarter of the time,
    // which the first of schedstat's numbers would have counted).
    double waited = 0, elapsed = 0, work = 0, timer_waited = 0;
    {
        const SharedCpu shared(3);
        if (!shared.ok()) {
            MESSAGE("cannot pin threads to a CPU here");
            return;
        }
        const auto t0 = std::chrono::steady_clock::now();
        const double w0 = thread_cpu_wait_ms().value();
        const WorkTimer timer;
        spin_for(std::chrono::milliseconds(200));
        work = timer.ms(), timer_waited = timer.waited_ms();
        waited = thread_cpu_wait_ms().value() - w0;
        elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    // Three quarters of the time when the four take fair turns; a thread
    // alone on its CPU waits ~0 ms.
    CHECK(waited > 0.5 * elapsed);
    CHECK(waited < elapsed);
    // The timer's work: the quarter of the time this thread ran.
    CHECK(timer_waited > 0.5 * elapsed);
    CHECK(timer_waited <= waited);
    CHECK(work > 0);
    CHECK(work < 0.5 * elapsed);
}

}  // namespace sixstep::test
