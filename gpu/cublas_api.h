// cuBLAS, loaded when the CUDA backend first needs it. libcublas and the
// libcublasLt it pulls in are about 570 MB; linked the ordinary way they are
// mapped and initialized at the start of every sixstep process — `sixstep
// --version` took 0.11–0.19 s and 229 MB of memory — though most runs never
// touch a GPU. Loaded with dlopen, they cost nothing until a backend on the
// GPU is made, and a binary built with CUDA also starts on a machine that has
// no CUDA libraries at all (the runtime, libcudart, is linked statically).
//
// Only the handful of cuBLAS functions the backend calls are looked up, each
// with its own prototype from cublas_v2.h, so a call through this table is
// type-checked like a direct one.
#pragma once
#include <optional>
#include <string>

#include <cublas_v2.h>

namespace sixstep::gpu {

struct CublasApi {
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasDestroy_v2) destroy = nullptr;
    decltype(&cublasSetStream_v2) set_stream = nullptr;
    decltype(&cublasSetMathMode) set_math_mode = nullptr;
    decltype(&cublasSgemm_v2) sgemm = nullptr;
    decltype(&cublasGetStatusName) status_name = nullptr;
    decltype(&cublasGetStatusString) status_string = nullptr;
};

// The library's file name for the cuBLAS major version of the headers this
// was built with: "libcublas.so.13".
std::string cublas_library_name();

// Why cuBLAS cannot be used here ("libcublas.so.13: cannot open shared object
// file: No such file or directory"), or nothing when it is loaded. Tried once
// per process; the answer is kept.
std::optional<std::string> cublas_unavailable();

// The loaded functions. Throws sixstep::Error with cublas_unavailable()'s
// reason when the library could not be loaded.
const CublasApi& cublas_api();

}  // namespace sixstep::gpu
