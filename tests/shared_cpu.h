// SharedCpu: the calling thread and n spinning threads, all pinned to the CPU
// the caller runs on, so the OS gives each a turn and the caller waits for
// the others' (its wait for a CPU, pipeline/core/cpu_wait.h, is then about
// n/(n+1) of the time). Restores the caller's CPUs when it goes out of
// scope. ok() is false where threads cannot be pinned (a container that
// forbids it): the test then has nothing to measure.
#pragma once
#include <atomic>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

namespace sixstep::test {

class SharedCpu {
public:
    explicit SharedCpu(int n_spinners) {
        if (pthread_getaffinity_np(pthread_self(), sizeof before_, &before_) != 0) return;
        const int cpu = sched_getcpu();
        if (cpu < 0 || !pin_to(cpu)) return;
        restore_ = true;
        for (int i = 0; i < n_spinners; ++i)
            spinners_.emplace_back([this, cpu] {
                if (pin_to(cpu)) ++started_;
                else failed_ = true;
                while (!stop_) {
                }
            });
        while (started_ < n_spinners && !failed_) std::this_thread::yield();
        ok_ = !failed_;
    }
    ~SharedCpu() {
        stop_ = true;
        for (std::thread& t : spinners_) t.join();
        if (restore_) pthread_setaffinity_np(pthread_self(), sizeof before_, &before_);
    }
    SharedCpu(const SharedCpu&) = delete;
    SharedCpu& operator=(const SharedCpu&) = delete;

    bool ok() const { return ok_; }

private:
    static bool pin_to(int cpu) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
    }

    cpu_set_t before_{};
    bool restore_ = false, ok_ = false;
    std::atomic<int> started_{0};
    std::atomic<bool> failed_{false}, stop_{false};
    std::vector<std::thread> spinners_;
};

}  // namespace sixstep::test
