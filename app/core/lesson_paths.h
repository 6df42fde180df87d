// Every path a lesson may `expect` on, for one model kind: what the kind
// declares (its trace, its response, its model and training values) and
// what the interpreter adds to any kind — the requests of a `serve:` step
// and the step's error. The lesson loader checks expect paths against this
// list, `sixstep paths` prints it, and lessons/README.md documents it.
#pragma once
#include <string_view>
#include <vector>

#include "pipeline/core/model_description.h"

namespace sixstep::app {

// The kind's paths, then served.* (count, distinct, cold, mean_warm_ms and
// each numeric response field as a list), then error.
std::vector<PathInfo> lesson_paths(const ModelDescription& d);

// The same, in the order the docs list them: the six stages in order, then
// response, model, train, served, error.
std::vector<PathInfo> ordered_lesson_paths(const ModelDescription& d);

// Throws sixstep::Error for a path the kind does not answer: unknown path
// "forward.raw_outptu" for the delivery model — did you mean
// "forward.raw_output"? (`sixstep paths --model delivery` lists them)
void check_lesson_path(const ModelDescription& d, std::string_view path);

}  // namespace sixstep::app
