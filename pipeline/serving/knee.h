// The knee of a throughput curve: the batch size (or concurrency) after which
// adding more work stops buying throughput, found by fitting two lines.
//
// Method (as GuideLLM finds the knee of throughput vs concurrency):
//   1. Fit one least-squares line to all points (x ascending).
//   2. For every breakpoint k with at least two points on each side (the
//      breakpoint belongs to both), fit a line to points 0..k ("rising") and
//      another to k..n-1 ("tail"); keep the k with the smallest total squared
//      error.
//   3. Accept the breakpoint as a knee only when all three hold:
//      - the tail slope is at most 25 % of the rising slope (it flattened),
//      - the two lines cut the squared error of one line by at least 50 %
//        (the bend is real, not noise on a straight line),
//      - the throughput at the breakpoint is at least 85 % of the peak (the
//        knee is near the top, not a dip early on).
//   Fewer than 5 points: no knee is claimed.
//
//     KneeResult k = find_knee({1, 2, 4, 8, 16, 32, 64}, tokens_per_s);
//     if (k.found) draw_marker(k.x, k.y);  else show(k.verdict);
//     draw_line(k.rising), draw_line(k.tail);   // the fit, whenever n >= 3
#pragma once
#include <string>
#include <vector>

namespace sixstep::serving {

struct KneeParams {
    int min_points = 5;                  // fewer points → no knee is claimed
    double max_tail_slope_ratio = 0.25;  // tail slope <= this × rising slope
    double min_error_reduction = 0.50;   // two lines remove >= this share of one line's squared error
    double min_peak_fraction = 0.85;     // y at the breakpoint >= this × the largest y
    // How the verdict names the axes: "knee at batch 16 (1,602 tok/s)"
    // rather than "knee at x = 16 (y = 1602)".
    std::string x_name = "x";
    std::string y_unit;
};

// y = intercept + slope·x, fitted over the points x0..x1 (for drawing).
struct FitLine {
    double slope = 0;
    double intercept = 0;
    double x0 = 0, x1 = 0;
    double at(double x) const { return intercept + slope * x; }
};

struct KneeResult {
    bool found = false;
    std::string verdict;           // one sentence: the knee and why, or why there is none
    int n_points = 0;
    bool fitted = false;           // a breakpoint search ran (n >= 3): the fields below are set
    int index = -1;                // the breakpoint's point
    double x = 0, y = 0;           // the breakpoint (the knee when found)
    FitLine single;                // one line through all points
    FitLine rising, tail;          // the two lines either side of the breakpoint
    double sse_single = 0;         // squared error of one line
    double sse_two = 0;            // squared error of the two lines
    double error_reduction = 0;    // 1 − sse_two / sse_single (0 when one line is already exact)
    double tail_slope_ratio = 0;   // tail slope ÷ rising slope
    double peak_y = 0;             // the largest y
    double peak_fraction = 0;      // y at the breakpoint ÷ peak_y
};

// x strictly ascending, both finite, the same length; throws sixstep::Error
// otherwise. Never throws for a curve that simply has no knee.
KneeResult find_knee(const std::vector<double>& x, const std::vector<double>& y, const KneeParams& params = {});

// The method and its acceptance rules in words, with the thresholds in use.
std::string knee_method(const KneeParams& params = {});

}  // namespace sixstep::serving
