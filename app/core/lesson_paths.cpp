#include "app/core/lesson_paths.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pipeline/core/error.h"
#include "pipeline/core/suggest.h"
#include "pipeline/models.h"

namespace sixstep::app {

std::vector<PathInfo> lesson_paths(const ModelDescription& d) {
    std::vector<PathInfo> out = d.paths;
    out.push_back({"served.count", ValueType::number, "", "requests the latest serve step sent"});
    out.push_back({"served.distinct", ValueType::number, "", "how many different answers they got"});
    out.push_back({"served.cold", ValueType::number, "", "how many of them paid the cold load"});
    out.push_back({"served.mean_warm_ms", ValueType::number, "ms", "mean time of a warm request, all six stages"});
    const std::string response = "response.";
    for (const auto& p : d.paths)
        if (p.path.rfind(response, 0) == 0 && p.type == ValueType::number) {
            const std::string key = p.path.substr(response.size());
            out.push_back({"served." + key, ValueType::numbers, p.unit, "response." + key + " of every served request"});
        }
    out.push_back({"error", ValueType::text, "", "the step's error message; \"\" when there was none"});
    return out;
}

namespace {
// Stage paths in the six-step order, then response, model, train, served, error.
int group(const std::string& path) {
    const std::string head = path.substr(0, path.find('.'));
    if (auto s = parse_stage(head)) return stage_index(*s);
    static const std::vector<std::string> others = {"response", "model", "train", "served"};
    const auto it = std::find(others.begin(), others.end(), head);
    return stage_count + static_cast<int>(it - others.begin());
}
}  // namespace

std::vector<PathInfo> ordered_lesson_paths(const ModelDescription& d) {
    std::vector<PathInfo> paths = lesson_paths(d);
    std::stable_sort(paths.begin(), paths.end(),
                     [](const PathInfo& a, const PathInfo& b) { return group(a.path) < group(b.path); });
    return paths;
}

void check_lesson_path(const ModelDescription& d, std::string_view path) {
    const std::vector<PathInfo> all = lesson_paths(d);
    if (std::any_of(all.begin(), all.end(), [&](const PathInfo& p) { return p.path == path; })) return;
    std::vector<std::string> names;
    for (const auto& p : all) names.push_back(p.path);
    std::string hint = did_you_mean(path, names);
    // Not a slip of this kind's names: perhaps a path of another kind
    // (respond.ttft_ms in a delivery lesson).
    if (hint.empty()) {
        std::vector<std::string> kinds;
        for (const std::string& kind : model_kinds()) {
            if (kind == d.kind) continue;
            const std::vector<PathInfo> theirs = lesson_paths(model_description(kind));
            if (std::any_of(theirs.begin(), theirs.end(), [&](const PathInfo& p) { return p.path == path; }))
                kinds.push_back(kind);
        }
        if (!kinds.empty()) hint = fmt::format("; it is a path of the {} model", fmt::join(kinds, " and "));
    }
    throw Error(fmt::format("unknown path \"{}\" for the {} model{} (`sixstep paths --model {}` lists them)", path,
                            d.kind, hint, d.kind));
}

}  // namespace sixstep::app
