#include <cmath>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/model.h"
#include "pipeline/core/text.h"
#include "pipeline/core/trace.h"

using namespace sixstep;

TEST_CASE("stage names round-trip") {
    for (Stage s : all_stages) CHECK(parse_stage(stage_name(s)) == s);
    CHECK(!parse_stage("backward"));
    CHECK(stage_index(Stage::respond) == 5);
}

TEST_CASE("values format as a person writes them") {
    CHECK(format_value(Value{11.0}) == "11");
    CHECK(format_value(Value{-0.0}) == "0");
    CHECK(format_value(Value{3.25}) == "3.25");
    CHECK(format_value(Value{std::string("x")}) == "x");
    CHECK(format_value(Value{std::vector<double>{5, 2, 10, -2}}) == "[5, 2, 10, -2]");
    // A value not measured in a list (a real server's pace at its lowest rate) is a dash, not "nan".
    CHECK(format_value(Value{std::vector<double>{std::nan(""), 8.988, 11.38}}) == "[\u2014, 8.988, 11.38]");
}

TEST_CASE("trace lookup: latest event of the stage, outputs before inputs, ms and warnings") {
    Trace t;
    TraceEvent a;
    a.stage = Stage::forward;
    a.in("x", 1.0).out("x", 2.0);
    a.elapsed_ms = 0.5;
    t.add(a);
    TraceEvent b;
    b.stage = Stage::forward;
    b.out("y", 3.0);
    b.warnings = {"w1", "w2"};
    t.add(b);
    CHECK(!t.lookup("forward.x"));  // only the latest forward event counts
    CHECK(std::get<double>(*t.lookup("forward.y")) == 3);
    CHECK(std::get<std::string>(*t.lookup("forward.warnings")) == "w1; w2");
    CHECK(!t.lookup("output.y"));
    CHECK(!t.lookup("nonsense"));
    CHECK(a.find("x") == &a.outputs[0]);
}

TEST_CASE("errors carry file:line:column and context") {
    Error e(SourceLocation{"a.yaml", 3, 7}, "bad");
    CHECK(std::string(e.what()) == "a.yaml:3:7: bad");
    CHECK(e.message() == "bad");
    CHECK(std::string(e.with_context("loading").what()) == "a.yaml:3:7: loading: bad");
    CHECK(std::string(Error("plain").with_context("ctx").what()) == "ctx: plain");
    CHECK(SourceLocation{"f", 2, 0}.str() == "f:2");
}

TEST_CASE("checksums see every byte") {
    const char a[] = "weights";
    char b[] = "weights";
    CHECK(checksum_bytes(a, 7) == checksum_bytes(b, 7));
    b[3] ^= 1;
    CHECK(checksum_bytes(a, 7) != checksum_bytes(b, 7));
    CHECK(checksum_hex(0xabc) == "0000000000000abc");
}

TEST_CASE("request fields keep their order and set replaces") {
    Request r;
    r.set("distance", "3 km");
    r.set("congestion", "0");
    r.set("distance", "4 km");
    REQUIRE(r.fields.size() == 2);
    CHECK(*r.get("distance") == "4 km");
    CHECK(r.fields[0].first == "distance");
    CHECK(r.get("nope") == nullptr);
}

TEST_CASE("quoted text keeps one value on one line") {
    CHECK(quote_text(" mat") == "\" mat\"");
    CHECK(quote_text("a\nb\t\"c\"") == "\"a\\nb\\t\\\"c\\\"\"");
    CHECK(quote_text(std::string("\x01", 1)) == "\"\\x01\"");
    CHECK(quote_text("猫") == "\"猫\"");  // UTF-8 passes through untouched
}

TEST_CASE("a count takes its noun in the singular only for one") {
    CHECK(count_of(1, "token", "tokens") == "1 token");
    CHECK(count_of(0, "token", "tokens") == "0 tokens");
    CHECK(count_of(6, "token", "tokens") == "6 tokens");
}

// Lesson 03 printed "b = 5.068" in an out: line under the working's 5.06815,
// lesson 04 "p(" songs") = 0.0000" above an out: line's 1.76×10⁻⁶, and a list
// of probabilities 0.000185 beside 8.97×10⁻⁵ and 1×10⁻⁵.
TEST_CASE("shown numbers: four significant digits, a power of ten below a thousandth") {
    CHECK(shown_number(0.43107) == "0.4311");
    CHECK(shown_number(0.19400) == "0.194");
    CHECK(shown_number(0.8) == "0.8");  // a setting as written
    CHECK(shown_number(0.074321) == "0.07432");
    CHECK(shown_number(0.0011561) == "0.001156");
    CHECK(shown_number(0.999999) == "1.000");
    CHECK(shown_number(10.9996) == "11.00");
    CHECK(shown_number(-10.9996) == "-11.00");
    CHECK(shown_number(11.0) == "11");
    CHECK(shown_number(16609.7) == "16610");
    CHECK(shown_number(0.000185) == "1.85\u00d710\u207b\u2074");
    CHECK(shown_number(8.97e-5) == "8.97\u00d710\u207b\u2075");
    CHECK(shown_number(9.9999e-6) == "1.00\u00d710\u207b\u2075");  // not 10⁻⁵ itself: its zeros kept
    CHECK(shown_number(8.8001e-7) == "8.8\u00d710\u207b\u2077");
    CHECK(shown_number(0) == "0");
    // A model whose working shows six: the same figure as there.
    CHECK(shown_number(5.068152, 6) == "5.06815");
    CHECK(shown_number(2.999820, 6) == "2.99982");
    CHECK(shown_number(10.99964, 6) == "10.9996");
}

