// Token embeddings on the device: x[i, :] = token_embd[tokens[i], :] as
// float32, whatever the table's type — one row per token is read and
// dequantized, never the whole table. Token ids were checked against the
// vocabulary before (prepare_batch).
#pragma once
#include <cuda_runtime.h>

#include "gpu/device_matrix.h"

namespace sixstep::gpu {

// tokens: device [n_tokens]; x: device [n_tokens, table.n_cols].
void embed_rows(const DeviceMatrix& table, const int* tokens, int n_tokens, float* x, cudaStream_t stream);

}  // namespace sixstep::gpu
