#include "pipeline/core/stage.h"

namespace sixstep {

std::string_view stage_title(Stage s) {
    constexpr std::array<std::string_view, 6> titles = {
        "1 · request: receive and normalize", "2 · load the weights (once)",
        "3 · forward pass only",              "4 · raw output",
        "5 · postprocess",                    "6 · respond"};
    return titles[static_cast<int>(s)];
}

std::optional<Stage> parse_stage(std::string_view name) {
    for (Stage s : all_stages)
        if (stage_name(s) == name) return s;
    return std::nullopt;
}

}  // namespace sixstep
