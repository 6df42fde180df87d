#include "pipeline/serving/virtual_clock.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::serving {

double measured_cost(const StepShape& step) {
    return std::max(0.0, step.forward_ms + step.sample_ms - step.cpu_wait_ms);
}

StepCostModel linear_cost(double fixed_ms, double per_token_ms) {
    if (!(fixed_ms >= 0) || !(per_token_ms >= 0) || !std::isfinite(fixed_ms) || !std::isfinite(per_token_ms))
        throw Error(fmt::format("step cost: {} ms + {} ms per token must be finite and >= 0", fixed_ms, per_token_ms));
    return [fixed_ms, per_token_ms](const StepShape& s) { return fixed_ms + per_token_ms * s.n_tokens; };
}

void VirtualClock::advance(double ms) {
    if (!std::isfinite(ms) || ms < 0)
        throw Error(fmt::format("virtual clock: a step cannot take {} ms (finite, >= 0)", ms));
    now_ms_ += ms;
    busy_ms_ += ms;
}

void VirtualClock::advance_to(double t_ms) {
    if (!std::isfinite(t_ms)) throw Error(fmt::format("virtual clock: cannot jump to {} ms", t_ms));
    if (t_ms <= now_ms_) return;
    idle_ms_ += t_ms - now_ms_;
    now_ms_ = t_ms;
}

}  // namespace sixstep::serving
