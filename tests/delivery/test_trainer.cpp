#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/delivery/dataset.h"
#include "pipeline/delivery/trainer.h"

using namespace sixstep;
using namespace sixstep::delivery;

namespace {
const std::string csv = std::string(SIXSTEP_SOURCE_DIR) + "/assets/data/deliveries.csv";

std::string write_temp(const std::string& name, const std::string& text) {
    const auto p = std::filesystem::temp_directory_path() / name;
    std::ofstream(p) << text;
    return p.string();
}
}  // namespace

TEST_CASE("the bundled data: 200 deliveries") {
    const auto rows = load_deliveries_csv(csv);
    CHECK(rows.size() == 200);
    for (const auto& r : rows) {
        CHECK(r.x[0] >= 0.5);
        CHECK(r.x[0] <= 20);
        CHECK((r.x[2] == 0 || r.x[2] == 1));
    }
}

TEST_CASE("one gradient step matches the formulas, worked by hand") {
    // Two examples, start from zero: ŷ = 0, residuals −y.
    std::vector<Example> data = {{{1, 0, 0}, 7}, {{2, 1, 1}, 17}};
    Trainer t(data, Params{0, {0, 0, 0}}, 0.01);
    CHECK(t.loss() == doctest::Approx((49.0 + 289.0) / 2));  // the mean squared error, before the step
    const TrainStep s = t.step();
    CHECK(s.loss == doctest::Approx((49.0 + 289.0) / 2));
    CHECK(s.grad[0] == doctest::Approx(2 * (-7 - 17) / 2.0));
    CHECK(s.grad[1] == doctest::Approx(2 * (-7 * 1 - 17 * 2) / 2.0));
    CHECK(s.grad[2] == doctest::Approx(2 * (-17) / 2.0));
    CHECK(s.after.bias == doctest::Approx(-0.01 * s.grad[0]));
    CHECK(s.after.w[0] == doctest::Approx(-0.01 * s.grad[1]));
    CHECK(s.predictions == std::vector<double>{0, 0});
    CHECK(s.labels == std::vector<double>{7, 17});
    // loss() is the mean squared error on the weights as they are now: what
    // the next step starts from.
    const double now = t.loss();
    CHECK(now < s.loss);
    CHECK(t.step().loss == doctest::Approx(now));
    // A step keeps the first shown_examples predictions for display, not more.
    std::vector<Example> seven(7, Example{{1, 0, 0}, 7});
    Trainer many(seven, Params{0, {0, 0, 0}}, 0.01);
    const TrainStep m = many.step();
    CHECK(m.predictions.size() == static_cast<std::size_t>(Trainer::shown_examples));
    CHECK(m.labels.size() == static_cast<std::size_t>(Trainer::shown_examples));
}

TEST_CASE("gradient descent converges near b = 5, w = (2, 10, −2)") {
    Trainer t(load_deliveries_csv(csv), Params{0, {0, 0, 0}}, 0.005);
    double first = 0, prev = 1e300;
    int increases = 0;
    for (int i = 0; i < 10000; ++i) {
        const TrainStep s = t.step();
        if (i == 0) first = s.loss;
        if (i > 10 && s.loss > prev + 1e-12) ++increases;
        prev = s.loss;
    }
    CHECK(first > 500);
    CHECK(t.loss() < 1.0);
    CHECK(increases == 0);  // past the first oscillations the loss only falls
    CHECK(t.params().bias == doctest::Approx(5).epsilon(0.05));
    CHECK(t.params().w[0] == doctest::Approx(2).epsilon(0.02));
    CHECK(t.params().w[1] == doctest::Approx(10).epsilon(0.05));
    CHECK(t.params().w[2] == doctest::Approx(-2).epsilon(0.15));
}

TEST_CASE("a frozen trainer refuses to update, a huge learning rate is caught") {
    Trainer t(load_deliveries_csv(csv), Params{}, 0.005);
    t.freeze();
    CHECK_THROWS_WITH_AS(t.step(), "the weights are frozen: training is over, the model only serves now", Error);
    Trainer wild(load_deliveries_csv(csv), Params{0, {0, 0, 0}}, 1.0);
    CHECK_THROWS_AS([&] { for (int i = 0; i < 2000; ++i) wild.step(); }(), Error);
    CHECK_THROWS_AS(Trainer(load_deliveries_csv(csv), Params{}, -1), Error);
}

