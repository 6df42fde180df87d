// What the `endpoint` model kind declares about itself: a real OpenAI-
// compatible server under Poisson load, its measured queueing curve beside
// the serving lab's prediction (lesson 17). The model itself speaks HTTP and
// lives in app/server/endpoint_model.h; its description is plain data, here,
// so that pipeline/models.h can list the kind, lessons are checked against
// it and `sixstep paths --model endpoint` prints it without any HTTP.
#pragma once
#include <string>
#include <vector>

#include "pipeline/core/model_description.h"

namespace sixstep::server {

namespace endpoint_keys {
// request fields
inline constexpr char utilizations[] = "utilizations";  // "0.2,0.5,0.8": arrival rate × measured service time
inline constexpr char requests[] = "requests";          // sent at each rate
inline constexpr char max_tokens[] = "max_tokens";
inline constexpr char samples[] = "samples";            // requests sent to time the service, alone and at once
inline constexpr char max_batch[] = "max_batch";        // the lesson's own server only
inline constexpr char seed[] = "seed";
// load
inline constexpr char url[] = "url";
inline constexpr char served_model[] = "served_model";
inline constexpr char own_server[] = "own_server";
// forward
inline constexpr char service_ms[] = "service_ms";
inline constexpr char service_scv[] = "service_scv";
inline constexpr char alone_ttft_ms[] = "alone_ttft_ms";
inline constexpr char wall_ms[] = "wall_ms";
inline constexpr char sent[] = "sent";
inline constexpr char failed[] = "failed";
// output (one number per rate)
inline constexpr char rates[] = "rates";
inline constexpr char ttft_p50_ms[] = "ttft_p50_ms";
inline constexpr char ttft_p90_ms[] = "ttft_p90_ms";
inline constexpr char ttft_p99_ms[] = "ttft_p99_ms";
inline constexpr char itl_p50_ms[] = "itl_p50_ms";
inline constexpr char services_ms[] = "services_ms";
inline constexpr char utilizations_measured[] = "utilizations_measured";
inline constexpr char tpot_p50_ms[] = "tpot_p50_ms";
inline constexpr char request_throughput[] = "request_throughput";
inline constexpr char output_throughput[] = "output_throughput";
inline constexpr char predicted_ttft_p50_ms[] = "predicted_ttft_p50_ms";
inline constexpr char predicted_ttft_p90_ms[] = "predicted_ttft_p90_ms";
inline constexpr char predicted_ttft_p99_ms[] = "predicted_ttft_p99_ms";
inline constexpr char predicted_wait_ms[] = "predicted_wait_ms";
inline constexpr char predicted_throughput[] = "predicted_throughput";
// postprocess
inline constexpr char ttft_p90_growth[] = "ttft_p90_growth";
inline constexpr char predicted_p90_growth[] = "predicted_p90_growth";
inline constexpr char itl_p50_growth[] = "itl_p50_growth";
inline constexpr char tpot_p50_growth[] = "tpot_p50_growth";
inline constexpr char rate_growth[] = "rate_growth";
inline constexpr char throughput_growth[] = "throughput_growth";
inline constexpr char p90_vs_predicted_at_highest[] = "p90_vs_predicted_at_highest";
inline constexpr char worst_p90_factor[] = "worst_p90_factor";
inline constexpr char throughput_vs_offered[] = "throughput_vs_offered";
inline constexpr char utilization_measured_at_highest[] = "utilization_measured_at_highest";
}  // namespace endpoint_keys

// The panel a lesson step names in `show:`.
inline constexpr char real_server_panel[] = "real_server";

const ModelDescription& endpoint_description();

// The lowest load a sweep may ask for: at 1 % a request arrives every 100
// service times and finds the queue empty — lower only stretches the run
// (0.0001 × 20 requests ran for minutes).
inline constexpr double min_utilization = 0.01;

// "0.2, 0.5,0.8" → {0.2, 0.5, 0.8}: each from min_utilization to below 1,
// ascending. Throws sixstep::Error naming the value at fault. The knob's rule,
// so a lesson's value is checked where it is written, before any step runs.
std::vector<double> parse_utilizations(const std::string& text);

}  // namespace sixstep::server
