// The thread pool: parallel loops and lists of steps cover their ranges
// once, in order, under any thread; a stalled thread's chunks are taken over;
// helpers join in; errors come back to the caller. Its own suite, so that the
// ThreadSanitizer build (the tsan preset) runs it without the rest of llm.
#include <doctest/doctest.h>

#if defined(__linux__)
#include <sched.h>
#endif

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "pipeline/llm/cpu/cpu_load.h"
#include "pipeline/llm/cpu/thread_pool.h"

using namespace sixstep::llm;

TEST_CASE("thread pool: parallel_for covers the range once, in chunks of whole grains") {
    for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        CHECK(pool.n_threads() == threads);
        for (int grain : {1, 4, 12}) {
            for (int n : {0, 1, 5, 13, 1000}) {
                std::vector<std::atomic<int>> hits(n);
                std::atomic<bool> aligned{true}, thread_ok{true};
                for (int rep = 0; rep < 20; ++rep)
                    pool.parallel_for(
                        n,
                        [&](int b, int e, int t) {
                            if (b % grain != 0) aligned = false;
                            if (t < 0 || t >= threads) thread_ok = false;
                            for (int i = b; i < e; ++i) ++hits[i];
                        },
                        grain);
                for (int i = 0; i < n; ++i) CHECK(hits[i] == 20);
                CHECK(aligned);
                CHECK(thread_ok);
            }
        }
    }
}

