#include "gpu/cuda_check.h"

#include <string_view>

#include <fmt/format.h>

#include "gpu/cublas_api.h"
#include "pipeline/core/error.h"

namespace sixstep::gpu {

namespace {

// "/work/src/sixstep/gpu/matmul.cu" → "gpu/matmul.cu": the path a reader of
// the repository recognizes, whichever folder it was built in.
std::string_view source_path(std::string_view file) {
    const std::size_t at = file.rfind("/gpu/");
    return at == std::string_view::npos ? file : file.substr(at + 1);
}

}  // namespace

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
    throw Error(fmt::format("{}:{}: {}: {} ({})", source_path(file), line, call, cudaGetErrorString(err),
                            cudaGetErrorName(err)));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
    // A status can only come from a loaded cuBLAS; the number is the fallback all the same.
    if (cublas_unavailable())
        throw Error(fmt::format("{}:{}: {}: cuBLAS status {}", source_path(file), line, call, static_cast<int>(status)));
    throw Error(fmt::format("{}:{}: {}: {} ({})", source_path(file), line, call, cublas_api().status_string(status),
                            cublas_api().status_name(status)));
}

}  // namespace sixstep::gpu
