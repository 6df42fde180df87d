#include "pipeline/serving/kv_calc.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/kv/kv_cache.h"
#include "pipeline/serving/bundled_model.h"
#include "pipeline/serving/quantity.h"

namespace sixstep::serving {

namespace {

constexpr std::array<KvDtypeInfo, 7> kDtypes{{
    {KvDtype::F32, "f32", 1, 4, "IEEE single precision, 4 bytes"},
    {KvDtype::F16, "f16", 1, 2, "IEEE half precision, 2 bytes, llama.cpp's default cache type"},
    {KvDtype::BF16, "bf16", 1, 2, "bfloat16, 2 bytes"},
    {KvDtype::FP8, "fp8", 1, 1, "8-bit float (e4m3 or e5m2, as vLLM's fp8 cache), 1 byte; per-tensor scales not counted"},
    {KvDtype::INT8, "int8", 1, 1, "8-bit integer, 1 byte; per-tensor scales not counted"},
    {KvDtype::Q8_0, "q8_0", 32, 34, "blocks of 32 int8 values and one f16 scale: 34 bytes per 32 values"},
    {KvDtype::Q4_0, "q4_0", 32, 18, "blocks of 32 4-bit values and one f16 scale: 18 bytes per 32 values"},
}};


// a × b, or a clear error when it does not fit in 64 bits.
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        throw Error(fmt::format("kv-calc: {} is beyond 2^64 bytes (18.4 EB): the sizes are absurd", what));
    return r;
}

// "147,456 B (147 kB = 144 KiB)"
std::string bytes_both(std::uint64_t n) {
    return fmt::format("{} B ({} = {})", with_commas(n), bytes_decimal(static_cast<double>(n)),
                       bytes_binary(static_cast<double>(n)));
}

// The caveats every answer carries: the shapes the formula does not describe.
const std::vector<std::string>& general_notes() {
    static const std::vector<std::string> notes{
        "MLA (multi-head latent attention, DeepSeek-V2/V3): each layer caches one compressed latent per token "
        "(e.g. 512 + 64 values) instead of K and V for every head, far less than this formula says.",
        "Sliding-window attention (Mistral 7B v0.1, the local layers of Gemma 2/3): a layer with a window of W "
        "tokens keeps at most W of them, so its share stops growing after W tokens.",
        "Hybrid and recurrent layers (Mamba, RWKV, Jamba, Qwen3-Next): a recurrent layer keeps a fixed-size state "
        "per session, not per token; only the attention layers follow the formula, so count only those in n_layer.",
    };
    return notes;
}

std::string arch_key(const std::string& arch, std::string_view key) { return fmt::format("{}.{}", arch, key); }

// A required positive integer key of the file.
std::uint32_t require_key(const llm::GGUFFile& f, const std::string& key) {
    const llm::GGUFValue* v = f.find(key);
    if (!v) throw Error(fmt::format("{}: kv-calc needs {}, which the file lacks", f.name(), key));
    if (!v->is_integer())
        throw Error(fmt::format("{}: key {}: expected an integer, found {}", f.name(), key, llm::gguf_type_name(v->type())));
    const std::uint64_t x = v->as_u64();
    if (x == 0 || x > 0xffffffffu) throw Error(fmt::format("{}: key {}: invalid value {}", f.name(), key, x));
    return static_cast<std::uint32_t>(x);
}

}  // namespace

const KvDtypeInfo& kv_dtype_info(KvDtype dtype) {
    for (const auto& d : kDtypes)
        if (d.dtype == dtype) return d;
    throw Error("kv-calc: unknown KV dtype");
}

std::optional<KvDtype> kv_dtype_from_name(std::string_view name) {
    const std::string n = ascii_lower(name);
    for (const auto& d : kDtypes)
        if (n == d.name) return d.dtype;
    return std::nullopt;
}

std::vector<std::string> kv_dtype_name_list() {
    std::vector<std::string> names;
    for (const auto& d : kDtypes) names.emplace_back(d.name);
    return names;
}

std::string kv_dtype_names() { return fmt::format("{}", fmt::join(kv_dtype_name_list(), ", ")); }

KvDtype engine_kv_dtype() {
    llm::KvCacheParams p;
    p.n_layer = 1;
    p.n_head_kv = 1;
    p.head_dim = 1;
    p.n_ctx = 1;
    p.block_size = 1;
    const std::size_t per_element = llm::KvCache(p).stats().bytes_per_token / 2;  // K and V
    switch (per_element) {
        case 4: return KvDtype::F32;
        case 2: return KvDtype::F16;
        case 1: return KvDtype::INT8;
        default: throw Error(fmt::format("kv-calc: the engine's KV cache reports {} bytes per element", per_element));
    }
}

