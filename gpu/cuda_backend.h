// The CUDA backend: the Llama forward pass on one NVIDIA GPU, behind the
// engine's Backend interface (pipeline/llm/backend.h). Front ends reach it
// only through make_backend(BackendKind::cuda or auto); nothing outside gpu/
// includes this header.
//
// The same arithmetic as the CPU's reference forward pass
// (pipeline/llm/cpu/forward_ref.cpp), the whole batch through each layer:
//     embed.cu       token embeddings (one dequantized row per token)
//     norm.cu        RMSNorm
//     matmul.cu      Q/K/V, output, gate/up/down and the output head: GEMV
//                    for small batches, cuBLAS SGEMM for large ones
//     rope.cu        RoPE (angles once per pass, adjacent pairs)
//     attention.cu   K/V into the paged cache, then attention over it
//     elementwise.cu SwiGLU and the residual additions
// Weights are uploaded once per model and device (device_weights.h); the KV
// cache lives on the device (kv_storage_cuda.h), block tables uploaded with
// each batch; only the logits come back to the host. A pass of at most
// kGemvMaxTokens tokens that nobody observes — decode — is captured once as
// a CUDA graph and replayed (graph_cache.h; SIXSTEP_CUDA_GRAPHS=off to
// launch every kernel on its own). The named intermediate
// tensors (observer.h) are the CPU's, copied to the host only when the
// observer asks for them.
//
//     auto backend = make_backend(BackendKind::cuda, model).backend;  // throws when no GPU
//     auto kv = backend->make_kv_cache();                             // device memory
//     backend->forward(*kv, Batch::prefill(tokens, kv->add_sequence()), logits);
// One forward at a time per backend, from any one thread at a time.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gpu/cuda_device.h"
#include "gpu/device_weights.h"
#include "gpu/graph_cache.h"
#include "pipeline/llm/backend.h"

namespace sixstep::gpu {

class CudaBackend : public llm::Backend {
public:
    // Uploads the weights (unless another backend of this model already did).
    // Throws sixstep::Error when there is no such device, the model has a
    // shape or type the kernels do not take, or device memory runs out.
    CudaBackend(std::shared_ptr<const llm::LlamaModel> model, const llm::BackendParams& params);
    ~CudaBackend() override;

    // "cuda (NVIDIA H200, 140 GiB)"
    std::string name() const override;
    const llm::LlamaModel& model() const override { return *model_; }
    void forward(llm::KvCache& kv, const llm::Batch& batch, std::vector<float>& logits,
                 llm::TensorObserver* observer = nullptr) override;
    // A KV cache in this device's memory.
    std::unique_ptr<llm::KvCache> make_kv_cache(const llm::KvCacheParams& params) const override;
    using llm::Backend::make_kv_cache;

    const CudaDevice& device() const { return *device_; }
    const DeviceWeights& weights() const { return *weights_; }
    // Small unobserved passes through CUDA graphs (on unless
    // SIXSTEP_CUDA_GRAPHS=off); the graphs captured and launched so far.
    void use_graphs(bool on) { use_graphs_ = on; }
    bool uses_graphs() const { return use_graphs_; }
    const GraphCache& graphs() const { return graphs_; }

private:
    struct Scratch;
    std::shared_ptr<const llm::LlamaModel> model_;
    std::shared_ptr<const CudaDevice> device_;
    std::shared_ptr<const DeviceWeights> weights_;
    std::unique_ptr<Scratch> s_;
    bool use_graphs_ = true;
    GraphCache graphs_;
};

}  // namespace sixstep::gpu
