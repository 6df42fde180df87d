// Reading weights on the device, in every type a DeviceMatrix holds
// (device_matrix.h). Device code only; matmul.cu and embed.cu use it.
//
// Two ways in:
//   load_raw<T> + dequant<T>  a chunk: the 16 bytes of values one thread
//                             loads at once (plus its scale), then the floats
//                             they hold — 4 (f32), 8 (f16), 16 (q8_0) or 32
//                             (q4_0) consecutive columns. Splitting the load
//                             from the arithmetic lets a kernel issue several
//                             loads before it needs the first one.
//   weight_at                 one value, any type (embedding rows, tiles).
// The arithmetic is ggml's: q8_0 → d·q, q4_0 → d·(q − 8), in float.
#pragma once
#include <cstddef>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gpu/device_matrix.h"

namespace sixstep::gpu {

template <DeviceType T>
struct ChunkTraits;
template <>
struct ChunkTraits<DeviceType::f32> {
    static constexpr int cols = 4;
};
template <>
struct ChunkTraits<DeviceType::f16> {
    static constexpr int cols = 8;
};
template <>
struct ChunkTraits<DeviceType::q8_0> {
    static constexpr int cols = 16;
};
template <>
struct ChunkTraits<DeviceType::q4_0> {
    static constexpr int cols = 32;
};

struct RawChunk {
    uint4 v;           // 16 bytes of values
    unsigned short d;  // fp16 scale (quantized types)
};

__device__ __forceinline__ float half_bits_to_float(unsigned short bits) { return __half2float(__ushort_as_half(bits)); }

// The chunk of row `row` starting at column `col` (a multiple of ChunkTraits<T>::cols).
template <DeviceType T>
__device__ __forceinline__ RawChunk load_raw(const DeviceMatrix& w, int row, int col) {
    RawChunk c{};
    const std::size_t r = static_cast<std::size_t>(row);
    if constexpr (T == DeviceType::f32) {
        c.v = *reinterpret_cast<const uint4*>(static_cast<const float*>(w.values) + r * w.n_cols + col);
    } else if constexpr (T == DeviceType::f16) {
        c.v = *reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(w.values) + r * w.n_cols + col);
    } else if constexpr (T == DeviceType::q8_0) {
        c.v = *reinterpret_cast<const uint4*>(static_cast<const signed char*>(w.values) + r * w.n_cols + col);
        c.d = w.scales[r * (w.n_cols / 32) + col / 32];
    } else {
        c.v = *reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(w.values) + r * (w.n_cols / 2) +
                                              col / 2);
        c.d = w.scales[r * (w.n_cols / 32) + col / 32];
    }
    return c;
}

template <DeviceType T>
__device__ __forceinline__ void dequant(const RawChunk& c, float* out) {
    if constexpr (T == DeviceType::f32) {
        out[0] = __uint_as_float(c.v.x);
        out[1] = __uint_as_float(c.v.y);
        out[2] = __uint_as_float(c.v.z);
        out[3] = __uint_as_float(c.v.w);
    } else if constexpr (T == DeviceType::f16) {
        const unsigned int words[4] = {c.v.x, c.v.y, c.v.z, c.v.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            out[2 * i] = half_bits_to_float(static_cast<unsigned short>(words[i] & 0xffffu));
            out[2 * i + 1] = half_bits_to_float(static_cast<unsigned short>(words[i] >> 16));
        }
    } else if constexpr (T == DeviceType::q8_0) {
        const float d = half_bits_to_float(c.d);
        const unsigned int words[4] = {c.v.x, c.v.y, c.v.z, c.v.w};
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const signed char q = static_cast<signed char>((words[i / 4] >> (8 * (i % 4))) & 0xffu);
            out[i] = static_cast<float>(q) * d;
        }
    } else {
        const float d = half_bits_to_float(c.d);
        const unsigned int words[4] = {c.v.x, c.v.y, c.v.z, c.v.w};
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            const unsigned int byte = (words[j / 4] >> (8 * (j % 4))) & 0xffu;
            out[j] = static_cast<float>(static_cast<int>(byte & 0x0fu) - 8) * d;
            out[j + 16] = static_cast<float>(static_cast<int>(byte >> 4) - 8) * d;
        }
    }
}

__device__ __forceinline__ float weight_at(const DeviceMatrix& w, int row, int col) {
    const std::size_t r = static_cast<std::size_t>(row);
    switch (w.type) {
        case DeviceType::f32: return static_cast<const float*>(w.values)[r * w.n_cols + col];
        case DeviceType::f16: return half_bits_to_float(static_cast<const unsigned short*>(w.values)[r * w.n_cols + col]);
        case DeviceType::q8_0: {
            const signed char q = static_cast<const signed char*>(w.values)[r * w.n_cols + col];
            return static_cast<float>(q) * half_bits_to_float(w.scales[r * (w.n_cols / 32) + col / 32]);
        }
        case DeviceType::q4_0: {
            const int j = col % 32;
            const unsigned char byte =
                static_cast<const unsigned char*>(w.values)[r * (w.n_cols / 2) + (col / 32) * 16 + j % 16];
            const int q = j < 16 ? (byte & 0x0f) : (byte >> 4);
            return static_cast<float>(q - 8) * half_bits_to_float(w.scales[r * (w.n_cols / 32) + col / 32]);
        }
    }
    return 0.0f;
}

}  // namespace sixstep::gpu
