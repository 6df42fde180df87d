// ThreadPool: a fixed set of worker threads that run one parallel loop at a
// time, for the CPU backend's kernels.
//
//     ThreadPool pool;                    // one thread per physical core (at most 8)
//     pool.parallel_for(n_rows, [&](int begin, int end, int thread) { ... }, grain);
//
// Why not std::async or OpenMP: a decode step runs ~40 short parallel loops
// (one per matmul), each a few tens of microseconds. Waking sleeping threads
// through the OS costs about as much as the loop itself, so a waiting thread
// spins for a short while before it sleeps.
//
// Why the work is handed out in chunks from a shared counter rather than one
// fixed share per thread: on a laptop with a browser and a video call, or a
// machine where a build is running, the OS preempts one of our threads for
// milliseconds at a time. With fixed shares every loop then waits for the
// preempted thread; with a counter the running threads take the chunks it
// has not started (the calling thread works too and never waits for a thread
// that has not picked up work), so a loop waits at most for one chunk in
// flight. Each chunk is a whole number of `grain`s, and fn must compute the
// same result whichever thread runs which chunk.
//
// A waiting thread backs off: it spins with pause instructions (growing
// pauses between checks) for about 10 microseconds (300 once forward passes
// run on the threads: their waits, and the gap between two decode passes,
// are longer than 10), then sleeps until woken, so an idle pool costs
// nothing and a busy machine is not made busier.
//
// A contention guard keeps n threads from being much slower than one: a
// thread preempted in the middle of a chunk holds the loop up until the OS
// runs it again, which on a crowded machine (a spinning program on every
// core, or a build) takes milliseconds, far more than the other threads
// gain. When the caller has waited that long for a chunk in flight (over
// 1 ms and 3 of its own chunks), the pool runs loops on the caller alone for
// 10 ms, doubling up to 1 s while such stalls keep coming, then tries its
// threads again. And a sleeping worker is woken only for a loop that took
// over 100 µs the last time it ran (loops are told apart by size and
// grain): on a busy machine the wake-up costs more than a small loop gains.
// Every chunking computes the same results.
//
// A forward pass goes through run() instead: its loops, and the small
// serial work between them, as a list of steps. Then not only the caller
// publishes the next loop: whichever thread finishes a step starts the next,
// so while the OS has preempted one of our threads the other goes on through
// the pass, and a sleeping thread is woken only for steps that took 100 µs
// or more the last time. The guard above is not needed there (measured on
// 2 cores beside 2 spinning processes, bundled 3.8M model: 2 threads against
// 1 decode at 0.96–1.10×, median 1.00×, where 1 thread against 1 thread, the
// method's noise, gives 0.99–1.03×; with the caller publishing every loop
// and the guard, 0.97–1.00×; README, "On a busy machine").
//
// More threads are not always faster, so run() times its passes and picks:
// each kind of list (told apart by the sizes of its steps: every decode
// pass is one kind, a prefill of 128 tokens another) runs on every thread
// for its first 8 passes, then once on the caller alone, and from then on
// the way that has been faster, trying the other again after 8 passes, and
// after twice as many each time that changes nothing (up to 128). Beside a
// busy program, or on a virtual machine whose host runs something on the CPU
// our second thread shares, a pass on one thread can be the faster; on a
// quiet machine the threads win and about one pass in 128 pays for looking.
// Measured on 2 cores beside one spinning process (bundled 3.8M model,
// bench --contention --hogs 1): 2 threads ÷ 1 decoded at 0.89–0.90× with
// every pass on both threads, 0.97–0.99× choosing (README, "On a busy
// machine").
//
// And before it times anything, run() asks whether the machine leaves a CPU
// free for a second thread at all (cpu_load.h: the runnable tasks that are
// not ours against the CPUs online, looked at every 20 ms): when three
// readings in a row find none, passes run on the caller alone. Timing alone
// missed it beside programs that keep every CPU busy.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "pipeline/llm/cpu/cpu_load.h"

