// Knob declarations check values with one clear message each; descriptions
// find knobs, settings and paths, and say what they know when a name is
// wrong ("did you mean").
#include <doctest/doctest.h>

#include "pipeline/core/error.h"
#include "pipeline/core/model_description.h"
#include "pipeline/core/suggest.h"

using namespace sixstep;

namespace {

Knob number(const char* name, double lo, double hi) {
    Knob k;
    k.name = name;
    k.type = KnobType::number;
    k.min = lo, k.max = hi;
    return k;
}

Knob boolean(const char* name) {
    Knob k;
    k.name = name;
    k.type = KnobType::boolean;
    return k;
}

Knob choice(const char* name, std::vector<std::string> choices) {
    Knob k;
    k.name = name;
    k.type = KnobType::choice;
    k.choices = std::move(choices);
    return k;
}

std::string message(const Knob& k, const char* value) {
    try {
        (void)k.check(value);
    } catch (const Error& e) {
        return e.message();
    }
    return "(accepted)";
}

}  // namespace

TEST_CASE("did you mean: the nearest name within two edits, or nothing") {
    CHECK(edit_distance("kitten", "sitting") == 3);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(closest_name("temprature", {"prompt", "temperature", "top_k"}) == "temperature");
    CHECK(closest_name("weather", {"distance", "congestion"}).empty());
    // Other tools' words for ours, before spelling ("gt" is two edits from "not").
    const std::vector<std::string> ops{"value", "equals", "tol", "contains", "below", "above", "times", "plus", "not"};
    CHECK(closest_name("gt", ops) == "above");
    CHECK(closest_name("lt", ops) == "below");
    CHECK(closest_name("tolerance", ops) == "tol");
    CHECK(closest_name("gt", {"not"}) == "not");  // without "above" among them, spelling decides
    CHECK(did_you_mean("normalise", {"mode", "normalize"}) == " \u2014 did you mean \"normalize\"?");
    CHECK(did_you_mean("xyz", {"normalize"}).empty());
    CHECK(did_you_mean("fr", {"en", "zh"}).empty());  // two edits, but all of the word
    // A language by a locale's or its own name: "cn" is one edit from "en".
    for (const char* zh : {"cn", "zh-CN", "zh_CN", "Chinese", "中文"})
        CHECK(did_you_mean(zh, {"en", "zh"}) == " \u2014 did you mean \"zh\"?");
    CHECK(did_you_mean("English", {"en", "zh"}) == " \u2014 did you mean \"en\"?");
    // A mode by its long name: "training" is three edits from "train".
    CHECK(did_you_mean("training", {"eval", "train"}) == " \u2014 did you mean \"train\"?");
    CHECK(did_you_mean("Inference", {"eval", "train"}) == " \u2014 did you mean \"eval\"?");
    // q8 is two edits from fp8 too, listed first.
    const std::vector<std::string> dtypes = {"f32", "f16", "bf16", "fp8", "int8", "q8_0", "q4_0"};
    CHECK(did_you_mean("fp16", dtypes) == " \u2014 did you mean \"f16\"?");
    CHECK(did_you_mean("q8", dtypes) == " \u2014 did you mean \"q8_0\"?");
    CHECK(did_you_mean("float32", dtypes) == " \u2014 did you mean \"f32\"?");
    CHECK(did_you_mean("sya", {"title", "say"}) == " \u2014 did you mean \"say\"?");
    CHECK(did_you_mean("rat", {"rate"}) == " \u2014 did you mean \"rate\"?");
    CHECK(join_names({"a", "b", "c"}) == "a, b, c");
}

TEST_CASE("a bool knob takes the usual spellings and writes its own") {
    const Knob b = boolean("normalize");
    CHECK(b.check("true") == "true");
    CHECK(b.check("Yes") == "true");
    CHECK(b.check("OFF") == "false");
    CHECK(b.check("0") == "false");
    CHECK(message(b, "maybe") == "\"normalize\" must be true or false, got \"maybe\"");
    Knob lane = boolean("express_lane");
    lane.choices = {"0", "1"};  // a request field spelled as the model reads it
    CHECK(lane.check("yes") == "1");
    CHECK(lane.check("false") == "0");
    CHECK(lane.spelled(true) == "1");
    CHECK(lane.range_text() == "0 | 1");
    CHECK(b.range_text() == "false | true");
}

TEST_CASE("a choice knob names its choices") {
    CHECK(choice("mode", {"eval", "train"}).check("train") == "train");
    CHECK(message(choice("mode", {"eval", "train"}), "training") == "\"mode\" must be eval or train, got \"training\" \u2014 did you mean \"train\"?");
    CHECK(message(choice("size", {"s", "m", "l"}), "xl") == "\"size\" must be one of s, m, l, got \"xl\" — did you mean \"l\"?");
    CHECK(choice("mode", {"eval", "train"}).range_text() == "eval | train");
    CHECK(message(choice("experiment", {"traffic", "batch_sweep"}), "batchsweep") ==
          "\"experiment\" must be traffic or batch_sweep, got \"batchsweep\" — did you mean \"batch_sweep\"?");
}

