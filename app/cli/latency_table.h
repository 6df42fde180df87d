// The latency table `traffic` and `load` print: one row per distribution,
// mean / p50 / p90 / p99 / max in milliseconds, then its definition; and the
// same figures as JSON for --json.
#pragma once
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/serving/traffic_metrics.h"

namespace sixstep::cli {

// name_width: the first column's width. Below 10 ms a figure keeps three
// significant digits (the bundled model's TPOT of 0.45 ms read "0.5"); a
// distribution with nothing in it (every request one token: no TPOT, no
// ITL) prints dashes, not zeros that look measured.
void print_latency_table(const std::vector<serving::LatencyMetric>& latencies, int name_width);

// One object per distribution; where nothing was measured its figures are
// null, as the table's dashes, not 0 ms a reader would take as measured.
nlohmann::ordered_json latencies_json(const std::vector<serving::LatencyMetric>& latencies);
nlohmann::ordered_json totals_json(const std::vector<serving::Metric>& totals);

// A measured figure, or null where a negative value stands for none (a
// one-token request's TPOT, a request that never got its first token).
nlohmann::ordered_json measured_or_null(double ms);

}  // namespace sixstep::cli
