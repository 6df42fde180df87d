#include "pipeline/llm/cpu/cpu_backend.h"

#include <fmt/format.h>

namespace sixstep::llm {

CpuBackend::CpuBackend(std::shared_ptr<const LlamaModel> model, const CpuBackendParams& params)
    : model_(std::move(model)), pool_(params.n_threads, params.n_helpers), fwd_(*model_, &pool_) {
    cpu_simd();  // a bad SIXSTEP_CPU fails here, not later inside a worker thread
}

bool CpuBackend::help(const std::function<bool()>& done) {
    if (pool_.n_helpers() == 0) return false;
    pool_.help(0, done);
    return true;
}

std::string CpuBackend::name() const {
    if (pool_.n_helpers() > 0)
        return fmt::format("cpu ({} threads, {} of them lent, {})", pool_.n_threads(), pool_.n_helpers(), cpu_simd_name());
    return fmt::format("cpu ({} thread{}, {})", pool_.n_threads(), pool_.n_threads() == 1 ? "" : "s", cpu_simd_name());
}

void CpuBackend::forward(KvCache& kv, const Batch& batch, std::vector<float>& logits, TensorObserver* observer) {
    fwd_.forward(kv, batch, logits, observer);
}

}  // namespace sixstep::llm