TEST_CASE("thread pool: wake() between loops wakes sleeping workers, who then take part, and loses no work") {
    ThreadPool pool(3);
    // Let the workers fall asleep (they spin for some microseconds first).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int rep = 0; rep < 200; ++rep) {
        pool.wake();
        if (rep % 3 == 0) pool.wake();  // twice in a row: two empty epochs
        if (rep % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // asleep again
        std::vector<std::atomic<int>> hits(97);
        pool.parallel_for(97, [&](int b, int e, int) {
            for (int i = b; i < e; ++i) ++hits[i];
        });
        for (auto& h : hits) REQUIRE(h == 1);
    }
    // The pool wakes sleeping workers only for loops whose kind (size and
    // grain) took long the last time. Prime the kind (6, 1) with a trivial
    // loop, so that the slow loop of the same kind that follows (2 ms per
    // item) does not wake anyone: the caller runs it alone. After wake(),
    // the workers are up and take part in it.
    const auto slow_loop_others = [&](bool wake_first) {
        pool.parallel_for(6, [](int, int, int) {});
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // every worker asleep
        if (wake_first) pool.wake();
        std::atomic<int> others{0};
        pool.parallel_for(6, [&](int b, int e, int t) {
            if (t != 0) ++others;
            for (int i = b; i < e; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        });
        return others.load();
    };
    // Timing on a busy machine can stretch the priming loop past the
    // threshold: each outcome needs one attempt of ten.
    bool alone = false;
    for (int attempt = 0; attempt < 10 && !alone; ++attempt) alone = slow_loop_others(false) == 0;
    CHECK(alone);
    bool joined = false;
    for (int attempt = 0; attempt < 10 && !joined; ++attempt) joined = slow_loop_others(true) > 0;
    CHECK(joined);
}

TEST_CASE("thread pool: the others take over the chunks of a stalled thread") {
    // Thread 1 stalls 200 ms in every chunk it runs, like a thread the OS has
    // preempted; the caller's chunks take 2 ms, long enough for thread 1 to
    // wake up and take one. With one fixed share per thread it would run half
    // of the 16 chunks (1.6 s); with chunks from a counter the caller runs
    // the ones thread 1 has not started.
    ThreadPool pool(2);
    std::atomic<int> by_stalled{0}, total{0};
    pool.parallel_for(16, [&](int b, int e, int t) {
        total += e - b;
        if (t == 1) by_stalled += e - b;
        std::this_thread::sleep_for(std::chrono::milliseconds(t == 1 ? 200 : 2));
    });
    // Taken at once: the checks below may be slow under a sanitizer.
    const auto stalled_end = std::chrono::steady_clock::now();
    CHECK(total == 16);
    MESSAGE("items run by the stalled thread: " << by_stalled.load() << " of 16");
    CHECK(by_stalled <= 2);

    // The caller then waited ~170 ms for the chunk in flight: the contention
    // guard counts a stall and runs the loops of the next 10 ms on the
    // caller alone (checked only if this one starts within them: a loaded
    // test machine may preempt us here).
    CHECK(pool.stats().stalls == 1);
    std::atomic<int> others{0};
    pool.parallel_for(1000, [&](int b, int e, int t) {
        if (t != 0) others += e - b;
    });
    if (std::chrono::steady_clock::now() - stalled_end < std::chrono::milliseconds(5)) {
        CHECK(pool.stats().solo_loops == 1);
        CHECK(others == 0);
    }
}

TEST_CASE("thread pool: a helper place is not started, and a thread that helps takes chunks under its own index") {
    // 3 threads: the caller, one worker, one place kept for a helper.
    ThreadPool pool(3, 1);
    CHECK(pool.n_threads() == 3);
    CHECK(pool.n_helpers() == 1);
    // With nobody in the helper's place, loops still finish: the caller and
    // the worker take every chunk, and none runs under index 2.
    std::atomic<int> by_helper{0};
    for (int rep = 0; rep < 50; ++rep) {
        std::vector<std::atomic<int>> hits(200);
        pool.parallel_for(200, [&](int b, int e, int t) {
            if (t == 2) ++by_helper;
            for (int i = b; i < e; ++i) ++hits[i];
        });
        for (auto& h : hits) REQUIRE(h == 1);
    }
    CHECK(by_helper == 0);

    // A helper joins the loops that follow until told to stop; each chunk
    // still runs once, and the helper's run under its own index.
    std::atomic<bool> stop{false};
    std::atomic<int> helper_chunks{0}, bad_index{0};
    std::thread helper([&] { pool.help(0, [&] { return stop.load(); }); });
    for (int rep = 0; rep < 200; ++rep) {
        std::vector<std::atomic<int>> hits(64);
        pool.parallel_for(64, [&](int b, int e, int t) {
            if (t < 0 || t >= 3) ++bad_index;
            if (t == 2) ++helper_chunks;
            for (int i = b; i < e; ++i) ++hits[i];
            // Long enough per chunk that the helper, spinning, gets one.
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        });
        for (auto& h : hits) REQUIRE(h == 1);
    }
    stop = true;
    helper.join();  // returns: help() checks done() while it waits
    MESSAGE("chunks the helper ran: " << helper_chunks.load());
    CHECK(bad_index == 0);
    CHECK(helper_chunks > 0);
    // A place that does not exist is refused at once.
    pool.help(1, [] { return false; });
    ThreadPool plain(2);
    CHECK(plain.n_helpers() == 0);
    plain.help(0, [] { return false; });
}

TEST_CASE("thread pool: run() goes through its steps in order, each covering its range once in chunks of whole grains") {
    // Each step checks, in every chunk, that the step before it is complete:
    // whichever thread finishes a step publishes the next, and none may
    // start before the last chunk of the one before has ended.
    for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        pool.set_adaptive(false);  // every pass on every thread
        struct Shape {
            int n, grain;
        };
        const std::vector<Shape> shapes = {{1, 1}, {13, 4}, {0, 1}, {1000, 1}, {5, 12}, {97, 3}, {1, 1}, {64, 8}};
        std::vector<std::vector<std::atomic<int>>> hits;
        for (const Shape& sh : shapes) hits.emplace_back(static_cast<std::size_t>(sh.n));
        std::vector<std::atomic<int>> items_done(shapes.size());
        std::atomic<int> out_of_order{0}, misaligned{0}, bad_thread{0}, by_others{0};
        ThreadPool::Steps steps;
        for (std::size_t k = 0; k < shapes.size(); ++k) {
            steps.push_back({shapes[k].n, shapes[k].grain, [&, k](int b, int e, int t) {
                                 if (k > 0 && items_done[k - 1] != shapes[k - 1].n) ++out_of_order;
                                 if (b % shapes[k].grain != 0) ++misaligned;
                                 if (t < 0 || t >= threads) ++bad_thread;
                                 if (t != 0) ++by_others;
                                 for (int i = b; i < e; ++i) ++hits[k][static_cast<std::size_t>(i)];
                                 items_done[k] += e - b;
                             }});
        }
        for (int rep = 0; rep < 50; ++rep) {
            for (auto& d : items_done) d = 0;
            if (rep % 5 == 1) pool.wake();
            if (rep % 7 == 3) std::this_thread::sleep_for(std::chrono::microseconds(300));  // workers asleep
            pool.run(steps);
            // A plain loop between two lists uses the same machinery.
            std::vector<std::atomic<int>> plain(50);
            pool.parallel_for(50, [&](int b, int e, int) {
                for (int i = b; i < e; ++i) ++plain[static_cast<std::size_t>(i)];
            });
            for (auto& h : plain) REQUIRE(h == 1);
        }
        for (std::size_t k = 0; k < shapes.size(); ++k)
            for (auto& h : hits[k]) REQUIRE(h == 50);
        CHECK(out_of_order == 0);
        CHECK(misaligned == 0);
        CHECK(bad_thread == 0);
        if (threads == 1) CHECK(by_others == 0);
        MESSAGE(threads << " threads: chunks run by threads other than the caller: " << by_others.load());
    }
}

