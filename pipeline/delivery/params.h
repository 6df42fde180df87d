// The delivery model's parameters and the knobs a lesson can turn.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pipeline/delivery/features.h"

namespace sixstep::delivery {

// time = bias + w[0]·distance_km + w[1]·congestion + w[2]·express_lane   (minutes)
struct Params {
    double bias = 5;                                    // minutes, whatever the trip
    std::array<double, n_features> w = {2, 10, -2};     // minutes per km, per unit of congestion, for the express lane

    std::array<double, n_features + 1> as_array() const { return {bias, w[0], w[1], w[2]}; }
    static Params from_array(const std::array<double, n_features + 1>& a) { return {a[0], {a[1], a[2], a[3]}}; }
};

// The parameters for people, in as_array() order.
inline constexpr std::array<std::string_view, n_features + 1> param_labels = {"b", "w distance", "w congestion",
                                                                             "w express"};

enum class Mode { eval, train };

struct Settings {
    bool normalize = true;      // convert units to the training unit (off: send raw numbers — the skew)
    bool range_check = true;    // warn when a value lies outside the training range
    Mode mode = Mode::eval;     // train: dropout active (the classic forgotten model.eval())
    double dropout = 0;         // probability of dropping each input feature in train mode, 0..<1
    std::uint64_t seed = 42;    // dropout's random stream (deterministic lessons)
    std::optional<double> minimum_minutes;  // business rule: never promise less than this
    std::string lang = "en";    // response language: "en" or "zh"
};

std::string mode_name(Mode m);

}  // namespace sixstep::delivery
