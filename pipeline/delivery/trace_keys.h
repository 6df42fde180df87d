// The delivery model's trace keys and setting names, named once for the model
// that emits and applies them (delivery_model.cpp), its description
// (delivery_description.cpp) and whoever reads them. Meanings, units and
// ranges are in the description.
#pragma once

namespace sixstep::delivery::keys {

// request (its inputs are the request's fields, by name: "distance", …)
inline constexpr char distance_km[] = "distance_km";
inline constexpr char congestion[] = "congestion";
inline constexpr char express_lane[] = "express_lane";
inline constexpr char features[] = "features";
inline constexpr char normalized[] = "normalized";

// load, and model.<key> (cold_load_ms is sixstep::keys::cold_load_ms)
inline constexpr char file[] = "file";
inline constexpr char bias[] = "bias";
inline constexpr char w_distance[] = "w_distance";
inline constexpr char w_congestion[] = "w_congestion";
inline constexpr char w_express_lane[] = "w_express_lane";
inline constexpr char weights[] = "weights";

// forward, output, postprocess, respond
inline constexpr char dropout_mask[] = "dropout_mask";
inline constexpr char terms[] = "terms";
inline constexpr char raw_output[] = "raw_output";
inline constexpr char mode[] = "mode";
inline constexpr char minutes[] = "minutes";
inline constexpr char rule[] = "rule";

// train.<key>: the trainer's latest step (the app answers these)
inline constexpr char step[] = "step";
inline constexpr char loss[] = "loss";
inline constexpr char first_loss[] = "first_loss";
inline constexpr char final_loss[] = "final_loss";
inline constexpr char examples[] = "examples";
inline constexpr char frozen[] = "frozen";
inline constexpr char grad_bias[] = "grad_bias";
inline constexpr char grad_distance[] = "grad_distance";
inline constexpr char grad_congestion[] = "grad_congestion";
inline constexpr char grad_express_lane[] = "grad_express_lane";

}  // namespace sixstep::delivery::keys

namespace sixstep::delivery::setting_names {

inline constexpr char normalize[] = "normalize";
inline constexpr char range_check[] = "range_check";
inline constexpr char mode[] = "mode";
inline constexpr char dropout[] = "dropout";
inline constexpr char seed[] = "seed";
inline constexpr char minimum_minutes[] = "minimum_minutes";
inline constexpr char lang[] = "lang";

}  // namespace sixstep::delivery::setting_names
