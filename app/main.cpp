// sixstep — argument parsing and wiring only. Every command lives in app/cli/;
// the window in app/ui/; the headless narration in app/core/headless.
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "app/core/headless.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"
#include "pipeline/core/suggest.h"
#include "pipeline/core/text.h"
#ifdef SIXSTEP_HAVE_GUI
#include "app/ui/gui.h"
#endif

namespace {

// Two of CLI11's messages in the words of the rest: "--n-predict: At Most 1
// required but received 2" and "The following argument was not expected: b"
// (a text with a space in it, unquoted, is the usual cause).
std::string in_our_words(const std::string& what) {
    static const std::regex repeated(R"(^(\S+): At Most 1 required but received (\d+)$)");
    static const std::regex extra(R"(^The following arguments? (?:was|were) not expected: (.*)$)");
    static const std::regex unconverted(R"(^Could not convert: (\S+) = (.*)$)");
    std::smatch m;
    // Every number option's text is checked first (validators.h), so what
    // CLI11 still cannot convert is a whole number past the option's type:
    // "Could not convert: --requests = 2147483648" said neither.
    if (std::regex_match(what, m, unconverted)) {
        const std::string value = m[2].str();
        static const std::regex whole(R"(^-?[0-9]+$)");
        if (!std::regex_match(value, whole)) return fmt::format("{}: \"{}\" is not a value it takes", m[1].str(), value);
        const bool negative = value[0] == '-';
        long long v = 0;
        // One that fits in 64 bits went to a 32-bit int: name its bound.
        if (std::from_chars(value.data(), value.data() + value.size(), v).ec == std::errc())
            return fmt::format("{}: {} is too {} (at {} {})", m[1].str(), value, negative ? "small" : "large",
                               negative ? "least" : "most", negative ? INT_MIN : INT_MAX);
        return fmt::format("{}: {} is too {} a number", m[1].str(), value, negative ? "small" : "large");
    }
    if (std::regex_match(what, m, repeated))
        return fmt::format("{} is given {} times: give it once", m[1].str(), m[2].str());
    if (std::regex_match(what, m, extra))
        return fmt::format("{} {} not expected (a value with spaces in it goes in quotes: \"a b\")", m[1].str(),
                           m[1].str().find(' ') == std::string::npos ? "was" : "were");
    return what;
}

// CLI11's "The following arguments were not expected: 1 --distance-x" joins
// the words back to front with spaces, so `--distance-x 1` read as one
// thing called "1 --distance-x". The words as given, in order: an unknown
// option by name first (a value after it is its value), else the word, or
// each word quoted.
std::string extras_in_our_words(const CLI::App* app) {
    const std::vector<std::string> extra = app->remaining(true);
    std::string command = "sixstep";
    for (const CLI::App* at = app; !at->get_subcommands().empty();) {
        at = at->get_subcommands().front();
        command += " " + at->get_name();
    }
    for (const std::string& word : extra)
        if (word.size() > 1 && word[0] == '-' && !std::isdigit(static_cast<unsigned char>(word[1])) && word[1] != '.')
            return fmt::format("{} is not an option of `{}` (`{} --help` lists them)", word, command, command);
    std::string quoted = extra.size() == 1 ? extra[0] : "";
    if (extra.size() > 1)
        for (const std::string& word : extra) quoted += (quoted.empty() ? "\"" : ", \"") + word + "\"";
    return fmt::format("{} {} not expected (a value with spaces in it goes in quotes: \"a b\")", quoted,
                       extra.size() == 1 ? "was" : "were");
}

// `sixstep [--headless] [--json] [LESSON]`: the window when there is one, else
// the same lesson narrated in the terminal.
int run_lesson_front_end(const std::string& lesson, bool headless, bool json, const std::vector<std::string>& commands) {
    using namespace sixstep;
#ifdef SIXSTEP_HAVE_GUI
    if (!headless && !json) {
        if (ui::display_available()) {
            const int rc = ui::run_app(lesson);
            if (rc != ui::no_window) return rc;
        }
        std::error_code ec;
        if (!lesson.empty() && std::filesystem::exists(lesson, ec))
            std::fprintf(stderr, "sixstep: no display — narrating the lesson in the terminal instead\n");
    }
#endif
    if (lesson.empty()) {
        app::print_lesson_list(stderr);
        return cli::exit_bad_input;
    }
    std::error_code ec;
    if (!std::filesystem::exists(lesson, ec)) {
        // "sixstep infr": a mistyped command reads as a lesson file that is not there.
        if (const std::string near = closest_name(lesson, commands); !near.empty())
            throw Error(fmt::format("no command or lesson file \"{}\" — did you mean the command \"{}\"? "
                                    "(sixstep --help lists them)",
                                    printable_cut(lesson, 200), near));
        // "lessons/01-six-step.yaml": the lesson beside it with the nearest name.
        const std::filesystem::path p(lesson);
        const std::filesystem::path folder = p.has_parent_path() ? p.parent_path() : ".";
        std::vector<std::string> names;
        for (std::filesystem::directory_iterator d(folder, ec), end; !ec && d != end; d.increment(ec))
            if (d->path().extension() == ".yaml") names.push_back(d->path().filename().string());
        if (const std::string near = closest_name(p.filename().string(), names); !near.empty())
            throw Error(fmt::format("{}: no such lesson file — did you mean {}?", printable_cut(lesson, 200),
                                    printable((folder / near).lexically_normal().string())));
    }
    cli::start_terminal_front_end();
    const app::LessonOutcome r = app::run_lesson(lesson, json ? nullptr : stdout, json);
    if (json) std::printf("%s\n", app::dump_json(r.json).c_str());
    if (!r.valid) std::fprintf(stderr, "sixstep: error: %s\n", r.error.c_str());
    return r.exit_code();
}

// A list option that starts empty ("--stop", "--batch") shows no "=[]".
void hide_empty_defaults(CLI::App& app) {
    for (CLI::Option* o : app.get_options())
        if (o->get_default_str() == "[]") o->default_str("");
    for (CLI::App* sub : app.get_subcommands({})) hide_empty_defaults(*sub);
}

// What was printed must have reached its file: a full disk (or > /dev/full)
// under a CI log or `> results.json` is an error, not an empty success.
int finish_output(int rc) {
    if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return rc;
    const int err = errno;
    std::fprintf(stderr, "sixstep: error: writing the output: %s\n", std::strerror(err));
    return rc != sixstep::cli::exit_ok ? rc : sixstep::cli::exit_bad_input;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace sixstep::cli;
    CLI::App app{"sixstep — walk one AI inference request through its six steps, then serve millions.\n"
                 "With a lesson and a display, opens the classroom window; otherwise narrates in the terminal.",
                 "sixstep"};
    app.set_version_flag("--version", std::string("sixstep ") + SIXSTEP_VERSION);
    // Every option's help shows its default ("--max-batch INT=8"): subcommands
    // inherit this as they are made.
    app.option_defaults()->always_capture_default();
    app.require_subcommand(0, 1);
    std::string lesson;
    bool headless = false, json = false;
    app.add_option("lesson", lesson, "A lesson file (YAML), e.g. lessons/01-six-steps.yaml");
    app.add_flag("--headless", headless, "Narrate the lesson in the terminal and run its checks (exit 0 pass, 1 fail, 2 invalid)");
    app.add_flag("--json", json, "With --headless: print the run as JSON");
    add_progress_option(&app);
    // CLI11 quotes what it could not parse as given: escape sequences and a
    // 100 KB value would reach the terminal raw, like any message that quotes
    // a user (pipeline/core/text.h). Its messages begin like every other
    // error's, "sixstep: error: ", then its hint to ask for --help.
    app.failure_message([](const CLI::App* a, const CLI::Error& e) {
        const std::string what = e.what(), simple = CLI::FailureMessage::simple(a, e);
        const std::string rest = simple.rfind(what, 0) == 0 ? simple.substr(what.size()) : "\n";
        const bool extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !a->remaining(true).empty();
        return "sixstep: error: " +
               sixstep::printable_cut(extras ? extras_in_our_words(a) : in_our_words(what), sixstep::max_message_bytes) +
               rest;
    });

    Commands commands;
    add_infer(app, commands);
    add_check(app, commands);
    add_generate(app, commands);
    add_tokenize(app, commands);
    add_bench(app, commands);
    add_inspect(app, commands);
    add_queue(app, commands);
    add_screenshot(app, commands);
    add_kv_calc(app, commands);
    add_bill(app, commands);
    add_quantize(app, commands);
    add_perplexity(app, commands);
    add_paths(app, commands);
    add_traffic(app, commands);
    add_speculate(app, commands);
    add_coldstart(app, commands);
    add_waits(app, commands);
    add_canary(app, commands);
    add_serve(app, commands);
    add_load(app, commands);
    add_examples(&app, {"sixstep lessons/01-six-steps.yaml            # the window; the terminal without a display",
                        "sixstep --headless lessons/02-training-serving-skew.yaml",
                        "sixstep --headless --json lessons/01-six-steps.yaml",
                        "sixstep check lessons/01-six-steps.yaml      # its checks: exit 0 when they hold",
                        "sixstep infer delivery --distance \"3 km\" --congestion 0 --express-lane 0"});
    check_every_number(app);
    hide_empty_defaults(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? exit_ok : exit_bad_input;
    }
    for (const auto& c : commands) {
        if (!c.app->parsed()) continue;
        // Ctrl+C and progress lines for the terminal; screenshot renders like
        // the window and keeps the default Ctrl+C.
        if (c.app->get_name() != "screenshot") start_terminal_front_end();
        return finish_output(guarded(c.run));
    }
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    return finish_output(guarded([&] { return run_lesson_front_end(lesson, headless, json, names); }));
}
