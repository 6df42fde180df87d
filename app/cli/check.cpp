// sixstep check PATH... — run lessons headless and verify every expect.
// Exit 0 when all pass, 1 when an expectation fails, 2 when a lesson is invalid.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/core/headless.h"
#include "app/core/lesson.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"

namespace sixstep::cli {

namespace {
struct CheckOptions {
    std::vector<std::string> paths;
    bool json = false;
};

int run_check(const CheckOptions& o) {
    int passed = 0, failed = 0, invalid = 0;
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& p : o.paths) {
        std::vector<std::string> files;
        try {
            files = app::find_lessons(p);
        } catch (const Error& e) {
            std::fprintf(stderr, "sixstep: error: %s\n", e.what());
            ++invalid;
            continue;
        }
        for (const auto& f : files) {
            const app::LessonOutcome r = app::run_lesson(f, nullptr, o.json);
            if (o.json) all.push_back(r.json);
            if (!r.valid) {
                ++invalid;
                if (!o.json) std::printf("✗ %s\n  invalid lesson: %s\n", f.c_str(), r.error.c_str());
            } else if (r.failed) {
                ++failed;
                if (!o.json) {
                    std::printf("✗ %s — %d of %d checks failed\n", f.c_str(), r.failed, r.checks);
                    for (const auto& line : r.failures) std::printf("%s\n", line.c_str());
                }
            } else {
                ++passed;
                if (!o.json) std::printf("✓ %s (%d steps, %d checks)\n", f.c_str(), r.steps, r.checks);
            }
        }
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
    sub->add_option("paths", opts->paths, "Lesson files or folders")->required();
    sub->add_flag("--json", opts->json, "Print the results as JSON");
    commands.push_back({sub, [opts] { return run_check(*opts); }});
}

}  // namespace sixstep::cli
