#include <doctest/doctest.h>

#include "pipeline/core/error.h"
#include "pipeline/delivery/units.h"

using namespace sixstep;
using namespace sixstep::delivery;

TEST_CASE("quantities: a number and an optional unit") {
    CHECK(parse_quantity("3 km").value == 3);
    CHECK(parse_quantity("3 km").unit == "km");
    CHECK(parse_quantity("3000m").unit == "m");
    CHECK(parse_quantity("  1.5  MI ").unit == "mi");
    CHECK(parse_quantity("+2").value == 2);
    CHECK(parse_quantity("-2").value == -2);
    CHECK(parse_quantity("50%").unit == "%");
    CHECK(parse_quantity("yes").value == 1);
    CHECK(parse_quantity("No").value == 0);
    CHECK(parse_quantity("true").value == 1);
    CHECK(parse_quantity("TRUE").unit.empty());
    CHECK(parse_quantity("false").value == 0);
    CHECK(parse_quantity("False").unit.empty());
    // A switch's words, as the knobs take them ("express_lane: on").
    CHECK(parse_quantity("on").value == 1);
    CHECK(parse_quantity("Off").value == 0);
    CHECK(parse_quantity("off").yes_no);
    CHECK(parse_quantity("0").unit.empty());
}

TEST_CASE("unreadable quantities are errors") {
    CHECK_THROWS_WITH_AS(parse_quantity(""), "empty value: expected a number with an optional unit (e.g. \"3 km\")",
                         Error);
    CHECK_THROWS_WITH_AS(parse_quantity("three km"),
                         "\"three km\" is not a number with an optional unit (e.g. \"3 km\")", Error);
    CHECK_THROWS_WITH_AS(parse_quantity("3 k/m"), "\"3 k/m\" has an unreadable unit \"k/m\"", Error);
    CHECK_THROWS_AS(parse_quantity("nan"), Error);
    CHECK_THROWS_AS(parse_quantity("inf km"), Error);
    // A decimal comma read as 3 and a unit ",5 km" said so, with no hint of the comma.
    CHECK_THROWS_WITH_AS(parse_quantity("3,5 km"), "\"3,5 km\" has a decimal comma: write the decimal point as \".\"",
                         Error);
    // The example fits what the caller asks for.
    CHECK_THROWS_WITH_AS(parse_quantity("high", "0 or 1"), "\"high\" is not a number with an optional unit (0 or 1)",
                         Error);
}

TEST_CASE("quantities as a Chinese lesson writes them: 3 公里, 30％, 是 and 否") {
    CHECK(parse_quantity("3 公里").unit == "公里");
    CHECK(*unit_factor(Dimension::length, parse_quantity("3 公里").unit) == 1);
    CHECK(*unit_factor(Dimension::length, parse_quantity("3千米").unit) == 1);
    CHECK(*unit_factor(Dimension::length, parse_quantity("3000 米").unit) == 0.001);
    CHECK(*unit_factor(Dimension::length, parse_quantity("2 英里").unit) == doctest::Approx(1.609344));
    CHECK(*unit_factor(Dimension::ratio, parse_quantity("30％").unit) == 0.01);
    CHECK(parse_quantity("是").value == 1);
    CHECK(parse_quantity("否").value == 0);
    // The full-width space a Chinese input method types between number and unit.
    CHECK(parse_quantity("3\u3000\u516c\u91cc").unit == "\u516c\u91cc");
    CHECK(parse_quantity("\u30003 km\u3000").value == 3);
    CHECK(parse_quantity("3\u3000km").unit == "km");
    // Beyond ASCII is read as a unit, and a unit of the wrong kind is refused as before.
    CHECK_FALSE(unit_factor(Dimension::ratio, "公里"));
    CHECK_FALSE(unit_factor(Dimension::length, "公斤"));
}

TEST_CASE("unit factors convert to the training unit") {
    CHECK(*unit_factor(Dimension::length, "km") == 1);
    CHECK(*unit_factor(Dimension::length, "m") == 0.001);
    CHECK(*unit_factor(Dimension::length, "miles") == doctest::Approx(1.609344));
    CHECK(*unit_factor(Dimension::length, "") == 1);
    CHECK(*unit_factor(Dimension::ratio, "%") == 0.01);
    CHECK(!unit_factor(Dimension::length, "kg"));
    CHECK(!unit_factor(Dimension::ratio, "km"));
    CHECK(!unit_factor(Dimension::flag, "km"));
}

TEST_CASE("unit factors: every spelling of a length unit converts alike") {
    for (const char* km : {"km", "kilometre", "kilometres", "kilometer", "kilometers"})
        CHECK(*unit_factor(Dimension::length, km) == 1);
    for (const char* m : {"m", "metre", "metres", "meter", "meters"}) CHECK(*unit_factor(Dimension::length, m) == 0.001);
    for (const char* mi : {"mi", "mile", "miles"}) CHECK(*unit_factor(Dimension::length, mi) == 1.609344);  // the international mile
}
