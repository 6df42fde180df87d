// ggml tensor types: the numbering, block layout and sizes used by GGUF files,
// fp16 <-> fp32 conversion, and reference (plain C++, obviously correct)
// quantize/dequantize routines for the types sixstep computes with.
//
// Usage:
//   GGMLType t = GGMLType::Q8_0;
//   size_t bytes = ggml_row_size(t, 4096);          // 4096/32 blocks * 34 bytes
//   std::vector<uint8_t> q(bytes);
//   quantize_row(t, x.data(), q.data(), 4096);      // f32 -> Q8_0
//   dequantize_row(t, q.data(), y.data(), 4096);    // Q8_0 -> f32
//
// Quantized types store a row as blocks of `block_size` values; each block is
// `type_size` bytes (a scale and the packed values). The numbering is ggml's
// on-disk numbering (ggml.h `enum ggml_type`): it must never change, because
// GGUF files store these numbers. Types 4, 5 (old Q4_2/Q4_3) and 31-33, 36-38
// (removed repacked variants) are gone from ggml and rejected as unknown.
//
// sixstep can *compute* with F32, F16, Q8_0 and Q4_0 (ggml_type_supported).
// The other known types are still named and sized, so `sixstep inspect` can
// show any real model file; loading one for compute gives a clear
// "unsupported" error instead of garbage.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sixstep::llm {

enum class GGMLType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
    MXFP4 = 39,
};

// Layout facts about one type.
struct GGMLTypeTraits {
    GGMLType type;
    const char* name;    // ggml's name: "f32", "f16", "q4_0", "q8_0", ...
    int64_t block_size;  // values per block (1 for plain types)
    size_t type_size;    // bytes per block
    bool quantized;      // block-quantized (block_size > 1)
    bool supported;      // sixstep can dequantize / compute with it
};

// Traits for a raw type id as read from a file; nullptr when the id is not a
// ggml type (the caller reports it with the tensor's name).
const GGMLTypeTraits* ggml_type_traits(uint32_t id) noexcept;
// Traits for a valid enum value (never null for the enumerators above).
const GGMLTypeTraits& ggml_traits(GGMLType type);

inline std::string_view ggml_type_name(GGMLType t) { return ggml_traits(t).name; }
inline int64_t ggml_block_size(GGMLType t) { return ggml_traits(t).block_size; }
inline size_t ggml_type_size(GGMLType t) { return ggml_traits(t).type_size; }
inline bool ggml_type_supported(GGMLType t) { return ggml_traits(t).supported; }

// "Q8_0", "q8_0", "F16", "f16", ... -> type; nullopt when unknown.
std::optional<GGMLType> ggml_type_from_name(std::string_view name);

// Bytes for a row of n values. Throws sixstep::Error when n is not a multiple
// of the block size or n < 0.
size_t ggml_row_size(GGMLType type, int64_t n);

// Throws sixstep::Error("<what>: type q4_K is not supported by sixstep
// (supported: f32, f16, q8_0, q4_0)") unless ggml_type_supported(type).
void ggml_require_supported(GGMLType type, std::string_view what);

// ---- fp16 / bf16 ---------------------------------------------------------------
// IEEE 754 binary16 <-> binary32, round to nearest even, with subnormals,
// infinities and NaN handled. Inline: the CPU kernels call these in loops.
inline float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {  // inf / NaN
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {  // normal
        bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);
    } else if (mant == 0) {  // +-0
        bits = sign;
    } else {  // subnormal: renormalise
        exp = 127 - 15 + 1;
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            --exp;
        }
        mant &= 0x3ffu;
        bits = sign | (exp << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

inline uint16_t fp32_to_fp16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t exp = (x >> 23) & 0xffu;
    uint32_t mant = x & 0x7fffffu;
    if (exp == 0xff)  // inf stays inf; NaN stays a (quiet) NaN
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
    const int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);  // overflow -> inf
    if (e <= 0) {                                      // subnormal or zero in fp16
        if (e < -10) return sign;                      // too small: +-0
        mant |= 0x800000u;                             // implicit leading 1
        const uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1);
        const uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exp: correct
    return (uint16_t)(sign | half);
}

inline float bf16_to_fp32(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// ---- block layouts (byte-exact with ggml) -----------------------------------------
inline constexpr int64_t QK8_0 = 32;
inline constexpr int64_t QK4_0 = 32;

// Q8_0: 32 values = d * qs[i]; d is fp16.
struct block_q8_0 {
    uint16_t d;          // scale (fp16 bits)
    int8_t qs[QK8_0];    // quantized values
};
static_assert(sizeof(block_q8_0) == 34, "block_q8_0 must match ggml's layout");

// Q4_0: 32 values = d * (nibble - 8); qs[j] holds value j in its low nibble and
// value j+16 in its high nibble.
struct block_q4_0 {
    uint16_t d;             // scale (fp16 bits)
    uint8_t qs[QK4_0 / 2];  // packed nibbles
};
static_assert(sizeof(block_q4_0) == 18, "block_q4_0 must match ggml's layout");

// ---- reference quantize / dequantize ------------------------------------------------
// n values; n must be a multiple of the type's block size (else sixstep::Error).
// Supported: F32, F16, BF16 (dequantize only), Q8_0, Q4_0. Others throw.
void dequantize_row(GGMLType type, const void* src, float* dst, int64_t n);
void quantize_row(GGMLType type, const float* src, void* dst, int64_t n);

void dequantize_row_q8_0(const block_q8_0* src, float* dst, int64_t n);
void dequantize_row_q4_0(const block_q4_0* src, float* dst, int64_t n);
void quantize_row_q8_0(const float* src, block_q8_0* dst, int64_t n);
void quantize_row_q4_0(const float* src, block_q4_0* dst, int64_t n);

// Convenience: whole buffers.
std::vector<float> dequantize(GGMLType type, const void* src, int64_t n);
std::vector<uint8_t> quantize(GGMLType type, const float* src, int64_t n);

}  // namespace sixstep::llm
