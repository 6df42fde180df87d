// A lesson's `kv_calc:` step as the KV memory calculator's parameters: the
// preset, then what the step typed over it. The panel computes it when the
// step runs; the lesson loader computes it once before step 1, so that a
// size the calculator refuses is an invalid lesson at its key.
//
//     serving::KvCalcResult r = serving::kv_calc(kv_calc_params(*step.kv_calc));
#pragma once
#include "app/core/lesson.h"
#include "pipeline/serving/kv_calc.h"

namespace sixstep::app {

// Throws sixstep::Error for an unknown dtype.
serving::KvCalcParams kv_calc_params(const KvCalcSpec& spec);

}  // namespace sixstep::app
