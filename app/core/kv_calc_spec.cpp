#include "app/core/kv_calc_spec.h"

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::app {

serving::KvCalcParams kv_calc_params(const KvCalcSpec& spec) {
    serving::KvCalcParams p = spec.preset.empty() ? serving::KvCalcParams{} : serving::kv_preset(spec.preset);
    const bool edited = spec.n_layer || spec.n_head_kv || spec.head_dim;
    if (spec.n_layer) p.n_layer = *spec.n_layer;
    if (spec.n_head_kv) p.n_head_kv = *spec.n_head_kv;
    if (spec.head_dim) p.head_dim = *spec.head_dim;
    if (edited) p.shape_notes.clear();  // the preset's notes were about its own shape
    if (!spec.preset.empty() && edited) p.shape_name = spec.preset + ", edited";
    if (!spec.dtype.empty()) {
        const auto d = serving::kv_dtype_from_name(spec.dtype);
        if (!d) throw Error(fmt::format("unknown dtype \"{}\" (known: {})", spec.dtype, serving::kv_dtype_names()));
        if (*d != p.dtype) p.dtype_why.clear();
        p.dtype = *d;
    }
    p.n_tokens = spec.n_tokens;
    p.n_sessions = spec.n_sessions;
    return p;
}

}  // namespace sixstep::app
