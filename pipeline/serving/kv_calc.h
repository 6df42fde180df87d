// The KV memory calculator: how much memory the key/value cache of a
// decoder-only transformer takes, per token, per session and for many
// sessions at once.
//
// Every layer keeps, for every token seen, one key and one value vector per
// key/value head:
//
//     bytes per token   = 2 (K and V) × n_layer × n_head_kv × head_dim × bytes per element
//     bytes per session = bytes per token × tokens
//     bytes in total    = bytes per session × sessions
//
// The article's shape (36 layers, 8 KV heads, head_dim 128, f16) gives
// 147,456 B = 144 KiB per token, ≈ 18.9 GB for a 128,000-token session and
// ≈ 151 GB for 8 of them — whatever the size of the weights.
//
//     KvCalcParams p = kv_preset("article-36l");
//     p.n_tokens = 128000;  p.n_sessions = 8;
//     KvCalcResult r = kv_calc(p);        // throws sixstep::Error on bad input
//     r.bytes_per_token == 147456
//     r.formula[0]  // "bytes per token = 2 × n_layer × n_head_kv × head_dim × bytes per element
//                   //  = 2 × 36 × 8 × 128 × 2 B = 147,456 B (147 kB = 144 KiB)"
//
// Block-quantized types (q8_0, q4_0) store 32 values in 34 or 18 bytes, so a
// row of head_dim values takes head_dim/32 blocks (head_dim must be a
// multiple of 32, as llama.cpp requires for a quantized cache).
//
// The formula assumes every layer attends over every token with its own K
// and V; kv_calc's notes say where that does not hold (MLA, sliding windows,
// recurrent layers) and what a GGUF file says about it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/llm/gguf/gguf.h"

namespace sixstep::serving {

// Element types a KV cache may be stored in (what serving engines offer).
enum class KvDtype { F32, F16, BF16, FP8, INT8, Q8_0, Q4_0 };

struct KvDtypeInfo {
    KvDtype dtype;
    const char* name;    // "f32", "f16", "bf16", "fp8", "int8", "q8_0", "q4_0"
    int block_values;    // values per block: 1 for plain types, 32 for q8_0/q4_0
    int block_bytes;     // bytes per block: 4, 2, 2, 1, 1, 34, 18
    const char* what;    // one line on the layout
};
const KvDtypeInfo& kv_dtype_info(KvDtype dtype);
// Case-insensitive name -> dtype; nullopt when unknown.
std::optional<KvDtype> kv_dtype_from_name(std::string_view name);
// {"f32", "f16", "bf16", "fp8", "int8", "q8_0", "q4_0"}
std::vector<std::string> kv_dtype_name_list();
// "f32, f16, bf16, fp8, int8, q8_0, q4_0"
std::string kv_dtype_names();
// The type sixstep's own KV cache stores, read from the engine: the bytes per
// token of a one-layer, one-head, one-value KvCache, halved (K and V).
KvDtype engine_kv_dtype();

// Limits on typed sizes: beyond them an input is a typo, not a model.
inline constexpr std::int64_t kv_max_layers = 100000;
inline constexpr std::int64_t kv_max_heads = 100000;
inline constexpr std::int64_t kv_max_head_dim = 1 << 20;
inline constexpr std::int64_t kv_max_tokens = 1000000000000;  // 10^12
inline constexpr std::int64_t kv_max_sessions = 1000000000;   // 10^9

// What to compute. Sizes are doubles because people type them (a lesson, the
// command line, a panel's field); kv_calc checks each is a whole number in range.
struct KvCalcParams {
    std::string shape_name = "typed";  // where the shape came from: a preset, a file, or "typed"
    double n_layer = 0;                // layers holding K and V, 1..kv_max_layers
    double n_head_kv = 0;              // key/value heads per layer, 1..kv_max_heads
    double head_dim = 0;               // values per head, 1..kv_max_head_dim (multiple of 32 for q8_0/q4_0)
    KvDtype dtype = KvDtype::F16;      // element type of the cache
    double n_tokens = 0;               // tokens held per session, 1..kv_max_tokens
    double n_sessions = 1;             // sessions held at once, 1..kv_max_sessions
    std::string dtype_why;             // why this dtype, when the source chose it ("what sixstep's engine stores")
    std::vector<std::string> shape_notes;  // where the formula misses this shape (from its GGUF keys)
};

struct KvCalcResult {
    KvCalcParams params;
    std::int64_t n_layer = 0, n_head_kv = 0, head_dim = 0, n_tokens = 0, n_sessions = 0;  // checked
    double bytes_per_element = 0;              // 4, 2, 1, 1.0625 (q8_0), 0.5625 (q4_0)
    std::uint64_t bytes_per_token_layer = 0;   // K and V of one layer
    std::uint64_t bytes_per_token = 0;         // all layers
    std::uint64_t bytes_per_session = 0;       // × n_tokens
    std::uint64_t bytes_total = 0;             // × n_sessions
    std::vector<std::string> formula;  // three lines, the numbers substituted, decimal and binary units
    std::vector<std::string> notes;    // where the formula does not hold: the shape's own notes, then the general ones
};

// Throws sixstep::Error with one clear reason for a zero, negative,
// non-finite, fractional or absurd size, a head_dim a block type cannot
// hold, or a total beyond 2^64 bytes.
KvCalcResult kv_calc(const KvCalcParams& params);

// The shape from a GGUF file's metadata, for any architecture ("llama",
// "qwen2", …): {arch}.block_count, {arch}.attention.head_count_kv (default
// head_count), head_dim = {arch}.attention.key_length or embedding_length /
// head_count. Notes for keys that break the formula (sliding window, MLA,
// recurrent layers). The dtype is the engine's (engine_kv_dtype()).
// Throws "F.gguf: kv-calc needs llama.block_count, which the file lacks".
KvCalcParams kv_shape_from_gguf(const llm::GGUFFile& file);

// Shapes a lesson can name:
//   "article-36l"  the article's example: 36 layers, 8 KV heads, head_dim 128, f16
//   "stories-3m"   the bundled model, read from assets/models/stories-3m-f16.gguf
//                  (the engine's dtype)
// Throws listing the names for an unknown one.
KvCalcParams kv_preset(std::string_view name);
std::vector<std::string> kv_preset_names();

// The result as JSON (the --json output, and what a lesson can check).
nlohmann::ordered_json kv_calc_json(const KvCalcResult& result);

}  // namespace sixstep::serving
