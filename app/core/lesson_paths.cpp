#include "app/core/lesson_paths.h"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/suggest.h"

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

void check_lesson_path(const ModelDescription& d, std::string_view path) {
    const std::vector<PathInfo> all = lesson_paths(d);
    if (std::any_of(all.begin(), all.end(), [&](const PathInfo& p) { return p.path == path; })) return;
    std::vector<std::string> names;
    for (const auto& p : all) names.push_back(p.path);
    throw Error(fmt::format("unknown path \"{}\" for the {} model{} (`sixstep paths --model {}` lists them)", path,
                            d.kind, did_you_mean(path, names), d.kind));
}

}  // namespace sixstep::app
