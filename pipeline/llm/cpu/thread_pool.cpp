#include "pipeline/llm/cpu/thread_pool.h"

#include "pipeline/llm/cpu/cpu_load.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#if defined(__linux__)
#include <sched.h>
#endif

#include <fmt/format.h>

#include "pipeline/core/error.h"

// A spin-wait hint to the CPU (it lets the other hyperthread run and saves
// power); where there is none, give the core to another thread instead.
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SIXSTEP_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define SIXSTEP_PAUSE() asm volatile("yield")
#else
#define SIXSTEP_PAUSE() std::this_thread::yield()
#endif

namespace sixstep::llm {

namespace {

using Clock = std::chrono::steady_clock;

// How long a waiting thread spins before it sleeps. Long enough to bridge
// the gap between two matmuls of a decode step without a trip through the
// OS; short, because on a busy machine every microsecond spent spinning is
// taken from our own share of the CPU, and a thread that has used up its
// share is the one the OS preempts in the middle of a chunk, which stalls
// the loop. Measured on 2 cores (15M F32 decode, 2 threads): quiet, 10 µs
// and 50 µs spins decode alike (~700 tok/s; no spin at all: ~480); a
// sched_yield phase before sleeping was dropped: with other programs
// runnable it hands the core away for a whole time slice.
constexpr auto spin_for = std::chrono::microseconds(10);
// How long a wait spins during and after a list of steps (a forward pass).
// spin_for is shorter than much of what a pass waits for: a chunk of the
// output matrix in flight on the other thread (tens of microseconds), and,
// between two decode passes, the caller sampling a token and writing the
// next batch. With spin_for alone the threads slept about once per decoded
// token, and each sleep cost a wake-up through the OS (tens of microseconds
// on a VM). Measured on 2 vCPUs (AMD EPYC Zen 5, 15M F32, AVX2 kernels, 2
// threads, bench -p 0 -n 250 -r 5, three rounds): every wait 10 µs, 682–763
// tok/s, 1.60 CPUs busy, 4,482 context switches; 300 µs, 755–891, 1.93
// CPUs, 184; the workers alone spinning 300 µs after a pass, not within
// it, 722–774. A
// wait ends as soon as its work comes, so the price is the gap itself; and
// on a crowded machine passes run on the caller alone (thread_pool.h),
// with the workers asleep.
constexpr auto linger_for = std::chrono::microseconds(300);
// Chunks per thread in a loop: enough that the others can take over the
// chunks of a preempted thread, few enough that claiming them (one atomic
// operation each) costs nothing next to the work.
constexpr int chunks_per_thread = 8;
constexpr int max_chunks = 0xffff;  // the claim word holds n_chunks in 16 bits
// The contention guard (see thread_pool.h). A wait for chunks in flight is
// a stall (a thread of ours was preempted) when it lasts longer than
// stall_min and than stall_chunks of the caller's own chunks; the pool then
// runs loops on the caller alone for solo_min, doubling up to solo_max
// while stalls keep coming within stall_again of the solo period's end.
constexpr auto stall_min = std::chrono::milliseconds(1);
constexpr int stall_chunks = 3;
constexpr auto solo_min = std::chrono::milliseconds(10);
constexpr auto solo_max = std::chrono::milliseconds(1000);
constexpr auto stall_again = std::chrono::milliseconds(100);
// Sleeping workers are woken only for a loop whose kind (size and grain)
// last took at least this long: on a busy machine a wake-up costs some
// 20 µs of the caller's time (measured on 2 cores beside two builds: the
// 3.8M model decoded at 690 tok/s on 2 threads waking a worker for every
// loop, 1120 without, 1130 on 1 thread). Spinning workers join any loop.
constexpr auto wake_min = std::chrono::microseconds(100);
// The solo-or-parallel choice for lists of steps (see thread_pool.h). A kind
// of list runs on every thread for its first list_warmup passes (the first of
// them, with cold caches and sleeping workers, is not timed), then once on
// the caller alone, and from then on the way that has been faster, trying the
// other way again after probe_min passes, twice as many after each try that
// changes nothing (up to probe_max): a probe costs what the slower way
// loses, and on a steady machine the answer stays. Times are moving
// averages: the way in use is timed every pass (weight 1/8), the other only
// when tried (weight 1/2), so one probe counts but does not decide alone; a
// pass over outlier_cap times the average counts as that much, and the other
// way takes over only when switch_margin faster. Why so slow to move: a
// single late pass (a sleeping worker to wake, an interrupt) is common, and
// with weight 1/4 and no cap it sent the threads' passes to one thread on a
// quiet machine where two were 1.25× faster (quiet, 2 threads ÷ 1:
// 1.11–1.22× against 1.22–1.33× with every pass on both threads).
constexpr std::uint32_t list_warmup = 8;
constexpr std::uint32_t probe_min = 8;
constexpr std::uint32_t probe_max = 128;
constexpr double weight_in_use = 0.125;
constexpr double weight_probe = 0.5;
constexpr double outlier_cap = 1.5;
constexpr double switch_margin = 0.03;
// How often run() asks whether a CPU is free for another thread: reading
// /proc/loadavg takes a few microseconds, a decode pass of the bundled model
// about a hundred.
constexpr auto crowded_every = std::chrono::milliseconds(20);
// After a reading that found no CPU free, the next ones come sooner, so the
// crowded_readings (cpu_load.h) take a few milliseconds.
constexpr auto confirm_every = std::chrono::milliseconds(2);

// Spins until ready() holds or `limit` has passed; returns ready(). It
// polls with a growing number of pause instructions between checks: less
// traffic on the shared cache line the other threads are writing.
template <typename Ready>
bool spin(const Ready& ready, Clock::duration limit) {
    const auto start = Clock::now();
    for (int pauses = 1;; pauses = std::min(pauses * 2, 64)) {
        if (ready()) return true;
        if (Clock::now() - start >= limit) return ready();
        for (int i = 0; i < pauses; ++i) SIXSTEP_PAUSE();
    }
}

constexpr std::uint64_t pack_claim(std::uint32_t epoch, int n_chunks, int next) {
    return (std::uint64_t{epoch} << 32) | (static_cast<std::uint64_t>(n_chunks) << 16) | static_cast<std::uint64_t>(next);
}

#if defined(__linux__)
// Distinct physical cores among the CPUs this process may run on.
int physical_cores_allowed() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    std::set<std::pair<std::string, std::string>> cores;  // (package, core)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &set)) continue;
        const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        std::ifstream pkg(dir + "physical_package_id"), core(dir + "core_id");
        std::string p, c;
        if (!(pkg >> p) || !(core >> c)) return CPU_COUNT(&set);  // no topology: count CPUs
        cores.insert({p, c});
    }
    return static_cast<int>(cores.size());
}

