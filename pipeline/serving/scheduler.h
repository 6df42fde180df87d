// Scheduler: many requests through one model — who joins the batch, how much
// of each prompt one forward pass reads, who is preempted when the KV cache is
// full — on the Stepper (llm/stepper.h), whose one batched forward pass it
// feeds, and on the virtual clock (virtual_clock.h), which it advances by what
// each step cost.
//
// Two policies:
//   static       a batch of up to max_batch waiting requests starts together
//                (prompts read whole in the first pass) and the next batch
//                starts only when the longest of them has finished: a request
//                that arrives meanwhile waits, and the slots of requests that
//                finished early stay empty.
//   continuous   requests join and leave at token granularity (Orca's
//                iteration-level scheduling, vLLM's scheduler): every step
//                first serves the running requests (one decode row each, or
//                the next chunk of a prompt), then admits waiting requests
//                while slots, blocks and the step's token budget
//                (max_step_tokens) last — prefill chunks mixed with decode
//                rows in one pass.
//
// KV blocks are taken on demand, as a request grows. When a running request
// needs a block and none is free, the most recently admitted request is
// preempted: its blocks go back (Stepper::evict), it returns to the front of
// the queue and later recomputes its prompt and what it had generated — the
// output is the same, only later. A step that preempted admits no one new.
//
// Prefix caching (paged only): every full block is keyed by a hash of its
// tokens and of everything before it (prefix_cache.h); a request admitted
// adopts the longest cached run of its first blocks and skips computing
// them. Outputs are identical with the cache on or off.
//
// A long-running server (pipeline/server) adds three things: cancel() takes
// a request out wherever it is (queued, running, preempted) and gives its
// blocks back; an observer hears every token (with its text, stop strings
// applied) and every finish as they happen; take_finished() hands over and
// forgets finished requests and past steps, so memory stays bounded however
// long it runs.
//
// The contiguous layout (kv_layout = contiguous) admits a request only when
// its whole maximum length fits in one free run of the pool
// (contiguous_allocator.h) — the reservation older servers made — so the
// same workload shows what paging saves.
//
//     Scheduler s(backend, kv, codec, {.policy = BatchPolicy::continuous, .max_batch = 8});
//     s.submit(make_workload(w, codec, bos));
//     while (s.step()) draw(s.kv_snapshot(), s.requests());   // or s.run()
//     TrafficReport r = make_report(s.requests(), s.steps(), s.run_info(), targets);
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/generation.h"
#include "pipeline/llm/stepper.h"
#include "pipeline/llm/stop_reason.h"
#include "pipeline/serving/contiguous_allocator.h"
#include "pipeline/serving/kv_snapshot.h"
#include "pipeline/serving/prefix_cache.h"
#include "pipeline/serving/virtual_clock.h"
#include "pipeline/serving/workload.h"

