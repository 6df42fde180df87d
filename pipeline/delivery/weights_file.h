// The delivery model's weights file: a small JSON document, written once by
// the trainer ("freeze") and read by every server that loads the model.
//
//   {"format": "sixstep-delivery-weights", "version": 1,
//    "bias": 5.0, "w_distance": 2.0, "w_congestion": 10.0, "w_express_lane": -2.0,
//    "trained_steps": 2000, "final_loss": 0.25}
#pragma once
#include <string>

#include "pipeline/delivery/params.h"

namespace sixstep::delivery {

struct WeightsInfo {
    int trained_steps = 0;
    double final_loss = 0;
};

void save_weights(const std::string& path, const Params& p, const WeightsInfo& info = {});
Params load_weights(const std::string& path);  // throws sixstep::Error naming the file and the problem

}  // namespace sixstep::delivery