namespace sixstep::llm {

class ThreadPool {
    using Clock = std::chrono::steady_clock;

public:
    // n_threads: total threads including the caller; <= 0 → default_threads().
    // n_helpers of them are not started: their places are kept for threads
    // of the caller's that join in with help() when they have nothing else
    // to do (speculative decoding's draft, between its passes).
    explicit ThreadPool(int n_threads = 0, int n_helpers = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int n_threads() const { return n_threads_; }

    // The default thread count: one per physical core this process may run
    // on (its CPU affinity and cgroup CPU quota), at most 8. Hyperthreads are
    // not counted: two threads on one core share its vector units and gain
    // nothing on these kernels; beyond 8 the models sixstep runs are bound by
    // memory bandwidth, and every extra thread adds a little to each wait.
    static int default_threads();
    static constexpr int max_default_threads = 8;

    // Runs fn(begin, end, thread) over chunks covering [0, n) once, each a
    // multiple of `grain` long (but the last), thread in [0, n_threads());
    // returns when all are done. Call it from one thread at a time; fn must
    // not call parallel_for on the same pool.
    using RangeFn = std::function<void(int begin, int end, int thread)>;
    void parallel_for(int n, const RangeFn& fn, int grain = 1);

    // A list of loops run in order (a forward pass), each like parallel_for
    // (fn(begin, end, thread) over chunks of whole grains covering [0, n);
    // a step of one grain or less is one chunk, run by one thread), with one
    // difference: any thread of the pool advances the list, not only the
    // caller. The thread that finishes a step's last chunk publishes the
    // next, so while the OS has preempted the caller a worker goes on
    // through the whole pass, and the other way round. Writing the serial
    // work between loops as steps of its own is what makes that possible.
    // An exception thrown by a step ends the list; run() rethrows it.
    struct Step {
        int n = 0;
        int grain = 1;
        RangeFn fn;
    };
    using Steps = std::vector<Step>;
    void run(const Steps& steps);

    // Whether run() picks solo or parallel by timing (above; on by default).
    // Off: every list runs on all the threads, as the tests of chunking want.
    void set_adaptive(bool on) { adaptive_ = on; }

    // Where run() learns how many tasks the machine has runnable (cpu_load.h;
    // nullopt: not known, so never crowded). For tests, which also run beside
    // other tests.
    void set_runnable_source(RunnableSource source);

    // Wakes sleeping workers now, ahead of a burst of loops (a forward
    // pass): once awake they spin from one loop to the next, so the burst
    // pays for one wake-up instead of running loops too short to wake them
    // for on the caller alone. Does nothing while the contention guard runs
    // loops on the caller alone.
    void wake();

    // Runs as helper `helper` (0 <= helper < n_helpers): joins the loops in
    // flight and those that follow, taking chunks like a worker, until
    // done() holds (checked between chunks and while waiting for a loop).
    // One thread per helper place at a time. A loop never waits for a helper
    // that is not there: the caller and the workers take its chunks.
    void help(int helper, const std::function<bool()>& done);
    int n_helpers() const { return n_helpers_; }

    struct Stats {
        std::uint64_t loops = 0;       // parallel_for calls with work for more than one thread, and steps of lists
        std::uint64_t solo_loops = 0;  // of those, run on the caller alone (the contention guard, or a solo list)
        std::uint64_t stalls = 0;      // loops that waited for a preempted thread
        std::uint64_t lists = 0;       // run() calls (on a pool of more than one thread)
        std::uint64_t solo_lists = 0;  // of those, run on the caller alone: faster, or no CPU free
        std::uint64_t crowded_lists = 0;  // of those, because no CPU was free for another thread (cpu_load.h)
    };
    Stats stats() const { return stats_; }

private:
    void worker(int index);
    void stop_workers();  // wakes every worker to return, and joins them
    // run() on every thread.
    void run_parallel(const Steps& steps);
    // Claims and runs chunks of the loop of `epoch` until none is left;
    // returns how many it ran. In a list of steps (run()), the thread that
    // finishes a step publishes the next and goes on with it: epoch then
    // follows.
    int run_chunks(std::uint32_t& epoch, int thread);
    // Publishes step k of the list in flight (or its end) as loop `epoch`.
    void publish_step(std::size_t k, std::uint32_t epoch);
    // Waits (spins, then sleeps) until the loop in flight is no longer `seen`.
    void wait_for_epoch(std::uint32_t seen, bool caller);

    int n_threads_ = 1;
    int n_helpers_ = 0;  // places n_threads_ - n_helpers_ .. n_threads_ - 1
    std::vector<std::thread> threads_;

    // The loop in flight. Workers claim chunk indices with a compare-and-swap
    // on one 64-bit word: epoch (32 bits) | n_chunks (16) | next chunk (16).
    // A worker that wakes late sees another epoch and claims nothing, so it
    // can never run a chunk of one loop with the function of another; the
    // fields below are read only after a claim succeeded, when they cannot
    // change (the loop is not finished until that chunk is).
    std::atomic<std::uint64_t> claim_{0};
    std::atomic<const RangeFn*> fn_{nullptr};
    std::atomic<int> n_{0}, chunk_{0};
    std::atomic<int> done_{0};  // chunks finished in this epoch
    std::uint32_t epoch_count_ = 0;  // the caller's copy of the current epoch

    // The list of steps in flight (run()); its fields are written by the
    // thread that publishes a step, before the claim word that makes them
    // visible, and read after a claim.
    const Steps* steps_ = nullptr;
    std::size_t step_ = 0;                     // the step of the loop in flight
    Clock::time_point step_start_{};          // when it was published
    std::atomic<bool> steps_done_{false};
    // A list has run on the threads: waits spin linger_for, not spin_for
    // (thread_pool.cpp), during a list and after it.
    std::atomic<bool> lists_ran_{false};
    std::atomic<bool> steps_failed_{false};
    std::exception_ptr steps_error_;           // the first exception, under mutex_
    struct StepTime {
        int n = 0, grain = 0;
        Clock::duration last{};  // how long the step took the last time
    };
    std::vector<StepTime> step_times_;  // per step of the list, for waking

    // Waking: workers watch epoch_, the caller watches done_.
    std::atomic<std::uint32_t> epoch_{0};
    std::atomic<bool> stop_{false};
    std::atomic<int> sleeping_{0};            // workers asleep on wake_
    std::atomic<bool> caller_sleeping_{false};  // the caller asleep on finished_
    std::mutex mutex_;
    std::condition_variable wake_, finished_;

    // The contention guard; the caller's alone.
    std::chrono::steady_clock::time_point solo_until_{};  // run loops on the caller alone until then
    std::chrono::steady_clock::duration solo_for_{};      // the last solo period
    struct LoopKind {
        std::uint64_t key = 0;                       // from (n, grain); 0: free
        std::chrono::steady_clock::duration last{};  // how long it took the last time
    };
    std::array<LoopKind, 64> kinds_{};
    // The last time of the kind of loop (n, grain), zero if not known.
    std::chrono::steady_clock::duration& last_time(int n, int grain);

    // The solo-or-parallel choice of run(), per kind of list; the caller's alone.
    struct ListKind {
        std::uint64_t key = 0;          // from the steps' sizes; 0: free
        std::uint32_t passes = 0;       // run so far, either way
        std::uint32_t since_probe = 0;  // passes since the slower way was last tried
        std::uint32_t probe_every = 8;  // try it again after this many
        bool solo_in_use = false;       // the way the passes between tries run
        double parallel_ns = 0, solo_ns = 0;  // moving averages of a pass; 0: not known
        bool next_solo() const;               // how the next pass should run
        void record(bool solo, Clock::duration took);
    };
    std::array<ListKind, 16> lists_{};
    // Whether the machine leaves no CPU free for a second thread (cpu_load.h),
    // asked at most every crowded_every; the caller's alone.
    bool crowded();
    bool crowded_ = false;
    int busy_readings_ = 0;  // readings in a row that found no CPU free
    Clock::time_point crowded_checked_{};
    int online_cpus_ = 1;
    RunnableSource runnable_source_;
    ListKind* next_list_ = nullptr;  // the kind run() saw last
    bool adaptive_ = true;
    ListKind& list_kind(const Steps& steps);
    Stats stats_;
};

// Runs a list of steps on `pool`, or in order on this thread when there is
// no pool (a backend made with one thread).
void run_steps(ThreadPool* pool, const ThreadPool::Steps& steps);

}  // namespace sixstep::llm
