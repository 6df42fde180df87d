// The six steps of one inference request — the engine's stage list, for every model.
#pragma once
#include <array>
#include <optional>
#include <string_view>

namespace sixstep {

enum class Stage {
    request,      // 1. receive the request and normalize it exactly as in training
    load,         // 2. load the weights once (later requests reuse them)
    forward,      // 3. forward pass only: no loss, no gradient, no update
    output,       // 4. the raw output: a number, or logits → probabilities
    postprocess,  // 5. round, units, business rules; LLM: sample, detokenize, stop?
    respond,      // 6. return the answer with its timings
};

inline constexpr std::array<Stage, 6> all_stages = {Stage::request, Stage::load,        Stage::forward,
                                                    Stage::output,  Stage::postprocess, Stage::respond};
inline constexpr int stage_count = 6;

constexpr int stage_index(Stage s) { return static_cast<int>(s); }

constexpr std::string_view stage_name(Stage s) {
    constexpr std::array<std::string_view, 6> names = {"request", "load",        "forward",
                                                       "output",  "postprocess", "respond"};
    return names[static_cast<int>(s)];
}

// A heading for narration: "1 · request".
std::string_view stage_title(Stage s);

std::optional<Stage> parse_stage(std::string_view name);

}  // namespace sixstep