TEST_CASE("division: the figures printed divide to the quotient printed, with more digits where they must") {
    const auto places = [](double x, int p) { return fmt::format("{:.{}f}", x, p); };
    const auto q2 = [](double q) { return fmt::format("{:.2f}", q); };
    // 9.04 ÷ 1.51 is 5.9868: two places would print 5.98 beside it.
    const Division d = division(9.0449, 1.5124, 2, places, q2);
    CHECK(d.a == "9.045");
    CHECK(d.b == "1.512");
    CHECK(d.q == "5.98");
    // Where two places already divide right, two places.
    const Division e = division(10.0, 2.5, 2, places, q2);
    CHECK(e.a == "10.00");
    CHECK(e.b == "2.50");
    CHECK(e.q == "4.00");
}

// The bill's FLOP counts read "1.89×10¹³" in a sentence, as %g rounds them.
TEST_CASE("readable numbers: a power of ten where %g writes an exponent") {
    CHECK(readable_number(1.89e13) == "1.89\u00d710\u00b9\u00b3");
    CHECK(readable_number(-2.09e-6) == "-2.09\u00d710\u207b\u2076");
    CHECK(readable_number(9.9999e-6) == "1\u00d710\u207b\u2075");  // rounded by %g into the next power
    CHECK(readable_number(1e100, 2) == "1\u00d710\u00b9\u2070\u2070");
    CHECK(readable_number(0.058) == "0.058");
    CHECK(readable_number(12.5) == "12.5");
    CHECK(readable_number(0) == "0");
}

TEST_CASE("a power of ten as a class reads it: superscript exponent, a real minus") {
    CHECK(times_power_of_ten("1.85", -4) == "1.85\u00d710\u207b\u2074");
    CHECK(times_power_of_ten("1.89", 13) == "1.89\u00d710\u00b9\u00b3");
    CHECK(times_power_of_ten("2", 0) == "2\u00d710\u2070");
    CHECK(readable_number(1.89e13) == "1.89\u00d710\u00b9\u00b3");
    CHECK(readable_number(9.999e-6) == "1\u00d710\u207b\u2075");  // %g's rounding
    CHECK(shown_number(1.85e-4) == "1.85\u00d710\u207b\u2074");
}

TEST_CASE("a key reads as words, but a GGUF or sampler name keeps its underscores") {
    CHECK(key_as_words("express_lane") == "express lane");
    CHECK(key_as_words("requests_per_day") == "requests per day");
    // GGUF types and rates inside a key ("q8 0 file ratio", "rate req s" before).
    CHECK(key_as_words("q8_0_file_ratio") == "Q8_0 file ratio");
    CHECK(key_as_words("q4_0_over_q8_0_kl") == "Q4_0 over Q8_0 kl");
    CHECK(key_as_words("decode_tok_s") == "decode tok/s");
    CHECK(key_as_words("rate_req_s") == "rate req/s");
    CHECK(key_as_words("f16_ms") == "F16 ms");
    CHECK(key_as_words("status") == "status");
    CHECK(key_as_words("tok_count") == "tok count");
    for (const char* kept : {"n_embd", "n_head_kv", "head_dim", "top_k", "top_p", "min_p"}) CHECK(key_as_words(kept) == kept);
}

TEST_CASE("a whole text is a number only when nothing but the number is there") {
    CHECK(whole_number_text("12") == 12.0);
    CHECK(whole_number_text("-0.5") == -0.5);
    CHECK(whole_number_text("1e3") == 1000.0);
    for (const char* not_one : {"", " 12", "12 ", "12 min", "nan", "inf", "1e999", "0x", "twelve", "0x10", "0x1p-1",
                                "-0X1.8P1"}) {
        CAPTURE(not_one);
        CHECK_FALSE(whole_number_text(not_one).has_value());
    }
    // A NUL inside is text after the number, not its end.
    CHECK_FALSE(whole_number_text(std::string_view("12\0 3", 5)).has_value());
}
