// The CPU backend: the fast forward pass (LlamaForwardCpu) on a thread pool.
// Front ends get it through make_backend (backend.h); tests of the CPU paths
// construct it directly.
//
//     auto model = LlamaModel::load("model.gguf");
//     CpuBackend cpu(model, {.n_threads = 2});
//     auto kv = cpu.make_kv_cache();
//     int seq = kv->add_sequence();
//     std::vector<float> logits;
//     cpu.forward(*kv, Batch::prefill(tokens, seq), logits);
// One forward at a time per backend (it owns scratch buffers and a pool);
// the model itself is read-only and may be shared by several backends.
#pragma once
#include <memory>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/cpu/cpu_simd.h"
#include "pipeline/llm/cpu/forward.h"
#include "pipeline/llm/cpu/thread_pool.h"

namespace sixstep::llm {

struct CpuBackendParams {
    int n_threads = 0;  // threads for the kernels; <= 0 → ThreadPool::default_threads()
    int n_helpers = 0;  // of those, places kept for a thread that calls help() (ThreadPool::help)
};

class CpuBackend : public Backend {
public:
    CpuBackend(std::shared_ptr<const LlamaModel> model, const CpuBackendParams& params = {});
    std::string name() const override;
    const LlamaModel& model() const override { return *model_; }
    void forward(KvCache& kv, const Batch& batch, std::vector<float>& logits,
                 TensorObserver* observer = nullptr) override;
    // One helper at a time: a second thread calling help() while one is in
    // it would take the same place.
    bool help(const std::function<bool()>& done) override;
    int n_threads() const { return pool_.n_threads(); }
    // What the pool did so far: loops, stalls, passes run on one thread.
    ThreadPool::Stats pool_stats() const { return pool_.stats(); }

private:
    std::shared_ptr<const LlamaModel> model_;
    ThreadPool pool_;
    LlamaForwardCpu fwd_;
};

}  // namespace sixstep::llm
