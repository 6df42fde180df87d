// sixstep paths [--model delivery|llm] [--json | --markdown [--update FILE]]
//   Every path a lesson can `expect` on, with its type, unit and meaning, and
//   every knob a lesson can turn (`set:` takes the settings among them) —
//   printed from the model kinds' own descriptions, so it cannot drift from
//   what the engine emits. --markdown prints lessons/README.md's reference
//   tables; --update FILE rewrites them in FILE between their marker comments.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/core/lesson_paths.h"
#include "app/core/lesson_reference.h"
#include "pipeline/core/error.h"
#include "app/core/report.h"
#include "pipeline/core/file.h"
#include "pipeline/core/suggest.h"
#include "pipeline/models.h"

namespace sixstep::cli {

namespace {

struct PathsOptions {
    std::string model;  // empty: every kind
    bool json = false;
    bool markdown = false;
    std::string update;  // with markdown: the file whose marked tables to rewrite
};

int update_file(const std::string& path) {
    const std::string before = read_regular_file(path, "the file", 16u << 20);
    int sections = 0;
    std::string after;
    try {
        after = app::update_reference(before, &sections);
    } catch (const Error& e) {
        throw Error(SourceLocation{path}, e.message());
    }
    if (sections == 0)
        throw Error(SourceLocation{path}, fmt::format("no reference markers: put the tables between \"{}\" and \"{}\"",
                                                      app::reference_begin_marker("KIND"),
                                                      app::reference_end_marker("KIND")));
    if (after == before) {
        std::printf("%s: %d reference table section%s up to date\n", path.c_str(), sections, sections == 1 ? "" : "s");
        return exit_ok;
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!(out << after)) throw Error(SourceLocation{path}, "cannot write the file");
    std::printf("%s: %d reference table section%s rewritten\n", path.c_str(), sections, sections == 1 ? "" : "s");
    return exit_ok;
}

// Columns on a terminal: one per character, not per UTF-8 byte ("≤", "²").
std::size_t columns(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

std::string target_name(KnobTarget t) { return t == KnobTarget::request ? "request" : "setting"; }

void print_text(const ModelDescription& d) {
    std::printf("%s — %s\n\n", d.kind.c_str(), d.title.c_str());
    const std::vector<PathInfo> paths = app::ordered_lesson_paths(d);
    std::size_t w = 4;
    for (const auto& p : paths) w = std::max(w, columns(p.path));
    std::printf("  %s\n", fmt::format("{:<{}}  {:<7}  {:<6}  {}", "path", w, "type", "unit", "meaning").c_str());
    for (const auto& p : paths)
        std::printf("  %s\n",
                    fmt::format("{:<{}}  {:<7}  {:<6}  {}", p.path, w, value_type_name(p.type), p.unit, p.meaning).c_str());
    std::size_t kw = 4, rw = 5;
    for (const auto& k : d.knobs) kw = std::max(kw, columns(k.name)), rw = std::max(rw, columns(k.range_text()));
    std::printf("\n  %s\n", fmt::format("{:<{}}  {:<6}  {:<7}  {:<{}}  {:<7}  {}", "knob", kw, "type", "edits", "range",
                                        rw, "default", "meaning")
                                .c_str());
    for (const auto& k : d.knobs) {
        const std::string meaning = k.unit.empty() ? k.meaning : fmt::format("{} [{}]", k.meaning, k.unit);
        std::printf("  %s\n", fmt::format("{:<{}}  {:<6}  {:<7}  {:<{}}  {:<7}  {}", k.name, kw, knob_type_name(k.type),
                                          target_name(k.target), k.range_text(), rw,
                                          k.default_value.empty() ? "\u2014" : k.default_value, meaning)
                                  .c_str());
    }
}

nlohmann::ordered_json to_json(const ModelDescription& d) {
    nlohmann::ordered_json j;
    j["kind"] = d.kind;
    j["title"] = d.title;
    auto& paths = j["paths"] = nlohmann::ordered_json::array();
    for (const auto& p : app::ordered_lesson_paths(d))
        paths.push_back({{"path", p.path}, {"type", value_type_name(p.type)}, {"unit", p.unit}, {"meaning", p.meaning}});
    auto& knobs = j["knobs"] = nlohmann::ordered_json::array();
    for (const auto& k : d.knobs)
        knobs.push_back({{"name", k.name},
                         {"type", knob_type_name(k.type)},
                         {"edits", target_name(k.target)},
                         {"range", k.range_text()},
                         {"default", k.default_value},
                         {"unit", k.unit},
                         {"meaning", k.meaning}});
    return j;
}

int run_paths(const PathsOptions& o) {
    if (!o.update.empty()) return update_file(o.update);
    std::vector<const ModelDescription*> kinds;
    if (!o.model.empty()) kinds.push_back(&model_description(o.model));  // an unknown kind throws: exit 2
    else
        for (const auto& k : model_kinds()) kinds.push_back(&model_description(k));
    if (o.json) {
        nlohmann::ordered_json all = nlohmann::ordered_json::array();
        for (const ModelDescription* d : kinds) all.push_back(to_json(*d));
        std::printf("%s\n", app::dump_json(nlohmann::ordered_json{{"models", all}}).c_str());
        return exit_ok;
    }
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        if (i) std::printf("\n");
        if (o.markdown)
            std::printf("%s\n\n%s%s\n", app::reference_begin_marker(kinds[i]->kind).c_str(),
                        app::reference_markdown(*kinds[i]).c_str(), app::reference_end_marker(kinds[i]->kind).c_str());
        else print_text(*kinds[i]);
    }
    return exit_ok;
}

}  // namespace

void add_paths(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<PathsOptions>();
    auto* sub = app.add_subcommand("paths", "List every path a lesson can expect on, and every knob, per model kind");
    auto* model = sub->add_option("--model", o->model, "Only this model kind: " + join_names(model_kinds(), ", "))
                      ->check(CLI::Validator(
                          [](const std::string& kind) {
                              // Empty read as "no kind given" and listed every one.
                              return kind.empty() ? fmt::format("give a model kind: {}", join_names(model_kinds(), ", "))
                                                  : std::string();
                          },
                          "KIND"));
    auto* json = sub->add_flag("--json", o->json, "Print them as JSON");
    auto* markdown = sub->add_flag("--markdown", o->markdown, "Print them as lessons/README.md's Markdown tables");
    json->excludes(markdown);
    // --update rewrites every kind's section the file has: a --model beside it would change nothing.
    sub->add_option("--update", o->update,
                    "With --markdown: rewrite the tables of every kind in this file between their marker comments")
        ->needs(markdown)
        ->excludes(json);
    add_examples(sub, {"sixstep paths --model serving",
                      "sixstep paths --json"});
    commands.push_back({sub, [o, model] {
                            if (!o->update.empty() && model->count() > 0)
                                throw Error("--model: --update rewrites the tables of every kind the file holds; "
                                            "leave --model out");
                            return run_paths(*o);
                        }});
}

}  // namespace sixstep::cli
