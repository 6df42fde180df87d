#include "pipeline/tools/quantize.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/gguf/gguf_writer.h"
#include "pipeline/llm/llama_model.h"

namespace sixstep::llm {

namespace fs = std::filesystem;

namespace {

// llama.cpp's enum llama_ftype: what general.file_type says a file mostly holds.
constexpr uint32_t LLAMA_FTYPE_MOSTLY_Q4_0 = 2;
constexpr uint32_t LLAMA_FTYPE_MOSTLY_Q8_0 = 7;
// ggml's GGML_QNT_VERSION: the current layout of the quantized blocks.
constexpr uint32_t GGML_QNT_VERSION = 2;

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Why a tensor keeps its type, or "" when it is to be quantized.
std::string keep_reason(const GGUFTensorInfo& t, GGMLType target, bool allow_requantize) {
    if (!ends_with(t.name, "weight")) return "not a weight";
    if (t.n_dims < 2) return fmt::format("{}-D (norms and other vectors stay as they are)", t.n_dims);
    const int64_t block = ggml_block_size(target);
    if (t.ne[0] % block != 0)
        return fmt::format("rows of {} values are not whole blocks of {}", t.ne[0], block);
    if (t.type == target) return fmt::format("already {}", ggml_type_name(target));
    if (ggml_traits(t.type).quantized && !allow_requantize)
        throw Error(fmt::format("tensor {} is already {}: quantizing it again to {} compounds the errors of both "
                                "(quantize the F32/F16 file instead, or allow requantizing)",
                                t.name, ggml_type_name(t.type), ggml_type_name(target)));
    return "";
}

// The path the output is written under until it is complete: hidden, in the
// same folder (so the final rename stays on one file system), unique per process.
fs::path partial_path(const fs::path& out) {
    return out.parent_path() / fmt::format(".{}.partial-{}", out.filename().string(), ::getpid());
}

void remove_quietly(const fs::path& p) {
    std::error_code ec;
    fs::remove(p, ec);
}

void check_paths(const fs::path& in, const fs::path& out) {
    std::error_code ec;
    if (!fs::exists(in, ec)) throw Error(fmt::format("quantize: {}: no such file", in.string()));
    if (out.empty() || out.filename().empty() || out.filename() == "." || out.filename() == "..")
        throw Error(out.empty() ? std::string("quantize: the output path is empty")
                                : fmt::format("quantize: output \"{}\" is not a file name", out.string()));
    if (fs::exists(out, ec)) {
        if (fs::equivalent(in, out, ec))
            throw Error(fmt::format("quantize: output {} is the input file {} itself (the same file{}); write to a "
                                    "new file", out.string(), in.string(),
                                    fs::is_symlink(out, ec) || fs::is_symlink(in, ec) ? ", through a symbolic link"
                                    : out.lexically_normal() != in.lexically_normal() ? ", through a hard link or another path"
                                                                                       : ""));
        if (fs::is_directory(out, ec)) throw Error(fmt::format("quantize: output {} is a folder", out.string()));
    }
    const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
    if (!fs::is_directory(dir, ec))
        throw Error(fmt::format("quantize: cannot write {}: folder {} does not exist", out.string(), dir.string()));
}

}  // namespace

float quantize_error_bound(GGMLType type, float amax) {
    // The absolute terms cover f16 scales small enough to be subnormal (spacing
    // 2^-24), times the largest |level| a value can take.
    constexpr float sub = 1.0f / (1 << 24);
    switch (type) {
        case GGMLType::Q8_0: return amax / 254.0f + amax / 2048.0f + 127 * sub + amax * 1e-6f;
        case GGMLType::Q4_0: return amax / 8.0f + amax / 2048.0f + 8 * sub + amax * 1e-6f;
        default: throw Error(fmt::format("quantize: no error bound for type {}", ggml_type_name(type)));
    }
}

QuantizeReport quantize_model(const fs::path& in, const fs::path& out, const QuantizeParams& params) {
    const auto t0 = std::chrono::steady_clock::now();
    if (params.type != GGMLType::Q8_0 && params.type != GGMLType::Q4_0)
        throw Error(fmt::format("quantize: type {} is not one sixstep quantizes to (q8_0, q4_0)",
                                ggml_type_name(params.type)));
    check_paths(in, out);
    // Loading validates everything a Llama model needs (architecture, keys, shapes).
    const std::shared_ptr<LlamaModel> model = LlamaModel::load(in);
    const GGUFFile& f = model->file();

    QuantizeReport report;
    report.in = in;
    report.out = out;
    report.type = params.type;

    GGUFWriter w;
    for (const auto& kv : f.metadata()) w.set(kv.key, kv.value);
    w.set("general.file_type", params.type == GGMLType::Q8_0 ? LLAMA_FTYPE_MOSTLY_Q8_0 : LLAMA_FTYPE_MOSTLY_Q4_0);
    w.set("general.quantization_version", GGML_QNT_VERSION);

    const int64_t block = ggml_block_size(params.type);
    for (const GGUFTensorInfo& t : f.tensors()) {
        QuantizedTensor q;
        q.name = t.name;
        q.from = t.type;
        q.shape = t.shape();
        q.bytes_in = t.n_bytes;
        q.kept_because = keep_reason(t, params.type, params.allow_requantize);
        if (!q.kept_because.empty()) {
            q.to = t.type;
            w.add_tensor_raw(t.name, t.type, q.shape, t.bytes());
            q.bytes_out = t.n_bytes;
            ++report.n_kept;
        } else {
            q.to = params.type;
            const std::vector<float> x = t.to_f32();
            for (size_t i = 0; i < x.size(); ++i)
                if (!std::isfinite(x[i]))
                    throw Error(fmt::format("{}: tensor {}: value {} at index {} is not finite", in.string(), t.name,
                                            x[i], i));
            const std::vector<uint8_t> bytes = quantize(params.type, x.data(), t.n_elements());
            // Measure the round trip while the source is at hand.
            const std::vector<float> y = dequantize(params.type, bytes.data(), t.n_elements());
            for (size_t b = 0; b < x.size(); b += static_cast<size_t>(block)) {
                float amax = 0, err = 0;
                for (int64_t j = 0; j < block; ++j) {
                    amax = std::max(amax, std::fabs(x[b + j]));
                    err = std::max(err, std::fabs(x[b + j] - y[b + j]));
                }
                q.max_abs_error = std::max(q.max_abs_error, err);
                q.max_error_to_bound = std::max(q.max_error_to_bound, err / quantize_error_bound(params.type, amax));
            }
            w.add_tensor_raw(t.name, params.type, q.shape, bytes);
            q.bytes_out = bytes.size();
            ++report.n_quantized;
        }
        report.bytes_in += q.bytes_in;
        report.bytes_out += q.bytes_out;
        report.tensors.push_back(std::move(q));
    }

    const fs::path partial = partial_path(out);
    try {
        w.write(partial);
        // What was written must load as the model it came from before it takes the output's name.
        const auto back = LlamaModel::load(partial);
        if (back->hparams().n_layer != model->hparams().n_layer || back->file().tensors().size() != f.tensors().size())
            throw Error("the written file does not read back as the same model");
        report.file_bytes_out = back->file().file_size();
    } catch (const Error& e) {
        remove_quietly(partial);
        remove_quietly(fs::path(partial.string() + ".tmp"));  // GGUFWriter's own temporary
        throw e.with_context(fmt::format("quantize: cannot write {}", out.string()));
    } catch (...) {
        remove_quietly(partial);
        remove_quietly(fs::path(partial.string() + ".tmp"));
        throw;
    }
    std::error_code ec;
    fs::rename(partial, out, ec);
    if (ec) {
        remove_quietly(partial);
        throw Error(fmt::format("quantize: cannot write {}: {}", out.string(), ec.message()));
    }
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return report;
}

}  // namespace sixstep::llm
