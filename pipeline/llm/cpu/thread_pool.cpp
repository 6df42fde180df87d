#include "pipeline/llm/cpu/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SIXSTEP_PAUSE() _mm_pause()
#else
#define SIXSTEP_PAUSE() std::this_thread::yield()
#endif

namespace sixstep::llm {

namespace {
// How long a worker spins before sleeping: long enough to bridge the gap
// between two matmuls of one decode step, short enough not to burn a shared
// core between requests.
constexpr int spin_iterations = 200000;
constexpr int yield_every = 64;
}  // namespace

ThreadPool::ThreadPool(int n_threads) {
    if (n_threads <= 0) n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    n_threads_ = n_threads;
    for (int i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_.store(true);
        generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
}

void ThreadPool::worker(int index) {
    std::uint64_t seen = 0;
    for (;;) {
        int spins = 0;
        std::uint64_t g;
        while ((g = generation_.load(std::memory_order_acquire)) == seen) {
            if (++spins < spin_iterations) {
                // On a busy machine the thread we wait for may be preempted:
                // yield now and then so that it can run on this core.
                if (spins % yield_every == 0) std::this_thread::yield();
                SIXSTEP_PAUSE();
                continue;
            }
            std::unique_lock<std::mutex> lock(mutex_);
            sleeping_.fetch_add(1);
            wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
            sleeping_.fetch_sub(1);
            spins = 0;
        }
        seen = g;
        if (stop_.load()) return;
        (*task_)(index);
        pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
}

void ThreadPool::run_on_all(const std::function<void(int)>& fn) {
    if (n_threads_ == 1) {
        fn(0);
        return;
    }
    task_ = &fn;
    pending_.store(n_threads_ - 1, std::memory_order_release);
    {
        // The lock pairs with the sleeping worker's predicate check so that a
        // wake-up is never lost; spinning workers see the counter directly.
        std::lock_guard<std::mutex> lock(mutex_);
        generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    if (sleeping_.load() > 0) wake_.notify_all();
    fn(0);
    for (int spins = 1; pending_.load(std::memory_order_acquire) != 0; ++spins) {
        if (spins % yield_every == 0) std::this_thread::yield();
        SIXSTEP_PAUSE();
    }
    task_ = nullptr;
}

void ThreadPool::parallel_for(int n, const RangeFn& fn, int grain) {
    if (n <= 0) return;
    grain = std::max(1, grain);
    const int n_chunks = (n + grain - 1) / grain;
    const int n_workers = std::min(n_threads_, n_chunks);
    if (n_workers <= 1) {
        fn(0, n, 0);
        return;
    }
    const std::function<void(int)> task = [&](int t) {
        if (t >= n_workers) return;
        const int c0 = static_cast<int>(static_cast<long long>(n_chunks) * t / n_workers);
        const int c1 = static_cast<int>(static_cast<long long>(n_chunks) * (t + 1) / n_workers);
        const int begin = c0 * grain;
        const int end = std::min(n, c1 * grain);
        if (begin < end) fn(begin, end, t);
    };
    run_on_all(task);
}

}  // namespace sixstep::llm