// The cgroup v2 CPU quota in whole CPUs (rounded up), or 0 when unlimited
// or unknown: a container limited to 2 CPUs on a 64-core host gets 2.
int cgroup_cpu_limit() {
    std::ifstream cg("/proc/self/cgroup");
    std::string line, path;
    while (std::getline(cg, line))
        if (line.rfind("0::", 0) == 0) path = line.substr(3);
    for (const std::string& file : {"/sys/fs/cgroup" + path + "/cpu.max", std::string("/sys/fs/cgroup/cpu.max")}) {
        std::ifstream in(file);
        std::string quota;
        long long period = 0;
        if (!(in >> quota >> period)) continue;
        if (quota == "max" || period <= 0) return 0;
        try {
            const long long q = std::stoll(quota);
            return static_cast<int>(std::max(1LL, (q + period - 1) / period));
        } catch (const std::exception&) {
            return 0;
        }
    }
    return 0;
}
#endif

}  // namespace

int ThreadPool::default_threads() {
    int n = 0;
#if defined(__linux__)
    n = physical_cores_allowed();
    if (const int limit = cgroup_cpu_limit(); limit > 0 && (n == 0 || limit < n)) n = limit;
#endif
    if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
    return std::clamp(n, 1, max_default_threads);
}

ThreadPool::ThreadPool(int n_threads, int n_helpers) {
    n_threads_ = n_threads > 0 ? n_threads : default_threads();
    n_helpers_ = std::clamp(n_helpers, 0, n_threads_ - 1);
    online_cpus_ = online_cpus();
    runnable_source_ = runnable_tasks_that_compete;
    // The system may refuse a thread (a memory limit, a process limit): the
    // ones already started wait for work, so they are stopped and joined
    // before the error leaves, or destroying them would end the process.
    try {
        for (int i = 1; i < n_threads_ - n_helpers_; ++i) threads_.emplace_back([this, i] { worker(i); });
    } catch (const std::system_error& e) {
        const std::size_t started = threads_.size() + 1;  // the caller's thread is the first
        stop_workers();
        throw Error(fmt::format("cannot start {} threads: the system refused thread {} ({}); ask for fewer threads",
                                n_threads_ - n_helpers_, started + 1, e.what()));
    }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_.store(true);
        epoch_.fetch_add(1);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
}

