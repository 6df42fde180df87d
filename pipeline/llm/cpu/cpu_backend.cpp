#include "pipeline/llm/cpu/cpu_backend.h"

#include <algorithm>

#include <fmt/format.h>

namespace sixstep::llm {

CpuBackend::CpuBackend(std::shared_ptr<const LlamaModel> model, const CpuBackendParams& params)
    : model_(std::move(model)), pool_(params.n_threads), fwd_(*model_, &pool_) {}

std::string CpuBackend::name() const { return fmt::format("cpu ({} threads, {})", pool_.n_threads(), cpu_simd_name()); }

void CpuBackend::forward(KvCache& kv, const Batch& batch, std::vector<float>& logits, TensorObserver* observer) {
    fwd_.forward(kv, batch, logits, observer);
}

const char* cpu_simd_name() {
#if defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
    return "avx512";
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
    return "avx2";
#else
    return "scalar";
#endif
}

}  // namespace sixstep::llm
