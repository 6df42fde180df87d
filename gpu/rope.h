// RoPE on the device, llama.cpp's "normal" mode for arch llama, as the CPU
// does it (pipeline/llm/cpu/kernels.h: rope): within each head, the adjacent
// pairs (x[j], x[j+1]), j even and < n_rot, turn by pos · base^(−j / n_rot);
// dimensions past n_rot stay as they are.
//
// The angles depend only on the position, so they are computed once per
// forward pass (in double, then rounded, like the CPU) and every layer reads
// them.
#pragma once
#include <cuda_runtime.h>

namespace sixstep::gpu {

// cs[i, j] = cos, cs[i, j + 1] = sin of token i's angle for pair j (even
// j < n_rot). pos: device [n_tokens]; cs: device [n_tokens, n_rot].
void rope_angles(const int* pos, int n_tokens, int n_rot, float freq_base, float* cs, cudaStream_t stream);

// Rotates q [n_tokens, n_head, head_dim] and k [n_tokens, n_head_kv, head_dim]
// in place, in one launch.
void rope_apply(float* q, int n_head, float* k, int n_head_kv, int head_dim, int n_rot, const float* cs,
                int n_tokens, cudaStream_t stream);

}  // namespace sixstep::gpu
