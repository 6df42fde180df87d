#include "pipeline/serving/knee.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/serving/quantity.h"

namespace sixstep::serving {

namespace {

// Least-squares line through points [b, e), and its squared error.
FitLine fit(const std::vector<double>& x, const std::vector<double>& y, int b, int e, double& sse) {
    const double n = e - b;
    double mx = 0, my = 0;
    for (int i = b; i < e; ++i) mx += x[i], my += y[i];
    mx /= n, my /= n;
    double sxx = 0, sxy = 0;
    for (int i = b; i < e; ++i) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    FitLine l;
    l.slope = sxx > 0 ? sxy / sxx : 0;
    l.intercept = my - l.slope * mx;
    l.x0 = x[b];
    l.x1 = x[e - 1];
    sse = 0;
    for (int i = b; i < e; ++i) sse += (y[i] - l.at(x[i])) * (y[i] - l.at(x[i]));
    return l;
}

// A share as a whole percentage ("-0%" printed as "0%").
std::string pct(double f) { return fmt::format("{:.0f}%", std::round(100 * f) + 0.0); }

}  // namespace

std::string knee_method(const KneeParams& p) {
    return fmt::format(
        "two lines fitted by least squares either side of every breakpoint (the breakpoint in both), the one with "
        "the smallest squared error kept; a knee when the tail slope is <= {} of the rising slope, the two lines "
        "cut one line's squared error by >= {}, and the breakpoint reaches >= {} of the peak; at least {} points "
        "(as GuideLLM does for throughput vs concurrency)",
        pct(p.max_tail_slope_ratio), pct(p.min_error_reduction), pct(p.min_peak_fraction), p.min_points);
}

KneeResult find_knee(const std::vector<double>& x, const std::vector<double>& y, const KneeParams& p) {
    if (x.size() != y.size())
        throw Error(fmt::format("knee: {} x values but {} y values", x.size(), y.size()));
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
            throw Error(fmt::format("knee: point {} is not a finite number ({}, {})", i, x[i], y[i]));
        if (i > 0 && !(x[i] > x[i - 1]))
            throw Error(fmt::format("knee: x must be strictly ascending ({} follows {})", x[i], x[i - 1]));
    }
    KneeResult r;
    const int n = static_cast<int>(x.size());
    r.n_points = n;
    if (n == 0) {
        r.verdict = "no knee: no points";
        return r;
    }
    r.peak_y = *std::max_element(y.begin(), y.end());
    if (n >= 3) {
        r.fitted = true;
        r.single = fit(x, y, 0, n, r.sse_single);
        r.sse_two = -1;
        for (int k = 1; k <= n - 2; ++k) {
            double s1 = 0, s2 = 0;
            const FitLine a = fit(x, y, 0, k + 1, s1), b = fit(x, y, k, n, s2);
            if (r.sse_two < 0 || s1 + s2 < r.sse_two) {
                r.sse_two = s1 + s2;
                r.index = k;
                r.rising = a;
                r.tail = b;
            }
        }
        r.x = x[r.index];
        r.y = y[r.index];
        // One line "exact" up to rounding: there is no error left to reduce.
        double my = 0, sst = 0;
        for (double v : y) my += v / n;
        for (double v : y) sst += (v - my) * (v - my);
        r.error_reduction = r.sse_single > 1e-12 * sst && r.sse_single > 0 ? 1 - r.sse_two / r.sse_single : 0;
        r.tail_slope_ratio = r.rising.slope > 0 ? r.tail.slope / r.rising.slope : 0;
        r.peak_fraction = r.peak_y > 0 ? r.y / r.peak_y : 0;
    }
    if (n < p.min_points) {
        r.verdict = fmt::format("no knee claimed: too few points ({}; the method needs at least {})", n, p.min_points);
        return r;
    }
    // A point in the axes' own words: "batch 16 (1602 tok/s)", or
    // "x = 16 (y = 1602)". A verdict that refuses a knee names the
    // breakpoint it refused and the peak it fell short of, so the reader
    // finds both on the chart.
    const auto point = [&](double px, double py) {
        return p.x_name == "x" && p.y_unit.empty()
                   ? fmt::format("x = {} (y = {})", significant(px, 6), significant(py, 4))
                   : fmt::format("{} {} ({}{})", p.x_name, significant(px, 6), significant(py, 4),
                                 p.y_unit.empty() ? "" : " " + p.y_unit);
    };
    std::vector<std::string> why;
    if (!(r.rising.slope > 0)) why.push_back("the curve does not rise before the breakpoint");
    else if (r.error_reduction == 0) why.push_back("the points lie on one straight line");
    if (r.rising.slope > 0 && r.tail_slope_ratio > p.max_tail_slope_ratio)
        why.push_back(fmt::format("past {}, the slope is {} of the rising slope (a knee needs ≤ {})", point(r.x, r.y),
                                  pct(r.tail_slope_ratio), pct(p.max_tail_slope_ratio)));
    if (r.error_reduction > 0 && r.error_reduction < p.min_error_reduction)
        why.push_back(fmt::format("two lines cut the squared error by only {} (a knee needs ≥ {})",
                                  pct(r.error_reduction), pct(p.min_error_reduction)));
    if (r.peak_fraction < p.min_peak_fraction) {
        const auto peak = std::max_element(y.begin(), y.end()) - y.begin();
        why.push_back(fmt::format("the breakpoint, {}, reaches only {} of the peak at {} {} (a knee needs ≥ {})",
                                  point(r.x, r.y), pct(r.peak_fraction), p.x_name == "x" ? "x =" : p.x_name,
                                  significant(x[peak], 6), pct(p.min_peak_fraction)));
    }
    if (!why.empty()) {
        std::string s = "no knee: ";
        for (std::size_t i = 0; i < why.size(); ++i) s += (i ? "; " : "") + why[i];
        r.verdict = s;
        return r;
    }
    r.found = true;
    const std::string where = point(r.x, r.y);
    r.verdict = fmt::format(
        "knee at {}: past it the slope falls to {} of the rising slope; two lines cut the squared error by {}; {} of "
        "the peak",
        where, pct(r.tail_slope_ratio), pct(r.error_reduction), pct(r.peak_fraction));
    return r;
}

}  // namespace sixstep::serving
