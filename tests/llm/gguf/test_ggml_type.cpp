// ggml types: numbering, sizes, fp16 conversion, reference quantizers.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/llm/gguf/ggml_type.h"

using namespace sixstep::llm;

TEST_CASE("ggml types keep ggml's on-disk numbering and block layout") {
    CHECK(static_cast<uint32_t>(GGMLType::F32) == 0);
    CHECK(static_cast<uint32_t>(GGMLType::F16) == 1);
    CHECK(static_cast<uint32_t>(GGMLType::Q4_0) == 2);
    CHECK(static_cast<uint32_t>(GGMLType::Q8_0) == 8);
    CHECK(static_cast<uint32_t>(GGMLType::Q4_K) == 12);
    CHECK(static_cast<uint32_t>(GGMLType::BF16) == 30);

    CHECK(ggml_type_size(GGMLType::F32) == 4);
    CHECK(ggml_type_size(GGMLType::F16) == 2);
    CHECK(ggml_block_size(GGMLType::Q8_0) == 32);
    CHECK(ggml_type_size(GGMLType::Q8_0) == 34);
    CHECK(ggml_type_size(GGMLType::Q4_0) == 18);
    CHECK(ggml_block_size(GGMLType::Q4_K) == 256);
    CHECK(ggml_type_size(GGMLType::Q4_K) == 144);
    CHECK(ggml_type_size(GGMLType::Q6_K) == 210);

    CHECK(ggml_type_name(GGMLType::Q8_0) == "q8_0");
    CHECK(ggml_type_from_name("Q4_0") == GGMLType::Q4_0);
    CHECK(ggml_type_from_name("f16") == GGMLType::F16);
    CHECK_FALSE(ggml_type_from_name("q9_9").has_value());

    // ids that are not (or no longer) ggml types
    CHECK(ggml_type_traits(4) == nullptr);   // removed Q4_2
    CHECK(ggml_type_traits(31) == nullptr);  // removed Q4_0_4_4
    CHECK(ggml_type_traits(1000) == nullptr);
    REQUIRE(ggml_type_traits(8) != nullptr);
    CHECK(ggml_type_traits(8)->type == GGMLType::Q8_0);

    CHECK(ggml_type_supported(GGMLType::F32));
    CHECK(ggml_type_supported(GGMLType::Q4_0));
    CHECK_FALSE(ggml_type_supported(GGMLType::Q4_K));
}

TEST_CASE("ggml_row_size multiplies blocks and rejects partial blocks") {
    CHECK(ggml_row_size(GGMLType::F32, 10) == 40);
    CHECK(ggml_row_size(GGMLType::Q8_0, 4096) == 128 * 34);
    CHECK(ggml_row_size(GGMLType::Q4_0, 64) == 36);
    CHECK_THROWS_WITH_AS(ggml_row_size(GGMLType::Q8_0, 33),
                         "33 values cannot be stored as q8_0: the count must be a multiple of 32", sixstep::Error);
    CHECK_THROWS_WITH_AS(ggml_require_supported(GGMLType::Q6_K, "tensor output.weight"),
                         "tensor output.weight: type q6_K is not supported by sixstep (supported: f32, f16, q8_0, q4_0)",
                         sixstep::Error);
}

