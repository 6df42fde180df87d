#include "pipeline/llm/generator.h"

namespace sixstep::llm {

GenerateResult Generator::generate(std::string_view prompt, const GenerateParams& params, const OnToken& on_token,
                                   TensorObserver* observer) {
    const int n_ctx = params.n_ctx > 0 ? params.n_ctx : backend_.model().hparams().n_ctx;
    if (!kv_ || kv_->params().n_ctx != n_ctx) kv_ = backend_.make_kv_cache(n_ctx);
    Generation g(codec_, prompt, params);
    Stepper stepper(backend_, *kv_);
    stepper.attach(g);
    while (!g.done()) {
        stepper.forward_all(observer);
        const TokenEvent& ev = g.sample();
        if (on_token && !on_token(ev)) g.cancel();
    }
    return g.result();
}

}  // namespace sixstep::llm
