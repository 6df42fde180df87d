// The reference tables of lessons/README.md — for each model kind, its knobs
// (what `request:`, `set:` and `knobs:` take) and every path a lesson can
// `expect` on — written as Markdown from the kinds' own declarations, so the
// docs cannot drift from the engine. `sixstep paths --markdown` prints them;
// `--update FILE` rewrites them in place between marker comments:
//
//     <!-- BEGIN generated: sixstep paths --markdown --model delivery -->
//     …tables…
//     <!-- END generated: sixstep paths --markdown --model delivery -->
//
// tests/app/test_lesson_reference.cpp fails when lessons/README.md is out of date.
#pragma once
#include <string>

#include "pipeline/core/model_description.h"

namespace sixstep::app {

// The kind's two tables (knobs, then paths), with a heading line for each.
std::string reference_markdown(const ModelDescription& d);

// The marker lines around a kind's tables.
std::string reference_begin_marker(const std::string& kind);
std::string reference_end_marker(const std::string& kind);

// `text` with the tables between each pair of markers it holds replaced by
// the current ones. Throws sixstep::Error for a BEGIN without its END or a
// marker naming an unknown kind. `*sections` (optional) gets how many pairs
// were found.
std::string update_reference(const std::string& text, int* sections = nullptr);

}  // namespace sixstep::app
