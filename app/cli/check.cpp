// sixstep check PATH... — run lessons headless and verify every expect.
// Exit 0 when all pass, 1 when an expectation fails, 2 when a lesson is invalid.
#include <algorithm>
#include <cmath>
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
    int repeat = 1;    // runs of every lesson, side by side: each check's passes and values
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

// --repeat: a lesson run `runs` times, each check's passes and the range of
// its values side by side, so an author sees how much room a timing claim
// has before it fails ("0.40–0.53 (median 0.47)" against "< 1").
struct CheckTally {
    std::string where, what;
    int passed = 0, seen = 0;
    std::vector<double> values;  // the value, or got ÷ the compared value (ordered, against_name)
    std::string against_name;
    bool ordered = false;
    std::vector<double> againsts;  // the compared value, where = or ≈ shows it beside got
};

std::vector<CheckTally> tally(const std::vector<app::LessonOutcome>& runs) {
    std::vector<CheckTally> out;
    for (const app::LessonOutcome& r : runs)
        for (const app::CheckSeen& c : r.seen) {
            auto it = std::find_if(out.begin(), out.end(),
                                   [&](const CheckTally& t) { return t.where == c.where && t.what == c.what; });
            if (it == out.end())
                it = out.insert(out.end(), CheckTally{c.where, c.what, 0, 0, {}, c.against_name, c.ordered, {}});
            ++it->seen;
            it->passed += c.passed ? 1 : 0;
            if (!c.got || !std::isfinite(*c.got)) continue;
            // Against another value, which moves from run to run too: for
            // < and > the ratio is the margin; for = and ≈ (a token id
            // against another) a ratio means nothing, so both values show.
            const bool ratio = c.against && c.ordered;
            it->values.push_back(ratio ? *c.got / *c.against : *c.got);
            if (c.against && !ratio) it->againsts.push_back(*c.against);
        }
    return out;
}

// "1.04–1.63 (median 1.25)", or "128" when every run read the same: four
// digits, more where they would print two values that differ alike, and
// four again when even nine do not tell them apart (a simulation's mean
// that moved in its 12th digit printed as 193.248426).
std::string spread(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const double median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    int digits = 4;
    while (v.front() != v.back() && digits < 9 && readable_number(v.front(), digits) == readable_number(v.back(), digits))
        ++digits;
    const std::string lo = readable_number(v.front(), digits), hi = readable_number(v.back(), digits);
    return lo == hi ? readable_number(v.front(), 4) : fmt::format("{}–{} (median {})", lo, hi, readable_number(median, digits));
}

// The lesson's line and one line per check that failed in some run or
// compared a number; exit code of its own (0, 1 or 2).
int print_repeated(const std::string& name, const std::vector<app::LessonOutcome>& runs) {
    const app::LessonOutcome& last = runs.back();
    if (!last.valid) {
        std::printf("✗ %s\n  invalid lesson: %s\n", name.c_str(), last.error.c_str());
        return exit_bad_input;
    }
    const std::vector<CheckTally> checks = tally(runs);
    const int n = static_cast<int>(runs.size());
    const auto flaky = std::count_if(checks.begin(), checks.end(), [&](const CheckTally& t) { return t.passed < n; });
    if (flaky == 0)
        std::printf("✓ %s: every check held in all %d runs\n", name.c_str(), n);
    else
        std::printf("✗ %s: %s failed in some of %d runs\n", name.c_str(),
                    count_of(static_cast<std::size_t>(flaky), "check", "checks").c_str(), n);
    for (const CheckTally& t : checks) {
        if (t.passed == n && t.values.empty()) continue;
        std::string range;
        if (!t.values.empty()) {
            const bool ratio = !t.against_name.empty() && t.ordered;
            range = fmt::format(" — {} {}", ratio ? fmt::format("got ÷ {}", t.against_name) : std::string("got"),
                                spread(t.values));
            if (!t.againsts.empty()) range += fmt::format("; {} {}", t.against_name, spread(t.againsts));
        }
        std::printf("  %s %d/%d  %s %s%s\n", t.passed == n ? "✓" : "✗", t.passed, n, printable(t.where).c_str(),
                    printable(t.what).c_str(), range.c_str());
    }
    return flaky ? exit_failed : exit_ok;
}

int run_repeated(const CheckOptions& o, const std::vector<std::string>& files, int invalid_paths) {
    int worst = invalid_paths ? exit_bad_input : exit_ok;
    int passed = 0, failed = 0, invalid = invalid_paths;
    for (std::size_t i = 0; i < files.size(); ++i) {
        std::vector<app::LessonOutcome> runs;
        for (int k = 0; k < o.repeat; ++k) {
            report_progress(fmt::format("checking lessons ({} runs each)", o.repeat), i * o.repeat + k,
                            files.size() * o.repeat);
            runs.push_back(check_one(files[i], false));
            if (!runs.back().valid) break;
        }
        clear_progress();
        const int rc = print_repeated(printable(files[i]), runs);
        (rc == exit_bad_input ? invalid : rc == exit_failed ? failed : passed) += 1;
        if (rc == exit_bad_input || (rc == exit_failed && worst == exit_ok)) worst = rc;
        std::fflush(stdout);
    }
    std::printf("lessons: %d passed in every run, %d failed in some, %d invalid\n", passed, failed, invalid);
    return invalid ? exit_bad_input : worst;
}

int run_check(const CheckOptions& o) {
    if (o.repeat > 1 && o.attempts > 1) throw Error("--repeat and --attempts: choose one (--repeat runs every lesson N times and counts)");
    if (o.repeat > 1 && o.json) throw Error("--repeat prints each check's passes and values as a table; --json is for single runs");
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
    if (o.repeat > 1) return run_repeated(o, files, invalid);
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
                for (const auto& line : r.warnings) std::printf("  ⚠ %s\n", printable(line).c_str());
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
    sub->add_option("--repeat", opts->repeat,
                    "Run every lesson N times and print each check's passes and the range of its values: how much "
                    "room a timing claim has before it fails")
        ->check(CLI::Range(1, 100));
    add_progress_option(sub);
    add_examples(sub, {"sixstep check lessons/01-six-steps.yaml lessons/zh/01-six-steps.yaml",
                      "sixstep check --json lessons/03-training-vs-inference.yaml",
                      "sixstep check --repeat 5 lessons/01-six-steps.yaml"});
    commands.push_back({sub, [opts] { return run_check(*opts); }});
}

}  // namespace sixstep::cli
