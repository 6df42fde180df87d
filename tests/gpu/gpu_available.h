// The GPU suite's one rule for machines without a usable GPU: every test
// case starts with
//     if (!sixstep::test::gpu_available()) return;
// which prints "GPU test skipped: <the reason>" — CTest reports that case as
// Skipped (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt), never as passed.
// With SIXSTEP_REQUIRE_GPU=1 (gpu/check-on-device.sh sets it) a missing GPU
// fails the case instead, so a device run cannot skip its way to green.
#pragma once
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "pipeline/llm/backend.h"

namespace sixstep::test {

inline bool gpu_available() {
    const auto why = llm::backend_unavailable(llm::BackendKind::cuda);
    if (!why) return true;
    const char* require = std::getenv("SIXSTEP_REQUIRE_GPU");
    if (require && *require && std::string(require) != "0") FAIL("SIXSTEP_REQUIRE_GPU is set, but " << *why);
    MESSAGE("GPU test skipped: " << *why);
    return false;
}

}  // namespace sixstep::test