KvCalcResult kv_calc(const KvCalcParams& params) {
    KvCalcResult r;
    r.params = params;
    r.n_layer = require_count("layers", params.n_layer, kv_max_layers);
    r.n_head_kv = require_count("KV heads", params.n_head_kv, kv_max_heads);
    r.head_dim = require_count("head dim", params.head_dim, kv_max_head_dim);
    r.n_tokens = require_count("tokens", params.n_tokens, kv_max_tokens);
    r.n_sessions = require_count("sessions", params.n_sessions, kv_max_sessions);
    const KvDtypeInfo& dt = kv_dtype_info(params.dtype);
    if (r.head_dim % dt.block_values != 0)
        throw Error(fmt::format("kv-calc: a {} cache stores blocks of {} values, so head dim {} must be a multiple of {}",
                                dt.name, dt.block_values, r.head_dim, dt.block_values));

    // Exact integer arithmetic: a row of head_dim values is head_dim/block blocks.
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(r.head_dim / dt.block_values) * dt.block_bytes;
    r.bytes_per_element = static_cast<double>(dt.block_bytes) / dt.block_values;
    r.bytes_per_token_layer = checked_mul(2 * static_cast<std::uint64_t>(r.n_head_kv), row_bytes, "one layer's K and V");
    r.bytes_per_token = checked_mul(r.bytes_per_token_layer, static_cast<std::uint64_t>(r.n_layer), "one token");
    r.bytes_per_session = checked_mul(r.bytes_per_token, static_cast<std::uint64_t>(r.n_tokens), "one session");
    r.bytes_total = checked_mul(r.bytes_per_session, static_cast<std::uint64_t>(r.n_sessions), "the total");

    const std::string element = dt.block_values == 1 ? fmt::format("{} B", dt.block_bytes)
                                                     : fmt::format("{}/{} B", dt.block_bytes, dt.block_values);
    r.formula = {
        fmt::format("bytes per token = 2 × n_layer × n_head_kv × head_dim × bytes per element = 2 × {} × {} × {} × {} = {}",
                    r.n_layer, r.n_head_kv, r.head_dim, element, bytes_both(r.bytes_per_token)),
        fmt::format("bytes per session = bytes per token × tokens = {} B × {} = {}", with_commas(r.bytes_per_token),
                    with_commas(static_cast<std::uint64_t>(r.n_tokens)), bytes_both(r.bytes_per_session)),
        fmt::format("bytes for all sessions = bytes per session × sessions = {} B × {} = {}",
                    with_commas(r.bytes_per_session), with_commas(static_cast<std::uint64_t>(r.n_sessions)),
                    bytes_both(r.bytes_total)),
    };
    r.notes = params.shape_notes;
    r.notes.insert(r.notes.end(), general_notes().begin(), general_notes().end());
    return r;
}

