// Backend: where the forward pass runs. The engine defines this interface;
// the CPU backend (cpu_backend.h) implements it, and a GPU backend can
// implement it later without the generator, the serving code or the lessons
// knowing the difference. Same contract as LlamaForwardCpu::forward: a batch
// of tokens in, the logits of the flagged rows out, KV cache updated.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "pipeline/llm/kv/kv_cache.h"
#include "pipeline/llm/cpu/forward.h"
#include "pipeline/llm/llama_model.h"
#include "pipeline/llm/observer.h"

namespace sixstep::llm {

class Backend {
public:
    virtual ~Backend() = default;
    // "cpu (2 threads, avx512)", "cuda (H100)", …
    virtual std::string name() const = 0;
    virtual const LlamaModel& model() const = 0;
    // Runs the model on `batch`; logits receives [n_outputs, n_vocab].
    // Throws sixstep::Error on bad input (see prepare_batch) — the cache is
    // then left as it was before the call, apart from reserved blocks.
    virtual void forward(KvCache& kv, const Batch& batch, std::vector<float>& logits,
                         TensorObserver* observer = nullptr) = 0;
    // A KV cache laid out for this backend. n_ctx <= 0 → the model's context.
    virtual std::unique_ptr<KvCache> make_kv_cache(int n_ctx = 0, int n_seq = 1, int block_size = 16) const;
};

}  // namespace sixstep::llm
