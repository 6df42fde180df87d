// A kernel that does nothing, asked for its attributes: CUDA answers with an
// error when the binary holds no image (SASS or PTX) the current device can
// run — e.g. a compute capability 7.5 card and a build for 80;90 — which is
// the one failure that cudaGetDeviceCount cannot reveal.
#include "gpu/cuda_device.h"

namespace sixstep::gpu {

namespace {
__global__ void probe_kernel() {}
}  // namespace

cudaError_t probe_kernel_image() {
    cudaFuncAttributes attr{};
    const cudaError_t err = cudaFuncGetAttributes(&attr, probe_kernel);
    if (err != cudaSuccess) static_cast<void>(cudaGetLastError());  // clear it: the caller reports it
    return err;
}

}  // namespace sixstep::gpu
