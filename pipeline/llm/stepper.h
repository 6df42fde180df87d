// Stepper: runs many requests through one model, one batched forward pass at
// a time — the mechanism every front end shares. The lesson adapter and the
// generator are batch-of-one clients; the serving layer (pipeline/serving/)
// adds policies — who joins the batch, how much prompt per step, who is
// preempted — by choosing the feeds, without touching the forward pass.
//
//     Stepper st(backend, kv);
//     Generation a(codec, "The cat", params), b(codec, "Once upon", params);
//     st.attach(a);  st.attach(b);            // a KV sequence each
//     while (!a.done() || !b.done()) {
//         st.forward_all();                   // one pass: both prompts, later both decode rows
//         for (Generation* g : {&a, &b})
//             if (g->has_logits()) g->sample();
//     }
//
// One forward pass reads, for each feed, the next n of that generation's
// pending tokens at positions n_past … n_past+n−1 of its KV sequence; a feed
// that reaches its last pending token gets that row's logits. Each
// generation is charged the whole pass's time: that is what it waited.
#pragma once
#include <span>
#include <vector>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/generation.h"

namespace sixstep::llm {

// One generation's share of a forward pass.
struct Feed {
    Generation* gen = nullptr;
    int n_tokens = 0;  // of its pending tokens, from the first; <= 0 → all of them
};

struct StepStats {
    int n_tokens = 0;     // rows in the batch
    int n_outputs = 0;    // rows with logits
    int n_sequences = 0;  // generations fed
    double ms = 0;        // the forward pass, measured
};

class Stepper {
public:
    Stepper(Backend& backend, KvCache& kv);
    ~Stepper();  // detaches every generation still attached
    Stepper(const Stepper&) = delete;
    Stepper& operator=(const Stepper&) = delete;

    Backend& backend() { return backend_; }
    KvCache& kv() { return kv_; }
    const std::vector<Generation*>& attached() const { return attached_; }

    // Gives g a KV sequence. Throws sixstep::Error when the request does not
    // fit the context (see check_generation_fits) or g is already attached.
    void attach(Generation& g);
    // Frees g's sequence: its blocks go back to the pool.
    void detach(Generation& g);
    // Frees g's blocks but keeps it attached with an empty sequence: it will
    // read its prompt and generated tokens again (preemption by recompute).
    void evict(Generation& g);

    // One forward pass over the feeds. Throws sixstep::Error (e.g. "KV cache
    // full: …") leaving every generation as it was.
    StepStats forward(std::span<const Feed> feeds, TensorObserver* observer = nullptr);
    // One forward pass over every attached generation with pending tokens.
    StepStats forward_all(TensorObserver* observer = nullptr);

private:
    Backend& backend_;
    KvCache& kv_;
    std::vector<Generation*> attached_;
    Batch batch_;
    std::vector<float> logits_;
};

}  // namespace sixstep::llm