TEST_CASE("fp16 conversion: exact values, rounding, specials") {
    CHECK(fp16_to_fp32(0x3c00) == 1.0f);
    CHECK(fp16_to_fp32(0xc000) == -2.0f);
    CHECK(fp16_to_fp32(0x7bff) == 65504.0f);
    CHECK(fp16_to_fp32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
    CHECK(std::isinf(fp16_to_fp32(0x7c00)));
    CHECK(std::isnan(fp16_to_fp32(0x7e00)));
    CHECK(fp32_to_fp16(1.0f) == 0x3c00);
    CHECK(fp32_to_fp16(-0.0f) == 0x8000);
    CHECK(fp32_to_fp16(65504.0f) == 0x7bff);
    CHECK(fp32_to_fp16(1e6f) == 0x7c00);                       // overflow -> inf
    CHECK(fp32_to_fp16(std::ldexp(1.0f, -24)) == 0x0001);      // subnormal
    CHECK(fp32_to_fp16(std::ldexp(1.0f, -26)) == 0x0000);      // below half the smallest: 0
    CHECK((fp32_to_fp16(NAN) & 0x7c00) == 0x7c00);
    CHECK((fp32_to_fp16(NAN) & 0x03ff) != 0);
    // 1 + 2^-11 is exactly halfway between 1 and the next fp16: ties to even (1.0)
    CHECK(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
    // 1 + 3*2^-11 is halfway between odd 0x3c01 and even 0x3c02: ties to even
    CHECK(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);

    // every finite fp16 survives fp16 -> fp32 -> fp16
    int mismatches = 0;
    for (uint32_t h = 0; h < 0x10000; ++h) {
        if ((h & 0x7c00) == 0x7c00) continue;  // inf/NaN
        if (fp32_to_fp16(fp16_to_fp32(static_cast<uint16_t>(h))) != h) ++mismatches;
    }
    CHECK(mismatches == 0);
}

TEST_CASE("Q8_0 and Q4_0 round trips stay within their quantization step") {
    std::mt19937 rng(42);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    const int64_t n = 256;
    std::vector<float> x(n);
    for (auto& v : x) v = dist(rng);

    for (GGMLType t : {GGMLType::F32, GGMLType::F16, GGMLType::Q8_0, GGMLType::Q4_0}) {
        CAPTURE(ggml_type_name(t));
        const auto q = quantize(t, x.data(), n);
        CHECK(q.size() == ggml_row_size(t, n));
        const auto y = dequantize(t, q.data(), n);
        for (int64_t b = 0; b < n / 32; ++b) {
            float amax = 0;
            for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
            // Q8_0: half a step of amax/127; Q4_0: up to one step of amax/8 (the
            // side opposite the largest value is clamped at 7 steps); plus the
            // fp16 rounding of the scale. F16: relative 2^-11.
            const float bound = t == GGMLType::Q8_0   ? amax / 127 * 0.5f + amax * 1e-3f
                                : t == GGMLType::Q4_0 ? amax / 8 + amax * 1e-3f
                                : t == GGMLType::F16  ? amax / 2048
                                                      : 0.0f;
            for (int j = 0; j < 32; ++j) CHECK(std::fabs(y[b * 32 + j] - x[b * 32 + j]) <= bound);
        }
    }
}

TEST_CASE("Q4_0 block layout matches ggml: low nibbles first half, high nibbles second half") {
    std::vector<float> x(32);
    for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i - 16);  // max |x| = 16 at x[0] = -16
    block_q4_0 b{};
    quantize_row_q4_0(x.data(), &b, 32);
    CHECK(fp16_to_fp32(b.d) == 2.0f);  // d = max / -8 = -16 / -8
    // x[0] = -16 -> -16/2 + 8 = 0; x[16] = 0 -> 8
    CHECK((b.qs[0] & 0x0f) == 0);
    CHECK((b.qs[0] >> 4) == 8);
    std::vector<float> y(32);
    dequantize_row_q4_0(&b, y.data(), 32);
    CHECK(y[0] == -16.0f);
    CHECK(y[16] == 0.0f);
    CHECK(y[31] == 14.0f);  // 15 -> 15/2+8 = 15.5 -> 15 (clamped) -> (15-8)*2
}

TEST_CASE("Q8_0 of an all-zero block is zero with a zero scale") {
    std::vector<float> x(32, 0.0f), y(32, 1.0f);
    block_q8_0 b{};
    quantize_row_q8_0(x.data(), &b, 32);
    CHECK(b.d == 0);
    dequantize_row_q8_0(&b, y.data(), 32);
    for (float v : y) CHECK(v == 0.0f);
}

TEST_CASE("quantizing to a type without a quantizer is a clear error") {
    std::vector<float> x(256, 1.0f);
    std::vector<uint8_t> out(1024);
    CHECK_THROWS_WITH_AS(quantize_row(GGMLType::Q4_K, x.data(), out.data(), 256),
                         "quantize: cannot convert f32 to q4_K (sixstep quantizes to f32, f16, q8_0, q4_0)",
                         sixstep::Error);
    CHECK_THROWS_WITH_AS(dequantize_row(GGMLType::Q5_0, out.data(), x.data(), 32),
                         "dequantize: type q5_0 is not supported by sixstep (supported: f32, f16, q8_0, q4_0)",
                         sixstep::Error);
}

TEST_CASE("Q4_0 rounds each value to the nearest of its 16 levels, as ggml's reference quantizer") {
    // The largest magnitude is -8, so d = -8 / -8 = 1 exactly: the levels are
    // the integers -8..7, stored as nibbles 0..15, and each value takes the
    // nearest (ggml adds 8.5 and truncates: a half goes up).
    const float in[] = {2.6f, -2.4f, 0.5f, -0.5f, 6.7f, 1.4f, -5.6f};
    const int level[] = {3, -2, 1, 0, 7, 1, -6};
    std::vector<float> x(32, 0.0f);
    x[0] = -8.0f;
    for (int i = 0; i < 7; ++i) x[1 + i] = x[17 + i] = in[i];  // low nibbles and high nibbles alike
    block_q4_0 b{};
    quantize_row_q4_0(x.data(), &b, 32);
    REQUIRE(fp16_to_fp32(b.d) == 1.0f);
    std::vector<float> y(32);
    dequantize_row_q4_0(&b, y.data(), 32);
    for (int i = 0; i < 7; ++i) {
        CAPTURE(in[i]);
        CHECK((b.qs[1 + i] & 0x0f) == level[i] + 8);
        CHECK((b.qs[1 + i] >> 4) == level[i] + 8);
        CHECK(y[1 + i] == static_cast<float>(level[i]));
        CHECK(y[17 + i] == static_cast<float>(level[i]));
    }
}

TEST_CASE("Q4_0 of an all-zero block is a zero scale and every nibble at level 8, byte for byte as ggml") {
    std::vector<float> x(32, 0.0f), y(32, 1.0f);
    block_q4_0 b{};
    quantize_row_q4_0(x.data(), &b, 32);
    CHECK(b.d == 0x8000);  // -0: the scale is max / -8 with max = 0
    for (uint8_t q : b.qs) CHECK(q == 0x88);  // nibble 8 is the value 0, in both halves of every byte
    dequantize_row_q4_0(&b, y.data(), 32);
    for (float v : y) CHECK(v == 0.0f);
}
