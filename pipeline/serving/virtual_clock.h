// VirtualClock: the time serving lives in. Requests arrive on it (Poisson,
// bursty, a trace), and it advances only by what each engine step cost — the
// step's forward pass and sampling, measured — or, when nothing is running,
// jumps to the next arrival. So 500 requests that would take minutes of
// arrivals run in seconds of wall time, yet every service time is one the
// engine really took: the clock cannot lie, because it never counts anything
// the engine did not do.
//
// The cost of a step is a StepCostModel: measured_cost (the default) returns
// the measured forward + sampling time less what the engine's thread spent
// waiting for a CPU meanwhile (pipeline/core/cpu_wait.h): on a busy machine
// the OS runs another program for milliseconds now and then, and a lesson's
// comparison — two policies, each some fifty milliseconds of passes — was
// decided by which of them such a pause fell into. (The wait is the calling
// thread's. In a pass split across threads, a worker may go on while the
// caller waits, so that pass counts a little short; and the caller may sleep
// while a worker the OS set aside holds the pass up, a wait that stays in.
// On a machine busy enough for either, the thread pool runs passes on the
// calling thread alone, thread_pool.h, and the wait is the whole story.)
// Tests inject a deterministic model
// (say 2 ms + 0.1 ms per token) so that scheduling claims ("continuous
// batching wins p50 TTFT") hold structurally, not by the luck of timing.
//
//     VirtualClock clock;
//     clock.advance_to(arrival_ms);             // idle: jump to the next arrival
//     StepShape s{.n_tokens = 9, .n_sequences = 3, .forward_ms = 4.1, .sample_ms = 0.2};
//     clock.advance(measured_cost(s));          // now = arrival + 4.3 ms
#pragma once
#include <functional>

namespace sixstep::serving {

// What one engine step did, and what it cost when measured.
struct StepShape {
    int n_tokens = 0;          // rows in the forward pass (prefill chunks + decode rows)
    int n_prefill_tokens = 0;  // of them, prompt (or recompute) tokens
    int n_decode = 0;          // of them, decode rows (one per generating request)
    int n_sequences = 0;       // requests in the pass
    int n_outputs = 0;         // rows whose logits were sampled
    double forward_ms = 0;     // the forward pass, measured
    double sample_ms = 0;      // sampling every output row, measured
    double cpu_wait_ms = 0;    // of those, the engine's thread waited for a CPU (the OS ran something else)
};

// How long a step takes on the virtual clock, in milliseconds (>= 0).
using StepCostModel = std::function<double(const StepShape&)>;

// The measured cost: forward + sampling − the wait for a CPU.
double measured_cost(const StepShape& step);

// A deterministic cost for tests and what-if lessons: fixed_ms per step plus
// per_token_ms per row, whatever the machine measured.
StepCostModel linear_cost(double fixed_ms, double per_token_ms);

class VirtualClock {
public:
    double now_ms() const { return now_ms_; }
    double busy_ms() const { return busy_ms_; }  // time spent in steps
    double idle_ms() const { return idle_ms_; }  // time jumped over, waiting for arrivals
    // One step took ms (>= 0, finite). Throws sixstep::Error otherwise: a
    // clock that went backwards or to infinity would make every metric wrong.
    void advance(double ms);
    // Nothing to run until t_ms: jump there (never backwards; earlier is a no-op).
    void advance_to(double t_ms);

private:
    double now_ms_ = 0;
    double busy_ms_ = 0;
    double idle_ms_ = 0;
};

}  // namespace sixstep::serving
