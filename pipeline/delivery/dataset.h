// Past deliveries: the training data of the delivery-time model.
// CSV with a header: distance_km,congestion,express_lane,minutes
#pragma once
#include <array>
#include <string>
#include <vector>

#include "pipeline/delivery/features.h"

namespace sixstep::delivery {

struct Example {
    std::array<double, n_features> x;  // distance_km, congestion, express_lane (training units)
    double minutes;                    // what the delivery really took: the label
};

// Throws sixstep::Error with file:line:column for a malformed file.
std::vector<Example> load_deliveries_csv(const std::string& path);

}  // namespace sixstep::delivery
