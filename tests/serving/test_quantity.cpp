// How the calculators print numbers, and how they refuse typed ones.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "pipeline/core/error.h"
#include "pipeline/serving/quantity.h"

using namespace sixstep::serving;

TEST_CASE("quantity: significant digits without exponents or trailing zeros") {
    CHECK(significant(18.874368) == "18.9");
    CHECK(significant(150.994944) == "151");
    CHECK(significant(0.074291) == "0.0743");
    CHECK(significant(2.0) == "2");
    CHECK(significant(999.7) == "1000");
    CHECK(significant(-3.14159, 2) == "-3.1");
    CHECK(significant(0) == "0");
    // Far out of everyday range an exponent says it in a few characters.
    CHECK(significant(9.5099e295) == "9.51e+295");
    CHECK(significant(1.234e-12) == "1.23e-12");
}

TEST_CASE("quantity: bytes in decimal and binary units") {
    CHECK(bytes_decimal(147456) == "147 kB");
    CHECK(bytes_binary(147456) == "144 KiB");
    CHECK(bytes_decimal(18874368000.0) == "18.9 GB");
    CHECK(bytes_binary(18874368000.0) == "17.6 GiB");
    CHECK(bytes_decimal(150994944000.0) == "151 GB");
    CHECK(bytes_binary(1048576) == "1 MiB");      // exactly one unit up, not "1020 KiB"
    CHECK(bytes_decimal(999999) == "1 MB");       // 999.999 kB rounds to 1000 kB: the next unit
    CHECK(bytes_decimal(512) == "512 B");
}

TEST_CASE("quantity: thousands separators, FLOPs and durations") {
    CHECK(with_commas(std::uint64_t{18874368000}) == "18,874,368,000");
    CHECK(with_commas(std::uint64_t{0}) == "0");
    CHECK(with_commas(819200.0) == "819,200");
    CHECK(with_commas(1234.5) == "1,234.5");
    CHECK(with_commas(-1234.5) == "-1,234.5");
    CHECK(with_commas(-819200.0) == "-819,200");
    CHECK(flops(7.69e6) == "7.69 MFLOP");
    CHECK(flops(1.889e13) == "18.9 TFLOP");
    CHECK(flops_per_s(5.28e9) == "5.28 GFLOP/s");
    CHECK(duration(0.000449) == "449 µs");
    CHECK(duration(0.291) == "291 ms");
    CHECK(duration(4.5) == "4.5 s");
    CHECK(duration(2910) == "48.5 min");
    CHECK(duration(7200) == "2 h");
    CHECK(duration(5400) == "1.5 h");
    CHECK(duration(86400 * 12.3) == "12.3 days");
}

TEST_CASE("quantity: typed numbers are refused with one reason each") {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
    CHECK(require_count("layers", 36, 100) == 36);
    CHECK_THROWS_WITH_AS(require_count("layers", 0, 100), "layers: must be at least 1, got 0", sixstep::Error);
    CHECK_THROWS_WITH_AS(require_count("layers", -3, 100), "layers: must be at least 1, got -3", sixstep::Error);
    CHECK_THROWS_WITH_AS(require_count("layers", 1.5, 100), "layers: must be a whole number, got 1.5", sixstep::Error);
    CHECK_THROWS_WITH_AS(require_count("layers", inf, 100), "layers: inf is not a finite number", sixstep::Error);
    CHECK_THROWS_WITH_AS(require_count("layers", nan, 100), "layers: nan is not a finite number", sixstep::Error);
    CHECK_THROWS_WITH_AS(require_count("layers", 1e30, 100000), "layers: 1e+30 is absurdly large (at most 100,000)",
                         sixstep::Error);
    CHECK(require_positive("days", 0.5) == 0.5);
    CHECK_THROWS_WITH_AS(require_positive("days", 0), "days: must be greater than 0, got 0", sixstep::Error);
    CHECK_THROWS_WITH_AS(require_positive("days", -inf), "days: -inf is not a finite number", sixstep::Error);
    CHECK(require_non_negative("load", 0) == 0);
    CHECK_THROWS_WITH_AS(require_non_negative("load", -1), "load: must not be negative, got -1", sixstep::Error);
}
