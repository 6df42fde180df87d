// The headless front end: the same lessons, narrated in a terminal or checked
// in CI. It is the interpreter with a text (or JSON) printer — not a second
// code path.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sixstep::app {

struct LessonOutcome {
    std::string path;
    std::string title;
    bool valid = true;        // false: the lesson could not be loaded (error says why)
    std::string error;
    int steps = 0;
    int checks = 0;
    int failed = 0;
    std::vector<std::string> failures;  // formatted, with file:line:column
    nlohmann::ordered_json json;        // the full run, when asked for
    int exit_code() const { return !valid ? 2 : failed ? 1 : 0; }
};

// How wide a narration written to `f` may be: a terminal's width, else
// $COLUMNS (20 to 1000), else 0 — the author's own lines, unwrapped.
int terminal_columns(std::FILE* f);

// Runs every step of a lesson. `narrate` (may be null) receives the text
// narration as it happens; with `want_json` the outcome carries the full run.
LessonOutcome run_lesson(const std::string& path, std::FILE* narrate, bool want_json);

// Named no lesson, and no window to pick one in: says so, then lists the
// lessons of default_lessons_folder() (lesson.h), each with its title (or
// why it does not load), so the next command can be copied from the list.
void print_lesson_list(std::FILE* out);

}  // namespace sixstep::app
