// The Llama forward pass: tokens in, logits out.
//
// Two implementations of the same function:
//   forward_reference  reads like the paper, one token at a time, plain loops,
//                      weights dequantized row by row and summed in double.
//                      It stays forever as the oracle the fast path is
//                      tested against.
//   LlamaForwardCpu    the fast path: the whole batch at once, each matmul
//                      tiled, SIMD and spread over a thread pool, quantized
//                      weights used as they are (matmul.h).
//
// A Batch carries tokens of one or several sequences with their positions:
// prefill is many tokens of one sequence; decode is one token from each of
// several sequences. Every token attends to positions 0..pos of its own
// sequence; its keys and values are written into the KV cache at pos. Rows
// with `logits` set produce a row of n_vocab logits, in batch order.
#pragma once
#include <memory>
#include <vector>

#include "pipeline/llm/kv/kv_cache.h"
#include "pipeline/llm/llama_model.h"
#include "pipeline/llm/cpu/matmul.h"
#include "pipeline/llm/observer.h"

namespace sixstep::llm {

class ThreadPool;

struct Batch {
    std::vector<int> token;    // [n] token ids
    std::vector<int> pos;      // [n] positions within their sequence
    std::vector<int> seq;      // [n] KV cache sequence ids
    std::vector<char> logits;  // [n] 1 → output this row's logits

    void add(int token_id, int position, int seq_id, bool want_logits) {
        token.push_back(token_id);
        pos.push_back(position);
        seq.push_back(seq_id);
        logits.push_back(want_logits ? 1 : 0);
    }
    void clear() { token.clear(), pos.clear(), seq.clear(), logits.clear(); }
    int size() const { return static_cast<int>(token.size()); }
    int n_outputs() const;

    // A prefill batch: tokens at positions pos0, pos0+1, … of one sequence;
    // logits for the last one only.
    static Batch prefill(const std::vector<int>& tokens, int seq_id, int pos0 = 0);
};

// Checks a batch against the model and the cache (token ids, positions with
// no gaps, sequences present, context not exceeded), reserves the cache
// blocks it needs, and returns the number of output rows. Throws
// sixstep::Error with a clear message ("KV cache full: …", "position 7 of
// sequence 0 leaves a gap: the sequence holds 3 positions").
int prepare_batch(const LlamaModel& model, KvCache& kv, const Batch& batch);
// Marks the batch's positions as filled in the cache and tells the observer.
void commit_batch(KvCache& kv, const Batch& batch, TensorObserver* observer);

// logits receives [n_outputs, n_vocab].
void forward_reference(const LlamaModel& model, KvCache& kv, const Batch& batch, std::vector<float>& logits);

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
};

}  // namespace sixstep::llm
