// The knee finder on synthetic curves whose answer is known: a clear corner
// found where it is, each acceptance rule refusing the curve it exists to
// refuse, a straight line and too few points reported as such.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "error_of.h"
#include "pipeline/serving/knee.h"

using namespace sixstep::serving;
using sixstep::test::error_of;

namespace {
const std::vector<double> powers = {1, 2, 4, 8, 16, 32, 64};

std::vector<double> curve(double (*f)(double)) {
    std::vector<double> y;
    for (double x : powers) y.push_back(f(x));
    return y;
}
}  // namespace

TEST_CASE("knee: a sharp corner is found exactly where it is") {
    // Throughput rising 10 per sequence up to batch 16, flat after.
    const auto y = curve([](double x) { return std::min(10 * x, 160.0); });
    const KneeResult k = find_knee(powers, y);
    CHECK(k.found);
    CHECK(k.index == 4);
    CHECK(k.x == 16);
    CHECK(k.y == 160);
    CHECK(k.rising.slope == doctest::Approx(10));
    CHECK(k.tail.slope == doctest::Approx(0).epsilon(1e-12));
    CHECK(k.sse_two == doctest::Approx(0).epsilon(1e-9));
    CHECK(k.error_reduction == doctest::Approx(1));
    CHECK(k.peak_fraction == 1);
    CHECK(k.verdict.find("knee at x = 16 (y = 160)") == 0);
    // Named axes: what a batch sweep asks for.
    KneeParams named;
    named.x_name = "batch", named.y_unit = "tok/s";
    CHECK(find_knee(powers, y, named).verdict.find("knee at batch 16 (160 tok/s): past it") == 0);
}

TEST_CASE("knee: a noisy corner at 8 is still found at 8") {
    std::vector<double> y = curve([](double x) { return std::min(50 * x, 400.0); });
    const double noise[] = {+0.01, -0.01, +0.008, -0.006, +0.01, -0.012, +0.007};
    for (std::size_t i = 0; i < y.size(); ++i) y[i] *= 1 + noise[i];
    const KneeResult k = find_knee(powers, y);
    CHECK(k.found);
    CHECK(k.x == 8);
    CHECK(k.tail_slope_ratio < 0.25);
}

TEST_CASE("knee: a straight line has none") {
    const auto y = curve([](double x) { return 3 * x + 2; });
    const KneeResult k = find_knee(powers, y);
    CHECK_FALSE(k.found);
    CHECK(k.fitted);
    CHECK(k.error_reduction == 0);
    CHECK(k.verdict.find("one straight line") != std::string::npos);
    // Flat is a straight line too, and it does not even rise.
    const KneeResult flat = find_knee(powers, std::vector<double>(powers.size(), 5.0));
    CHECK_FALSE(flat.found);
    CHECK(flat.verdict.find("does not rise") != std::string::npos);
}

TEST_CASE("knee: each acceptance rule refuses its curve") {
    SUBCASE("a tail still rising at half the rate") {
        KneeParams p;
        p.min_peak_fraction = 0;  // isolate the slope rule (160 is 40% of the peak 400)
        const auto y = curve([](double x) { return x <= 16 ? 10 * x : 160 + 5 * (x - 16); });
        const KneeResult k = find_knee(powers, y, p);
        CHECK_FALSE(k.found);
        CHECK(k.x == 16);
        CHECK(k.tail_slope_ratio == doctest::Approx(0.5));
        CHECK(k.verdict == "no knee: past x = 16 (y = 160), the slope is 50% of the rising slope (a knee needs ≤ 25%)");
    }
    SUBCASE("a breakpoint well below the peak") {
        // The best breakpoint is batch 8 at 64 of 80 tokens/s: 80% of the peak.
        const auto y = curve([](double x) { return std::min(8 * x, 80.0); });
        const KneeResult k = find_knee(powers, y);
        CHECK_FALSE(k.found);
        CHECK(k.x == 8);
        CHECK(k.peak_fraction == doctest::Approx(0.8));
        // The verdict names the breakpoint it refused and where the peak is.
        CHECK(k.verdict == "no knee: the breakpoint, x = 8 (y = 64), reaches only 80% of the peak at x = 16 (a knee needs ≥ 85%)");
        KneeParams named;
        named.x_name = "batch";
        named.y_unit = "tok/s";
        CHECK(find_knee(powers, y, named).verdict ==
              "no knee: the breakpoint, batch 8 (64 tok/s), reaches only 80% of the peak at batch 16 (a knee needs ≥ 85%)");
    }
    SUBCASE("a wiggle on a straight line, which two lines cannot explain much better") {
        KneeParams p;
        p.max_tail_slope_ratio = 10;  // isolate the error rule
        p.min_peak_fraction = 0;
        const auto y = curve([](double x) { return x + 0.5 * std::sin(x); });
        const KneeResult k = find_knee(powers, y, p);
        CHECK_FALSE(k.found);
        CHECK(k.error_reduction == doctest::Approx(0.31).epsilon(0.01));
        CHECK(k.verdict == "no knee: two lines cut the squared error by only 31% (a knee needs ≥ 50%)");
        // With the rule relaxed below it, the same curve passes: the rule is what refused it.
        p.min_error_reduction = 0.3;
        CHECK(find_knee(powers, y, p).found);
    }
}

TEST_CASE("knee: too few points are reported, not guessed") {
    const std::vector<double> x = {1, 2, 4, 8}, y = {10, 20, 40, 40};
    const KneeResult k = find_knee(x, y);
    CHECK_FALSE(k.found);
    CHECK(k.fitted);  // the lines are there to draw
    CHECK(k.verdict == "no knee claimed: too few points (4; the method needs at least 5)");
    const KneeResult two = find_knee({1, 2}, {1, 2});
    CHECK_FALSE(two.fitted);
    CHECK(two.verdict.find("too few points (2;") != std::string::npos);
    CHECK(find_knee({}, {}).verdict == "no knee: no points");
}

// Each acceptance rule holds at its own limit: a tail slope of exactly a
// quarter of the rise's (the rule says at most), and exactly the fewest
// points the method needs.
TEST_CASE("knee: a rule met exactly accepts the knee") {
    const KneeResult quarter = find_knee({1, 2, 3, 4, 5}, {10, 20, 30, 32.5, 35});
    CHECK(quarter.found);
    CHECK(quarter.x == 3);
    const KneeResult five = find_knee({1, 2, 3, 4, 5}, {10, 20, 30, 31, 32});
    CHECK(five.found);
    CHECK(five.x == 3);
}

TEST_CASE("knee: bad input is refused with a clear message") {
    CHECK(error_of([] { find_knee({1, 2, 3}, {1, 2}); }) == "knee: 3 x values but 2 y values");
    CHECK(error_of([] { find_knee({1, 4, 2}, {1, 2, 3}); }) == "knee: x must be strictly ascending (2 follows 4)");
    CHECK(error_of([] { find_knee({1, 1}, {1, 2}); }) == "knee: x must be strictly ascending (1 follows 1)");
    CHECK(error_of([] { find_knee({1, 2}, {1, std::nan("")}); }).find("knee: point 1 is not a finite number") == 0);
    CHECK(knee_method().find("<= 25%") != std::string::npos);
    CHECK(knee_method().find(">= 50%") != std::string::npos);
    CHECK(knee_method().find(">= 85%") != std::string::npos);
    CHECK(knee_method().find("at least 5 points") != std::string::npos);
}
