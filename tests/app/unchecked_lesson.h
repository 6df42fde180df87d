// A lesson the loader refuses, for the interpreter's side of what only a run
// finds (an engine's error at a step that did not expect it): parsed whole,
// then changed past the loader's checks — one request field taken out (every
// request gives what its model needs), or a remembered name pointed at
// another path (a text compared as a number).
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

inline app::Lesson remembering(app::Lesson lesson, std::size_t step, const std::string& name, const std::string& path) {
    for (auto& [n, p] : lesson.steps.at(step).remember)
        if (n == name) p = path;
    return lesson;
}

}  // namespace sixstep::test
