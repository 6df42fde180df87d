// sixstep paths [--model delivery|llm] [--json]
//   Every path a lesson can `expect` on, with its type, unit and meaning, and
//   every knob a lesson can turn (`set:` takes the settings among them) —
//   printed from the model kinds' own descriptions, so it cannot drift from
//   what the engine emits.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/core/lesson_paths.h"
#include "app/core/report.h"
#include "pipeline/core/suggest.h"
#include "pipeline/models.h"

namespace sixstep::cli {

namespace {

struct PathsOptions {
    std::string model;  // empty: every kind
    bool json = false;
};

// Stage paths in the six-step order, then response, model, train, served, error.
int group(const std::string& path) {
    const std::string head = path.substr(0, path.find('.'));
    if (auto s = parse_stage(head)) return stage_index(*s);
    static const std::vector<std::string> others = {"response", "model", "train", "served"};
    const auto it = std::find(others.begin(), others.end(), head);
    return stage_count + static_cast<int>(it - others.begin());
}

std::vector<PathInfo> ordered_paths(const ModelDescription& d) {
    std::vector<PathInfo> paths = app::lesson_paths(d);
    std::stable_sort(paths.begin(), paths.end(),
                     [](const PathInfo& a, const PathInfo& b) { return group(a.path) < group(b.path); });
    return paths;
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
    const std::vector<PathInfo> paths = ordered_paths(d);
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
    for (const auto& p : ordered_paths(d))
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
        print_text(*kinds[i]);
    }
    return exit_ok;
}

}  // namespace

void add_paths(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<PathsOptions>();
    auto* sub = app.add_subcommand("paths", "List every path a lesson can expect on, and every knob, per model kind");
    sub->add_option("--model", o->model, "Only this model kind: " + join_names(model_kinds(), ", "));
    sub->add_flag("--json", o->json, "Print them as JSON");
    commands.push_back({sub, [o] { return run_paths(*o); }});
}

}  // namespace sixstep::cli
