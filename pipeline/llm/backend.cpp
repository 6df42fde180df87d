#include "pipeline/llm/backend.h"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/cpu_backend.h"

namespace sixstep::llm {

// The CUDA backend. When the toolkit was found, gpu/ defines these two and
// CMake links it in; the engine includes none of its headers, so the whole
// dependency is this one #ifdef.
#ifdef SIXSTEP_HAVE_CUDA
std::optional<std::string> cuda_unavailable();
std::unique_ptr<Backend> make_cuda_backend(std::shared_ptr<const LlamaModel> model, const BackendParams& params);
#else
static std::optional<std::string> cuda_unavailable() {
    return std::string("this build has no CUDA backend (the CUDA toolkit was not found when it was configured)");
}
static std::unique_ptr<Backend> make_cuda_backend(std::shared_ptr<const LlamaModel>, const BackendParams&) {
    throw Error(*cuda_unavailable());
}
#endif

KvCacheParams kv_cache_params(const LlamaHparams& hp, int n_ctx, int n_seq, int block_size) {
    KvCacheParams p;
    p.n_layer = hp.n_layer;
    p.n_head_kv = hp.n_head_kv;
    p.head_dim = hp.head_dim();
    p.n_ctx = n_ctx > 0 ? n_ctx : hp.n_ctx;
    p.block_size = block_size;
    // In 64 bits: a block size near INT_MAX (refused by the cache) must not overflow here first.
    const long long per_seq = (static_cast<long long>(p.n_ctx) + block_size - 1) / std::max(1, block_size);
    p.n_blocks = static_cast<int>(std::min<long long>(std::max(1, n_seq) * per_seq, 1 << 30));
    return p;
}

std::unique_ptr<KvCache> Backend::make_kv_cache(const KvCacheParams& params) const {
    return std::make_unique<KvCache>(params);
}

std::unique_ptr<KvCache> Backend::make_kv_cache(int n_ctx, int n_seq, int block_size) const {
    return make_kv_cache(kv_cache_params(model().hparams(), n_ctx, n_seq, block_size));
}

void warm_up(Backend& backend, int n_tokens) {
    if (n_tokens < 1) return;
    const auto kv = backend.make_kv_cache(n_tokens + 1);
    const int seq = kv->add_sequence();
    const int n_vocab = backend.model().hparams().n_vocab;
    std::vector<int> tokens(static_cast<std::size_t>(n_tokens));
    for (int i = 0; i < n_tokens; ++i) tokens[static_cast<std::size_t>(i)] = i % n_vocab;
    std::vector<float> logits;
    backend.forward(*kv, Batch::prefill(tokens, seq), logits);
    backend.forward(*kv, Batch::prefill({0}, seq, n_tokens), logits);
}

std::string_view backend_kind_name(BackendKind kind) {
    switch (kind) {
        case BackendKind::cpu: return "cpu";
        case BackendKind::cuda: return "cuda";
        case BackendKind::auto_select: return "auto";
    }
    return "?";
}

std::optional<BackendKind> parse_backend_kind(std::string_view name) {
    if (name == "cpu") return BackendKind::cpu;
    if (name == "cuda") return BackendKind::cuda;
    if (name == "auto") return BackendKind::auto_select;
    return std::nullopt;
}

std::optional<std::string> backend_unavailable(BackendKind kind) {
    switch (kind) {
        case BackendKind::cpu:
        case BackendKind::auto_select: return std::nullopt;
        case BackendKind::cuda: return cuda_unavailable();
    }
    return std::nullopt;
}

BackendChoice make_backend(BackendKind kind, std::shared_ptr<const LlamaModel> model, const BackendParams& params) {
    BackendChoice c;
    if (kind != BackendKind::cpu) {
        if (const std::optional<std::string> why = backend_unavailable(BackendKind::cuda)) {
            if (kind == BackendKind::cuda) throw Error(fmt::format("backend cuda: {}", *why));
            c.note = fmt::format("{}; using the CPU", *why);
        } else if (kind == BackendKind::cuda) {
            c.backend = make_cuda_backend(std::move(model), params);
            return c;
        } else {
            // auto: a GPU that cannot take this model (a tensor type or shape
            // its kernels do not read, too little memory) still leaves the CPU.
            try {
                c.backend = make_cuda_backend(model, params);
                return c;
            } catch (const Error& e) {
                c.note = fmt::format("{}; using the CPU", e.what());
            }
        }
    }
    c.backend = std::make_unique<CpuBackend>(std::move(model), CpuBackendParams{params.n_threads, params.n_helpers});
    return c;
}

}  // namespace sixstep::llm
