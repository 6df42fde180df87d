// The model kinds sixstep knows — the one place that lists them. Everything
// else (lesson checking, the interpreter, the window, `sixstep paths`) asks
// here for a kind's description and never names a kind itself.
//
//     for (const std::string& kind : model_kinds())
//         for (const PathInfo& p : model_description(kind).paths) ...
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/model.h"
#include "pipeline/core/model_description.h"
#include "pipeline/llm/backend_kind.h"

namespace sixstep {

// "delivery", "llm", "serving", "endpoint": in the order the docs list them.
// (The endpoint kind speaks HTTP, so its model is built by the app:
// app/server/endpoint_model.h; only its description is here.)
const std::vector<std::string>& model_kinds();

// The kind's description, or null when there is no such kind.
const ModelDescription* find_model_description(std::string_view kind);

// The kind's description. Throws sixstep::Error: unknown model kind "lm" —
// did you mean "llm"? (known: delivery, llm, serving, endpoint)
const ModelDescription& model_description(std::string_view kind);

// The kinds whose weights are a GGUF file ("llm", "serving"): a lesson's
// model names the file, and make_gguf_model builds them.
bool reads_gguf(std::string_view kind);

struct GgufModelOptions {
    std::filesystem::path file;  // the GGUF model (serving: empty for none, as the canary needs)
    std::string random;          // or a random-weight F32 model of this preset (random_model.h), cached
    int n_threads = 0;           // CPU threads; <= 0 → the backend's default
    int top_n = 5;               // llm: rows of the next-token probability table
    llm::BackendKind backend = llm::BackendKind::cpu;  // where the forward pass runs
};

// A model of a kind that reads_gguf; nothing is opened until its first
// request. Throws sixstep::Error for any other kind.
std::unique_ptr<Model> make_gguf_model(std::string_view kind, const GgufModelOptions& options);

}  // namespace sixstep
