// The delivery model's feature schema: what the model was trained on, in
// which unit, over which range. Serving must normalize a request to exactly
// this, or the model answers nonsense without complaining.
#pragma once
#include <array>
#include <string_view>

#include "pipeline/delivery/units.h"

namespace sixstep::delivery {

struct Feature {
    std::string_view name;         // request field: "distance"
    std::string_view label;        // for people: "distance"
    Dimension dimension;
    double train_min, train_max;   // the range seen in training, in the training unit
    std::string_view label_zh;     // 中文 label
};

inline constexpr int n_features = 3;

// Order matters: it is the order of the weights w[0..2].
inline constexpr std::array<Feature, n_features> features = {{
    {"distance", "distance", Dimension::length, 0.5, 20.0, "距离"},
    {"congestion", "congestion", Dimension::ratio, 0.0, 1.0, "拥堵"},
    {"express_lane", "express lane", Dimension::flag, 0.0, 1.0, "快速通道"},
}};

// Index of a feature by request name, or -1.
int feature_index(std::string_view name);

}  // namespace sixstep::delivery
