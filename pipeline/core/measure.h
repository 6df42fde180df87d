// What the timing code shares: milliseconds since a moment on the steady
// clock, and the median of repeated runs — the figure the benchmarks
// report, because one run the OS interrupted moves a mean but not a median.
//
//     const auto t0 = std::chrono::steady_clock::now();
//     ...
//     times.push_back(ms_since(t0));
//     double typical = median(times);
#pragma once
#include <algorithm>
#include <chrono>
#include <vector>

namespace sixstep {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The middle value (the mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace sixstep
