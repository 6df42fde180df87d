// The model kinds sixstep knows — the one place that lists them. Everything
// else (lesson checking, the interpreter, the window, `sixstep paths`) asks
// here for a kind's description and never names a kind itself.
//
//     for (const std::string& kind : model_kinds())
//         for (const PathInfo& p : model_description(kind).paths) ...
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/model_description.h"

namespace sixstep {

// "delivery", "llm": in the order the docs list them.
const std::vector<std::string>& model_kinds();

// The kind's description, or null when there is no such kind.
const ModelDescription* find_model_description(std::string_view kind);

// The kind's description. Throws sixstep::Error: unknown model kind "lm" —
// did you mean "llm"? (known: delivery, llm)
const ModelDescription& model_description(std::string_view kind);

}  // namespace sixstep
