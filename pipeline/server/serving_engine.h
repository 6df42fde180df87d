// ServingEngine: the serving layer's scheduler (serving/scheduler.h) run for
// real — one engine thread steps it while any number of other threads (HTTP
// handlers) submit requests and read their tokens through a RequestStream.
//
// The clock is the wall clock: the scheduler's virtual clock is advanced, step
// by step, by the wall time that really passed (wall_cost below), and
// arrivals are the moments submit() was called, so every record and metric
// is in real milliseconds since the engine started.
//
// Threads: submit(), cancel(), gauges and metrics are safe from any thread;
// they meet the engine thread in one inbox under one mutex. The scheduler,
// the KV cache and the backend are touched only by the engine thread.
//
// Limits: at most max_queue requests may wait (received, not yet running;
// one a free batch slot takes at once does not wait) — beyond that submit()
// refuses ("queue_full") rather than let memory grow;
// a request that could never run (prompt + max_tokens beyond the context or
// the KV pool) is refused with the scheduler's own message.
//
// Shutdown: stop(grace) refuses new requests, lets those in flight finish for
// up to grace, cancels the rest (each stream ends with "cancelled"), and
// joins the engine thread.
//
//     ServingEngine engine(backend, codec, {.kv_blocks = 256});
//     Submission s = engine.submit({.prompt = codec.encode("Once"), .max_tokens = 32});
//     if (s.stream) while (!(n = s.stream->wait(100ms)).finished) print(n.text);
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/llm/sampler.h"
#include "pipeline/llm/text_codec.h"
#include "pipeline/server/request_stream.h"
#include "pipeline/server/server_metrics.h"
#include "pipeline/serving/scheduler.h"

namespace sixstep::server {

struct ServingEngineParams {
    serving::SchedulerParams scheduler;  // continuous batching, max batch, step tokens, prefix cache
    int kv_blocks = llm::default_kv_blocks;  // KV pool, in blocks, 1 .. llm::max_kv_blocks
    int block_size = llm::default_block_size;   // positions per block, 1 .. llm::max_block_size
    int n_ctx = 0;          // most positions one request may hold; 0 → the model's context
    int max_queue = 256;    // most requests waiting to run before submit() refuses, >= 0
};

// One request as the engine takes it.
struct EngineRequest {
    std::vector<int> prompt;                     // token ids, BOS included when the model wants one
    int max_tokens = 16;                         // most tokens to generate, >= 1
    std::optional<llm::SamplerParams> sampling;  // none → greedy (the scheduler's default)
    std::vector<std::string> stop;               // texts that end it
};

struct Submission {
    std::shared_ptr<RequestStream> stream;  // null when refused
    std::string refusal;                    // "queue_full", "shutting_down", "invalid" (then message says why)
    std::string message;                    // one line for the client
};

class ServingEngine {
public:
    // backend and codec outlive the engine. Throws sixstep::Error for bad params.
    ServingEngine(llm::Backend& backend, const llm::TextCodec& codec, const ServingEngineParams& params);
    ~ServingEngine();  // stop(0) if still running
    ServingEngine(const ServingEngine&) = delete;
    ServingEngine& operator=(const ServingEngine&) = delete;

    Submission submit(EngineRequest request);
    void cancel(int id);  // the client went away; a no-op when it already finished
    // Refuses new requests, waits up to grace for those in flight, cancels the
    // rest, joins the engine thread. Idempotent.
    void stop(std::chrono::milliseconds grace);

    int n_ctx() const { return n_ctx_; }  // positions a request may hold (prompt + generated)
    // The whole KV pool, in 64 bits: blocks × positions may pass INT_MAX.
    long long n_pool_positions() const { return static_cast<long long>(params_.kv_blocks) * params_.block_size; }
    // The pool's memory with every block in use (blocks are allocated as they fill).
    std::size_t kv_pool_bytes() const;
    int n_vocab() const { return n_vocab_; }  // token ids a prompt may hold: 0 .. n_vocab - 1
    int n_in_flight() const;              // submitted, not finished
    double now_ms() const;                // the wall clock the records use
    const ServerMetrics& metrics() const { return metrics_; }
    ServerMetrics& metrics() { return metrics_; }

private:
    void run();
    double wall_cost(const serving::StepShape& shape) const;

    llm::Backend& backend_;
    const llm::TextCodec& codec_;
    const ServingEngineParams params_;
    const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
    int n_ctx_ = 0;
    int n_vocab_ = 0;
    std::unique_ptr<llm::KvCache> kv_;
    std::unique_ptr<serving::Scheduler> scheduler_;
    ServerMetrics metrics_;

    // The inbox, under mutex_.
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<std::pair<serving::RequestSpec, std::shared_ptr<RequestStream>>> inbox_;
    std::vector<int> cancels_;
    int next_id_ = 0;
    int n_in_flight_ = 0;     // submitted, not finished
    int n_waiting_ = 0;       // taken from the inbox and not running, as of the last step, and what has moved since
    bool stopping_ = false;
    std::chrono::steady_clock::time_point deadline_;  // while stopping: cancel whatever is left then

    // The engine thread's own: streams of the requests the scheduler holds.
    std::map<int, std::shared_ptr<RequestStream>> active_;
    int n_step_tokens_ = 0;   // tokens sampled in the current step

    std::thread thread_;  // last: starts when everything above is ready
};

}  // namespace sixstep::server
