// TensorObserver: lets a lesson, a test or the UI look inside the forward pass.
//
// The forward pass offers named intermediate tensors, with llama.cpp's names
// (attn_norm, Qcur, Kcur, Vcur, kq_soft_max, kqv_out, ffn_inp, ffn_norm,
// ffn_out, l_out, result_norm, result_output), and tells when it writes
// positions into the KV cache. Like ggml's eval callback it first asks
// wants(): copying a tensor out costs time, so the fast path only does it for
// the tensors someone asked for, and pays nothing when no observer is set.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

namespace sixstep::llm {

struct Batch;

// A read-only view of one intermediate tensor, valid only during the callback.
// Shapes are written outermost first, as in the shape comments of the forward
// pass: e.g. Qcur is [n_tokens, n_head, head_dim], kq_soft_max is
// [n_tokens, n_head, n_kv] (n_kv: positions attended to; for a batch of
// several sequences, the longest one, with unused entries 0).
struct TensorView {
    std::string_view name;   // "Qcur", "kq_soft_max", …
    int layer = -1;          // -1 for tensors outside the layers (result_norm, result_output)
    std::span<const float> data;
    std::span<const std::int64_t> shape;
};

class TensorObserver {
public:
    virtual ~TensorObserver() = default;
    // A forward pass over `batch` begins (its rows are the tensors' rows).
    virtual void batch_begins(const Batch& batch) {}
    // Asked once per tensor per forward call; answer quickly.
    virtual bool wants(std::string_view name, int layer) { return false; }
    // Called for each tensor wants() said yes to, in the pass's order, one
    // call at a time — but on the CPU backend possibly from one of its pool's
    // threads rather than the caller's (the pass is a list of steps that any
    // of them advances: thread_pool.h), so no thread-local state here. An
    // exception ends the pass and reaches the caller.
    virtual void tensor(const TensorView& t) {}
    // The forward pass wrote positions [pos0, pos0 + n) of sequence seq into
    // the KV cache of every layer; the sequence now holds n_filled positions.
    virtual void kv_fill(int seq, int pos0, int n, int n_filled) {}
};

}  // namespace sixstep::llm
