#include "app/core/headless.h"

#include <algorithm>

#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "app/core/catalogue.h"
#include "app/core/interpreter.h"
#include "app/core/lesson.h"
#include "app/core/report.h"
#include "pipeline/core/data_dir.h"
#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"
#include "pipeline/core/text.h"

namespace sixstep::app {

int terminal_columns(std::FILE* f) {
    // A terminal says how wide it is; a pipe or file is as wide as $COLUMNS
    // says, or keeps the author's lines (logs and tests stay as written).
    winsize ws{};
    if (::isatty(::fileno(f)) == 1 && ::ioctl(::fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    if (const char* env = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const long n = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && n >= 20 && n <= 1000) return static_cast<int>(n);
    }
    return 0;
}

LessonOutcome run_lesson(const std::string& path, std::FILE* narrate, bool want_json) {
    LessonOutcome out;
    out.path = path;
    Lesson lesson;
    try {
        lesson = load_lesson(path);
    } catch (const Error& e) {
        out.valid = false;
        // Several problems found before step 1 are one per line (what() is
        // one line, its line breaks escaped).
        const std::string whole = e.where().known() ? e.where().str() + ": " + e.message() : e.message();
        out.error = elide(printable(whole, true), max_message_bytes);
        if (want_json) out.json = {{"lesson", path}, {"valid", false}, {"error", out.error}};
        return out;
    }
    out.title = lesson.title;
    const int columns = narrate ? terminal_columns(narrate) : 0;
    // Narration quotes the lesson and what the engine produced: printable()
    // keeps line breaks but no terminal escapes (pipeline/core/text.h).
    if (narrate) {
        std::fprintf(narrate, "%s\n", printable(lesson.title, true).c_str());
        if (!lesson.description.empty())
            std::fprintf(narrate, "%s", printable(wrap_text(lesson.description, columns, ""), true).c_str());
    }
    Interpreter it(std::move(lesson));
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    std::vector<std::string> narrated_failures;  // in the lesson's language
    while (!it.finished()) {
        if (narrate) {
            const int i = it.position();
            std::fprintf(narrate, "%s",
                         printable(format_step_heading(it.lesson().steps[static_cast<size_t>(i)], i,
                                                       static_cast<int>(it.lesson().steps.size()), it.lesson().language,
                                                       columns),
                                   true)
                             .c_str());
            std::fflush(narrate);
        }
        const StepReport r = it.step();
        // Ctrl+C during a step whose work does not stop by itself (requests
        // failing as a server shuts down): its results are not results.
        throw_if_cancelled();
        ++out.steps;
        // A copied step's checks point at the lines of the step it copies.
        const std::string note = r.step && r.step->copy_of >= 0
                                     ? fmt::format("step {}, a copy of step {}", r.index + 1, r.step->copy_of + 1)
                                     : "";
        // `check` prints only its failures: a failure on a step that warned
        // ("congestion = 30 is outside the training range") carries the
        // warnings, the likelier cause, under it.
        std::vector<std::string> warned;
        for (const auto& ev : r.events)
            for (const std::string& w : ev.warnings)
                if (std::find(warned.begin(), warned.end(), w) == warned.end()) warned.push_back(w);
        // In the lesson's language, as its narration says them.
        if (r.step)
            for (const std::string& w : warned) {
                const std::string line = fmt::format("{}: step {} warned: {}", r.step->where.str(), r.index + 1, w);
                out.warnings.push_back(translate(it.lesson().language, line).value_or(line));
            }
        bool told = false;
        for (const auto& c : r.checks) {
            ++out.checks;
            CheckSeen seen{c.expectation.where.str(), c.expectation.path + " " + c.expectation.describe("and"),
                           c.passed, c.got_number, "", std::nullopt, false};
            seen.ordered = std::all_of(c.expectation.conditions.begin(), c.expectation.conditions.end(), [](const Condition& k) {
                return k.op == Condition::Op::below || k.op == Condition::Op::above;
            });
            if (c.named.size() == 1) {
                char* end = nullptr;
                const std::string& v = c.named.front().second;
                const double x = std::strtod(v.c_str(), &end);
                if (end != v.c_str() && *end == '\0' && std::isfinite(x) && x != 0)
                    seen.against_name = c.named.front().first, seen.against = x;
            }
            out.seen.push_back(std::move(seen));
            if (!c.passed) {
                ++out.failed;
                out.failures.push_back(format_check(c, "en", note));  // for `check`'s summary
                narrated_failures.push_back(format_check(c, it.lesson().language, note));
                if (!told)
                    for (const std::string& w : warned) out.failures.push_back("      ⚠ the step warned: " + w);
                told = true;
            }
        }
        if (narrate) {
            clear_progress();  // a training step may have drawn a progress line
            std::fprintf(narrate, "%s", printable(format_step(r, it.state()), true).c_str());
        }
        if (want_json) {
            nlohmann::ordered_json j = to_json(r);
            const LessonState& st = it.state();
            if (st.response && !r.events.empty() && r.events.back().stage == Stage::respond)
                j["response"] = st.response->text;
            steps.push_back(std::move(j));
        }
    }
    if (narrate) {
        const std::string tally = fmt::format("{} check{}: {} passed, {} failed", out.checks, out.checks == 1 ? "" : "s",
                                              out.checks - out.failed, out.failed);
        std::fprintf(narrate, "\n%s\n", translate(it.lesson().language, tally).value_or(tally).c_str());
        // The failures again, where the eye lands last: in a narration of
        // hundreds of lines they are otherwise found by scrolling.
        for (const std::string& f : narrated_failures) std::fprintf(narrate, "%s\n", printable(f, true).c_str());
    }
    if (want_json) {
        out.json["lesson"] = path;
        out.json["title"] = it.lesson().title;
        out.json["language"] = it.lesson().language;
        out.json["description"] = it.lesson().description;
        out.json["valid"] = true;
        out.json["steps"] = std::move(steps);
        out.json["checks"] = out.checks;
        out.json["failed"] = out.failed;
    }
    return out;
}

void print_lesson_list(std::FILE* out) {
    const std::string folder = default_lessons_folder();
    std::vector<std::string> files;
    try {
        files = find_lessons(folder);
    } catch (const Error&) {
        // No such folder, or no lessons in it: the example alone.
    }
    // Each lesson's title, or why it does not load; the example is the first
    // that loads (a broken lesson first in a folder was offered as one).
    std::vector<std::string> titles;
    std::string first;
    for (const std::string& f : files) {
        try {
            titles.push_back(load_lesson(f).title);
            if (first.empty()) first = f;
        } catch (const std::exception& e) {
            const std::string why = e.what();
            titles.push_back("(does not load: " + why.substr(0, why.find('\n')) + ")");
        }
    }
    if (first.empty()) first = files.empty() ? "lessons/01-six-steps.yaml" : files.front();
    std::fprintf(out, "sixstep: error: give a lesson to narrate, e.g. sixstep --headless %s\n", printable(first).c_str());
    if (files.empty()) {
        // Say why there is no list: most often no data folder (a binary copied alone).
        try {
            std::error_code ec;
            const char* env = std::getenv("SIXSTEP_LESSONS");
            if (env && !std::filesystem::is_directory(folder, ec))
                std::fprintf(out, "no lessons: SIXSTEP_LESSONS names %s, which is not a folder\n", printable(folder).c_str());
            else {
                (void)data_dir();
                std::fprintf(out, "no lessons in %s\n", printable(folder).c_str());
            }
        } catch (const Error& e) {
            std::fprintf(out, "no lessons to list: %s\n", e.what());
        }
        return;
    }
    std::fprintf(out, "the lessons in %s:\n", printable(folder).c_str());
    const std::filesystem::path base(folder);
    for (std::size_t i = 0; i < files.size(); ++i) {
        std::string name = std::filesystem::path(files[i]).lexically_relative(base).string();
        if (name.empty() || name == ".") name = files[i];  // the folder is the lesson itself
        // One line per lesson, whatever a title holds (a 1 MB title printed
        // whole); an error with its file:line:column, whole up to 400 bytes.
        std::fprintf(out, "  %-44s %s\n", printable(name).c_str(), printable_cut(titles[i], 400).c_str());
    }
}

}  // namespace sixstep::app
