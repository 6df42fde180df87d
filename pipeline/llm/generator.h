// Generator: prompt → tokens → text in one call, streaming each token — the
// simplest client of the stepper (a batch of one). `sixstep generate` and the
// tests use it; lessons walk the same loop one stage at a time (llm_model.h),
// and the serving layer runs many Generations at once.
//
//     auto model = LlamaModel::load("model.gguf");
//     auto backend = make_backend(BackendKind::cpu, model).backend;
//     auto codec = make_vocab_codec(std::make_shared<Vocab>(Vocab::from_gguf(model->file())));
//     Generator gen(*backend, *codec);
//     GenerateParams p;  p.n_predict = 32;  p.sampling.temperature = 0;
//     GenerateResult r = gen.generate("The cat sat on the", p, [](const TokenEvent& e) {
//         std::fputs(e.text.c_str(), stdout);             // stream
//         return true;                                    // false stops early
//     });
//     // r.timings.ttft_ms, r.timings.tpot_ms, r.stop_reason …
#pragma once
#include <functional>
#include <memory>
#include <string_view>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/generation.h"
#include "pipeline/llm/stepper.h"

namespace sixstep::llm {

class Generator {
public:
    Generator(Backend& backend, const TextCodec& codec) : backend_(backend), codec_(codec) {}
    // on_token returns false to stop early (stop_reason "cancelled").
    using OnToken = std::function<bool(const TokenEvent&)>;
    GenerateResult generate(std::string_view prompt, const GenerateParams& params, const OnToken& on_token = {},
                            TensorObserver* observer = nullptr);

private:
    Backend& backend_;
    const TextCodec& codec_;
    std::unique_ptr<KvCache> kv_;
};

}  // namespace sixstep::llm
