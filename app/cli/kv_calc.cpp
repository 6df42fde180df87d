// sixstep kv-calc --layers 36 --kv-heads 8 --head-dim 128 --dtype f16 --tokens 128000 --sessions 8
// sixstep kv-calc --model F.gguf [--tokens N] [--dtype T]      (the shape read from the file)
// sixstep kv-calc --preset article-36l|stories-3m [...]
//   The KV cache's bytes per token, per session and for all sessions, in
//   decimal and binary units, with the formula and the numbers substituted,
//   and where the formula does not hold. --json prints the same as one object.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"
#include "pipeline/core/suggest.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/serving/kv_calc.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/core/text.h"

namespace sixstep::cli {

namespace {

struct KvCalcOptions {
    std::string model, preset, dtype;
    double layers = 0, kv_heads = 0, head_dim = 0, tokens = 0, sessions = 1;
    CLI::Option *layers_opt = nullptr, *kv_heads_opt = nullptr, *head_dim_opt = nullptr, *tokens_opt = nullptr;
    bool json = false;
};

int run_kv_calc(const KvCalcOptions& o) {
    using namespace sixstep::serving;
    const bool typed = *o.layers_opt || *o.kv_heads_opt || *o.head_dim_opt;
    if ((!o.model.empty()) + (!o.preset.empty()) + typed > 1)
        throw Error("kv-calc: give the shape one way: --model F.gguf, --preset NAME, or --layers/--kv-heads/--head-dim");

    KvCalcParams p;
    p.shape_name = "the typed shape";
    if (!o.model.empty()) {
        p = kv_shape_from_gguf(llm::GGUFFile::open(o.model));
    } else if (!o.preset.empty()) {
        p = kv_preset(o.preset);
    } else {
        if (!typed) throw Error("kv-calc needs a shape: --layers, --kv-heads and --head-dim, or --model F.gguf, or --preset NAME");
        for (const auto* opt : {o.layers_opt, o.kv_heads_opt, o.head_dim_opt})
            if (!*opt) throw Error(fmt::format("kv-calc: {} is missing (a typed shape needs --layers, --kv-heads and --head-dim)",
                                               opt->get_name()));
        p.n_layer = o.layers;
        p.n_head_kv = o.kv_heads;
        p.head_dim = o.head_dim;
        p.dtype = KvDtype::F16;
        p.dtype_why = "the default for a typed shape";
    }
    if (!o.dtype.empty()) {
        const auto dt = kv_dtype_from_name(o.dtype);
        if (!dt)
            throw Error(fmt::format("kv-calc: unknown dtype \"{}\"{} (supported: {})", o.dtype,
                                    did_you_mean(o.dtype, kv_dtype_name_list()), kv_dtype_names()));
        p.dtype = *dt;
        p.dtype_why = "as given";
    }
    if (*o.tokens_opt) p.n_tokens = o.tokens;
    else if (p.n_tokens == 0) throw Error("kv-calc needs --tokens N (tokens held per session)");
    p.n_sessions = o.sessions;

    const KvCalcResult r = kv_calc(p);
    if (o.json) {
        std::printf("%s\n", app::dump_json(kv_calc_json(r)).c_str());
        return exit_ok;
    }
    const KvDtypeInfo& dt = kv_dtype_info(p.dtype);
    std::printf("KV cache of %s: %s × %s × head_dim %lld\n", p.shape_name.c_str(),
                count_of(static_cast<std::size_t>(r.n_layer), "layer", "layers").c_str(),
                count_of(static_cast<std::size_t>(r.n_head_kv), "KV head", "KV heads").c_str(),
                static_cast<long long>(r.head_dim));
    std::printf("dtype %s: %s; %s\n\n", dt.name, dt.what, p.dtype_why.c_str());
    for (const auto& line : r.formula) std::printf("  %s\n", line.c_str());
    std::printf("\nper token %s · per session ≈ %s (%s) · %lld session%s ≈ %s (%s)\n",
                bytes_binary(static_cast<double>(r.bytes_per_token)).c_str(),
                bytes_decimal(static_cast<double>(r.bytes_per_session)).c_str(),
                bytes_binary(static_cast<double>(r.bytes_per_session)).c_str(), static_cast<long long>(r.n_sessions),
                r.n_sessions == 1 ? "" : "s", bytes_decimal(static_cast<double>(r.bytes_total)).c_str(),
                bytes_binary(static_cast<double>(r.bytes_total)).c_str());
    std::printf("\nWhere the formula does not hold:\n");
    for (const auto& note : r.notes) std::printf("  - %s\n", note.c_str());
    return exit_ok;
}

}  // namespace

void add_kv_calc(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<KvCalcOptions>();
    auto* sub = app.add_subcommand("kv-calc", "KV cache memory per token, per session and for many sessions");
    sub->add_option("-m,--model", o->model, "Read the shape from a GGUF file (dtype: the engine's)")->transform(model_file());
    sub->add_option("--preset", o->preset, "A named shape: article-36l, stories-3m");
    o->layers_opt = sub->add_option("--layers", o->layers, "Layers holding K and V");
    o->kv_heads_opt = sub->add_option("--kv-heads", o->kv_heads, "Key/value heads per layer");
    o->head_dim_opt = sub->add_option("--head-dim", o->head_dim, "Values per head");
    sub->add_option("--dtype", o->dtype,
                    "Element type: " + serving::kv_dtype_names() + " (default: f16 for a typed shape, the engine's for --model)");
    o->tokens_opt = sub->add_option("--tokens", o->tokens, "Tokens held per session (default for --model: its context length)");
    sub->add_option("--sessions", o->sessions, "Sessions held at once (default 1)");
    sub->add_flag("--json", o->json, "Print one JSON object instead");
    add_examples(sub, {"sixstep kv-calc --preset article-36l --tokens 128000 --sessions 8",
                      "sixstep kv-calc --layers 32 --kv-heads 8 --head-dim 128 --dtype fp8 --tokens 32768",
                      "sixstep kv-calc -m stories-3m-f16.gguf --tokens 32"});
    commands.push_back({sub, [o] { return run_kv_calc(*o); }});
}

}  // namespace sixstep::cli
