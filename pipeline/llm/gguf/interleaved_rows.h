// Q4_0 and Q8_0 rows interleaved eight at a time, for the CPU's matmuls.
//
// Stored as in the file, each row is a chain of 32-value blocks, and a
// kernel that multiplies it by a token ends every block with a scale
// product and every row with a horizontal sum: on AVX2 about 17
// instructions per Q4_0 block, more than the nibbles cost to unpack. With
// eight rows' blocks side by side, one vector holds the same four columns
// of eight rows, a broadcast of the token's four values meets all eight at
// once, and the eight rows' sums come out in the eight lanes of one
// register: no horizontal sums, one scale product per eight blocks.
//
// block_q4_0x8 holds block b of rows 8g .. 8g+7:
//   d[i]              row 8g+i's scale (fp16 bits), as in block_q4_0
//   qs[32k + 4i + m]  row 8g+i's qs[4k + m] (k 0..3, m 0..3): its values
//                     4k+m (low nibble) and 16+4k+m (high nibble)
// so the k-th 32 bytes hold columns 4k .. 4k+3 of the eight rows (low
// nibbles) and columns 16+4k .. 16+4k+3 (high nibbles), each row's four
// bytes in its own 32-bit lane. block_q8_0x8 is the same with one value
// per byte: qs[32k + 4i + m] is row 8g+i's value 4k+m (k 0..7).
// Group g's blocks follow each other, then group g+1's: one stream, read
// front to back. ggml repacks along the same idea; these layouts are
// sixstep's own.
#pragma once
#include <cstddef>
#include <cstdint>

#include "pipeline/core/aligned.h"
#include "pipeline/llm/gguf/ggml_type.h"
#include "pipeline/llm/gguf/weight_matrix.h"

namespace sixstep::llm {

struct block_q4_0x8 {
    uint16_t d[8];
    uint8_t qs[8 * QK4_0 / 2];
};
static_assert(sizeof(block_q4_0x8) == 8 * sizeof(block_q4_0), "eight blocks, no padding");

struct block_q8_0x8 {
    uint16_t d[8];
    int8_t qs[8 * QK8_0];
};
static_assert(sizeof(block_q8_0x8) == 8 * sizeof(block_q8_0), "eight blocks, no padding");

// Bytes of the interleaved copy of a Q4_0 or Q8_0 matrix's first
// n_rows / 8 * 8 rows (the rest stay one at a time); 0 for other types or
// fewer than 8 rows.
std::size_t interleaved_bytes(const WeightMatrix& w);

// Writes that copy, the bytes of its block_q4_0x8 or block_q8_0x8 array
// (WeightMatrix::interleaved), to out[interleaved_bytes(w)].
void interleave_rows(const WeightMatrix& w, std::uint8_t* out);

// The same, in a buffer of its own (empty when interleaved_bytes is 0).
AlignedVector<std::uint8_t> interleave_rows(const WeightMatrix& w);

}  // namespace sixstep::llm
