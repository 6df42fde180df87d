// The Llama forward pass on the CPU: tokens in, logits out.
//
// Two implementations of the same function:
//   forward_reference  reads like the paper: layer by layer, one token at a
//                      time, plain loops, weights dequantized row by row and
//                      summed in double. It stays forever as the oracle every
//                      other path (the fast CPU path, a GPU backend) is
//                      tested against.
//   LlamaForwardCpu    the fast path: the whole batch at once, each matmul
//                      tiled, SIMD and spread over a thread pool, quantized
//                      weights used as they are (matmul.h).
// Both offer the same named intermediate tensors to an observer (observer.h),
// which is how tests compare them tensor by tensor.
#pragma once
#include <memory>
#include <vector>

#include "pipeline/llm/batch.h"
#include "pipeline/llm/cpu/matmul.h"
#include "pipeline/llm/kv/kv_cache.h"
#include "pipeline/llm/llama_model.h"
#include "pipeline/llm/observer.h"

namespace sixstep::llm {

class ThreadPool;

// logits receives [n_outputs, n_vocab].
void forward_reference(const LlamaModel& model, KvCache& kv, const Batch& batch, std::vector<float>& logits,
                       TensorObserver* observer = nullptr);

// The fast path. Owns its scratch buffers (grown on demand) and borrows a pool.
class LlamaForwardCpu {
public:
    LlamaForwardCpu(const LlamaModel& model, ThreadPool* pool);
    ~LlamaForwardCpu();
    void forward(KvCache& kv, const Batch& batch, std::vector<float>& logits, TensorObserver* observer = nullptr);

private:
    struct Scratch;
    const LlamaModel& model_;
    ThreadPool* pool_;
    std::unique_ptr<Scratch> s_;
    WeightHome home_ = WeightHome::cache;  // where its weights sit while it decodes (see the constructor)
};

}  // namespace sixstep::llm
