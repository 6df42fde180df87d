// sixstep quantize IN.gguf OUT.gguf --type q8_0|q4_0 [--allow-requantize] [--json]
//   Rewrites the 2-D weight matrices of a Llama GGUF model as Q8_0 or Q4_0
//   (norms stay F32), as llama.cpp's quantizer does; prints every tensor with
//   its bytes before and after and its worst round-trip error against the
//   documented bound. The output appears only when complete and loadable.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"
#include "pipeline/core/file.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/tools/quantize.h"

namespace sixstep::cli {

namespace {

struct QuantizeOptions {
    std::string in, out, type;
    bool allow_requantize = false, json = false, force = false;
};

int run_quantize(const QuantizeOptions& o) {
    using namespace sixstep::llm;
    using serving::bytes_binary;
    const auto type = ggml_type_from_name(o.type);
    if (!type || (*type != GGMLType::Q8_0 && *type != GGMLType::Q4_0))
        throw Error(o.type.empty() ? std::string("quantize: --type is empty (supported: q8_0, q4_0)")
                                   : fmt::format("quantize: --type {} is not supported (supported: q8_0, q4_0)",
                                                 printable_cut(o.type, 40)));
    check_output_file(o.out, o.force, "--force");
    const QuantizeReport r = quantize_model(o.in, o.out, {.type = *type, .allow_requantize = o.allow_requantize});

    if (o.json) {
        nlohmann::ordered_json j;
        j["in"] = r.in.string();
        j["out"] = r.out.string();
        j["type"] = std::string(ggml_type_name(r.type));
        j["bytes_in"] = r.bytes_in;
        j["bytes_out"] = r.bytes_out;
        j["file_bytes_out"] = r.file_bytes_out;
        j["n_quantized"] = r.n_quantized;
        j["n_kept"] = r.n_kept;
        j["seconds"] = r.seconds;
        j["tensors"] = nlohmann::ordered_json::array();
        for (const auto& t : r.tensors) {
            nlohmann::ordered_json tj{{"name", t.name},
                                      {"from", std::string(ggml_type_name(t.from))},
                                      {"to", std::string(ggml_type_name(t.to))},
                                      {"shape", t.shape},
                                      {"bytes_in", t.bytes_in},
                                      {"bytes_out", t.bytes_out}};
            if (t.kept_because.empty()) {
                tj["max_abs_error"] = t.max_abs_error;
                tj["max_error_to_bound"] = t.max_error_to_bound;
            } else {
                tj["kept_because"] = t.kept_because;
            }
            j["tensors"].push_back(std::move(tj));
        }
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }
    size_t w = 4;
    // Names as the file wrote them: escaped, and a name past 64 bytes cut.
    const auto name_of = [](const std::string& name) { return printable_cut(name, 64); };
    for (const auto& t : r.tensors) w = std::max(w, name_of(t.name).size());
    std::printf("  %-*s  %-5s → %-5s %12s %12s  %s\n", static_cast<int>(w), "tensor", "from", "to", "bytes in",
                "bytes out", "worst round-trip error (÷ bound) / why kept");
    for (const auto& t : r.tensors) {
        const std::string why = t.kept_because.empty()
                                    ? fmt::format("{:.3g} ({:.2f})", t.max_abs_error, t.max_error_to_bound)
                                    : "kept: " + t.kept_because;
        std::printf("  %-*s  %-5s → %-5s %12llu %12llu  %s\n", static_cast<int>(w), name_of(t.name).c_str(),
                    std::string(ggml_type_name(t.from)).c_str(), std::string(ggml_type_name(t.to)).c_str(),
                    static_cast<unsigned long long>(t.bytes_in), static_cast<unsigned long long>(t.bytes_out),
                    why.c_str());
    }
    std::printf("\nwrote %s: %d tensors quantized to %s, %d kept; tensor data %s → %s (%.2f×), file %s, %.2f s\n",
                printable(r.out.string()).c_str(), r.n_quantized, std::string(ggml_type_name(r.type)).c_str(), r.n_kept,
                bytes_binary(static_cast<double>(r.bytes_in)).c_str(), bytes_binary(static_cast<double>(r.bytes_out)).c_str(),
                static_cast<double>(r.bytes_in) / static_cast<double>(r.bytes_out),
                bytes_binary(static_cast<double>(r.file_bytes_out)).c_str(), r.seconds);
    return exit_ok;
}

}  // namespace

void add_quantize(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<QuantizeOptions>();
    auto* sub = app.add_subcommand("quantize", "Write a Q8_0 or Q4_0 copy of a Llama GGUF model");
    sub->add_option("in", o->in, "The model to quantize (F32, F16 or BF16 matrices)")->required()->transform(model_file());
    sub->add_option("out", o->out, "Where to write the quantized model (a new file)")->required();
    sub->add_option("--type", o->type, "q8_0 or q4_0")->required();
    sub->add_flag("--allow-requantize", o->allow_requantize, "Also requantize matrices that are already quantized");
    sub->add_flag("--force", o->force, "Overwrite `out` if it is a regular file that exists");
    sub->add_flag("--json", o->json, "Print one JSON object instead");
    add_progress_option(sub);
    add_examples(sub, {"sixstep quantize stories-3m-f16.gguf stories-3m-q4_0.gguf --type q4_0"});
    commands.push_back({sub, [o] { return run_quantize(*o); }});
}

}  // namespace sixstep::cli