KvCalcParams kv_shape_from_gguf(const llm::GGUFFile& f) {
    const std::string arch = f.architecture();
    if (arch.empty()) throw Error(fmt::format("{}: kv-calc needs general.architecture, which the file lacks", f.name()));
    KvCalcParams p;
    p.shape_name = printable(std::filesystem::path(f.name()).filename().string());  // printed: no raw control characters
    p.dtype = engine_kv_dtype();

    const std::uint32_t n_layer = require_key(f, arch_key(arch, "block_count"));
    const std::uint32_t n_head = require_key(f, arch_key(arch, "attention.head_count"));
    std::uint32_t n_head_kv = n_head;
    std::uint32_t n_layer_kv = n_layer;
    if (const llm::GGUFValue* v = f.find(arch_key(arch, "attention.head_count_kv"))) {
        if (v->is_array()) {
            // One value per layer; 0 marks a layer without attention (a recurrent layer of a hybrid model).
            std::vector<std::int64_t> per_layer;
            try {
                per_layer = v->to_i64s();
            } catch (const Error& e) {
                throw Error(fmt::format("{}: key {}: {}", f.name(), arch_key(arch, "attention.head_count_kv"), e.message()));
            }
            n_layer_kv = 0;
            n_head_kv = 0;
            for (std::int64_t h : per_layer) {
                if (h == 0) continue;
                if (n_head_kv != 0 && h != n_head_kv)
                    throw Error(fmt::format("{}: {} differs from layer to layer ({} and {}): kv-calc needs one value",
                                            f.name(), arch_key(arch, "attention.head_count_kv"), n_head_kv, h));
                n_head_kv = static_cast<std::uint32_t>(h);
                ++n_layer_kv;
            }
            if (n_layer_kv == 0)
                throw Error(fmt::format("{}: {} is 0 for every layer: the model has no KV cache", f.name(),
                                        arch_key(arch, "attention.head_count_kv")));
            if (n_layer_kv < n_layer)
                p.shape_notes.push_back(fmt::format(
                    "This file's {} is 0 for {} of its {} layers (recurrent layers without a KV cache): n_layer counts "
                    "the {} attention layers only.",
                    arch_key(arch, "attention.head_count_kv"), n_layer - n_layer_kv, n_layer, n_layer_kv));
        } else {
            n_head_kv = require_key(f, arch_key(arch, "attention.head_count_kv"));
        }
    }

    std::uint32_t head_dim = 0;
    const auto key_length = f.find_u32(arch_key(arch, "attention.key_length"));
    const auto value_length = f.find_u32(arch_key(arch, "attention.value_length"));
    if (key_length && value_length && *key_length != *value_length) {
        if ((*key_length + *value_length) % 2 != 0)
            throw Error(fmt::format("{}: key_length {} and value_length {} differ by an odd amount: kv-calc needs one "
                                    "head dim", f.name(), *key_length, *value_length));
        head_dim = (*key_length + *value_length) / 2;
        p.shape_notes.push_back(fmt::format(
            "This file's keys are {} values and its values {} per head: head_dim here is their mean, {}, so that "
            "2 × head_dim = {} + {}.", *key_length, *value_length, head_dim, *key_length, *value_length));
    } else if (key_length) {
        head_dim = *key_length;
    } else {
        const std::uint32_t n_embd = require_key(f, arch_key(arch, "embedding_length"));
        if (n_embd % n_head != 0)
            throw Error(fmt::format("{}: embedding_length {} is not a multiple of head_count {}, and the file has no {} "
                                    "to give the head dim", f.name(), n_embd, n_head, arch_key(arch, "attention.key_length")));
        head_dim = n_embd / n_head;
    }
    p.n_layer = n_layer_kv;
    p.n_head_kv = n_head_kv;
    p.head_dim = head_dim;
    p.n_tokens = f.get_u32(arch_key(arch, "context_length"), 0);

    if (const auto w = f.find_u32(arch_key(arch, "attention.sliding_window")))
        p.shape_notes.push_back(fmt::format(
            "This file sets {} = {}: its sliding-window layers keep at most {} tokens, so beyond that the formula "
            "overstates them.", arch_key(arch, "attention.sliding_window"), *w, *w));
    if (const auto rank = f.find_u32(arch_key(arch, "attention.kv_lora_rank")))
        p.shape_notes.push_back(fmt::format(
            "This file sets {} = {}: the model uses MLA and caches a compressed latent per layer, not K and V per head; "
            "the formula overstates it.", arch_key(arch, "attention.kv_lora_rank"), *rank));
    const std::string ssm = arch_key(arch, "ssm."), wkv = arch_key(arch, "wkv.");
    for (const auto& kv : f.metadata()) {
        if (kv.key.rfind(ssm, 0) == 0 || kv.key.rfind(wkv, 0) == 0) {
            p.shape_notes.push_back(fmt::format(
                "This file has {} keys: it has recurrent layers, whose state is fixed per session, not per token.",
                kv.key.substr(0, kv.key.find('.', arch.size() + 1) + 1) + "*"));
            break;
        }
    }
    p.dtype_why = "what sixstep's engine stores, measured from its KvCache (llama.cpp defaults to f16, vLLM to the "
                  "model's own dtype)";
    return p;
}

KvCalcParams kv_preset(std::string_view name) {
    if (name == "article-36l") {
        KvCalcParams p;
        p.shape_name = "article-36l";
        p.n_layer = 36;
        p.n_head_kv = 8;
        p.head_dim = 128;
        p.dtype = KvDtype::F16;
        p.n_tokens = 128000;
        p.dtype_why = "the article's example";
        return p;
    }
    if (name == "stories-3m") {
        KvCalcParams p = kv_shape_from_gguf(llm::GGUFFile::open(bundled_model_path("stories-3m-f16.gguf")));
        p.shape_name = "stories-3m";
        return p;
    }
    std::string names;
    for (const auto& n : kv_preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw Error(fmt::format("kv-calc: unknown preset \"{}\" (presets: {})", name, names));
}

std::vector<std::string> kv_preset_names() { return {"article-36l", "stories-3m"}; }

nlohmann::ordered_json kv_calc_json(const KvCalcResult& r) {
    const KvDtypeInfo& dt = kv_dtype_info(r.params.dtype);
    nlohmann::ordered_json j;
    j["shape"] = r.params.shape_name;
    j["n_layer"] = r.n_layer;
    j["n_head_kv"] = r.n_head_kv;
    j["head_dim"] = r.head_dim;
    j["dtype"] = dt.name;
    if (!r.params.dtype_why.empty()) j["dtype_why"] = r.params.dtype_why;
    j["bytes_per_element"] = r.bytes_per_element;
    j["n_tokens"] = r.n_tokens;
    j["n_sessions"] = r.n_sessions;
    j["bytes_per_token_layer"] = r.bytes_per_token_layer;
    j["bytes_per_token"] = r.bytes_per_token;
    j["bytes_per_session"] = r.bytes_per_session;
    j["bytes_total"] = r.bytes_total;
    j["readable"] = {
        {"per_token", {bytes_decimal(static_cast<double>(r.bytes_per_token)), bytes_binary(static_cast<double>(r.bytes_per_token))}},
        {"per_session", {bytes_decimal(static_cast<double>(r.bytes_per_session)), bytes_binary(static_cast<double>(r.bytes_per_session))}},
        {"total", {bytes_decimal(static_cast<double>(r.bytes_total)), bytes_binary(static_cast<double>(r.bytes_total))}},
    };
    j["formula"] = r.formula;
    j["notes"] = r.notes;
    return j;
}

}  // namespace sixstep::serving
