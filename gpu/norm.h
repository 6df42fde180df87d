// RMSNorm on the device: y[r, :] = x[src, :] / sqrt(mean(x[src, :]²) + eps) · w,
// with src = rows[r] when a row list is given (the final norm reads only the
// rows that produce logits), else src = r. The CPU's formula and order
// (pipeline/llm/cpu/kernels.h: rmsnorm).
#pragma once
#include <cuda_runtime.h>

namespace sixstep::gpu {

// x: device [*, n]; rows: device [n_rows] or null; w: device [n]; y: device [n_rows, n].
void rmsnorm(const float* x, const int* rows, int n_rows, int n, const float* w, float eps, float* y,
             cudaStream_t stream);

}  // namespace sixstep::gpu