namespace sixstep::serving {

enum class BatchPolicy { static_batching, continuous };
std::string_view batch_policy_name(BatchPolicy policy);  // "static", "continuous"
std::optional<BatchPolicy> parse_batch_policy(std::string_view name);

enum class KvLayout { paged, contiguous };
std::string_view kv_layout_name(KvLayout layout);  // "paged", "contiguous"

// Sampling for serving runs: greedy, so a request's tokens depend only on its
// prompt — the invariant every scheduling test checks.
llm::SamplerParams greedy_sampling();

struct SchedulerParams {
    BatchPolicy policy = BatchPolicy::continuous;  // who may join a running batch, and when
    int max_batch = 8;                 // most requests running at once (in one forward pass), >= 1
    int max_step_tokens = 256;         // continuous: most tokens one forward pass reads, >= 1 (static reads whole prompts)
    bool prefix_cache = false;         // reuse cached KV blocks of identical prefixes (paged layout only)
    KvLayout kv_layout = KvLayout::paged;  // contiguous: reserve each request's whole max length on admission
    llm::SamplerParams sampling = greedy_sampling();  // every request's sampler
    bool stop_at_eog = true;           // a request ends at the end-of-generation token (else at max_tokens)
    // Read each step's wait for a CPU (StepShape::cpu_wait_ms, two readings a
    // step) for the cost model; a server whose clock is the wall clock
    // turns it off.
    bool time_cpu_waits = true;
};

// What a request was doing over a span of virtual time (for a Gantt view).
enum class Phase { queued, prefill, decode, stalled, preempted };
std::string_view phase_name(Phase phase);  // "queued", "prefill", "decode", "stalled", "preempted"

struct PhaseSpan {
    Phase phase = Phase::queued;
    double t0_ms = 0;
    double t1_ms = 0;
};

// One request's life on the virtual clock. Times are -1 until they happen.
struct RequestRecord {
    int id = 0;
    double arrival_ms = 0;
    int n_prompt = 0;                // prompt tokens
    int max_tokens = 0;              // most tokens it could generate
    bool shares_prefix = false;      // carries the workload's shared prefix
    double first_scheduled_ms = -1;  // first joined a forward pass
    double first_token_ms = -1;      // its first token was sampled (end of that step)
    double finish_ms = -1;           // its last token was sampled
    std::vector<double> token_ms;    // when each output token was sampled
    std::vector<int> output;         // generated token ids
    llm::StopReason stop_reason = llm::StopReason::none;  // none while running
    int n_preemptions = 0;           // times evicted from the KV cache and sent back to the queue
    int n_cached_tokens = 0;         // prompt positions adopted from the prefix cache (all admissions)
    int n_computed_tokens = 0;       // positions it fed through forward passes (recomputes included)
    std::vector<PhaseSpan> spans;    // queued / prefill / decode / stalled / preempted, in time order
    bool finished() const { return finish_ms >= 0; }
};

// One scheduling step: a forward pass and what surrounded it.
struct StepRecord {
    double t_begin_ms = 0;       // virtual time at the start of the pass
    double cost_ms = 0;          // what the clock advanced (the cost model's answer)
    StepShape shape;             // rows, requests, measured forward and sampling times
    int n_running = 0;           // requests holding a batch slot
    int n_waiting = 0;           // arrived but not running (queued or preempted)
    int n_preempted = 0;         // preemptions this step decided
    int n_blocks_used = 0;       // KV blocks with an owner during the pass
    int n_blocks_cached = 0;     // of them, kept only by the prefix cache
    long long n_slots_filled = 0;    // KV positions holding keys and values (shared blocks once)
    long long n_slots_held = 0;      // positions set aside for requests (paged: used blocks; contiguous: reservations)
    long long n_slots_stranded = 0;  // contiguous: free positions in holes too small for the head of the queue
                                     // while the free total would hold it (external fragmentation)
};

// What a run was, for reports.
struct RunInfo {
    SchedulerParams params;
    int n_blocks = 0;     // KV pool
    int block_size = 0;   // positions per block
    double start_ms = 0;     // the first arrival (drawn arrivals start at 0; a trace at its first time)
    double end_ms = 0;       // the last completion
    double duration_ms = 0;  // end_ms - start_ms: what throughputs divide by
    double busy_ms = 0;      // of it, in forward passes
};

// Hears a scheduler's requests as they progress, on the thread that steps it.
struct SchedulerObserver {
    std::function<void(int id, const llm::TokenEvent& event)> on_token;  // a request sampled a token
    std::function<void(const RequestRecord& record)> on_finish;          // it finished (or was cancelled)
};

// Throws sixstep::Error when max_batch requests could not all hold a KV
// block at once (each running request holds one at least): the scheduler
// refuses it, and a lesson's traffic step is refused before step 1 in the
// same words.
void check_batch_fits_kv(int max_batch, int n_blocks, int block_size);

class Scheduler {
public:
    // kv must be empty; backend, kv and codec outlive the scheduler. cost
    // decides how far the clock moves per step (measured_cost by default).
    Scheduler(llm::Backend& backend, llm::KvCache& kv, const llm::TextCodec& codec, const SchedulerParams& params,
              StepCostModel cost = measured_cost);
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Adds requests; each waits until the clock reaches its arrival. Throws
    // sixstep::Error, adding none of them, for a request that could never run
    // (prompt + max_tokens beyond the context or the whole pool), a duplicate
    // id, or a bad arrival time.
    void submit(std::vector<RequestSpec> specs);
    // The checks submit makes of one request, except the duplicate id. Reads
    // only what never changes after construction, so another thread may ask.
    void check(const RequestSpec& spec) const;
    // One step: jumps to the next arrival when idle, then schedules and runs
    // one forward pass. Returns false, doing nothing, when every request has
    // finished.
    bool step();
    void run();  // steps until every request has finished
    // Takes request id out of the queue or the batch: its KV blocks go back
    // at once and it finishes with stop reason "cancelled". Returns false for
    // an unknown or already finished id.
    bool cancel(int id);
    // The records of finished requests, which the scheduler then forgets
    // (requests() keeps only the unfinished), and it drops its step records.
    std::vector<RequestRecord> take_finished();
    void set_observer(SchedulerObserver observer) { observer_ = std::move(observer); }

    const SchedulerParams& params() const { return params_; }
    const VirtualClock& clock() const { return clock_; }
    const std::vector<RequestRecord>& requests() const { return records_; }  // in submission order
    const std::vector<StepRecord>& steps() const { return steps_; }
    RunInfo run_info() const;
    KvSnapshot kv_snapshot() const;
    int n_running() const { return static_cast<int>(running_.size()); }
    int n_waiting() const { return static_cast<int>(waiting_.size()); }
    const PrefixCache* prefix_cache() const { return cache_.get(); }

private:
    struct Live;
    struct Planned;
    void admit_arrivals();
    bool schedule_running(std::vector<Planned>& plan, int& budget);
    void admit_waiting(std::vector<Planned>& plan, int& budget, long long& stranded);
    bool make_room(int n_blocks);
    void preempt(Live& r);
    void finish(Live& r);
    void add_span(Live& r, Phase phase, double t0, double t1);
    void record_kv_use(StepRecord& sr) const;
    std::vector<KvSeqOwner> seq_owners() const;

    llm::Backend& backend_;
    llm::KvCache& kv_;
    const llm::TextCodec& codec_;
    SchedulerParams params_;
    StepCostModel cost_;
    VirtualClock clock_;
    llm::Stepper stepper_;
    std::unique_ptr<PrefixCache> cache_;             // with params.prefix_cache
    std::unique_ptr<ContiguousAllocator> contiguous_;  // with the contiguous layout
    std::vector<RequestRecord> records_;
    std::vector<StepRecord> steps_;
    long long n_preemptions_ = 0;
    SchedulerObserver observer_;
    // Declared last so they go first: a Generation detaches from the stepper
    // and gives its blocks back before the cache and the stepper go.
    std::vector<std::unique_ptr<Live>> live_;    // submitted, sorted by arrival
    std::size_t next_arrival_ = 0;               // live_[next_arrival_] is the next to arrive
    std::deque<Live*> waiting_;                  // arrived, not running, in service order
    std::vector<Live*> running_;                 // holding a batch slot, in admission order
};

}  // namespace sixstep::serving
