// The serving model's request fields and trace keys, named once for the
// experiments that emit them (lab_*.cpp), the description
// (serving_description.cpp) and the front ends that read them. Meanings and
// units are in the description.
#pragma once

namespace sixstep::serving::keys {

// request fields: which experiment, then each experiment's settings
inline constexpr char experiment[] = "experiment";  // batch_sweep | traffic | queue
// batch_sweep
inline constexpr char batch_sizes[] = "batch_sizes";
inline constexpr char context[] = "context";
inline constexpr char steps[] = "steps";
inline constexpr char repetitions[] = "repetitions";
// traffic
inline constexpr char policy[] = "policy";
inline constexpr char compare[] = "compare";
inline constexpr char requests[] = "requests";
inline constexpr char rate[] = "rate";
inline constexpr char rate_unit[] = "rate_unit";  // req/s | alone
inline constexpr char max_batch[] = "max_batch";
inline constexpr char kv_blocks[] = "kv_blocks";
inline constexpr char block_size[] = "block_size";
inline constexpr char step_tokens[] = "step_tokens";
inline constexpr char prefix_cache[] = "prefix_cache";
inline constexpr char kv_layout[] = "kv_layout";
inline constexpr char shared_prefix[] = "shared_prefix";
inline constexpr char max_tokens[] = "max_tokens";
inline constexpr char min_tokens[] = "min_tokens";
inline constexpr char seed[] = "seed";
inline constexpr char ttft_target[] = "ttft_target";  // goodput's targets, in target_unit
inline constexpr char tpot_target[] = "tpot_target";
inline constexpr char target_unit[] = "target_unit";  // ms | alone
// queue
inline constexpr char utilization[] = "utilization";
inline constexpr char utilizations[] = "utilizations";
inline constexpr char samples[] = "samples";
inline constexpr char sim_requests[] = "sim_requests";

// request stage
inline constexpr char baseline[] = "baseline";  // what the compared run changes
// forward
inline constexpr char wall_ms[] = "wall_ms";
inline constexpr char passes[] = "passes";
inline constexpr char engine_ms[] = "engine_ms";
inline constexpr char cpu_wait_ms[] = "cpu_wait_ms";
inline constexpr char virtual_s[] = "virtual_s";
inline constexpr char service_ms[] = "service_ms";
inline constexpr char service_scv[] = "service_scv";
inline constexpr char ttft_target_ms[] = "ttft_target_ms";
inline constexpr char tpot_target_ms[] = "tpot_target_ms";
inline constexpr char ttft_alone_ms[] = "ttft_alone_ms";
inline constexpr char tpot_alone_ms[] = "tpot_alone_ms";
inline constexpr char e2e_alone_ms[] = "e2e_alone_ms";
inline constexpr char rate_req_s[] = "rate_req_s";
// output: batch sweep
inline constexpr char tokens_per_s[] = "tokens_per_s";
inline constexpr char step_ms[] = "step_ms";
inline constexpr char speedup[] = "speedup";
inline constexpr char tpot_ratio[] = "tpot_ratio";
inline constexpr char knee[] = "knee";
inline constexpr char knee_batch[] = "knee_batch";
inline constexpr char knee_verdict[] = "knee_verdict";
inline constexpr char weight_bytes[] = "weight_bytes";
inline constexpr char kv_bytes[] = "kv_bytes";
// output: queue
inline constexpr char wait_md1_sim_ms[] = "wait_md1_sim_ms";
inline constexpr char wait_md1_ms[] = "wait_md1_ms";
inline constexpr char wait_mm1_sim_ms[] = "wait_mm1_sim_ms";
inline constexpr char wait_mm1_ms[] = "wait_mm1_ms";
inline constexpr char wait_measured_sim_ms[] = "wait_measured_sim_ms";
inline constexpr char wait_measured_ms[] = "wait_measured_ms";
inline constexpr char wait_at_utilization_ms[] = "wait_at_utilization_ms";
inline constexpr char formula_at_utilization_ms[] = "formula_at_utilization_ms";
inline constexpr char wait_at_utilization_services[] = "wait_at_utilization_services";
// postprocess
inline constexpr char largest_batch[] = "largest_batch";
inline constexpr char speedup_at_largest[] = "speedup_at_largest";
inline constexpr char tpot_ratio_at_largest[] = "tpot_ratio_at_largest";
inline constexpr char kv_to_weights_at_largest[] = "kv_to_weights_at_largest";
inline constexpr char gain_per_doubling_first_quarter[] = "gain_per_doubling_first_quarter";
inline constexpr char gain_per_doubling_last_quarter[] = "gain_per_doubling_last_quarter";
inline constexpr char wait_growth[] = "wait_growth";
inline constexpr char waits_rising[] = "waits_rising";
inline constexpr char max_z[] = "max_z";
inline constexpr char headroom_utilization[] = "headroom_utilization";
// The traffic figures (output.<figure>, output.baseline_<figure>,
// postprocess.<ratio>) are listed in serving_model.h: traffic_figures().
inline constexpr char baseline_prefix[] = "baseline_";

}  // namespace sixstep::serving::keys