int ThreadPool::run_chunks(std::uint32_t& epoch, int thread) {
    for (int ran = 0;;) {
        std::uint64_t c = claim_.load(std::memory_order_acquire);
        const int n_chunks = static_cast<int>((c >> 16) & 0xffff), next = static_cast<int>(c & 0xffff);
        if ((c >> 32) != epoch || next >= n_chunks) return ran;
        if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
        // Claimed: the loop cannot finish (and its fields cannot change) before this chunk is done.
        const int chunk = chunk_.load(std::memory_order_relaxed), n = n_.load(std::memory_order_relaxed);
        const int begin = next * chunk;
        const RangeFn& fn = *fn_.load(std::memory_order_relaxed);
        const bool in_steps = steps_ != nullptr;  // read while the claim holds the loop open
        if (!in_steps) {
            fn(begin, std::min(n, begin + chunk), thread);
        } else if (!steps_failed_.load(std::memory_order_relaxed)) {
            try {
                fn(begin, std::min(n, begin + chunk), thread);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex_);
                if (!steps_error_) steps_error_ = std::current_exception();
                steps_failed_.store(true);
            }
        }
        ++ran;
        if (done_.fetch_add(1) + 1 != n_chunks) continue;  // seq_cst: see caller_sleeping_
        if (in_steps) {
            // This thread finished the step: it records the step's time and
            // publishes the next (acquire above: every chunk's writes are visible).
            StepTime& t = step_times_[step_];
            t.last = Clock::now() - step_start_;
            publish_step(steps_failed_.load() ? steps_->size() : step_ + 1, ++epoch);
        } else if (caller_sleeping_.load()) {
            std::lock_guard<std::mutex> lock(mutex_);
            finished_.notify_one();
        }
    }
}

