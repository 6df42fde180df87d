// The bill: exact on typed inputs, the crossover marked, bad inputs refused.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "pipeline/core/error.h"
#include "pipeline/serving/bill.h"
#include "pipeline/serving/bundled_model.h"

using namespace sixstep;
using namespace sixstep::serving;

namespace {

// A 1B model trained on 20B tokens, decoding 50 tokens/s, 100,000 requests of
// 500 tokens a day for a year, a 30 s cold load, 2 per machine-hour.
BillParams typed() {
    BillParams p;
    p.n_params = 1e9;
    p.n_train_tokens = 2e10;
    p.decode_tok_s = 50;
    p.requests_per_day = 1e5;
    p.tokens_per_request = 500;
    p.days = 365;
    p.load_s = 30;
    p.price_per_hour = 2;
    p.request_counts = {1, 10, 100};
    return p;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("bill: exact figures on typed inputs") {
    const BillResult b = bill(typed());
    CHECK(b.train_flops == 1.2e20);               // 6 × 1e9 × 2e10
    CHECK(b.flops_per_token == 2e9);              // 2 × 1e9
    CHECK(b.achieved_flops_per_s == 1e11);        // 2e9 × 50
    CHECK(b.seconds_per_request == 10);           // 500 ÷ 50
    CHECK(b.tokens_per_day == 5e7);               // 1e5 × 500
    CHECK(b.inference_flops_per_day == 1e17);     // 2e9 × 5e7
    CHECK(b.inference_flops_lifetime == 3.65e19); // × 365
    CHECK(b.inference_to_training == doctest::Approx(3.65e19 / 1.2e20).epsilon(1e-15));
    CHECK(b.crossover_day == 1200);               // 3 × 2e10 ÷ 5e7
    CHECK_FALSE(b.crossover_within_life);
    // Training amortized over 1e5 × 365 requests, against one request's 2e9 × 500 FLOPs:
    // the same ratio as the crossover day to the life.
    CHECK(b.training_flops_per_request == doctest::Approx(1.2e20 / 3.65e7).epsilon(1e-15));
    CHECK(b.training_share_per_request == doctest::Approx(1200.0 / 365).epsilon(1e-15));
    CHECK(b.machine_hours_per_day == doctest::Approx(5e7 / 50 / 3600).epsilon(1e-15));
    CHECK(b.machine_hours_lifetime == doctest::Approx(5e7 / 50 / 3600 * 365).epsilon(1e-15));
    CHECK(b.training_hours_at_decode_rate == doctest::Approx(1.2e9 / 3600).epsilon(1e-15));
    CHECK(b.cost_per_day == doctest::Approx(5e7 / 50 / 3600 * 2).epsilon(1e-15));
    CHECK(b.cost_lifetime == doctest::Approx(5e7 / 50 / 3600 * 2 * 365).epsilon(1e-15));
    CHECK(b.cost_training_at_decode_rate == doctest::Approx(1.2e9 / 3600 * 2).epsilon(1e-15));
    CHECK(b.load_break_even_requests == 3);       // 30 s ÷ 10 s
    // No crossover within the life: nothing is marked.
    for (const BillDay& d : b.timeline) CHECK_FALSE(d.crossover);
    CHECK(b.timeline.back().day == 365);
    CHECK(b.timeline.back().inference_flops == 3.65e19);
    // Load once, serve many: (30 + n × 10) ÷ n.
    REQUIRE(b.load_once.size() == 3);
    CHECK(b.load_once[0].seconds_per_request == 40);
    CHECK(b.load_once[0].load_share == 0.75);
    CHECK(b.load_once[1].seconds_per_request == 13);
    CHECK(b.load_once[2].seconds_per_request == doctest::Approx(10.3).epsilon(1e-15));
    CHECK(b.load_once[0].cost_per_request == doctest::Approx(40.0 * 2 / 3600).epsilon(1e-15));
    // The formulas carry the numbers.
    REQUIRE(b.formula.size() >= 9);
    CHECK(contains(b.formula[0], "6 × N × D = 6 × 1,000,000,000 × 20,000,000,000 = 120 EFLOP"));
    CHECK(contains(b.formula[1], "2 × N = 2 × 1,000,000,000 = 2 GFLOP"));
    CHECK(contains(b.formula[7], "3 × 20,000,000,000 ÷ 50,000,000 = 1200 → not within 365 days"));
    CHECK(contains(b.formula[8], "÷ (100,000 × 365) = 3.29 TFLOP = 3.29 × the request's own inference (2 × N × tokens per request = 1 TFLOP)"));
}

TEST_CASE("bill: the bundled model's recipe, and the crossover day marked") {
    CHECK(bundled_model_recipe.tokens() == 819200);  // 640 steps × 8 windows × 160 tokens
    BillParams p;
    p.n_params = 3844352;
    p.n_train_tokens = static_cast<double>(bundled_model_recipe.tokens());
    p.decode_tok_s = 1000;
    p.requests_per_day = 10000;
    p.tokens_per_request = 200;
    p.days = 365;
    const BillResult b = bill(p);
    CHECK(b.crossover_day == doctest::Approx(3.0 * 819200 / 2e6).epsilon(1e-15));  // 1.2288
    CHECK(b.crossover_within_life);
    int marked = 0;
    for (const BillDay& d : b.timeline) {
        if (!d.crossover) continue;
        ++marked;
        CHECK(d.day == 2);  // the first whole day with inference >= training
        CHECK(d.inference_to_training >= 1);
    }
    CHECK(marked == 1);
    CHECK(b.timeline.front().day == 1);
    CHECK(b.timeline.front().inference_to_training < 1);
    CHECK(b.load_once.empty());  // no load time given
    CHECK(contains(b.formula[7], "inference overtakes training on day 2"));

    // Inference catching up on the very last day is within the life, marked there.
    p.n_train_tokens = 1e8;         // 3 × 1e8 ÷ (10,000 × 100) = 300 days exactly
    p.tokens_per_request = 100;
    p.days = 300;
    const BillResult last = bill(p);
    CHECK(last.crossover_day == 300);
    CHECK(last.crossover_within_life);
    REQUIRE_FALSE(last.timeline.empty());
    CHECK(last.timeline.back().day == 300);
    CHECK(last.timeline.back().crossover);
    CHECK(last.timeline.back().inference_to_training == doctest::Approx(1));
}

// One day of service: "not within 1 day", "over 1 day" ("1 days" before).
TEST_CASE("bill: a single day's formulas say day") {
    BillParams p = typed();
    p.days = 1;
    p.requests_per_day = 10;
    const BillResult b = bill(p);
    REQUIRE_FALSE(b.crossover_within_life);
    std::string all;
    for (const std::string& line : b.formula) all += line + "\n";
    CAPTURE(all);
    CHECK(all.find("not within 1 day\n") != std::string::npos);
    CHECK(all.find(" over 1 day\n") != std::string::npos);
    CHECK(all.find("1 days") == std::string::npos);
}

// Four significant digits of a huge or tiny figure are written with a power
// of ten, not as digits that look exact ("123500000000000000", "0.000000486").
TEST_CASE("bill: huge and tiny figures in the formulas carry their power of ten") {
    BillParams p = typed();
    p.requests_per_day = 123456789012;
    p.tokens_per_request = 1e6;
    const BillResult b = bill(p);  // with a load and a price: the machine time and cost lines too
    std::string all;
    for (const std::string& line : b.formula) all += line + "\n";
    CAPTURE(all);
    CHECK(all.find("123,456,789,012 × 1,000,000 = 1.235×10¹⁷") != std::string::npos);
    CHECK(all.find("= 4.86×10⁻⁷ → inference overtakes training on day 1") != std::string::npos);
    CHECK(all.find("= 7.51×10⁸ × training") != std::string::npos);
    CHECK(all.find("00000000") == std::string::npos);
}

// At the other end of the ranges: the least decode rate read "0.00 tokens/s",
// a tiny FLOP count "6e-18 FLOP", and a load's share of a request "0.000001".
TEST_CASE("bill: the smallest inputs keep their digits") {
    BillParams p = typed();
    p.n_params = 1;
    p.n_train_tokens = 1;
    p.decode_tok_s = 0.001;
    p.requests_per_day = 1e12;
    p.tokens_per_request = 1e9;
    p.days = 1e6;
    p.load_s = 1e6;
    const BillResult b = bill(p);
    std::string all;
    for (const std::string& line : b.formula) all += line + "\n";
    CAPTURE(all);
    CHECK(all.find("× 0.001 tokens/s") != std::string::npos);
    CHECK(all.find("0.00 tokens/s") == std::string::npos);
    CHECK(all.find("6×10⁻¹⁸ FLOP") != std::string::npos);
    CHECK(all.find("e-1") == std::string::npos);
    CHECK(all.find("00000") == std::string::npos);
}

TEST_CASE("bill: zero, negative and non-finite inputs are one clear error each") {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
    struct Case {
        double BillParams::*field;
        double value;
        const char* message;
    };
    const Case cases[] = {
        {&BillParams::n_params, 0, "parameters (N): must be greater than 0, got 0"},
        {&BillParams::n_params, -1000, "parameters (N): must be greater than 0, got -1000"},
        {&BillParams::n_train_tokens, nan, "training tokens (D): nan is not a finite number"},
        {&BillParams::decode_tok_s, 0, "decode rate (tokens/s): must be greater than 0, got 0"},
        {&BillParams::requests_per_day, inf, "requests per day: must be from 0.001 to 1e+12, got inf"},
        {&BillParams::requests_per_day, 1e-300, "requests per day: must be from 0.001 to 1e+12, got 1e-300"},
        {&BillParams::requests_per_day, 9.3e18, "requests per day: must be from 0.001 to 1e+12, got 9.3e+18"},
        {&BillParams::tokens_per_request, -5, "tokens per request: must be from 1 to 1e+09, got -5"},
        {&BillParams::tokens_per_request, 0.5, "tokens per request: must be from 1 to 1e+09, got 0.5"},
        {&BillParams::days, 0, "days: must be from 1 to 1e+06, got 0"},
        {&BillParams::days, nan, "days: must be from 1 to 1e+06, got nan"},
        {&BillParams::load_s, -1, "load time (s): must not be negative, got -1"},
        // Past the ranges: a 10^308 s load printed "3.17×10³⁰⁰ years".
        {&BillParams::n_params, 0.5, "parameters (N): must be from 1 to 1e+15, got 0.5"},
        {&BillParams::n_train_tokens, 1e-300, "training tokens (D): must be from 1 to 1e+18, got 1e-300"},
        {&BillParams::decode_tok_s, 1e-300, "decode rate (tokens/s): must be from 0.001 to 1e+09, got 1e-300"},
        {&BillParams::load_s, 1e308, "load time (s): must be from 0 to 1e+06, got 1e+308"},
        {&BillParams::price_per_hour, 1e300, "price per hour: must be from 0 to 1e+09, got 1e+300"},
        {&BillParams::price_per_hour, nan, "price per hour: nan is not a finite number"},
    };
    for (const Case& c : cases) {
        BillParams p = typed();
        p.*c.field = c.value;
        CAPTURE(c.message);
        CHECK_THROWS_WITH_AS(bill(p), c.message, Error);
    }
    BillParams p = typed();
    p.request_counts = {10, 0};
    CHECK_THROWS_WITH_AS(bill(p), "request count: must be greater than 0, got 0", Error);
    p = typed();
    p.n_params = 1e200;
    p.n_train_tokens = 1e200;
    CHECK_THROWS_WITH_AS(bill(p), "parameters (N): must be from 1 to 1e+15, got 1e+200", Error);
}
