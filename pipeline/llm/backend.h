// Backend: where the forward pass runs. The engine defines this interface;
// each backend implements it — the CPU backend (cpu/cpu_backend.h) always,
// a CUDA backend (gpu/) when one was built and a device is present — and the
// generator, the stepper, the serving lab and the lessons never know which.
//
// Contract, the same for every backend: a batch of tokens in (batch.h), the
// logits of the flagged rows out, the KV cache updated; bad batches rejected
// with the same messages (prepare_batch). make_backend() is the only place
// that knows which backends exist.
//
//     auto model = LlamaModel::load("model.gguf");
//     auto backend = make_backend(BackendKind::auto_select, model, {.n_threads = 2}).backend;
//     auto kv = backend->make_kv_cache();
//     int seq = kv->add_sequence();
//     std::vector<float> logits;
//     backend->forward(*kv, Batch::prefill(tokens, seq), logits);
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/llm/backend_kind.h"
#include "pipeline/llm/batch.h"
#include "pipeline/llm/kv/kv_cache.h"
#include "pipeline/llm/llama_model.h"
#include "pipeline/llm/observer.h"

namespace sixstep::llm {

class Backend {
public:
    virtual ~Backend() = default;
    // "cpu (2 threads, avx512)", "cuda (NVIDIA H200, 139 GiB)", …
    virtual std::string name() const = 0;
    virtual const LlamaModel& model() const = 0;
    // Runs the model on `batch`; logits receives [n_outputs, n_vocab].
    // Throws sixstep::Error on bad input (see prepare_batch) — the cache is
    // then left holding what it held before the call.
    virtual void forward(KvCache& kv, const Batch& batch, std::vector<float>& logits,
                         TensorObserver* observer = nullptr) = 0;
    // Lends the calling thread to this backend's forward passes — the one in
    // flight on another thread and those that follow — until done() holds
    // (checked between small pieces of work). For a thread with nothing else
    // to do, in a place the backend was built to keep for it
    // (BackendParams::n_helpers); returns false at once where there is none
    // (the default: a GPU backend has nothing to lend a CPU thread to).
    virtual bool help(const std::function<bool()>& done) {
        (void)done;
        return false;
    }
    // A KV cache whose storage lives where this backend computes.
    virtual std::unique_ptr<KvCache> make_kv_cache(const KvCacheParams& params) const;
    // The same for this model's shape: n_ctx <= 0 → the model's context; the
    // pool holds n_seq full-context sequences (memory is allocated only as
    // blocks are used).
    std::unique_ptr<KvCache> make_kv_cache(int n_ctx = 0, int n_seq = 1, int block_size = default_block_size) const;
};

// The KV cache parameters for a model (see Backend::make_kv_cache).
KvCacheParams kv_cache_params(const LlamaHparams& hp, int n_ctx, int n_seq = 1, int block_size = default_block_size);

// One prefill of n_tokens and one decode step through a scratch cache, the
// logits thrown away. The first pass of a size pays for the buffers it
// touches for the first time (2× slower for the bundled model's 149-token
// prompt: llm_model.cpp), so whoever times passes runs this first. Throws
// sixstep::Error when the model's context holds no n_tokens + 1 positions.
void warm_up(Backend& backend, int n_tokens);

struct BackendParams {
    int n_threads = 0;  // CPU threads for the kernels; <= 0 → the CPU backend's default
    int n_helpers = 0;  // CPU: of those, places kept for one caller's thread that calls help()
    int device = 0;     // GPU index, for cuda
};

struct BackendChoice {
    std::unique_ptr<Backend> backend;
    std::string note;  // for auto: "no CUDA device (…); using the CPU" — say it once
};

// The one place that knows which backends exist. cuda throws sixstep::Error
// with the reason when it cannot run; auto falls back to the CPU and says why
// in `note` (no usable device, or a device that cannot take this model).
BackendChoice make_backend(BackendKind kind, std::shared_ptr<const LlamaModel> model, const BackendParams& params = {});

}  // namespace sixstep::llm