TEST_CASE("thread pool: an exception in a step ends the list, run() rethrows it, and the pool runs the next list") {
    for (int threads : {1, 2}) {
        ThreadPool pool(threads);
        std::atomic<int> after{0};
        ThreadPool::Steps steps = {
            {4, 1, [](int, int, int) {}},
            {8, 1,
             [](int b, int e, int) {
                 if (b <= 3 && 3 < e) throw std::runtime_error("step 1 failed at item 3");
             }},
            {8, 1, [&](int b, int e, int) { after += e - b; }},
        };
        CHECK_THROWS_WITH(pool.run(steps), "step 1 failed at item 3");
        CHECK(after == 0);
        // The pool is whole again: a list and a loop run to the end.
        steps.erase(steps.begin() + 1);
        pool.run(steps);
        CHECK(after == 8);
        std::atomic<int> loop{0};
        pool.parallel_for(100, [&](int b, int e, int) { loop += e - b; });
        CHECK(loop == 100);
    }
}

TEST_CASE("thread pool: a helper takes part in lists of steps too") {
    ThreadPool pool(3, 1);
    pool.set_adaptive(false);  // every pass on every thread
    std::atomic<bool> stop{false};
    std::atomic<int> helper_chunks{0};
    std::thread helper([&] { pool.help(0, [&] { return stop.load(); }); });
    std::vector<std::atomic<int>> hits(3 * 64);
    ThreadPool::Steps steps;
    for (int k = 0; k < 3; ++k)
        steps.push_back({64, 1, [&, k](int b, int e, int t) {
                             if (t == 2) ++helper_chunks;
                             for (int i = b; i < e; ++i) ++hits[static_cast<std::size_t>(k * 64 + i)];
                             std::this_thread::sleep_for(std::chrono::microseconds(20));
                         }});
    for (int rep = 0; rep < 100; ++rep) pool.run(steps);
    stop = true;
    helper.join();
    for (auto& h : hits) REQUIRE(h == 100);
    MESSAGE("chunks the helper ran: " << helper_chunks.load());
    CHECK(helper_chunks > 0);
}

TEST_CASE("thread pool: run() runs a kind of list on the caller alone while that is faster, and tries the threads again") {
    // Items sleep rather than compute, so the two ways differ by far more
    // than a loaded test machine's scheduling delays. An item takes a worker
    // 40 ms and the caller 2 ms: a pass in which the worker takes part waits
    // for it, one on the caller alone takes 16 ms.
    ThreadPool pool(2);
    pool.set_runnable_source([] { return std::nullopt; });  // timing alone decides, whatever else the machine runs
    const auto sleep_per_item = [](int b, int e, std::chrono::milliseconds each) {
        for (int i = b; i < e; ++i) std::this_thread::sleep_for(each);
    };
    const ThreadPool::Steps slow_worker = {{8, 1, [&](int b, int e, int t) {
                                               sleep_per_item(b, e, std::chrono::milliseconds(t == 0 ? 2 : 40));
                                           }}};
    for (int pass = 0; pass < 60; ++pass) pool.run(slow_worker);
    ThreadPool::Stats st = pool.stats();
    MESSAGE("passes on the caller alone: " << st.solo_lists << " of " << st.lists);
    CHECK(st.lists == 60);
    CHECK(st.solo_lists >= 35);
    CHECK(st.solo_lists <= 51);  // the first 8 ran on both threads, and the threads were tried again

    // An item takes 5 ms whoever runs it: two threads halve a pass. The
    // pool tries the caller alone after its first 8 passes, then after 8,
    // 16, 32 more. Another kind of list (one more step) starts over.
    const ThreadPool::Steps even = {
        {8, 1, [&](int b, int e, int) { sleep_per_item(b, e, std::chrono::milliseconds(5)); }},
        {1, 1, [](int, int, int) {}}};
    for (int pass = 0; pass < 60; ++pass) pool.run(even);
    const std::uint64_t solo = pool.stats().solo_lists - st.solo_lists;
    MESSAGE("even items, passes on the caller alone: " << solo << " of 60");
    CHECK(solo >= 1);
    CHECK(solo <= 10);

    // Switched off, every pass runs on both threads.
    pool.set_adaptive(false);
    st = pool.stats();
    for (int pass = 0; pass < 10; ++pass) pool.run(slow_worker);
    CHECK(pool.stats().solo_lists == st.solo_lists);
}

