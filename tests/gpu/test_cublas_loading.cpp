// cuBLAS is loaded when the CUDA backend first needs it, not when a sixstep
// program starts (gpu/cublas_api.h). Neither case needs a GPU: the library
// loads without one, and every CUDA build is checked, CI's included.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <cublas_v2.h>
#include <fmt/format.h>

#include "gpu/cublas_api.h"
#include "pipeline/core/error.h"

using namespace sixstep::gpu;

namespace {

// Whether a file whose name contains `what` is mapped into this process.
bool mapped(const std::string& what) {
    std::ifstream maps("/proc/self/maps");
    std::stringstream all;
    all << maps.rdbuf();
    return all.str().find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("cublas loading: nothing of cuBLAS is in a process until the backend asks for it") {
    // Each case is a process of its own (CTest runs them one by one), so
    // nothing has asked yet: linking libcublas again would map it here.
    CHECK_FALSE(mapped("libcublas"));
    const auto why = cublas_unavailable();
    if (why) {
        // A toolkit without the library: the reason names it, and asking for
        // the functions is an error, not a crash.
        MESSAGE("cuBLAS not loadable here: " << *why);
        CHECK(why->find(cublas_library_name()) != std::string::npos);
        CHECK_THROWS_WITH_AS(cublas_api(), doctest::Contains("cuBLAS cannot be loaded"), sixstep::Error);
        return;
    }
    CHECK(mapped(cublas_library_name()));
    const CublasApi& api = cublas_api();
    // Every function found (the double parentheses keep doctest from printing function pointers).
    REQUIRE((api.create && api.destroy && api.set_stream && api.set_math_mode && api.sgemm && api.status_name &&
             api.status_string));
    // The loaded library answers as cuBLAS, without a GPU.
    CHECK(std::string(api.status_name(CUBLAS_STATUS_NOT_INITIALIZED)) == "CUBLAS_STATUS_NOT_INITIALIZED");
    CHECK(std::string(api.status_string(CUBLAS_STATUS_SUCCESS)).size() > 0);
}

TEST_CASE("cublas loading: the library asked for is the headers' major version") {
    CHECK(cublas_library_name() == fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR));
}
