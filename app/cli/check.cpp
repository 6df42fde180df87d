// sixstep check PATH... — run lessons headless and verify every expect.
// Exit 0 when all pass, 1 when an expectation fails, 2 when a lesson is invalid.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/cli/terminal.h"
#include "app/core/headless.h"
#include "app/core/lesson.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"
#include "pipeline/core/text.h"

namespace sixstep::cli {

namespace {
struct CheckOptions {
    std::vector<std::string> paths;
    bool json = false;
    int attempts = 1;  // runs of a lesson whose checks fail, at most
};

// One lesson, whatever is wrong with it: a broken file is one invalid lesson
// in the summary, never the end of the run (Ctrl+C still ends it).
app::LessonOutcome check_one(const std::string& file, bool json) {
    try {
        return app::run_lesson(file, nullptr, json);
    } catch (const Cancelled&) {
        throw;
    } catch (const std::exception& e) {
        app::LessonOutcome r;
        r.path = file;
        r.valid = false;
        r.error = printable(e.what());
        if (json) r.json = {{"lesson", file}, {"valid", false}, {"error", r.error}};
        return r;
    }
}

int run_check(const CheckOptions& o) {
    int passed = 0, failed = 0, invalid = 0;
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    std::vector<std::string> files;
    for (const auto& p : o.paths) {
        try {
            const auto found = app::find_lessons(p);
            files.insert(files.end(), found.begin(), found.end());
        } catch (const Error& e) {
            std::fprintf(stderr, "sixstep: error: %s\n", e.what());
            ++invalid;
        }
    }
    for (size_t i = 0; i < files.size(); ++i) {
        const std::string& f = files[i];
        const std::string name = printable(f);  // a file name may hold control characters too
        report_progress("checking lessons", i, files.size());
        app::LessonOutcome r = check_one(f, o.json);
        // A lesson whose checks failed runs again, up to --attempts runs in
        // all: its claims are ratios of times measured in milliseconds, and a
        // busy or shared machine (a virtual one losing its CPU for a host
        // tick) can turn one round. What the earlier runs said is kept.
        int runs = 1;
        std::vector<std::string> earlier;
        while (r.valid && r.failed && runs < o.attempts) {
            earlier.push_back(fmt::format("  run {}: {} of {} checks failed", runs, r.failed, r.checks));
            for (const auto& line : r.failures) earlier.push_back("  " + line);
            r = check_one(f, o.json);
            ++runs;
        }
        clear_progress();
        if (o.json && runs > 1) {
            r.json["runs"] = runs;
            r.json["earlier_failures"] = earlier;
        }
        if (o.json) all.push_back(r.json);
        if (!r.valid) {
            ++invalid;
            if (!o.json) std::printf("✗ %s\n  invalid lesson: %s\n", name.c_str(), r.error.c_str());
        } else if (r.failed) {
            ++failed;
            if (!o.json) {
                std::printf("✗ %s — %d of %d checks failed%s\n", name.c_str(), r.failed, r.checks,
                            runs > 1 ? fmt::format(" (in run {} of {})", runs, runs).c_str() : "");
                for (const auto& line : earlier) std::printf("%s\n", printable(line, true).c_str());
                if (runs > 1) std::printf("  run %d:\n", runs);
                for (const auto& line : r.failures)
                    std::printf("%s%s\n", runs > 1 ? "  " : "", printable(line, true).c_str());
            }
        } else {
            ++passed;
            if (!o.json) {
                std::printf("✓ %s (%s, %s%s)\n", name.c_str(), count_of(r.steps, "step", "steps").c_str(),
                            count_of(r.checks, "check", "checks").c_str(),
                            runs > 1 ? fmt::format("; passed in run {} of up to {}", runs, o.attempts).c_str() : "");
                for (const auto& line : earlier) std::printf("%s\n", printable(line, true).c_str());
            }
        }
        std::fflush(stdout);
    }
    if (o.json) {
        const nlohmann::ordered_json summary{
            {"lessons", all}, {"passed", passed}, {"failed", failed}, {"invalid", invalid}};
        std::printf("%s\n", app::dump_json(summary).c_str());
    } else {
        std::printf("lessons: %d passed, %d failed, %d invalid\n", passed, failed, invalid);
    }
    return invalid ? exit_bad_input : failed ? exit_failed : exit_ok;
}
}  // namespace

void add_check(CLI::App& app, Commands& commands) {
    auto opts = std::make_shared<CheckOptions>();
    auto* sub = app.add_subcommand("check", "Run lessons headless and verify every expect (exit 0 pass, 1 fail, 2 invalid)");
    sub->add_option("lessons", opts->paths, "Lesson files or folders (e.g. lessons/)")->required();
    sub->add_flag("--json", opts->json, "Print the results as JSON");
    sub->add_option("--attempts", opts->attempts,
                    "Runs of a lesson whose checks fail, at most (default 1): timing claims on a busy machine; the "
                    "earlier runs' failures are printed too")
        ->check(CLI::Range(1, 10));
    add_progress_option(sub);
    add_examples(sub, {"sixstep check lessons/01-six-steps.yaml lessons/zh/01-six-steps.yaml",
                      "sixstep check --json lessons/03-training-vs-inference.yaml"});
    commands.push_back({sub, [opts] { return run_check(*opts); }});
}

}  // namespace sixstep::cli
