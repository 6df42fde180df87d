// ggml types: the table of names and block layouts, and the reference
// quantize/dequantize routines (see ggml_type.h). These are the slow, obvious
// versions that stay forever; faster kernels are checked against them.
#include "pipeline/llm/gguf/ggml_type.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::llm {
namespace {

// Block sizes and bytes per block, as in ggml's type_traits table. The
// quantized layouts are documented there; we only need their sizes to walk a
// file and to name them.
constexpr GGMLTypeTraits kTraits[] = {
    {GGMLType::F32, "f32", 1, 4, false, true},
    {GGMLType::F16, "f16", 1, 2, false, true},
    {GGMLType::Q4_0, "q4_0", 32, 18, true, true},
    {GGMLType::Q4_1, "q4_1", 32, 20, true, false},
    {GGMLType::Q5_0, "q5_0", 32, 22, true, false},
    {GGMLType::Q5_1, "q5_1", 32, 24, true, false},
    {GGMLType::Q8_0, "q8_0", 32, 34, true, true},
    {GGMLType::Q8_1, "q8_1", 32, 36, true, false},
    {GGMLType::Q2_K, "q2_K", 256, 84, true, false},
    {GGMLType::Q3_K, "q3_K", 256, 110, true, false},
    {GGMLType::Q4_K, "q4_K", 256, 144, true, false},
    {GGMLType::Q5_K, "q5_K", 256, 176, true, false},
    {GGMLType::Q6_K, "q6_K", 256, 210, true, false},
    {GGMLType::Q8_K, "q8_K", 256, 292, true, false},
    {GGMLType::IQ2_XXS, "iq2_xxs", 256, 66, true, false},
    {GGMLType::IQ2_XS, "iq2_xs", 256, 74, true, false},
    {GGMLType::IQ3_XXS, "iq3_xxs", 256, 98, true, false},
    {GGMLType::IQ1_S, "iq1_s", 256, 50, true, false},
    {GGMLType::IQ4_NL, "iq4_nl", 32, 18, true, false},
    {GGMLType::IQ3_S, "iq3_s", 256, 110, true, false},
    {GGMLType::IQ2_S, "iq2_s", 256, 82, true, false},
    {GGMLType::IQ4_XS, "iq4_xs", 256, 136, true, false},
    {GGMLType::I8, "i8", 1, 1, false, false},
    {GGMLType::I16, "i16", 1, 2, false, false},
    {GGMLType::I32, "i32", 1, 4, false, false},
    {GGMLType::I64, "i64", 1, 8, false, false},
    {GGMLType::F64, "f64", 1, 8, false, false},
    {GGMLType::IQ1_M, "iq1_m", 256, 56, true, false},
    {GGMLType::BF16, "bf16", 1, 2, false, false},
    {GGMLType::TQ1_0, "tq1_0", 256, 54, true, false},
    {GGMLType::TQ2_0, "tq2_0", 256, 66, true, false},
    {GGMLType::MXFP4, "mxfp4", 32, 17, true, false},
};

constexpr uint32_t kMaxId = 40;

// id -> index into kTraits, or -1.
constexpr std::array<int, kMaxId> make_index() {
    std::array<int, kMaxId> idx{};
    for (auto& i : idx) i = -1;
    for (int i = 0; i < (int)std::size(kTraits); ++i) idx[static_cast<uint32_t>(kTraits[i].type)] = i;
    return idx;
}
constexpr auto kIndex = make_index();

void check_multiple(GGMLType type, int64_t n) {
    const int64_t bs = ggml_block_size(type);
    if (n < 0 || n % bs != 0)
        throw Error(fmt::format("{} values cannot be stored as {}: the count must be a multiple of {}", n,
                                ggml_type_name(type), bs));
}

}  // namespace

const GGMLTypeTraits* ggml_type_traits(uint32_t id) noexcept {
    if (id >= kMaxId || kIndex[id] < 0) return nullptr;
    return &kTraits[kIndex[id]];
}

const GGMLTypeTraits& ggml_traits(GGMLType type) {
    const GGMLTypeTraits* t = ggml_type_traits(static_cast<uint32_t>(type));
    if (!t) throw Error(fmt::format("unknown ggml type id {}", static_cast<uint32_t>(type)));
    return *t;
}

std::optional<GGMLType> ggml_type_from_name(std::string_view name) {
    for (const auto& t : kTraits) {
        const std::string_view n = t.name;
        if (n.size() == name.size() &&
            std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
                return std::tolower((unsigned char)a) == std::tolower((unsigned char)b);
            }))
            return t.type;
    }
    return std::nullopt;
}

size_t ggml_row_size(GGMLType type, int64_t n) {
    check_multiple(type, n);
    return static_cast<size_t>(n / ggml_block_size(type)) * ggml_type_size(type);
}

void ggml_require_supported(GGMLType type, std::string_view what) {
    if (ggml_type_supported(type)) return;
    throw Error(fmt::format("{}: type {} is not supported by sixstep (supported: f32, f16, q8_0, q4_0)", what,
                            ggml_type_name(type)));
}

