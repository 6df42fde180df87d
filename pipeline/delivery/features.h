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

// One request value as the model reads it.
struct FeatureReading {
    Quantity written;   // the number and unit as the request wrote them
    double x = 0;       // what goes to the model: in the training unit, or as written
    double factor = 1;  // written.value × factor = x (1 when not normalized)
};

// Reads `raw` for feature `f`: with `normalize`, converted to the training
// unit (an unknown unit, or a flag that is not 0 or 1, is an error); without,
// the number as written, its unit dropped — the training/serving skew.
// Throws sixstep::Error naming the feature, with a hint that fits its kind
// ("congestion: \"high\" is not a number … (a fraction 0..1 or a
// percentage: 0.3, \"30%\")"). The job calls it at stage 1; the lesson
// loader calls it when a lesson loads, so a value no setting could read is
// reported at its file:line:column before step 1.
FeatureReading read_feature(const Feature& f, std::string_view raw, bool normalize);

}  // namespace sixstep::delivery