void ThreadPool::publish_step(std::size_t k, std::uint32_t epoch) {
    const Steps& steps = *steps_;
    while (k < steps.size() && steps[k].n <= 0) ++k;  // empty steps
    if (k == steps.size()) {
        // The end: an epoch with no chunks (nothing for anyone to claim), and
        // the caller is told. epoch_ first: the caller, once it sees
        // steps_done_, takes its copy of the epoch from it.
        claim_.store(pack_claim(epoch, 0, 0), std::memory_order_release);
        epoch_.store(epoch);
        steps_done_.store(true);
        if (caller_sleeping_.load()) {
            std::lock_guard<std::mutex> lock(mutex_);
            finished_.notify_one();
        }
        return;
    }
    const Step& step = steps[k];
    const int grain = std::max(1, step.grain);
    const int units = (step.n + grain - 1) / grain;
    const int target = std::min(max_chunks, n_threads_ * chunks_per_thread);
    const int chunk = (units + target - 1) / target * grain;
    const int n_chunks = (step.n + chunk - 1) / chunk;
    StepTime& t = step_times_[k];
    if (t.n != step.n || t.grain != grain) t = StepTime{step.n, grain, Clock::duration::zero()};
    // Sleeping threads are woken for a step worth it (as in parallel_for);
    // the running ones, whoever they are, carry the small ones. Decided
    // before the step is published: from then on the thread that finishes
    // it (maybe not this one) writes its time.
    const bool worth_waking = n_chunks > 1 && (t.last == Clock::duration::zero() || t.last >= wake_min);
    step_ = k;
    step_start_ = Clock::now();
    fn_.store(&step.fn, std::memory_order_relaxed);
    n_.store(step.n, std::memory_order_relaxed);
    chunk_.store(chunk, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    claim_.store(pack_claim(epoch, n_chunks, 0), std::memory_order_release);
    epoch_.store(epoch);
    if (worth_waking) {
        if (sleeping_.load() > 0) {
            std::lock_guard<std::mutex> lock(mutex_);
            wake_.notify_all();
        }
        if (caller_sleeping_.load()) {
            std::lock_guard<std::mutex> lock(mutex_);
            finished_.notify_one();
        }
    }
}

void ThreadPool::wait_for_epoch(std::uint32_t seen, bool caller) {
    // seq_cst loads in the predicate: with the seq_cst stores of sleeping_
    // / caller_sleeping_ they make sure one side sees the other. The caller
    // of run() also waits for the end of its list.
    const auto fresh = [&] { return epoch_.load() != seen || (caller && steps_done_.load()); };
    if (spin(fresh, lists_ran_.load(std::memory_order_relaxed) ? Clock::duration(linger_for) : Clock::duration(spin_for)))
        return;
    std::unique_lock<std::mutex> lock(mutex_);
    if (caller) {
        caller_sleeping_.store(true);
        finished_.wait(lock, fresh);
        caller_sleeping_.store(false);
    } else {
        // Counted before the check under the lock: a publisher stores the
        // epoch, then looks at sleeping_, so one of the two sees the other.
        sleeping_.fetch_add(1);
        wake_.wait(lock, fresh);
        sleeping_.fetch_sub(1);
    }
}

void ThreadPool::worker(int index) {
    std::uint32_t seen = 0;
    for (;;) {
        wait_for_epoch(seen, false);
        if (stop_.load()) return;
        seen = epoch_.load(std::memory_order_acquire);
        run_chunks(seen, index);
    }
}

void ThreadPool::help(int helper, const std::function<bool()>& done) {
    if (helper < 0 || helper >= n_helpers_) return;
    const int index = n_threads_ - n_helpers_ + helper;
    // The loop in flight when it arrives, if any, and every later one: an
    // epoch whose chunks are all taken (or that had none) gives nothing.
    std::uint32_t ran = epoch_.load(std::memory_order_acquire) - 1;
    for (int pauses = 1; !done();) {
        if (const std::uint32_t epoch = epoch_.load(std::memory_order_acquire); epoch != ran) {
            ran = epoch;
            run_chunks(ran, index);
            pauses = 1;
            continue;
        }
        for (int i = 0; i < pauses; ++i) SIXSTEP_PAUSE();
        pauses = std::min(pauses * 2, 64);
    }
}

std::chrono::steady_clock::duration& ThreadPool::last_time(int n, int grain) {
    const std::uint64_t key =
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(n)) << 32 | static_cast<std::uint32_t>(grain)) + 1;
    LoopKind& k = kinds_[static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> 58)];  // 64 slots
    if (k.key != key) k = LoopKind{key, Clock::duration::zero()};  // a new kind takes the slot over
    return k.last;
}