TEST_CASE("cpu load: the runnable tasks in /proc/loadavg's text, and whether a CPU is left for another thread") {
    CHECK(parse_runnable_tasks("0.52 0.31 0.20 3/89 12345\n") == 3);
    CHECK(parse_runnable_tasks("12.00  9.50 8.25 17/1204 99") == 17);
    for (const char* bad : {"", "0.52 0.31 0.20", "0.52 0.31 0.20 3", "0.52 0.31 0.20 x/89 1", "0.52 0.31 0.20 -1/89 1",
                            "0.52 0.31 0.20 /89 1", "0.52 0.31 0.20 99999999999/89 1"}) {
        CAPTURE(bad);
        CHECK(!parse_runnable_tasks(bad));
    }
    // Two CPUs: alone (our caller, perhaps a worker awake) there is room; one
    // other busy program leaves one CPU, two leave none.
    CHECK(cpu_free_for_another(1, 1, 2));
    CHECK(cpu_free_for_another(2, 2, 2));
    CHECK(!cpu_free_for_another(2, 1, 2));
    CHECK(!cpu_free_for_another(3, 1, 2));
    CHECK(!cpu_free_for_another(1, 1, 1));  // one CPU: never
    CHECK(cpu_free_for_another(4, 1, 8));   // a laptop with a browser on three of eight
    CHECK(!cpu_free_for_another(8, 1, 8));
#if defined(__linux__)
    const auto now = runnable_tasks();
    REQUIRE(now);
    CHECK(*now >= 1);  // this test, at least
#endif
    CHECK(online_cpus() >= 1);
}

#if defined(__linux__)
// Under a real-time policy (chrt -f, as tools/vs-llama.sh runs) the tasks our
// threads keep waiting are runnable, and no other program can take our CPUs:
// the pool is told nothing, and never calls the machine crowded.
TEST_CASE("cpu load: under a real-time policy the pool is not told of other tasks") {
    sched_param normal{};
    const int policy = sched_getscheduler(0);
    REQUIRE(sched_getparam(0, &normal) == 0);
    if (policy == SCHED_OTHER) {
        CHECK(!realtime_policy());
        CHECK(runnable_tasks_that_compete().has_value());
    }
    sched_param fifo{};
    fifo.sched_priority = 1;
    if (sched_setscheduler(0, SCHED_FIFO, &fifo) != 0) {
        MESSAGE("SCHED_FIFO not allowed here: the real-time case is not run");
        return;
    }
    const bool rt = realtime_policy();
    const bool told = runnable_tasks_that_compete().has_value();
    REQUIRE(sched_setscheduler(0, policy, &normal) == 0);
    CHECK(rt);
    CHECK(!told);
}
#endif

TEST_CASE("thread pool: run() keeps lists on the caller alone while no CPU is free for another thread") {
    ThreadPool pool(2);
    std::atomic<int> by_others{0};
    const ThreadPool::Steps steps = {{64, 1, [&](int, int, int t) {
                                          if (t != 0) ++by_others;
                                          std::this_thread::sleep_for(std::chrono::microseconds(50));
                                      }}};
    // A moment with no CPU free is not a crowded machine: one reading in
    // two finds the CPUs taken, and every pass goes on both threads.
    std::atomic<int> readings{0};
    {
        ThreadPool moment(2);
        moment.set_runnable_source([&] { return ++readings % 2 ? online_cpus() + 1 : 1; });
        while (readings < 8) moment.run(steps);
        CHECK(moment.stats().crowded_lists == 0);
    }
    // Every CPU taken by other programs, reading after reading: once three
    // readings said so, every pass on the caller alone.
    readings = 0;
    pool.set_runnable_source([&] {
        ++readings;
        return online_cpus() + 1;
    });
    while (readings < 3) pool.run(steps);
    const ThreadPool::Stats before = pool.stats();
    by_others = 0;
    for (int pass = 0; pass < 30; ++pass) pool.run(steps);
    ThreadPool::Stats st = pool.stats();
    CHECK(st.lists - before.lists == 30);
    CHECK(st.crowded_lists - before.crowded_lists == 30);
    CHECK(st.solo_lists - before.solo_lists == 30);
    CHECK(by_others == 0);
    // Nothing else running: the first passes of a kind run on both threads
    // (a kind the passes before did not time).
    const ThreadPool::Steps other_kind = {{65, 1, steps[0].fn}};
    pool.set_runnable_source([] { return 1; });
    for (int pass = 0; pass < 5; ++pass) pool.run(other_kind);
    CHECK(pool.stats().crowded_lists == st.crowded_lists);
    CHECK(pool.stats().solo_lists == st.solo_lists);
    // Switched off, the pool does not ask.
    pool.set_runnable_source([] { return online_cpus() + 1; });
    pool.set_adaptive(false);
    for (int pass = 0; pass < 5; ++pass) pool.run(steps);
    CHECK(pool.stats().crowded_lists == st.crowded_lists);
}

TEST_CASE("thread pool: the default is one thread per physical core, at least 1 and at most 8") {
    const int n = ThreadPool::default_threads();
    MESSAGE("default threads here: " << n);
    CHECK(n >= 1);
    CHECK(n <= 8);
    const unsigned hw = std::thread::hardware_concurrency();
    if (hw > 0) CHECK(n <= static_cast<int>(hw));
    CHECK(ThreadPool(0).n_threads() == n);
}
