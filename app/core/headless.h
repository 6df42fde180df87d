// The headless front end: the same lessons, narrated in a terminal or checked
// in CI. It is the interpreter with a text (or JSON) printer — not a second
// code path.
#pragma once
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sixstep::app {

// One check as one run found it: `check --repeat` sets runs side by side.
struct CheckSeen {
    std::string where;          // "lesson.yaml:14:7"
    std::string what;           // "postprocess.ttft_p50_ratio < 1", "forward.x > 2 × forward.y"
    bool passed = false;
    std::optional<double> got;  // the value, when a number
    // A check against one other value (a path, a remembered name): its name
    // and this run's value, for the margin got ÷ it.
    std::string against_name;
    std::optional<double> against;
    // Only below and above have a margin as a ratio: for = and ≈ (a token id
    // against another) the two values are what an author wants to see.
    bool ordered = false;
};

struct LessonOutcome {
    std::string path;
    std::string title;
    bool valid = true;        // false: the lesson could not be loaded (error says why)
    std::string error;
    int steps = 0;
    int checks = 0;
    int failed = 0;
    std::vector<std::string> failures;  // formatted, with file:line:column
    // Each step's warnings, once, with its file:line:column: a lesson that
    // passes may still send what the model never saw ("congestion: 30",
    // meant as 30 %), which `check` says beside its tick.
    std::vector<std::string> warnings;
    std::vector<CheckSeen> seen;        // every check, in the order the run made them
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