void ThreadPool::parallel_for(int n, const RangeFn& fn, int grain) {
    if (n <= 0) return;
    grain = std::max(1, grain);
    const int units = (n + grain - 1) / grain;
    if (n_threads_ == 1 || units == 1) {
        fn(0, n, 0);
        return;
    }
    ++stats_.loops;
    const auto start = Clock::now();
    Clock::duration& last = last_time(n, grain);
    if (start < solo_until_) {
        ++stats_.solo_loops;
        fn(0, n, 0);
        last = Clock::now() - start;
        return;
    }

    // Chunks of whole grains, about chunks_per_thread per thread.
    const int target = std::min(max_chunks, n_threads_ * chunks_per_thread);
    const int chunk = (units + target - 1) / target * grain;
    const int n_chunks = (n + chunk - 1) / chunk;

    fn_.store(&fn, std::memory_order_relaxed);
    n_.store(n, std::memory_order_relaxed);
    chunk_.store(chunk, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    const std::uint32_t epoch = ++epoch_count_;
    claim_.store(pack_claim(epoch, n_chunks, 0), std::memory_order_release);
    epoch_.store(epoch);
    if (sleeping_.load() > 0 && (last == Clock::duration::zero() || last >= wake_min)) {
        std::lock_guard<std::mutex> lock(mutex_);
        wake_.notify_all();
    }

    // The caller works too, from the first chunk: it never waits for a
    // worker to wake up, only for chunks already in flight.
    const auto own_start = Clock::now();
    std::uint32_t own_epoch = epoch;
    const int own_chunks = run_chunks(own_epoch, 0);
    const auto own_end = Clock::now();
    const auto finished = [&] { return done_.load() == n_chunks; };
    if (!spin(finished, spin_for)) {
        std::unique_lock<std::mutex> lock(mutex_);
        caller_sleeping_.store(true);
        finished_.wait(lock, finished);
        caller_sleeping_.store(false);
    }

    // The contention guard: a wait much longer than a chunk means a thread
    // holding one was preempted.
    const auto end = Clock::now();
    const auto waited = end - own_end;
    last = end - start;
    if (own_chunks > 0 && waited > stall_min && waited > stall_chunks * (own_end - own_start) / own_chunks) {
        ++stats_.stalls;
        solo_for_ = end < solo_until_ + solo_for_ + stall_again ? std::min<Clock::duration>(2 * solo_for_, solo_max)
                                                                : Clock::duration(solo_min);
        solo_until_ = end + solo_for_;
    }
}

ThreadPool::ListKind& ThreadPool::list_kind(const Steps& steps) {
    // The shape of the list: a decode pass has the same one every token, a
    // prefill of another length another.
    std::uint64_t key = steps.size();
    for (const Step& step : steps)
        key = (key ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(step.n)) << 20 ^
                      static_cast<std::uint32_t>(step.grain))) *
              0x100000001b3ULL;
    key |= 1;  // 0 marks a free slot
    ListKind& k = lists_[static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> 60)];  // 16 slots
    if (k.key != key) k = ListKind{key};
    return k;
}

bool ThreadPool::ListKind::next_solo() const {
    if (passes < list_warmup) return false;
    if (solo_ns == 0) return true;  // never tried on the caller alone
    return solo_in_use != (since_probe + 1 >= probe_every);
}

void ThreadPool::ListKind::record(bool solo, Clock::duration took) {
    const double ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count());
    const bool probe = solo_ns != 0 && solo != solo_in_use;
    ++passes;
    if (passes == 1) return;  // the first pass, cold
    double& avg = solo ? solo_ns : parallel_ns;
    avg = avg == 0 ? ns : avg + (probe ? weight_probe : weight_in_use) * (std::min(ns, outlier_cap * avg) - avg);
    if (solo_ns == 0) return;  // still warming up on every thread
    const double in_use = solo_in_use ? solo_ns : parallel_ns, other = solo_in_use ? parallel_ns : solo_ns;
    const bool change = other < in_use * (1 - switch_margin);
    if (change) solo_in_use = !solo_in_use;
    if (probe || change) {
        // A try that changes nothing → look again twice as late; a change → soon.
        probe_every = change ? probe_min : std::min(2 * probe_every, probe_max);
        since_probe = 0;
    } else {
        ++since_probe;
    }
}

void ThreadPool::set_runnable_source(RunnableSource source) {
    runnable_source_ = std::move(source);
    crowded_ = false;
    busy_readings_ = 0;
    crowded_checked_ = {};  // asked again at the next list
}