// ---- Q8_0 --------------------------------------------------------------------
// One scale per 32 values: d = max|x| / 127, q = round(x / d).
void quantize_row_q8_0(const float* src, block_q8_0* dst, int64_t n) {
    check_multiple(GGMLType::Q8_0, n);
    for (int64_t b = 0; b < n / QK8_0; ++b) {
        const float* x = src + b * QK8_0;
        float amax = 0.0f;
        for (int64_t j = 0; j < QK8_0; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        dst[b].d = fp32_to_fp16(d);
        for (int64_t j = 0; j < QK8_0; ++j) dst[b].qs[j] = static_cast<int8_t>(std::lround(x[j] * id));
    }
}

void dequantize_row_q8_0(const block_q8_0* src, float* dst, int64_t n) {
    check_multiple(GGMLType::Q8_0, n);
    for (int64_t b = 0; b < n / QK8_0; ++b) {
        const float d = fp16_to_fp32(src[b].d);
        for (int64_t j = 0; j < QK8_0; ++j) dst[b * QK8_0 + j] = d * static_cast<float>(src[b].qs[j]);
    }
}

// ---- Q4_0 --------------------------------------------------------------------
// One scale per 32 values. The value with the largest magnitude maps to -8
// (d = max / -8), so the 16 levels -8..7 cover it exactly on its side.
void quantize_row_q4_0(const float* src, block_q4_0* dst, int64_t n) {
    check_multiple(GGMLType::Q4_0, n);
    for (int64_t b = 0; b < n / QK4_0; ++b) {
        const float* x = src + b * QK4_0;
        float amax = 0.0f, max = 0.0f;
        for (int64_t j = 0; j < QK4_0; ++j) {
            if (std::fabs(x[j]) > amax) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        dst[b].d = fp32_to_fp16(d);
        for (int64_t j = 0; j < QK4_0 / 2; ++j) {
            const int q0 = std::min(15, static_cast<int>(x[j] * id + 8.5f));
            const int q1 = std::min(15, static_cast<int>(x[j + QK4_0 / 2] * id + 8.5f));
            dst[b].qs[j] = static_cast<uint8_t>(std::max(0, q0) | (std::max(0, q1) << 4));
        }
    }
}

void dequantize_row_q4_0(const block_q4_0* src, float* dst, int64_t n) {
    check_multiple(GGMLType::Q4_0, n);
    for (int64_t b = 0; b < n / QK4_0; ++b) {
        const float d = fp16_to_fp32(src[b].d);
        for (int64_t j = 0; j < QK4_0 / 2; ++j) {
            dst[b * QK4_0 + j] = d * static_cast<float>((src[b].qs[j] & 0x0f) - 8);
            dst[b * QK4_0 + j + QK4_0 / 2] = d * static_cast<float>((src[b].qs[j] >> 4) - 8);
        }
    }
}

// ---- dispatch ----------------------------------------------------------------
void dequantize_row(GGMLType type, const void* src, float* dst, int64_t n) {
    check_multiple(type, n);
    switch (type) {
        case GGMLType::F32:
            std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
            return;
        case GGMLType::F16: {
            const auto* s = static_cast<const uint8_t*>(src);
            for (int64_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, s + 2 * i, 2);  // memcpy: tensor data need not be 2-aligned
                dst[i] = fp16_to_fp32(h);
            }
            return;
        }
        case GGMLType::BF16: {
            const auto* s = static_cast<const uint8_t*>(src);
            for (int64_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, s + 2 * i, 2);
                dst[i] = bf16_to_fp32(h);
            }
            return;
        }
        case GGMLType::Q8_0:
            dequantize_row_q8_0(static_cast<const block_q8_0*>(src), dst, n);
            return;
        case GGMLType::Q4_0:
            dequantize_row_q4_0(static_cast<const block_q4_0*>(src), dst, n);
            return;
        default:
            ggml_require_supported(type, "dequantize");
            throw Error(fmt::format("dequantize: type {} has no dequantizer", ggml_type_name(type)));
    }
}

void quantize_row(GGMLType type, const float* src, void* dst, int64_t n) {
    check_multiple(type, n);
    switch (type) {
        case GGMLType::F32:
            std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
            return;
        case GGMLType::F16: {
            auto* d = static_cast<uint8_t*>(dst);
            for (int64_t i = 0; i < n; ++i) {
                const uint16_t h = fp32_to_fp16(src[i]);
                std::memcpy(d + 2 * i, &h, 2);
            }
            return;
        }
        case GGMLType::Q8_0:
            quantize_row_q8_0(src, static_cast<block_q8_0*>(dst), n);
            return;
        case GGMLType::Q4_0:
            quantize_row_q4_0(src, static_cast<block_q4_0*>(dst), n);
            return;
        default:
            throw Error(fmt::format("quantize: cannot convert f32 to {} (sixstep quantizes to f32, f16, q8_0, q4_0)",
                                    ggml_type_name(type)));
    }
}

std::vector<float> dequantize(GGMLType type, const void* src, int64_t n) {
    std::vector<float> out(static_cast<size_t>(std::max<int64_t>(n, 0)));
    dequantize_row(type, src, out.data(), n);
    return out;
}

std::vector<uint8_t> quantize(GGMLType type, const float* src, int64_t n) {
    std::vector<uint8_t> out(ggml_row_size(type, n));
    quantize_row(type, src, out.data(), n);
    return out;
}

}  // namespace sixstep::llm
