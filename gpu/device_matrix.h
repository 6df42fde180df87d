// DeviceMatrix: a weight matrix in device memory, as the kernels read it —
// a plain struct passed to kernels by value.
//
// W has n_rows (outputs) rows of n_cols (inputs), row-major, as in GGUF (see
// pipeline/llm/gguf/weight_matrix.h). n_cols is a multiple of 32, so every
// row starts 16-byte aligned and one thread can load 16 bytes of a row at a
// time. The values are the file's, bit for bit; only the block layout of the
// quantized types changes at upload, because ggml's 34-byte Q8_0 and 18-byte
// Q4_0 blocks put the scale in front of the values and no 16-byte load lines
// up with them:
//     f32   values: float  [n_rows, n_cols]
//     f16   values: fp16   [n_rows, n_cols]
//     q8_0  values: int8   [n_rows, n_cols]          scales: fp16 [n_rows, n_cols / 32]
//     q4_0  values: uint8  [n_rows, n_cols / 2]      scales: fp16 [n_rows, n_cols / 32]
//           (per block of 32: 16 bytes, value j in the low nibble of byte j and
//            value j + 16 in the high nibble, each minus 8, as in ggml)
// Value (r, c) is scale(r, c / 32) · q(r, c) for the quantized types.
#pragma once

namespace sixstep::gpu {

enum class DeviceType : int { f32, f16, q8_0, q4_0 };

struct DeviceMatrix {
    DeviceType type = DeviceType::f32;
    int n_rows = 0;                          // outputs
    int n_cols = 0;                          // inputs, a multiple of 32
    const void* values = nullptr;            // see the table above
    const unsigned short* scales = nullptr;  // q8_0, q4_0: fp16 bits, one per 32 values
};

}  // namespace sixstep::gpu
