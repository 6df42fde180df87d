#include "pipeline/serving/percentiles.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pipeline/core/error.h"

namespace sixstep::serving {

double percentile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) throw Error("percentile of no values");
    const double rank = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(std::floor(rank));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

double percentile_unsorted(std::vector<double>& values, double q) {
    if (values.empty()) throw Error("percentile of no values");
    const double rank = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(rank));
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
    if (lo + 1 >= values.size()) return values[lo];
    // The next rank is the smallest of what selection left above it.
    const double above = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
    return values[lo] + (above - values[lo]) * (rank - static_cast<double>(lo));
}

Summary summarize(std::vector<double> values) {
    Summary s;
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    s.count = static_cast<int>(values.size());
    s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    s.p50 = percentile(values, 50);
    s.p90 = percentile(values, 90);
    s.p99 = percentile(values, 99);
    s.max = values.back();
    return s;
}

}  // namespace sixstep::serving
