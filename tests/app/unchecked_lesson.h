// A lesson the loader refuses, for the interpreter's side of what only a run
// finds (an engine's error at a step that did not expect it): parsed whole,
// then one request field taken out, past the loader's check that every
// request gives what its model needs.
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>

#include "app/core/lesson.h"

namespace sixstep::test {

inline app::Lesson without_field(app::Lesson lesson, std::size_t step, const std::string& field) {
    auto& fields = *lesson.steps.at(step).request;
    fields.erase(std::remove_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == field; }),
                 fields.end());
    return lesson;
}

}  // namespace sixstep::test
