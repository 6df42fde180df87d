#include "pipeline/llm/cpu/cpu_backend.h"

#include <algorithm>

#include <fmt/format.h>

namespace sixstep::llm {

CpuBackend::CpuBackend(std::shared_ptr<const LlamaModel> model, const CpuBackendParams& params)
    : model_(std::move(model)), pool_(params.n_threads), fwd_(*model_, &pool_) {
    cpu_simd();  // a bad SIXSTEP_CPU fails here, not later inside a worker thread
}

std::string CpuBackend::name() const { return fmt::format("cpu ({} threads, {})", pool_.n_threads(), cpu_simd_name()); }

void CpuBackend::forward(KvCache& kv, const Batch& batch, std::vector<float>& logits, TensorObserver* observer) {
    fwd_.forward(kv, batch, logits, observer);
}

}  // namespace sixstep::llm
