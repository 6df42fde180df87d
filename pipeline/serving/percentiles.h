// Summaries of a sample — mean and percentiles — the way vLLM's benchmark
// computes them (numpy's default percentile: linear interpolation between
// the two closest ranks), so figures compare with its tables.
//
//     Summary s = summarize({10, 20, 30, 40});   // mean 25, p50 25, p90 37, p99 39.7, max 40
#pragma once
#include <vector>

namespace sixstep::serving {

struct Summary {
    int count = 0;    // values summarized (0: every field is 0)
    double mean = 0;
    double p50 = 0;   // median
    double p90 = 0;
    double p99 = 0;
    double max = 0;
};

// q in [0, 100] of values sorted ascending (non-empty), interpolated linearly.
double percentile(const std::vector<double>& sorted, double q);
// The same of values in any order, without sorting them (selection: linear
// time, for the millions of waits of a queue simulation); reorders them.
double percentile_unsorted(std::vector<double>& values, double q);
Summary summarize(std::vector<double> values);

}  // namespace sixstep::serving
