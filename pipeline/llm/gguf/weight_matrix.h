// WeightMatrix: a view of a 2-D weight matrix inside a mapped GGUF file, in
// whatever type the file stores it (F32, F16, Q8_0, Q4_0). The view makes no
// copy (but see cpu_copy and interleaved below).
//
// W has n_rows (outputs) rows of n_cols (inputs), row-major as in GGUF/ggml:
// ne[0] = n_cols is the contiguous dimension, and each row takes row_bytes
// (ggml_row_size of the type). Backends read it as they like: the CPU backend
// from a copy in memory of its own (LlamaModel::prepare_for_cpu), a GPU
// backend after copying it to the device.
#pragma once
#include <cstddef>
#include <cstdint>

#include "pipeline/llm/gguf/ggml_type.h"

namespace sixstep::llm {

struct WeightMatrix {
    GGMLType type = GGMLType::F32;
    const void* data = nullptr;
    int n_rows = 0;          // outputs (ne[1])
    int n_cols = 0;          // inputs (ne[0]), contiguous
    std::size_t row_bytes = 0;
    // Q4_0 and Q8_0, where the model made it: rows 0 .. n_rows / 8 * 8
    // again, eight rows interleaved (interleaved_rows.h: block_q4_0x8 or
    // block_q8_0x8), which the CPU's matmuls read instead of those rows.
    // Null: every row is read as stored.
    const void* interleaved = nullptr;
    // F32 and F16, where the model made it: the same rows, byte for byte,
    // in memory of the process's own on huge pages (huge_page_buffer.h),
    // which the CPU's matmuls read instead of the mapping. Null: the
    // mapping's rows.
    const void* cpu_copy = nullptr;

    const std::uint8_t* row(int r) const { return static_cast<const std::uint8_t*>(data) + row_bytes * static_cast<std::size_t>(r); }
    // Row r as the CPU's matmuls read it (F32, F16: the copy when there is one).
    const std::uint8_t* cpu_row(int r) const {
        return static_cast<const std::uint8_t*>(cpu_copy ? cpu_copy : data) + row_bytes * static_cast<std::size_t>(r);
    }
    std::size_t bytes() const { return row_bytes * static_cast<std::size_t>(n_rows); }
};

}  // namespace sixstep::llm
