// Quantizing a GGUF model file: the 2-D weight matrices of an F32/F16/BF16
// Llama model rewritten as Q8_0 or Q4_0, everything else kept — a file that
// sixstep and llama.cpp load alike.
//
//     QuantizeReport r = quantize_model("stories-3m-f16.gguf", "stories-3m-q4_0.gguf",
//                                       {.type = GGMLType::Q4_0});
//     r.bytes_in, r.bytes_out, r.tensors[i].kept_because
//
// The rules are llama.cpp's (llama_model_quantize with --pure, since sixstep
// has no k-quants to give the output head a finer type):
//   - a tensor is quantized when its name ends in "weight" and it has two or
//     more dimensions: token_embd, the attention and feed-forward matrices,
//     output;
//   - 1-D tensors (the RMSNorm weights) stay as they are (F32);
//   - a row (ne[0] values) must fill whole blocks of 32; a matrix whose rows
//     do not keeps its type, and the report says so;
//   - a tensor already of the target type is copied; one of another quantized
//     type is refused unless allow_requantize (errors would compound);
//   - metadata is copied, with general.file_type (7 = mostly Q8_0, 2 = mostly
//     Q4_0) and general.quantization_version = 2 set as llama.cpp sets them.
//
// Round-trip error. With amax the largest |x| of a block of 32 values, every
// value comes back within quantize_error_bound(type, amax):
//   Q8_0  d = amax/127, q = round(x/d):  half a step, amax/254, plus the f16
//         rounding of d (relative 2^-11, times |q| <= 127): amax/2048
//   Q4_0  d = max/-8 (max: the value of largest magnitude, which lands on -8
//         exactly), q = clamp(round(x/d) + 8, 0, 15): half a step, amax/16, except
//         on the side opposite max where +8 clamps to +7, a whole step, amax/8;
//         plus the f16 rounding of d times |q - 8| <= 8: amax/2048
// and a tiny absolute term for scales so small that f16 holds them as
// subnormals (spacing 2^-24).
//
// Bad input, each one clear sixstep::Error, and never a partial output file
// (the file is written to a hidden temporary name in the output's folder,
// loaded back as a Llama model, then renamed into place):
//   the output is the input (same path, or the same file by a symlink or a
//   hard link); a type other than q8_0/q4_0; an input that is not GGUF or not
//   a Llama model; an output folder that does not exist.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/llm/gguf/ggml_type.h"

namespace sixstep::llm {

struct QuantizeParams {
    GGMLType type = GGMLType::Q8_0;  // target type of the matrices: Q8_0 or Q4_0
    bool allow_requantize = false;   // quantize tensors that are already quantized to another type
};

struct QuantizedTensor {
    std::string name;
    GGMLType from = GGMLType::F32, to = GGMLType::F32;
    std::vector<int64_t> shape;       // ne[0] first, as GGUF lists it
    uint64_t bytes_in = 0, bytes_out = 0;
    std::string kept_because;         // empty when quantized: "1-D", "rows of 100 values are not whole blocks of 32", …
    float max_abs_error = 0;          // largest |x - dequantize(quantize(x))| (0 when kept)
    float max_error_to_bound = 0;     // largest error ÷ its block's bound (<= 1; 0 when kept)
};

struct QuantizeReport {
    std::filesystem::path in, out;
    GGMLType type = GGMLType::Q8_0;
    std::vector<QuantizedTensor> tensors;  // in file order
    uint64_t bytes_in = 0, bytes_out = 0;  // tensor data
    uint64_t file_bytes_out = 0;           // the whole output file
    int n_quantized = 0, n_kept = 0;
    double seconds = 0;                    // wall time of the whole job
};

// The round-trip bound for one block whose largest |x| is amax (see above).
float quantize_error_bound(GGMLType type, float amax);

// Throws sixstep::Error (see "Bad input" above).
QuantizeReport quantize_model(const std::filesystem::path& in, const std::filesystem::path& out,
                              const QuantizeParams& params);

}  // namespace sixstep::llm