bool ThreadPool::crowded() {
    const auto now = Clock::now();
    const bool confirming = busy_readings_ > 0 && !crowded_;
    if (now - crowded_checked_ < (confirming ? confirm_every : crowded_every)) return crowded_;
    crowded_checked_ = now;
    const std::optional<int> runnable = runnable_source_ ? runnable_source_() : std::nullopt;
    // Ours: the caller, the workers that are awake, and the helper places
    // (a thread of the caller's, such as speculative decoding's draft, runs
    // there: counted as another program, it would keep the verify that it
    // helps with on the caller alone).
    const int ours = n_threads_ - sleeping_.load();
    busy_readings_ = runnable && !cpu_free_for_another(*runnable, ours, online_cpus_) ? busy_readings_ + 1 : 0;
    crowded_ = busy_readings_ >= crowded_readings;
    return crowded_;
}

void ThreadPool::wake() {
    if (n_threads_ == 1 || sleeping_.load() == 0 || Clock::now() < solo_until_) return;
    if (adaptive_ && crowded_) return;  // the passes run on the caller alone
    if (adaptive_ && next_list_ != nullptr && next_list_->next_solo()) return;  // the next pass runs on the caller alone
    // A new epoch with no chunks: the workers wake, find nothing to claim,
    // and spin (spin_for) waiting for the loop that follows.
    const std::uint32_t epoch = ++epoch_count_;
    claim_.store(pack_claim(epoch, 0, 0), std::memory_order_release);
    epoch_.store(epoch);
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
}

void ThreadPool::run(const Steps& steps) {
    if (n_threads_ == 1) {
        run_steps(nullptr, steps);
        return;
    }
    ++stats_.lists;
    stats_.loops += steps.size();
    if (Clock::now() < solo_until_) {
        stats_.solo_loops += steps.size();
        run_steps(nullptr, steps);
        return;
    }
    if (adaptive_ && crowded()) {
        ++stats_.solo_lists;
        ++stats_.crowded_lists;
        stats_.solo_loops += steps.size();
        run_steps(nullptr, steps);
        return;
    }
    ListKind& kind = list_kind(steps);
    next_list_ = &kind;  // wake() asks it about the pass that follows
    const bool solo = adaptive_ && kind.next_solo();
    const auto start = Clock::now();
    if (solo) {
        ++stats_.solo_lists;
        stats_.solo_loops += steps.size();
        run_steps(nullptr, steps);  // an exception leaves the kind's times as they were
    } else {
        run_parallel(steps);
    }
    if (adaptive_) kind.record(solo, Clock::now() - start);
}

void ThreadPool::run_parallel(const Steps& steps) {
    if (step_times_.size() != steps.size()) step_times_.assign(steps.size(), StepTime{});
    steps_ = &steps;
    lists_ran_.store(true, std::memory_order_relaxed);
    steps_done_.store(false);
    steps_failed_.store(false);
    steps_error_ = nullptr;
    std::uint32_t epoch = ++epoch_count_;
    publish_step(0, epoch);
    // The caller is one of the threads: it takes chunks, publishes the steps
    // it finishes, and waits only while every chunk of the step in flight is
    // taken by another thread.
    while (!steps_done_.load()) {
        run_chunks(epoch, 0);
        if (steps_done_.load()) break;
        wait_for_epoch(epoch, true);
        epoch = epoch_.load(std::memory_order_acquire);
    }
    epoch_count_ = epoch_.load(std::memory_order_acquire);
    steps_ = nullptr;
    std::exception_ptr error;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        std::swap(error, steps_error_);
    }
    if (error) std::rethrow_exception(error);
}

void run_steps(ThreadPool* pool, const ThreadPool::Steps& steps) {
    if (pool) {
        pool->run(steps);
        return;
    }
    for (const ThreadPool::Step& step : steps)
        if (step.n > 0) step.fn(0, step.n, 0);
}

}  // namespace sixstep::llm
