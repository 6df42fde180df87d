// Q4_0 rows interleaved eight at a time, for the CPU's decode.
//
// A decode step multiplies each weight row by one token. Stored as in the
// file, each row is a chain of 32-value blocks, and the kernel ends every
// block with a scale product and every row with a horizontal sum: on AVX2
// about 17 instructions per block, more than the nibbles cost to unpack.
// With eight rows' blocks side by side, one vector holds the same four
// columns of eight rows, a broadcast of the token's four values meets all
// eight at once, and the eight rows' sums come out in the eight lanes of
// one register: no horizontal sums, one scale product per eight blocks.
//
// block_q4_0x8 holds block b of rows 8g .. 8g+7:
//   d[i]            row 8g+i's scale (fp16 bits), as in block_q4_0
//   qs[32k + 4i + m] row 8g+i's qs[4k + m] (k 0..3, m 0..3): its values
//                   4k+m (low nibble) and 16+4k+m (high nibble)
// so the k-th 32 bytes hold columns 4k .. 4k+3 of the eight rows (low
// nibbles) and columns 16+4k .. 16+4k+3 (high nibbles), each row's four
// bytes in its own 32-bit lane. Group g's blocks follow each other, then
// group g+1's: one stream, read front to back. ggml repacks Q4_0 along the
// same idea; this layout is sixstep's own.
#pragma once
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

// The interleaved copy of a Q4_0 matrix's first n_rows / 8 * 8 rows (the
// rest stay one at a time); empty for other types or fewer than 8 rows.
AlignedVector<block_q4_0x8> interleave_q4_0x8(const WeightMatrix& w);

}  // namespace sixstep::llm
