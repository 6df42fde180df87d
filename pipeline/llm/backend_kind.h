// BackendKind: where a forward pass runs, by name — what a command line
// (--backend), a lesson (model: {backend: …}) and the model registry pass
// around before any backend is made (backend.h makes them).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace sixstep::llm {

enum class BackendKind { cpu, cuda, auto_select };
std::string_view backend_kind_name(BackendKind kind);  // "cpu", "cuda", "auto"
std::optional<BackendKind> parse_backend_kind(std::string_view name);

// Why a kind cannot run here, or nothing when it can: "this build has no
// CUDA backend", "no CUDA device (cudaGetDeviceCount: insufficient driver)".
std::optional<std::string> backend_unavailable(BackendKind kind);

}  // namespace sixstep::llm
