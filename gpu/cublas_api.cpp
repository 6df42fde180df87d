#include "gpu/cublas_api.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::gpu {

namespace {

struct Loaded {
    CublasApi api;
    std::optional<std::string> why_not;  // set when loading failed
};

// Looks `name` up in `lib` into `fn`; false (and `why` says which) when absent.
template <typename Fn>
bool resolve(void* lib, const char* name, Fn& fn, std::string& why) {
    fn = reinterpret_cast<Fn>(dlsym(lib, name));
    if (!fn) why = fmt::format("{} has no {}", cublas_library_name(), name);
    return fn != nullptr;
}

Loaded load() {
    Loaded out;
    const std::string file = cublas_library_name();
    // The loader's own search first (LD_LIBRARY_PATH, ld.so.cache), then the
    // toolkit folder this was built against, which is often not in either.
    // Never closed: handles made from it may be destroyed as late as static
    // destructors run.
    void* lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* err = dlerror();
        out.why_not = err ? std::string(err) : file + ": cannot be loaded";
        const std::string in_toolkit = std::string(SIXSTEP_CUDA_LIBRARY_DIR) + "/" + file;
        lib = dlopen(in_toolkit.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            *out.why_not += fmt::format(" (nor in {})", SIXSTEP_CUDA_LIBRARY_DIR);
            return out;
        }
        out.why_not.reset();
    }
    CublasApi& a = out.api;
    std::string why;
    if (!(resolve(lib, "cublasCreate_v2", a.create, why) && resolve(lib, "cublasDestroy_v2", a.destroy, why) &&
          resolve(lib, "cublasSetStream_v2", a.set_stream, why) &&
          resolve(lib, "cublasSetMathMode", a.set_math_mode, why) && resolve(lib, "cublasSgemm_v2", a.sgemm, why) &&
          resolve(lib, "cublasGetStatusName", a.status_name, why) &&
          resolve(lib, "cublasGetStatusString", a.status_string, why))) {
        out.why_not = why;
        out.api = {};
    }
    return out;
}

const Loaded& loaded() {
    static const Loaded once = load();
    return once;
}

}  // namespace

std::string cublas_library_name() { return fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR); }

std::optional<std::string> cublas_unavailable() { return loaded().why_not; }

const CublasApi& cublas_api() {
    const Loaded& l = loaded();
    if (l.why_not) throw Error(fmt::format("cuBLAS cannot be loaded: {}", *l.why_not));
    return l.api;
}

}  // namespace sixstep::gpu
