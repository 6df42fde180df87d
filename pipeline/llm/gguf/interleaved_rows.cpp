#include "pipeline/llm/gguf/interleaved_rows.h"

#include <cstring>

namespace sixstep::llm {

namespace {

// Block b of rows 8g .. 8g+7 (BT: block_q4_0 or block_q8_0) into `out`,
// four bytes of each row at a time.
template <typename BT, typename BX>
void interleave(const WeightMatrix& w, BX* out) {
    constexpr int chunks = sizeof(BT::qs) / 4;
    const int n_groups = w.n_rows / 8, n_blocks = w.n_cols / static_cast<int>(QK8_0);
    for (int g = 0; g < n_groups; ++g) {
        const BT* rows[8];
        for (int i = 0; i < 8; ++i) rows[i] = reinterpret_cast<const BT*>(w.row(8 * g + i));
        for (int b = 0; b < n_blocks; ++b) {
            BX& o = out[static_cast<std::size_t>(g) * n_blocks + b];
            for (int i = 0; i < 8; ++i) {
                o.d[i] = rows[i][b].d;
                for (int k = 0; k < chunks; ++k) std::memcpy(o.qs + 32 * k + 4 * i, rows[i][b].qs + 4 * k, 4);
            }
        }
    }
}

}  // namespace

std::size_t interleaved_bytes(const WeightMatrix& w) {
    if ((w.type != GGMLType::Q4_0 && w.type != GGMLType::Q8_0) || w.n_rows < 8) return 0;
    return static_cast<std::size_t>(w.n_rows / 8) * 8 * w.row_bytes;  // every group of eight rows
}

void interleave_rows(const WeightMatrix& w, std::uint8_t* out) {
    // The file's own bytes, reordered.
    if (interleaved_bytes(w) == 0) return;
    if (w.type == GGMLType::Q4_0)
        interleave<block_q4_0>(w, reinterpret_cast<block_q4_0x8*>(out));
    else
        interleave<block_q8_0>(w, reinterpret_cast<block_q8_0x8*>(out));
}

AlignedVector<std::uint8_t> interleave_rows(const WeightMatrix& w) {
    AlignedVector<std::uint8_t> out(interleaved_bytes(w));
    interleave_rows(w, out.data());
    return out;
}

}  // namespace sixstep::llm