TEST_CASE("a number knob: numbers only, inside its range, whole when it says so") {
    Knob dropout = number("dropout", 0, 1);
    dropout.max_exclusive = true;
    CHECK(dropout.check("0.5") == "0.5");
    CHECK(dropout.check("0") == "0");
    CHECK(message(dropout, "1") == "\"dropout\" must be at least 0 and below 1, got 1");
    CHECK(message(dropout, "-0.1") == "\"dropout\" must be at least 0 and below 1, got -0.1");
    CHECK(message(dropout, "half") == "\"dropout\" must be a number, got \"half\"");
    CHECK(message(dropout, "0.5x") == "\"dropout\" must be a number, got \"0.5x\"");
    Knob rate = number("rate", 1, 1000);
    rate.unit = "req/s";
    CHECK(message(rate, "100 req/s") == "\"rate\" must be a number, got \"100 req/s\" — write 100 (in req/s)");
    CHECK(message(dropout, "") == "\"dropout\" must be a number, got \"\"");
    // A percentage for a fraction: the fraction to write.
    CHECK(message(dropout, "50%").ends_with("got \"50%\" \u2014 it is a fraction at least 0 and below 1: write 0.5"));
    CHECK(message(rate, "50%") == "\"rate\" must be a number, got \"50%\"");  // not a fraction: no guess
    CHECK(message(dropout, "nan") == "\"dropout\" must be a number, got \"nan\"");
    CHECK(dropout.range_text() == "number, 0 \u2264 x < 1");

    Knob top_p = number("top_p", 0, 1);
    top_p.min_exclusive = true;
    CHECK(top_p.check("1") == "1");
    CHECK(message(top_p, "0") == "\"top_p\" must be above 0 and at most 1, got 0");
    CHECK(top_p.range_text() == "number, 0 < x \u2264 1");

    CHECK(message(number("temperature", 0, 100), "101") == "\"temperature\" must be from 0 to 100, got 101");
    Knob lower_only = number("steps", 1, std::numeric_limits<double>::infinity());
    CHECK(message(lower_only, "0") == "\"steps\" must be at least 1, got 0");
    CHECK(lower_only.range_text() == "number, 1 \u2264 x");

    Knob seed = number("seed", 0, 10);
    seed.whole = true;
    CHECK(seed.check("3") == "3");
    CHECK(message(seed, "1.5") == "\"seed\" must be a whole number from 0 to 10, got 1.5");
    CHECK(message(seed, "11") == "\"seed\" must be a whole number from 0 to 10, got 11");
    CHECK(seed.range_text() == "whole, 0 \u2264 x \u2264 10");
}

TEST_CASE("an optional knob takes none, and text takes anything") {
    Knob minimum = number("minimum_minutes", -std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::infinity());
    CHECK(message(minimum, "none") == "\"minimum_minutes\" must be a number, got \"none\"");
    CHECK(minimum.range_text() == "number");
    minimum.optional = true;
    CHECK(minimum.range_text() == "number | none");
    CHECK(minimum.check("none").empty());
    CHECK(minimum.check("").empty());
    CHECK(minimum.check("10") == "10");
    Knob prompt;
    prompt.name = "prompt";
    CHECK(prompt.check("The cat sat on the") == "The cat sat on the");
    CHECK(prompt.range_text() == "text");
    CHECK(!prompt.has_slider());
    // A text knob with a rule of its own (a list that must ascend) keeps
    // what passes it and gives the rule's message for what does not.
    Knob sizes;
    sizes.name = "sizes";
    sizes.rule = [](const std::string& v) {
        if (v.find('-') != std::string::npos) throw Error("\"sizes\" cannot be negative");
    };
    CHECK(sizes.check("1,2,4") == "1,2,4");
    CHECK(message(sizes, "1,-2") == "\"sizes\" cannot be negative");
}

TEST_CASE("a description finds knobs and settings, with did you mean and the known names") {
    ModelDescription d;
    d.kind = "toy";
    Knob prompt;
    prompt.name = "prompt";
    Knob normalize = boolean("normalize");
    normalize.target = KnobTarget::setting;
    d.knobs = {prompt, number("temperature", 0, 2), normalize};
    d.paths = {{"forward.x", ValueType::number, "", "x"}};
    d.headlines = {{Stage::output, {{"x"}}}};

    CHECK(d.knob("temperature").name == "temperature");
    CHECK_THROWS_WITH_AS(d.knob("temprature"),
                         "unknown knob \"temprature\" for the toy model \u2014 did you mean \"temperature\"? (known: "
                         "prompt, temperature, normalize)",
                         Error);
    CHECK(d.setting("normalize").name == "normalize");
    CHECK_THROWS_WITH_AS(d.setting("normalise"),
                         "unknown setting \"normalise\" for the toy model \u2014 did you mean \"normalize\"? (known: "
                         "normalize)",
                         Error);
    CHECK_THROWS_WITH_AS(d.setting("prompt"),
                         "\"prompt\" is a request field of the toy model, not a setting: give it in the request", Error);
    CHECK(d.setting_names() == std::vector<std::string>{"normalize"});
    CHECK(d.find_path("forward.x"));
    CHECK(!d.find_path("forward.y"));
    CHECK(d.headline(Stage::output));
    CHECK(!d.headline(Stage::forward));
}

TEST_CASE("common paths: every stage's ms and warnings, the checksums, the response text") {
    std::vector<PathInfo> paths;
    add_common_paths(paths);
    auto has = [&](const char* p) {
        for (const auto& i : paths)
            if (i.path == p) return true;
        return false;
    };
    for (Stage s : all_stages) {
        CHECK(has((std::string(stage_name(s)) + ".ms").c_str()));
        CHECK(has((std::string(stage_name(s)) + ".warnings").c_str()));
    }
    CHECK(has("load.cold"));
    CHECK(has("respond.weights_unchanged"));
    CHECK(has("response.text"));
    CHECK(has("model.checksum"));
}
