#include "pipeline/llm/gguf/q4_0_x8.h"

#include <cstring>

namespace sixstep::llm {

AlignedVector<block_q4_0x8> interleave_q4_0x8(const WeightMatrix& w) {
    AlignedVector<block_q4_0x8> out;
    if (w.type != GGMLType::Q4_0 || w.n_rows < 8) return out;
    const int n_groups = w.n_rows / 8, n_blocks = w.n_cols / static_cast<int>(QK4_0);
    out.resize(static_cast<std::size_t>(n_groups) * n_blocks);
    for (int g = 0; g < n_groups; ++g) {
        const block_q4_0* rows[8];
        for (int i = 0; i < 8; ++i) rows[i] = reinterpret_cast<const block_q4_0*>(w.row(8 * g + i));
        for (int b = 0; b < n_blocks; ++b) {
            block_q4_0x8& o = out[static_cast<std::size_t>(g) * n_blocks + b];
            for (int i = 0; i < 8; ++i) {
                o.d[i] = rows[i][b].d;
                for (int k = 0; k < 4; ++k) std::memcpy(o.qs + 32 * k + 4 * i, rows[i][b].qs + 4 * k, 4);
            }
        }
    }
    return out;
}

}  // namespace sixstep::llm
