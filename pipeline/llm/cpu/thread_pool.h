// ThreadPool: a fixed set of worker threads that run one parallel loop at a
// time, for the CPU backend's kernels.
//
//     ThreadPool pool(2);
//     pool.parallel_for(n_rows, [&](int begin, int end, int thread) { ... });
//
// Why not std::async or OpenMP: a decode step runs ~100 short parallel loops
// (one per matmul), each a few tens of microseconds. Waking sleeping threads
// through a condition variable costs about as much as the loop itself, so
// workers spin on an atomic generation counter for a short while before they
// fall asleep. The calling thread does the first share of the work itself.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sixstep::llm {

class ThreadPool {
public:
    // n_threads: total threads including the caller; <= 0 → hardware concurrency.
    explicit ThreadPool(int n_threads = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int n_threads() const { return n_threads_; }

    // Splits [0, n) into n_threads() contiguous chunks (rounded to `grain`) and
    // runs fn(begin, end, thread_index) on each; returns when all are done.
    // Not reentrant: fn must not call parallel_for on the same pool.
    using RangeFn = std::function<void(int begin, int end, int thread)>;
    void parallel_for(int n, const RangeFn& fn, int grain = 1);

    // Runs fn(thread_index) once on every thread.
    void run_on_all(const std::function<void(int thread)>& fn);

private:
    void worker(int index);

    int n_threads_ = 1;
    std::vector<std::thread> threads_;
    const std::function<void(int)>* task_ = nullptr;
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<int> pending_{0};
    std::atomic<bool> stop_{false};
    std::atomic<int> sleeping_{0};
    std::mutex mutex_;
    std::condition_variable wake_;
};

}  // namespace sixstep::llm
