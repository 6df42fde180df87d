// The latency table `traffic` and `load` print: one row per distribution,
// mean / p50 / p90 / p99 / max in milliseconds, then its definition.
#pragma once
#include <vector>

#include "pipeline/serving/traffic_metrics.h"

namespace sixstep::cli {

// name_width: the first column's width. Below 10 ms a figure keeps three
// significant digits (the bundled model's TPOT of 0.45 ms read "0.5"); a
// distribution with nothing in it (every request one token: no TPOT, no
// ITL) prints dashes, not zeros that look measured.
void print_latency_table(const std::vector<serving::LatencyMetric>& latencies, int name_width);

}  // namespace sixstep::cli