// Twice the stable rate on the bundled data: the loss grew ×1.8 a step, and
// 300 steps trained to a loss of 1.5e80 without a word (an overflow, and the
// error, came at step 1182).
TEST_CASE("a learning rate too large is stopped once the loss grows a millionfold and not at the overflow") {
    Trainer t(load_deliveries_csv(csv), Params{0, {0, 0, 0}}, 0.01);
    const double first = t.loss();
    int stopped_at = 0;
    try {
        for (int i = 0; i < 300; ++i) t.step();
    } catch (const Error& e) {
        stopped_at = t.steps_done();
        CHECK(std::string(e.what()).rfind(fmt::format("training diverged at step {}: the learning rate 0.01 is too "
                                                      "large (the loss, ",
                                                      stopped_at),
                                          0) == 0);
    }
    CHECK(stopped_at > 1);
    CHECK(stopped_at < 60);
    CHECK(std::isfinite(t.loss()));
    CHECK(t.loss() > Trainer::diverged_loss_factor * first);
    // The bundled rate trains as before (the test above: 2000 steps, the loss only falls).
    Trainer sound(load_deliveries_csv(csv), Params{0, {0, 0, 0}}, 0.005);
    CHECK_NOTHROW([&] { for (int i = 0; i < 3000; ++i) sound.step(); }());
}

TEST_CASE("a weight that overflows while the bias stays finite is divergence too, and the last good weights stay") {
    // Features of 1e100 with a rate of 1e250: w becomes ±inf, the bias does not.
    std::vector<Example> data = {{{1e100, 0, 0}, 1}, {{0, 1e100, 0}, -1}};
    Trainer t(data, Params{0, {0, 0, 0}}, 1e250);
    CHECK_THROWS_WITH_AS(t.step(), "training diverged at step 1: the learning rate 1e+250 is too large", Error);
    CHECK(t.params().bias == 0);
    CHECK(t.params().w == std::array<double, 3>{0, 0, 0});
}

TEST_CASE("malformed training data: file:line:column") {
    const auto a = write_temp("sixstep-bad1.csv", "distance,congestion\n1,2\n");
    CHECK_THROWS_WITH_AS(load_deliveries_csv(a),
                         (a + ":1:1: expected the header \"distance_km,congestion,express_lane,minutes\"").c_str(),
                         Error);
    const auto b = write_temp("sixstep-bad2.csv", "distance_km,congestion,express_lane,minutes\n1,0,0,7\n2,x,0,9\n");
    CHECK_THROWS_WITH_AS(load_deliveries_csv(b), (b + ":3:3: \"x\" is not a number").c_str(), Error);
    const auto c = write_temp("sixstep-bad3.csv", "distance_km,congestion,express_lane,minutes\n1,0\n");
    CHECK_THROWS_WITH_AS(load_deliveries_csv(c), (c + ":2:4: expected 4 comma-separated numbers").c_str(), Error);
    const auto d = write_temp("sixstep-bad4.csv", "distance_km,congestion,express_lane,minutes\n");
    CHECK_THROWS_WITH_AS(load_deliveries_csv(d), (d + ": no training examples").c_str(), Error);
    // Values whose squares overflow: named at the data, not blamed on the learning rate.
    const auto e = write_temp("sixstep-bad5.csv", "distance_km,congestion,express_lane,minutes\n1,0,0,7\n2,0,0,-1e200\n");
    CHECK_THROWS_WITH_AS(load_deliveries_csv(e), (e + ":3:7: \"-1e200\" is too large to train on (at most 1e+100 in size)").c_str(),
                         Error);
    // A number with something after it is not a number.
    const auto g = write_temp("sixstep-bad6.csv", "distance_km,congestion,express_lane,minutes\n1,0,0,7\n2,0.5x,0,9\n");
    CHECK_THROWS_WITH_AS(load_deliveries_csv(g), (g + ":3:3: \"0.5x\" is not a number").c_str(), Error);
    // A fifth value is named at its comma (it read as the fourth, "7,8", not a number).
    const auto h = write_temp("sixstep-bad7.csv", "distance_km,congestion,express_lane,minutes\n1,0,0,7,8\n");
    CHECK_THROWS_WITH_AS(load_deliveries_csv(h), (h + ":2:8: more than 4 columns").c_str(), Error);
    for (const auto& f : {a, b, c, d, e, g, h}) std::filesystem::remove(f);
}

TEST_CASE("training data: CRLF line ends, blank lines and values up to 1e100 are read") {
    const auto p = write_temp("sixstep-good1.csv", "distance_km,congestion,express_lane,minutes\r\n"
                                                   "1,0.5,0,7\r\n"
                                                   "\r\n"
                                                   "2,0,1,1e100\r\n"
                                                   "\n");
    const auto rows = load_deliveries_csv(p);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].x == std::array<double, 3>{1, 0.5, 0});
    CHECK(rows[0].minutes == 7);
    CHECK(rows[1].x == std::array<double, 3>{2, 0, 1});
    CHECK(rows[1].minutes == 1e100);
    std::filesystem::remove(p);
}
