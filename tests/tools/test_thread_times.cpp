// Our threads' time on a CPU and waiting for one: the schedstat line, and
// the process's sums following the CPU time a thread burns.
#include <doctest/doctest.h>

#include <ctime>

#include "pipeline/tools/thread_times.h"

using namespace sixstep::llm;

TEST_CASE("thread times: a schedstat line gives seconds on a CPU and waiting, anything else nothing") {
    const auto t = parse_schedstat("3837533000 91332000 2\n");
    REQUIRE(t);
    CHECK(t->on_cpu_s == doctest::Approx(3.837533));
    CHECK(t->waiting_s == doctest::Approx(0.091332));
    const auto zero = parse_schedstat("0 0 0");
    REQUIRE(zero);
    CHECK(zero->on_cpu_s == 0);
    CHECK(zero->waiting_s == 0);
    for (const char* bad : {"", "12", "12 x 3", "-5 3 1", "abc 1 2", " "}) {
        INFO(bad);
        CHECK_FALSE(parse_schedstat(bad));
    }
}

TEST_CASE("thread times: between two snapshots, threads that went on, started or ended") {
    const ThreadTimesSnapshot before = {{10, {1.0, 0.5}}, {11, {2.0, 0.1}}, {12, {7.0, 3.0}}};
    // 10 ran 0.25 s more and waited 0.5 s more; 11 ended; 13 is new; 12's id
    // went to a new thread (its times start again below the old ones).
    const ThreadTimesSnapshot after = {{10, {1.25, 1.0}}, {12, {0.5, 0.25}}, {13, {0.125, 0.0625}}};
    const ThreadTimes t = times_between(before, after);
    CHECK(t.on_cpu_s == doctest::Approx(0.25 + 0.5 + 0.125));
    CHECK(t.waiting_s == doctest::Approx(0.5 + 0.25 + 0.0625));
    CHECK(times_between(after, after).on_cpu_s == 0);
}

#if defined(__linux__)
namespace {
double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

TEST_CASE("thread times: the process's time on a CPU grows by at least what this thread burns") {
    const auto before = thread_times_now();
    REQUIRE(before);
    // The kernel counts the same runtime for both clocks; burn 60 ms of it.
    // schedstat may lag a running thread by up to a scheduler tick (4 ms at
    // 250 Hz), hence the slack.
    const double start = thread_cpu_s();
    volatile unsigned long spin = 0;
    while (thread_cpu_s() - start < 0.060) spin = spin + 1;
    const double burned = thread_cpu_s() - start;
    const auto after = thread_times_now();
    REQUIRE(after);
    const ThreadTimes t = times_between(*before, *after);
    CHECK(t.on_cpu_s >= burned - 0.015);
    CHECK(t.waiting_s >= 0);
}
#endif
