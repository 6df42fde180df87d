#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "pipeline/core/measure.h"

namespace sixstep {

TEST_CASE("running median: after every value, the median of all so far") {
    RunningMedian m;
    CHECK(m.get() == 0);  // none yet, as median({})
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> pick(0, 20);  // repeats, so ties are tried
    std::vector<double> seen;
    for (int i = 0; i < 500; ++i) {
        const double x = i % 50 == 0 ? 1e6 : pick(rng) * 0.25;  // a pause now and then
        m.add(x);
        seen.push_back(x);
        CAPTURE(i);
        REQUIRE(m.get() == median(seen));
    }
}

}  // namespace sixstep
