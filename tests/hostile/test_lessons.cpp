// Hostile lessons: repeated and non-text keys, extra YAML documents, a
// negative tolerance, and work that a few aliases multiply into hours. Each
// is an invalid lesson (exit 2) with its position, and `check` still reports
// every file and the summary.
#include <fstream>
#include <regex>
#include <sstream>

#include <doctest/doctest.h>

#include "app/core/lesson.h"
#include "hostile.h"
#include "pipeline/core/error.h"

using namespace sixstep;
using namespace sixstep::app;
using namespace sixstep::test;

namespace {

// "line:column: message" of the error a lesson text gives, or "(valid)".
std::string error_of(const std::string& yaml) {
    try {
        (void)parse_lesson(yaml, "x.yaml");
    } catch (const Error& e) {
        return std::to_string(e.where().line) + ":" + std::to_string(e.where().column) + ": " + e.message();
    }
    return "(valid)";
}

// A delivery lesson up to its first step's expect:, each check on line 6.
const std::string delivery_expect =
    "title: t\nsteps:\n  - request: {distance: \"3 km\", congestion: \"30%\", express_lane: 1}\n    run: all\n    expect:\n";

}  // namespace

TEST_CASE("lessons: a repeated key is an error at the second one, wherever it is") {
    CHECK(error_of("title: A\ntitle: B\nsteps: [{say: hi}]\n") ==
          "2:1: duplicate key \"title\" (first at line 1); YAML keeps only one of them");
    CHECK(error_of("title: A\nsteps:\n  - say: hi\n    run: all\n    say: again\n")
              .rfind("5:5: duplicate key \"say\" (first at line 3); YAML keeps only one of them", 0) == 0);
    CHECK(error_of("title: A\nsteps:\n  - request: {distance: 3 km, distance: 5 km}\n") ==
          "3:31: duplicate key \"distance\" (first at line 3); YAML keeps only one of them");
    CHECK(error_of("title: A\nsteps:\n  - run: all\n    expect:\n      forward.raw_output: 11\n"
                   "      forward.raw_output: 12\n") ==
          "6:7: duplicate key \"forward.raw_output\" (first at line 5); YAML keeps only one of them");
    // The first in the file, wherever the others are: a later step's came first.
    CHECK(error_of("title: t\nsteps:\n  - run: all\n    say: one\n    say: two\n  - run: all\n    expect:\n"
                   "      response.minutes: 11\n      response.minutes: {below: 50}\n") ==
          "5:5: duplicate key \"say\" (first at line 4); YAML keeps only one of them");
    CHECK(error_of("title: t\nsteps:\n  - run: all\n    say: one\n    say: two\ntitle: u\n")
              .rfind("5:5: duplicate key \"say\"", 0) == 0);
}

TEST_CASE("lessons: a key that is a list or a mapping is an error, not a crash") {
    CHECK(error_of("title: A\n? [a, b]\n: 1\nsteps: [{say: hi}]\n") == "2:3: a key must be plain text, got a list");
    CHECK(error_of("title: A\nsteps:\n  - {say: hi, {x: 1}: 2}\n") == "3:15: a key must be plain text, got a mapping");
}

TEST_CASE("lessons: a lone comma is one clear error, not a parser that never returns") {
    // yaml-cpp's LoadAll adds empty documents forever on this input.
    CHECK(error_of(",") == "1:1: a lesson must be a mapping with title and steps");
    CHECK(error_of("title: A\nsteps: [{say: hi}]\n,\n") ==
          "3:1: invalid YAML: end of map not found — check the indentation here and on the line above: keys of one "
          "mapping line up, a list's \"- \" items too");
}

// What the YAML parser says names its state; a tired author needs the slip.
TEST_CASE("lessons: a tab, a colon in a value and a key indented too deep are named with their fix") {
    CHECK(error_of("title: t\nsteps:\n  - say: hi\n\trequest: {distance: 3}\n") ==
          "4:1: a tab in the indentation: YAML indents with spaces only (the parser said: illegal tab when looking "
          "for indentation)");
    CHECK(error_of("title: t\nsteps:\n  - say: Note: the model is tiny\n") ==
          "3:14: invalid YAML: illegal map value — a value with \": \" in it must be quoted (\"…\") or written as a "
          "block (say: |, then the text on the lines below)");
    CHECK(error_of("title: t\nsteps:\n  - say: hi\n     request: {distance: 3}\n") ==
          "4:13: invalid YAML: illegal map value — this line reads as the rest of the value above; if it is a key "
          "of its own, indent it as the keys above it");
    // A key whose value is on the lines below ("expect:") too; it was told to quote a ": " it does not have.
    CHECK(error_of("title: t\nsteps:\n  - say: hi\n    run: all\n      expect:\n        response.minutes: 11\n") ==
          "5:13: invalid YAML: illegal map value — this line reads as the rest of the value above; if it is a key "
          "of its own, indent it as the keys above it");
    CHECK(error_of("title: t\n\t\nsteps: [{say: hi}]\n").rfind("2:1: a tab in the indentation", 0) == 0);
    // A tab after the text (in a comment) is no indentation: the error is the parser's own.
    CHECK(error_of("title: t # a\ttab\nsteps: [{say: hi}]\n,\n").rfind("3:1: invalid YAML: end of map not found", 0) ==
          0);
}

// The parser stops a line or more after these slips, with words about its
// own state; the message names the slip where it is.
TEST_CASE("lessons: a full-width colon or space, an unclosed quote and a missing colon are named where they are") {
    // "title：" typed with a Chinese input method: the next key was "illegal map value".
    CHECK(error_of("title: t\nsteps:\n  - title\uff1a\u7b2c\u4e00\u6b65\n    say: hi\n") ==
          "3:10: invalid YAML: a full-width colon \"\uff1a\" after a key: YAML's keys end with an ASCII \":\" and a space "
          "(an input method in Chinese mode types this one) (the parser stopped at line 4: illegal map value)");
    // As a step's last key, or alone under expect:, the parser takes it
    // without an error; it was an unknown key, or "must be a mapping".
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: \"3 km\", congestion: 0, express_lane: 0}\n"
                   "    run\uff1a all\n") ==
          "4:8: a full-width colon \"\uff1a\" after a key: YAML's keys end with an ASCII \":\" and a space (an input "
          "method in Chinese mode types this one): write \"run: all\"");
    CHECK(error_of(delivery_expect + "      response.minutes\uff1a 11\n")
              .rfind("6:23: a full-width colon \"\uff1a\" after a key", 0) == 0);
    // A full-width colon inside a value is Chinese punctuation, not a slip.
    CHECK(error_of("title: t\nsteps:\n  - say: \u6ce8\u610f\uff1a\u8fd9\u91cc\n") == "(valid)");
    CHECK(error_of("title: t\nsteps:\n  - say: hi\n\u3000\u3000run: all\n    request: {distance: 3}\n") ==
          "4:1: invalid YAML: a full-width space (U+3000) in the indentation: YAML indents with ASCII spaces only (an "
          "input method in Chinese mode types this one) (the parser stopped at line 5: illegal map value)");
    // At the start of a line YAML reads it as part of a key at the top level.
    CHECK(error_of("title: t\nsteps:\n  - say: hi\n\u3000\u3000run: all\n") ==
          "4:1: a full-width space (U+3000) before the key: YAML indents with ASCII spaces only (an input method in "
          "Chinese mode types this one)");
    CHECK(error_of("title: t\nsteps:\n  - say: \"hello there\n    request: {distance: \"3 km\"}\n    run: all\n") ==
          "3:10: invalid YAML: the quote opened here is not closed on its line, so YAML reads the lines below as part "
          "of the value up to the next \": close it on this line, or write a long text as a block (say: |, then the "
          "text on the lines below) (the parser stopped at line 4: end of map not found)");
    CHECK(error_of("title: t\nsteps:\n  - title: one\n    say hello there\n    run: all\n") ==
          "4:5: invalid YAML: this line has no \":\": a key is written \"key: value\" (a colon and a space after the "
          "key); text that goes on from the line above is indented further than the keys (the parser stopped at line "
          "5: illegal map value)");
    // A Chinese paragraph indented with "　　" in a block is the text's own, not the slip below it.
    CHECK(error_of("title: t\nsteps:\n  - say: |\n      \u3000\u3000\u8fd9\u662f\u4e00\u6bb5\n    run: all\n      expect: {}\n")
              .find("full-width space") == std::string::npos);
    // "：" in a block's Chinese text above a slip is punctuation: the slip is named.
    CHECK(error_of("title: t\nsteps:\n  - say: |\n      \u6ce8\u610f\uff1a\u8fd9\u91cc\n    run all\n    request: {}\n")
              .rfind("5:5: invalid YAML: this line has no \":\"", 0) == 0);
    // A quoted text closed on a later line, above a slip, is not the slip.
    CHECK(error_of("title: t\nsteps:\n  - say: \"one\n      two\"\n    run all\n    request: {}\n")
              .rfind("5:5: invalid YAML: this line has no \":\"", 0) == 0);
    // A quote inside the quoted text, "run:all", and a lone word above keys indented under it.
    CHECK(error_of("title: t\nsteps:\n  - say: 'It's 11 minutes'\n    run: all\n")
              .rfind("3:13: invalid YAML: this quote ends the quoted value before its text does: inside '\u2026' write '' for a '", 0) == 0);
    CHECK(error_of("title: t\nsteps:\n  - say: \"A customer\" asks\n    run: all\n")
              .rfind("3:21: invalid YAML: this quote ends the quoted value before its text does", 0) == 0);
    CHECK(error_of("title: t\nsteps:\n  - run:all\n    say: hi\n").rfind("3:8: invalid YAML: no space after this colon", 0) == 0);
    CHECK(error_of("title: t\nsteps:\n  - run: all\n    expect\n      response.minutes: 11\n")
              .rfind("4:5: invalid YAML: this line has no \":\"", 0) == 0);
    // A quoted value that runs on over lines and closes is YAML, and fine.
    CHECK(error_of("title: t\nsteps:\n  - say: \"one\n      two\"\n") == "(valid)");
}

// Four more slips the parser reported in its own words ("end of map flow not
// found", "illegal flow end"), or as a duplicate key far from the cause.
TEST_CASE("lessons: an unclosed brace or bracket, a // comment, a colon left out before braces and a step without its dash are named") {
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: 3\n    run: all\n") ==
          "3:14: invalid YAML: this \"{\" is never closed: a {\u2026} mapping ends with \"}\" (or write its keys on the "
          "lines below, indented) (the parser stopped at line 4: end of map flow not found)");
    CHECK(error_of("title: t\nsteps:\n  - say: hi\n    knobs: [distance, congestion\n\n  - run: all\n")
              .rfind("4:12: invalid YAML: this \"[\" is never closed: a [\u2026] list ends with \"]\"", 0) == 0);
    // A flow closed on a later line is YAML; the open one nearest the stop is named.
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: 3,\n      congestion: 0, express_lane: 0}\n") == "(valid)");
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: \"{3\"}\n  - knobs: [distance\n  - run: all\n")
              .rfind("4:12: invalid YAML: this \"[\"", 0) == 0);
    CHECK(error_of("title: t\nsteps:\n  - say: hi\n  // the answer\n  - run: all\n") ==
          "4:3: invalid YAML: a comment in YAML starts with \"#\", not \"//\" (the parser stopped at line 5: illegal "
          "map value)");
    CHECK(error_of(delivery_expect + "      response.text: {contains: \"11\"}  // eleven\n") ==
          "6:40: invalid YAML: a comment in YAML starts with \"#\", not \"//\" (the parser stopped at line 6: end of "
          "map not found)");
    CHECK(error_of("title: t\nsteps:\n  - run: all\n    knobs: [distance]  // knobs\n")
              .rfind("4:24: invalid YAML: a comment in YAML starts with \"#\", not \"//\"", 0) == 0);
    CHECK(error_of("title: t\nsteps:\n  - run: all\n    expect:\n      response.text {contains: \"11\"}\n") ==
          "5:20: invalid YAML: no \":\" between the key and its {\u2026}: write \"response.text: {\u2026}\" (the parser "
          "stopped at line 5: illegal flow end)");
    // A second step without its "- " joins the first: its title is the first's again.
    CHECK(error_of("title: t\nsteps:\n  - title: one\n    say: hi\n    title: two\n    run: all\n") ==
          "5:5: duplicate key \"title\" (first at line 3); YAML keeps only one of them \u2014 if a new item of the list "
          "starts here, begin it with \"- \" as the one at line 3 does");
    // Any other repeated key is only a duplicate; so is one outside a list.
    CHECK(error_of("title: t\nsteps:\n  - title: one\n    say: hi\n    say: two\n") ==
          "5:5: duplicate key \"say\" (first at line 4); YAML keeps only one of them");
    CHECK(error_of("title: A\ntitle: B\nsteps: [{say: hi}]\n") ==
          "2:1: duplicate key \"title\" (first at line 1); YAML keeps only one of them");
}

// A last key whose colon is full-width, lacks its space or is missing is
// valid YAML (one text): the message says how the key and value are written.
TEST_CASE("lessons: a key and value read as one text say how to write them") {
    const std::string fix = " \u2014 a key and its value are written with an ASCII colon and a space: ";
    // A full-width colon is named where it is, as the parser's errors name it.
    const std::string wide = ": a full-width colon \"\uff1a\" after a key: YAML's keys end with an ASCII \":\" and a "
                             "space (an input method in Chinese mode types this one): write ";
    CHECK(error_of("title: t\nmodel:\n  kind\uff1adelivery\nsteps:\n  - say: hi\n") == "3:7" + wide + "\"kind: delivery\"");
    CHECK(error_of("title: t\nsteps:\n  - run\uff1aall\n") == "3:8" + wide + "\"run: all\"");
    CHECK(error_of("title: t\nsteps:\n  - say: hi\n    run all\n").rfind("4:5: unknown key \"run all\" in step 1" + fix + "\"run: all\"", 0) == 0);
    CHECK(error_of("title: t\nsteps:\n  - say: hi\n    run:all\n").rfind("4:5: unknown key \"run:all\" in step 1" + fix + "\"run: all\"", 0) == 0);
    // An ordinary unknown key still gets its did-you-mean.
    CHECK(error_of("title: t\nsteps:\n  - sya: hi\n").rfind("3:5: unknown key \"sya\" in step 1 \u2014 did you mean \"say\"?", 0) == 0);
}

// Typographic quotes are text to YAML: a check's “11” kept them and never held.
TEST_CASE("lessons: typographic quotes around a value are named, and left alone in text") {
    CHECK(error_of(delivery_expect + "      response.text: {contains: \u201c11\u201d}\n") ==
          "6:33: \u201c \u201d are typographic quotes, which YAML reads as part of the value, not as quotes: write "
          "\"11\" with ASCII quotes (an input method in Chinese mode, or a word processor, types these)");
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: \u20183 km\u2019, congestion: 0, express_lane: 0}\n")
              .rfind("3:25: \u2018 \u2019 are typographic quotes", 0) == 0);
    // A narration or a title may quote with them.
    CHECK(error_of("title: \u201cEleven\u201d\nsteps:\n  - say: \u201cEleven minutes\u201d\n") == "(valid)");
}

// A Chinese input method's comma and brackets: the parser said "end of map
// flow not found" or "illegal map value", and a list in ［］ was only "text".
TEST_CASE("lessons: a full-width comma or bracket where YAML needs an ASCII one is named") {
    const std::string comma = "invalid YAML: a full-width comma \"\uff0c\" between the entries of a {\u2026} or "
                              "[\u2026]: YAML separates them with an ASCII \",\"";
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: \"3 \u516c\u91cc\"\uff0ccongestion: 0, express_lane: 0}\n")
              .rfind("3:31: " + comma, 0) == 0);
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: 3\uff0ccongestion: 0, express_lane: 0}\n")
              .rfind("3:26: " + comma, 0) == 0);
    // Inside quotes the comma is the text's own.
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: \"3 km\", congestion: 0, express_lane: 0}\n"
                   "    say: \"\u4e09\u516c\u91cc\uff0c\u6ca1\u6709\u62e5\u5835\"\n") == "(valid)");
    CHECK(error_of("title: t\nsteps:\n  - request: \uff5bdistance: 3, congestion: 0, express_lane: 0\uff5d\n")
              .rfind("3:14: invalid YAML: a full-width \"\uff5b\" opens this value: YAML's {\u2026} are ASCII", 0) == 0);
    CHECK(error_of("title: t\nsteps:\n  - knobs: \uff3bdistance\uff3d\n    run: all\n") ==
          "3:12: \"knobs\" must be a list, got \"\uff3bdistance\uff3d\", text: its full-width brackets are not "
          "YAML's ASCII [\u2026] or {\u2026}");
}

// Found by the lesson fuzzer: a "#" first on the line after a quote never
// closed was read one byte before the line (UBSan: pointer overflow).
TEST_CASE("lessons: a comment line after a quote never closed is read within its line") {
    CHECK(error_of("\"\n#:") == "2:3: invalid YAML: illegal EOF in scalar");
    CHECK(error_of("\"\n//:").rfind("2:1: invalid YAML: a comment in YAML starts with", 0) == 0);
}

// A Windows editor's "Unicode" is UTF-16: it read as "a NUL byte".
TEST_CASE("lessons: a lesson saved as UTF-16 is told to be saved as UTF-8") {
    const std::string utf16 = std::string("\xFF\xFE", 2) + std::string("t\0i\0t\0l\0e\0", 10);
    CHECK(error_of(utf16) == "1:1: the lesson is saved as UTF-16: save it as UTF-8 (an editor's \"Unicode\" is often UTF-16)");
    CHECK(error_of(std::string("\xFE\xFF\0t\0i", 6)).rfind("1:1: the lesson is saved as UTF-16", 0) == 0);
    // "freeze: no" is quoted as written.
    CHECK(error_of("title: t\nsteps:\n  - train: {steps: 1}\n  - freeze: no\n").rfind("4:13: \"freeze: no\" does nothing", 0) == 0);
}

TEST_CASE("lessons: a NUL byte is named where it is, not reported as an escape character") {
    CHECK(error_of(std::string("title: t\nsteps: [{say: h\0i}]\n", 29)) ==
          "2:16: a NUL byte: a lesson is text (YAML), not binary data");
    CHECK(error_of(std::string("\0", 1)) == "1:1: a NUL byte: a lesson is text (YAML), not binary data");
}

TEST_CASE("lessons: a byte that is not UTF-8 is named where it is") {
    // "café" saved as Latin-1, after Chinese text on its line: the column counts characters.
    CHECK(error_of("title: t\nsteps:\n  - say: \"\u4e2d\u6587 caf\xe9\"\n") ==
          "3:17: the byte 0xE9 here is not UTF-8: save the lesson as UTF-8 (an editor may have saved it as Latin-1, "
          "Windows-1252 or GBK)");
    CHECK(error_of("title: t\xff\nsteps: [{say: hi}]\n").rfind("1:9: the byte 0xFF here is not UTF-8", 0) == 0);
    CHECK(error_of("title: t\nsteps: [{say: \"\u4e2d\u6587 caf\u00e9\"}]\n") == "(valid)");
}

TEST_CASE("lessons: a second YAML document is an error") {
    CHECK(error_of("title: A\nsteps: [{say: hi}]\n---\ntitle: B\nsteps: [{say: ho}]\n") ==
          "3:1: a second YAML document starts here; a lesson is exactly one (a stray \"---\"?)");
}

TEST_CASE("lessons: a negative tolerance is an error") {
    CHECK(error_of("title: A\nsteps:\n  - run: all\n    expect:\n      forward.raw_output: {value: 11, tol: -1}\n") ==
          "5:44: \"tol\" must be 0 or more, got -1");
    CHECK(error_of("title: A\nsteps:\n  - request: {distance: 3, congestion: 0, express_lane: 0}\n    run: all\n"
                   "    expect:\n      forward.raw_output: {value: 11, tol: 0}\n") == "(valid)");
}

TEST_CASE("lessons: aliases cannot multiply the work past the budget, and the error names the step") {
    std::string yaml = "title: A\nsteps:\n  - &t {train: 60000}\n  - *t\n";
    // An alias has no position of its own: the error points at what it repeats.
    CHECK(error_of(yaml) ==
          "3:16: step 2 takes the lesson to 120000 training steps, over its budget of 100000; if it really needs that "
          "many, raise it with budget: {train_steps: N}");
    CHECK(error_of("title: A\nbudget: {train_steps: 120000}\n" + yaml.substr(9)) == "(valid)");

    std::string many = "title: A\nsteps:\n  - &s {request: {distance: 3 km, congestion: 0, express_lane: 0}, serve: 9000}\n";
    many += "  - *s\n";
    CHECK(contains(error_of(many), "step 2 takes the lesson to 18000 served requests, over its budget of 10000"));

    // An llm lesson: each request may generate max_tokens tokens.
    const std::string llm = "title: A\nmodel: {kind: llm, file: m.gguf}\nsteps:\n"
                            "  - {request: {prompt: hi, max_tokens: 1000}, serve: 50}\n"
                            "  - {run: all}\n  - {serve: 50}\n";
    CHECK(error_of(llm) ==
          "6:13: step 3 takes the lesson to 101000 generated tokens, over its budget of 100000; if it really needs "
          "that many, raise it with budget: {generated_tokens: N}");
    CHECK(error_of("title: A\nbudget: {generated_tokens: 200000}\n" + llm.substr(9)) == "(valid)");
    // What runs the request again counts too: show, attention and force after
    // a run regenerate up to max_tokens each, and kv_experiment N generates
    // 2 × N (with and without the cache). Uncounted, they ran free.
    const std::string again = "title: A\nbudget: {generated_tokens: 40}\nmodel: {kind: llm, file: m.gguf}\nsteps:\n"
                              "  - {request: {prompt: hi, max_tokens: 20}, run: all}\n";
    CHECK(error_of(again + "  - {show: [attention]}\n") == "(valid)");
    CHECK(contains(error_of(again + "  - {show: [attention]}\n  - {force: \" cat\"}\n"),
                   "step 3 takes the lesson to 60 generated tokens, over its budget of 40"));
    CHECK(contains(error_of(again + "  - {kv_experiment: 11}\n"), "step 2 takes the lesson to 42 generated tokens"));
    CHECK(error_of(again + "  - {kv_experiment: 10}\n") == "(valid)");
    // A run to request or load once the request is under way goes on to the answer.
    const std::string midway = "title: A\nbudget: {generated_tokens: 20}\nmodel: {kind: llm, file: m.gguf}\nsteps:\n"
                               "  - {request: {prompt: hi, max_tokens: 20}, run: token}\n";
    CHECK(contains(error_of(midway + "  - {run: request}\n"), "step 2 takes the lesson to 21 generated tokens"));
    CHECK(error_of("title: A\nbudget: {generated_tokens: 20}\nmodel: {kind: llm, file: m.gguf}\nsteps:\n"
                   "  - {request: {prompt: hi, max_tokens: 20}, run: request}\n  - {run: load}\n  - {run: all}\n") ==
          "(valid)");  // a fresh request's first stages generate nothing: 0 + 0 + 20 (counted 22 before)
    CHECK(error_of("title: A\nbudget: {train_steps: 0}\nsteps: [{say: hi}]\n") ==
          "2:23: \"train_steps\" must be a whole number from 1 to 1000000000, got 0");
}

// The serving kind's experiments are counted as their model declares them,
// at their most: here a batch sweep of 64 × 16 prefilled positions and
// 1 + 2 + … + 64 = 127 sequences × (1 warm-up + 10 × 64 timed) steps.
TEST_CASE("lessons: a serving lesson's aliased experiments go over the budget at the step that does it") {
    const long long sweep = 64 * 16 + 127 * (1 + 10 * 64);
    REQUIRE(sweep == 82431);
    std::string yaml = "title: A\nmodel: {kind: serving, random: tiny}\nsteps:\n"
                       "  - &s {request: {experiment: batch_sweep, batch_sizes: \"1,2,4,8,16,32,64\", context: 16, "
                       "steps: 64, repetitions: 10}, run: all}\n";
    for (int i = 0; i < 12; ++i) yaml += "  - *s\n";
    // Twelve sweeps fit in the default 1,000,000; the thirteenth does not.
    CHECK(error_of(yaml) == "4:124: step 13 takes the lesson to " + std::to_string(13 * sweep) +
                                " forward tokens, over its budget of 1000000; if it really needs that many, raise it "
                                "with budget: {forward_tokens: N}");
    CHECK(error_of("title: A\nbudget: {forward_tokens: 2000000}\n" + yaml.substr(9)) == "(valid)");

    // The forward stage runs the experiment once per request: stepping through
    // it stage by stage costs one sweep, and a run after the answer starts it again.
    const std::string once = "title: A\nmodel: {kind: serving, random: tiny}\nbudget: {forward_tokens: 82431}\nsteps:\n"
                             "  - {request: {experiment: batch_sweep, batch_sizes: \"1,2,4,8,16,32,64\", context: 16, "
                             "steps: 64, repetitions: 10}}\n"
                             "  - {run: load}\n  - {run: forward}\n  - {run: postprocess}\n  - {run: all}\n";
    CHECK(error_of(once) == "(valid)");
    CHECK(contains(error_of(once + "  - {run: all}\n"), "step 6 takes the lesson to 164862 forward tokens"));
    // serve answers whole requests: a run after it starts the experiment again.
    const std::string serve_then_run =
        "title: A\nmodel: {kind: serving, random: tiny}\nbudget: {forward_tokens: 247293}\nsteps:\n"
        "  - {request: {experiment: batch_sweep, batch_sizes: \"1,2,4,8,16,32,64\", context: 16, "
        "steps: 64, repetitions: 10}, run: forward}\n"
        "  - {serve: 1}\n  - {run: output}\n";
    // Only respond left: a run to an earlier stage writes it, then starts the request again.
    CHECK(contains(error_of("title: A\nmodel: {kind: serving, random: tiny}\nbudget: {forward_tokens: 82431}\nsteps:\n"
                            "  - {request: {experiment: batch_sweep, batch_sizes: \"1,2,4,8,16,32,64\", context: 16, "
                            "steps: 64, repetitions: 10}, run: postprocess}\n  - {run: forward}\n"),
                   "step 2 takes the lesson to 164862 forward tokens"));
    CHECK(error_of(serve_then_run) == "(valid)");  // three sweeps: 3 × 82431
    CHECK(contains(error_of(serve_then_run + "  - {serve: 1}\n"), "step 4 takes the lesson to 329724 forward tokens"));

    // Traffic: requests × (prompt + max_tokens), both arms of a comparison.
    const std::string traffic = "title: A\nmodel: {kind: serving, random: tiny}\nsteps:\n"
                                "  - {request: {experiment: traffic, requests: 10000, max_tokens: 4096, compare: policy}, "
                                "run: all}\n";
    CHECK(contains(error_of(traffic), "step 1 takes the lesson to "));
    CHECK(contains(error_of(traffic), " forward tokens, over its budget of 1000000"));
    CHECK(contains(error_of("title: A\nmodel: {kind: serving, random: tiny}\nsteps:\n"
                            "  - &q {request: {experiment: traffic, requests: 100, max_tokens: 64}, serve: 200}\n"),
                   "step 1 takes the lesson to "));

    // Queue: three simulations per utilization and one more at the one looked at.
    std::string queue = "title: A\nmodel: {kind: serving, random: tiny}\nbudget: {simulations: 25}\nsteps:\n"
                        "  - &q {request: {experiment: queue, utilizations: \"0.1,0.5,0.9\"}, run: all}\n  - *q\n";
    CHECK(error_of(queue) == "(valid)");
    CHECK(error_of(queue + "  - *q\n") ==
          "5:73: step 3 takes the lesson to 30 queue simulations, over its budget of 25; if it really needs that many, "
          "raise it with budget: {simulations: N}");

    // And their requests: near utilization 1 a simulation lengthens to 100
    // million (330 utilizations from 0.99 up fit the 1000 simulations and
    // would have run for an hour and a half). Far from 1, twice sim_requests
    // each: 10 simulations of 2 × 1000 requests (warm-up and measured).
    const std::string near_one =
        "title: A\nmodel: {kind: serving, random: tiny}\nsteps:\n"
        "  - {request: {experiment: queue, utilizations: \"0.999,0.9991,0.9992,0.9993,0.9994,0.9995,0.9996,0.9997,"
        "0.9998,0.9999\", utilization: 0.9999}, run: all}\n";
    const std::string near_error = error_of(near_one);
    CHECK(contains(near_error, "step 1 takes the lesson to "));
    CHECK(contains(near_error, " simulated queue requests, over its budget of 2000000000; if it really needs that many, "
                               "raise it with budget: {simulated_requests: N}"));
    const std::string small = "title: A\nmodel: {kind: serving, random: tiny}\nbudget: {simulated_requests: 19999}\n"
                              "steps:\n  - {request: {experiment: queue, utilizations: \"0.1,0.2,0.3\", utilization: 0.1, "
                              "sim_requests: 1000}, run: all}\n";
    CHECK(contains(error_of(small), "step 1 takes the lesson to 20000 simulated queue requests, over its budget of 19999"));
}

// An idle gap past the cold start's range failed only when the step ran (exit
// 1, at the step): refused at the value, as the command line refuses it.
TEST_CASE("lessons: an idle gap past 1e9 s is refused where it is written") {
    const std::string yaml = "title: A\nmodel: {kind: serving, random: tiny}\nsteps:\n"
                             "  - {request: {experiment: cold_start, idle_gaps: \"5,1e308\"}, run: all}\n";
    CHECK(contains(error_of(yaml), "an idle gap of 1e+308 s is over 1e9 s (31 years)"));
}

// An empty prompt for the speculative runs was run as the default prompt,
// unsaid: refused at its value.
TEST_CASE("lessons: an empty spec_prompt is refused where it is written") {
    const std::string yaml = "title: A\nmodel: {kind: serving, random: tiny}\nsteps:\n"
                             "  - {request: {experiment: speculative, spec_prompt: \"\"}, run: all}\n";
    CHECK(contains(error_of(yaml), "spec_prompt is empty: the models need a text to continue"));
}

namespace {

// A serving lesson that runs one request `times` times, the first step
// anchored and the others aliases of it; and where an error about that step
// points (its `run` value: an alias has no position of its own).
std::string lab_lesson(const std::string& request, int times) {
    std::string yaml = "title: A\nmodel: {kind: serving, random: tiny}\nsteps:\n  - &s {request: " + request +
                       ", run: all}\n";
    for (int i = 1; i < times; ++i) yaml += "  - *s\n";
    return yaml;
}
std::string lab_at(const std::string& request) { return "4:" + std::to_string(25 + request.size()) + ": "; }
std::string over(int step, long long total, const char* what, long long budget, const char* key) {
    return "step " + std::to_string(step) + " takes the lesson to " + std::to_string(total) + " " + what +
           ", over its budget of " + std::to_string(budget) + "; if it really needs that many, raise it with budget: {" +
           key + ": N}";
}

std::string bundled(const char* name) {
    std::ifstream in(std::string(SIXSTEP_SOURCE_DIR) + "/lessons/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    REQUIRE(!ss.str().empty());
    return ss.str();
}
// The lesson with a budget line after its title (the first line).
std::string with_budget(const std::string& lesson, const std::string& budget) {
    const std::size_t eol = lesson.find('\n') + 1;
    return lesson.substr(0, eol) + "budget: {" + budget + "}\n" + lesson.substr(eol);
}

}  // namespace

// Each experiment of the serving lab (lessons 12–16) counts as its file
// declares, at its most; the figures below are worked by hand from those
// declarations. A prompt counts its bytes + 2 tokens ("Once upon a time": 18).
TEST_CASE("lessons: the serving lab's experiments count their work, the bundled lessons fit, and aliases do not") {
    // Quantization: three versions, each decoding bench_tokens (32) in a
    // warm-up and 3 timed runs; 8 stories of at most 1024 bytes (+ BOS, EOS),
    // each token computed at most twice, scored once on the original and
    // twice on each quantized version (itself and the original for KL).
    const std::string quant = "{experiment: quantization, ppl_docs: 8}";
    const long long q = 3 * 4 * 32 + 5 * 8 * 2 * (1024 + 2);
    REQUIRE(q == 82464);
    CHECK(error_of(lab_lesson(quant, 12)) == "(valid)");
    CHECK(error_of(lab_lesson(quant, 13)) ==
          lab_at(quant) + over(13, 13 * q, "forward tokens", 1000000, "forward_tokens"));
    const std::string quant_max = "{experiment: quantization, ppl_docs: 200, bench_tokens: 4096}";
    CHECK(error_of(lab_lesson(quant_max, 1)) ==
          lab_at(quant_max) + over(1, 3 * 4 * 4096 + 5 * 200 * 2 * 1026, "forward tokens", 1000000, "forward_tokens"));

    // Speculative: per k, twice (one untimed run, spec_repetitions 1) the
    // target alone (18 + 32) and each model at most 18 + 32·(k + 1).
    const std::string spec = "{experiment: speculative, draft_ks: \"1,2,4,8\", temperatures: \"0\", spec_tokens: 32}";
    long long s = 0;
    for (int k : {1, 2, 4, 8}) s += 2 * ((18 + 32) + 2 * (18 + 32 * (k + 1)));
    REQUIRE(s == 3120);
    CHECK(error_of(lab_lesson(spec, 320)) == "(valid)");
    CHECK(error_of(lab_lesson(spec, 321)) == lab_at(spec) + over(321, 321 * s, "forward tokens", 1000000, "forward_tokens"));
    // Every k there is, the most tokens and repetitions: one request is 114 million.
    const std::string spec_max = "{experiment: speculative, draft_ks: \"1,2,4,8,16,32,64\", spec_tokens: 4096, "
                                 "spec_repetitions: 100}";
    long long s_max = 0;
    for (int k : {1, 2, 4, 8, 16, 32, 64}) s_max += 101 * ((18 + 4096) + 2 * (18 + 4096LL * (k + 1)));
    REQUIRE(s_max == 113804578);
    CHECK(error_of(lab_lesson(spec_max, 1)) == lab_at(spec_max) + over(1, s_max, "forward tokens", 1000000, "forward_tokens"));
    // Overlapped, the draft's side may run 2k + 3 passes per step (it runs
    // ahead, and a rejection throws its guesses away): k = 1, 2, 3, 64 tokens,
    // 3 timed runs + 1 — 4 × Σ (82 + (18 + 64(k + 1)) + (18 + 64(2k + 3))).
    const std::string spec_overlap = "{experiment: speculative, draft_ks: \"1,2,3\", temperatures: \"0\", "
                                     "spec_tokens: 64, spec_repetitions: 3, spec_overlap: true}";
    REQUIRE(4 * ((82 + 146 + 338) + (82 + 210 + 466) + (82 + 274 + 594)) == 9096);
    CHECK(error_of(lab_lesson(spec_overlap, 109)) == "(valid)");
    CHECK(error_of(lab_lesson(spec_overlap, 110)) ==
          lab_at(spec_overlap) + over(110, 110 * 9096, "forward tokens", 1000000, "forward_tokens"));
    // More temperatures multiply it: two of them, twice the bundled figure.
    CHECK(error_of("title: A\nbudget: {forward_tokens: 6239}\n" +
                   lab_lesson("{experiment: speculative, draft_ks: \"1,2,4,8\", temperatures: \"0,1\"}", 1).substr(9))
              .find(over(1, 2 * s, "forward tokens", 6239, "forward_tokens")) != std::string::npos);

    // Cold start: the process's first, 2 cold and 3 warm requests, then with
    // 6 idle gaps one untimed request and 6 on each instance: 20 requests of
    // 18 + 8.
    const std::string cold = "{experiment: cold_start, cold_tokens: 8, idle_gaps: \"0,20,300,5,900,30\"}";
    REQUIRE(20 * 26 == 520);
    CHECK(error_of(lab_lesson(cold, 1923)) == "(valid)");
    CHECK(error_of(lab_lesson(cold, 1924)) == lab_at(cold) + over(1924, 1924 * 520, "forward tokens", 1000000, "forward_tokens"));
    std::string gaps = "0";
    for (int i = 1; i < 1000; ++i) gaps += ",0";
    const std::string cold_max = "{experiment: cold_start, cold_tokens: 4096, idle_gaps: \"" + gaps + "\"}";
    CHECK(error_of(lab_lesson(cold_max, 1)) ==
          lab_at(cold_max) + over(1, (3 + 3 + 2 * 1001) * (18 + 4096), "forward tokens", 1000000, "forward_tokens"));

    // The bill: the decode rate, a warm-up and 3 timed runs of bench_tokens.
    const std::string bill = "{experiment: bill, bench_tokens: 4096}";
    CHECK(error_of(lab_lesson(bill, 61)) == "(valid)");
    CHECK(error_of(lab_lesson(bill, 62)) == lab_at(bill) + over(62, 62 * 4 * 4096, "forward tokens", 1000000, "forward_tokens"));

    // Waits: a warm-up (18 + 4), the chat (18 + 48), three runs of the agent's
    // chain: the first call (18 + 24) and 3 more reading the last answer, cut
    // to 8 bytes per token (8 · 24 + 2 + 24), and three runs of the batch
    // job both ways: 8 × (26 + 24), its longest opening 24 bytes.
    const std::string waits = "{experiment: waits, chat_tokens: 48, agent_calls: 4, agent_tokens: 24, batch_requests: 8, "
                              "batch_tokens: 24}";
    const long long w = 22 + 66 + 3 * (42 + 3 * 218) + 3 * 2 * 8 * 50;
    REQUIRE(w == 4576);
    CHECK(error_of(lab_lesson(waits, 218)) == "(valid)");
    CHECK(error_of(lab_lesson(waits, 219)) == lab_at(waits) + over(219, 219 * w, "forward tokens", 1000000, "forward_tokens"));
    const std::string waits_max = "{experiment: waits, chat_tokens: 4096, agent_calls: 100, agent_tokens: 4096, "
                                  "batch_requests: 256, batch_tokens: 4096}";
    CHECK(error_of(lab_lesson(waits_max, 1)) ==
          lab_at(waits_max) + over(1, 22 + (18 + 4096) + 3 * ((18 + 4096) + 99 * (8 * 4096 + 2 + 4096)) + 3 * 2 * 256 * (26 + 4096),
                                   "forward tokens", 1000000, "forward_tokens"));

    // Canary: no tokens, but v2's 500 training steps and every request of the
    // stream through the six steps, one more on each version first.
    const std::string canary = "{experiment: canary, canary_requests: 1000}";
    CHECK(error_of(lab_lesson(canary, 9)) == "(valid)");
    CHECK(error_of(lab_lesson(canary, 10)) == lab_at(canary) + over(10, 10 * 1002, "served requests", 10000, "served_requests"));
    const std::string canary_max = "{experiment: canary, canary_requests: 1000000}";
    CHECK(error_of(lab_lesson(canary_max, 1)) == lab_at(canary_max) + over(1, 1000002, "served requests", 10000, "served_requests"));
    CHECK(error_of("title: A\nbudget: {served_requests: 1000000}\n" + lab_lesson("{experiment: canary}", 201).substr(9)) ==
          "5:45: " + over(201, 201 * 500, "training steps", 100000, "train_steps"));

    // A value the experiment's knob refuses cannot be counted: it is refused
    // here, at the value, not when the step runs.
    CHECK(error_of(lab_lesson("{experiment: speculative, spec_tokens: 1000000000}", 1)) ==
          "4:57: \"spec_tokens\" must be a whole number from 2 to 4096, got 1000000000");
    CHECK(error_of(lab_lesson("{experiment: waits, agent_calls: 1e9}", 1)) ==
          "4:51: \"agent_calls\" must be a whole number from 1 to 100, got 1e9");
}

TEST_CASE("lessons: the bundled serving-lab lessons fit their budget, and count exactly their declared work") {
    struct Bundled {
        const char* file;
        const char* key;
        long long total;  // the lesson's, worked by hand above
        const char* what;
    };
    for (const Bundled& b : {Bundled{"12-quantization.yaml", "forward_tokens", 82464, "forward tokens"},
                             // Lesson 13: steps 1 and 5 take 64 tokens, 9 timed runs + 1, per k
                             // 82 + 2·(18 + 64(k + 1)) (k = 1, 2, 4, 8; then 2, 8 at two
                             // temperatures), and step 6 the overlapped sum above (9096 for
                             // 4 runs) over 10 runs.
                             Bundled{"13-speculative-decoding.yaml", "forward_tokens",
                                     10 * (374 + 502 + 758 + 1270) + 2 * 10 * (502 + 1270) + 9096 / 4 * 10,
                                     "forward tokens"},
                             Bundled{"14-cold-start-and-the-bill.yaml", "forward_tokens", 520 + 2 * 4 * 32, "forward tokens"},
                             Bundled{"15-what-users-wait-for.yaml", "forward_tokens", 2 * 4576, "forward tokens"},
                             Bundled{"16-inference-serving-deployment.yaml", "served_requests", 2 * 1002, "served requests"},
                             Bundled{"16-inference-serving-deployment.yaml", "train_steps", 2 * 500, "training steps"}}) {
        CAPTURE(b.file);
        CAPTURE(b.key);
        const std::string lesson = bundled(b.file);
        CHECK(error_of(lesson) == "(valid)");
        CHECK(error_of(with_budget(lesson, std::string(b.key) + ": " + std::to_string(b.total))) == "(valid)");
        const std::string e = error_of(with_budget(lesson, std::string(b.key) + ": " + std::to_string(b.total - 1)));
        CHECK(e.find("takes the lesson to " + std::to_string(b.total) + " " + b.what + ", over its budget of " +
                     std::to_string(b.total - 1)) != std::string::npos);
    }
}

TEST_CASE("cli: a lesson of aliased training steps is refused at once, not run for hours") {
    std::string yaml = "title: Forever\nsteps:\n  - &t {train: 1000000}\n";
    for (int i = 0; i < 200; ++i) yaml += "  - *t\n";
    const auto path = write_text("forever.yaml", yaml);
    const auto r = run_sixstep("--headless '" + path + "'", 20);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "forever.yaml:3:16: step 1 takes the lesson to 1000000 training steps, over its budget "
                             "of 100000"));
}

TEST_CASE("cli: a serving lesson of aliased batch sweeps is refused at load, exit 2") {
    std::string yaml = "title: Sweeps\nmodel: {kind: serving, random: tiny}\nsteps:\n"
                       "  - &s {request: {experiment: batch_sweep, batch_sizes: \"1,2,4,8,16,32,64\", context: 16, "
                       "steps: 64, repetitions: 10}, run: all}\n";
    for (int i = 0; i < 200; ++i) yaml += "  - *s\n";
    const auto path = write_text("sweeps.yaml", yaml);
    for (const char* how : {"--headless", "check"}) {
        CAPTURE(how);
        const auto r = run_sixstep(std::string(how) + " '" + path + "'", 20);
        CHECK(r.exit_code == 2);
        CHECK(contains(r.output, "sweeps.yaml:4:124: step 13 takes the lesson to 1071603 forward tokens, over its "
                                 "budget of 1000000"));
    }
}

TEST_CASE("cli: check reports every file and the summary when one lesson is broken in odd ways") {
    const fs::path dir = scratch() / "odd-lessons";
    fs::create_directories(dir);
    auto put = [&](const std::string& name, const std::string& text) {
        FILE* f = std::fopen((dir / name).c_str(), "wb");
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
    };
    put("a-complex-key.yaml", "title: A\n? [a, b]\n: 1\nsteps: [{say: hi}]\n");
    put("b-good.yaml", "title: B\nsteps: [{say: hi}]\n");
    put("c-two-docs.yaml", "title: C\nsteps: [{say: hi}]\n---\n{}\n");
    put("d-duplicate.yaml", "title: D\nsteps: [{say: hi, say: ho}]\n");
    const std::string fifo = make_fifo("odd-lessons/e-fifo.yaml");
    const auto r = run_sixstep("check '" + dir.string() + "'", 20);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "a-complex-key.yaml:2:3: a key must be plain text, got a list"));
    CHECK(contains(r.output, "✓ " + (dir / "b-good.yaml").string()));
    CHECK(contains(r.output, "c-two-docs.yaml:3:1: a second YAML document starts here"));
    CHECK(contains(r.output, "d-duplicate.yaml:2:19: duplicate key \"say\""));
    CHECK(contains(r.output, "e-fifo.yaml: cannot open the lesson file: it is a FIFO (named pipe), not a regular file"));
    CHECK(last_line(r.output) == "lessons: 1 passed, 0 failed, 4 invalid");
}

// Quantizing writes copies of the model and cold starts map it again: those
// passes are counted at the model file's size when the file is checked, so a
// lesson repeating them on a large model is stopped before it fills a disk.
TEST_CASE("lessons: experiments that rewrite or reload the model count its bytes against model_bytes") {
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    const auto size = static_cast<long long>(fs::file_size(model));
    const auto lesson = [&](const std::string& budget, int repeats, const std::string& request) {
        std::string yaml = "title: Q\nmodel: {kind: serving, file: " + model + "}\n" + budget + "steps:\n  - &q {request: " +
                           request + ", run: all}\n";
        for (int i = 1; i < repeats; ++i) yaml += "  - *q\n";
        return write_text("model-bytes.yaml", yaml);
    };
    const auto load_error = [](const std::string& path) -> std::string {
        try {
            (void)load_lesson(path);
        } catch (const Error& e) {
            return std::to_string(e.where().line) + ":" + std::to_string(e.where().column) + ": " + e.message();
        }
        return "(valid)";
    };
    const std::string quantize = "{experiment: quantization, ppl_docs: 1}";
    // 8 passes per quantization request (two types × read, write, check, measure).
    const std::string budget = "budget: {model_bytes: " + std::to_string(20 * size) + "}\n";
    CHECK(load_error(lesson(budget, 2, quantize)) == "(valid)");
    const std::string over = load_error(lesson(budget, 3, quantize));
    CHECK(contains(over, "5:64: step 3 takes the lesson to 24 passes over model-sized files (24 × " +
                             std::to_string(size) + " B"));
    CHECK(contains(over, "raise it with budget: {model_bytes: N}"));
    // A cold start maps the file again: the process's first instance, a cold
    // and a fresh one, then with idle gaps one that scales to zero (1 + one
    // per gap) and one kept warm.
    const std::string cold = "{experiment: cold_start, idle_gaps: \"0,20,300\"}";
    CHECK(load_error(lesson("budget: {model_bytes: " + std::to_string(8 * size) + "}\n", 1, cold)) == "(valid)");
    CHECK(contains(load_error(lesson("budget: {model_bytes: " + std::to_string(8 * size - 1) + "}\n", 1, cold)),
                   "step 1 takes the lesson to 8 passes over model-sized files"));
    // The default (64 GiB) lets a lesson on the bundled model repeat it freely; the key's range is checked.
    CHECK(load_error(lesson("", 40, quantize)) == "(valid)");
    CHECK(contains(load_error(lesson("budget: {model_bytes: 0}\n", 1, quantize)),
                   "\"model_bytes\" must be a whole number from 1 to 1125899906842624, got 0"));
}

TEST_CASE("lessons: YAML nested thousands of levels deep says so, at its line") {
    const std::string path = write_text("deep.yaml", "title: T\nsteps:\n  - say: " + std::string(3000, '[') + "\n");
    const auto r = run_sixstep("check '" + path + "'", 20);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, path + ":4:1: invalid YAML: lists or mappings nested "));
    CHECK(contains(r.output, "levels deep, more than the YAML reader takes"));
}

TEST_CASE("lessons: below on a list names what the list holds and the numbers made from it") {
    CHECK(error_of("title: t\nmodel: {kind: serving, file: stories-3m-f16.gguf}\nsteps:\n"
                   "  - request: {experiment: speculative}\n    run: all\n"
                   "    expect: {output.tokens_per_pass: {above: 1}}\n") ==
          "6:14: \"output.tokens_per_pass\" is a list of numbers (speculative: tokens emitted per target pass, per "
          "row): below, above and tol compare numbers (compare a number made from it: "
          "postprocess.tokens_per_pass_max)");
}

TEST_CASE("lessons: attention written as a number says the mapping it takes") {
    CHECK(error_of("title: t\nmodel: {kind: llm, file: stories-3m-f16.gguf}\nsteps:\n  - attention: 2\n") ==
          "4:16: \"attention\" ({layer: L, head: H}) must be a mapping, got \"2\"");
}

TEST_CASE("lessons: a quote never closed is named where it opens, not as a lesson without steps") {
    CHECK(error_of("title: \"broken\nsteps:\n  - say: hi\n") ==
          "1:8: the quote opened here is never closed: the rest of the file became its text, and what is written "
          "there (steps, checks) is not read");
    // Closed further on, where the text after it is no YAML: named all the same.
    CHECK(error_of("title: \"broken\nsteps:\n  - say: \"hi\"\n").rfind("1:8: invalid YAML: the quote opened here is not closed on its line", 0) == 0);
    // Later in the file the lesson loaded and passed, its last steps and
    // checks gone into the text.
    CHECK(error_of("title: t\nsteps:\n  - say: hi\n  - say: 'Now a longer trip\n    run: all\n"
                   "    expect: {response.minutes: 99}\n") ==
          "4:10: the quote opened here is never closed: the rest of the file became its text, and what is written "
          "there (steps, checks) is not read");
    // After a byte order mark, where an editor shows it.
    CHECK(error_of("\xEF\xBB\xBFtitle: \"BOM\nsteps:\n  - say: hi\n").rfind("1:8: the quote opened here is never closed", 0) == 0);
    CHECK(error_of("\xEF\xBB\xBFtitle: t\nmodel: {kind: delivery}\nsteps:\n  - request: {distance: \"3 km\", congestion: 0, "
                   "express_lane: 0}\n") == "(valid)");
    CHECK(error_of("title: fine\n") == "1:1: the lesson has no \"steps\"");
}

// A list of numbers holds only numbers: {contains: "min"} could never hold,
// and under not always would.
TEST_CASE("contains on a list of numbers looks for numbers, and a text that is none is invalid") {
    CHECK(error_of(delivery_expect + "      forward.terms: {contains: \"min\"}\n") ==
          "6:33: forward.terms is a list of numbers, and \"min\" is not a number or numbers: write {contains: 5} for "
          "an element, {contains: \"5, -2\"} for neighbours");
    CHECK(error_of(delivery_expect + "      forward.terms: {not: {contains: \"6, x\"}}\n").rfind("6:39: ", 0) == 0);
    CHECK(error_of(delivery_expect + "      forward.terms: {contains: \"[6, 3]\"}\n") == "(valid)");
    CHECK(error_of(delivery_expect + "      forward.terms: {contains: 6}\n") == "(valid)");
    CHECK(error_of(delivery_expect + "      respond.text: {contains: \"min\"}\n") == "(valid)");
    // One number is never a list: it failed at run time, "got [11, 11, 11]".
    CHECK(error_of(delivery_expect + "      forward.terms: 6\n") ==
          "6:22: forward.terms is a list of numbers, which never equals one number: {contains: 6} holds when one of "
          "them is 6");
    CHECK(error_of(delivery_expect + "      forward.terms: {not: {equals: 6}}\n").rfind("6:37: forward.terms is a list", 0) == 0);
    CHECK(error_of(delivery_expect + "      forward.terms: \"[6, 3, -2]\"\n") == "(valid)");  // the whole list, as text
}

// It said "write 30" for "30%", and request.congestion holds 0.3: the check
// written as told could never pass (expected = 30, got 0.3).
TEST_CASE("a value written with a unit is told the number in the path's own unit") {
    CHECK(error_of(delivery_expect + "      request.congestion: \"30%\"\n") ==
          "6:27: \"30%\" is a number with a unit: write 0.3 — request.congestion is compared in its own unit (a "
          "fraction 0..1)");
    CHECK(error_of(delivery_expect + "      request.distance_km: \"3000 m\"\n") ==
          "6:28: \"3000 m\" is a number with a unit: write 3 — request.distance_km is compared in its own unit (km)");
    CHECK(error_of(delivery_expect + "      request.distance_km: 3 mi\n").find("write 4.828032 —") != std::string::npos);
    CHECK(error_of(delivery_expect + "      request.distance_km: \"3 公里\"\n").find("write 3 —") != std::string::npos);
    CHECK(error_of(delivery_expect + "      request.congestion: {below: 50%}\n") ==
          "6:35: \"50%\" is a number with a unit: write 0.5 — request.congestion is compared in its own unit (a "
          "fraction 0..1)");
    // The path's own unit: the number as written.
    CHECK(error_of(delivery_expect + "      postprocess.minutes: 12 min\n") ==
          "6:28: \"12 min\" is a number with a unit: write 12 — postprocess.minutes is compared in its own unit (min)");
    // Another time unit converts; a unit that does not convert gets no number.
    CHECK(error_of(delivery_expect + "      load.cold_load_ms: {below: 1 s}\n") ==
          "6:34: \"1 s\" is a number with a unit: write 1000 — load.cold_load_ms is compared in its own unit (ms)");
    CHECK(error_of(delivery_expect + "      request.congestion: \"3 km\"\n") ==
          "6:27: \"3 km\" does not convert to the unit request.congestion is compared in (a fraction 0..1): write "
          "the value in that unit");
    CHECK(error_of(delivery_expect + "      load.cold_load_ms: {below: 5 kg}\n") ==
          "6:34: \"5 kg\" does not convert to the unit load.cold_load_ms is compared in (ms): write the value in "
          "that unit");
    // (A text path is told to quote the value: the case below.)
}

// "//" after a value was part of it: "11 // eleven" was told "write 11",
// "all  // go" was not a stage, and a title or a narration kept it silently.
TEST_CASE("lessons: a // comment after a value is named at its slashes") {
    CHECK(error_of(delivery_expect + "      response.minutes: 11 // eleven\n") ==
          "6:28: a comment in YAML starts with \"#\", not \"//\": here \"//\" and what follows are part of the value "
          "\"11 // eleven\" (write \"# eleven\", or quote the value if the \"//\" is its own)");
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: \"3 km\", congestion: 0, express_lane: 0}\n"
                   "    run: all  // go\n")
              .rfind("4:15: a comment in YAML starts with \"#\", not \"//\": here \"//\" and what follows are part of "
                     "the value \"all  // go\" (write \"# go\"",
                     0) == 0);
    // In text, set off by two spaces as a comment after code is; a single
    // space, a URL's "//" or a quoted value is the text's own.
    CHECK(error_of("title: t  // my lesson\nsteps:\n  - say: hi\n").rfind("1:11: a comment in YAML starts with", 0) == 0);
    CHECK(error_of("title: t\nsteps:\n  - say: Eleven // the answer, see http://example.org\n") == "(valid)");
    CHECK(error_of("title: t\nsteps:\n  - say: \"a  // b\"\n  - say: |\n      a  // b\n") == "(valid)");
}

// "cn" was told "did you mean \"en\"?", one edit away.
TEST_CASE("lessons: a language written as a locale or by its name is told zh or en") {
    CHECK(error_of("title: t\nsteps:\n  - set: {lang: cn}\n") ==
          "3:17: \"lang\" must be en or zh, got \"cn\" \u2014 did you mean \"zh\"?");
    CHECK(error_of("title: t\nlanguage: zh-CN\nsteps:\n  - say: hi\n") ==
          "2:11: \"language\" must be en or zh, got \"zh-CN\" \u2014 did you mean \"zh\"?");
    CHECK(error_of("title: t\nlanguage: 中文\nsteps:\n  - say: hi\n").find("did you mean \"zh\"?") != std::string::npos);
    // Left empty, it was reported at the next line (3:1).
    CHECK(error_of("title: t\nlanguage: \nsteps:\n  - say: hi\n") == "2:1: \"language\" needs a value: en or zh");
}

TEST_CASE("lessons: a kv_calc dtype by another tool's name is told ours") {
    CHECK(error_of("title: t\nmodel: {kind: llm, file: stories-3m-f16.gguf}\nsteps:\n"
                   "  - kv_calc: {preset: article-36l, tokens: 10, dtype: fp16}\n") ==
          "4:55: unknown dtype \"fp16\" \u2014 did you mean \"f16\"? (known: f32, f16, bf16, fp8, int8, q8_0, q4_0)");
}

// "error" was told to use letters, digits and _, which it does; equal
// bounds were asked whether they were swapped.
TEST_CASE("lessons: a reserved name and an empty range of equal bounds are told what they are") {
    CHECK(error_of(delivery_expect + "      response.minutes: 12\n    remember: {error: response.text}\n") ==
          "7:16: \"error\" cannot name a remembered value: it is a path, the step's error message; give the value "
          "another name");
    CHECK(error_of(delivery_expect + "      response.minutes: {above: 10, below: 10}\n") ==
          "6:25: no number is above 10 and below 10: the range is empty (for exactly 10, write {value: 10})");
}

TEST_CASE("lessons: a number written with its unit is told to drop the unit, not to quote itself") {
    const std::string head = "title: t\nsteps:\n  - request: {distance: 3}\n    run: all\n    expect:\n";
    CHECK(error_of(head + "      load.cold_load_ms: {below: 5.5 ms}\n") ==
          "6:34: \"5.5 ms\" is a number with a unit: write 5.5 — load.cold_load_ms is compared in its own unit "
          "(ms)");
    // Where text may be compared, quoting is the other way out; a text path is compared with the text.
    CHECK(error_of(head + "      response.minutes: {equals: 11 min}\n") ==
          "6:34: \"11 min\" is a number with a unit: write 11 — response.minutes is compared in its own unit (min); "
          "or quote it to compare with the text");
    CHECK(error_of(head + "      request.distance: {equals: 3 km}\n") ==
          "6:34: \"3 km\" is read as a number with a unit, and request.distance is a text: quote it (\"3 km\") to "
          "compare with the text");
    // A bound no value can miss (or reach) is named for what it is, not as an unknown path.
    for (const char* bound : {"inf", "-inf ms", "nan", "1e999", ".inf"})
        CHECK(error_of(head + "      load.cold_load_ms: {below: " + bound + "}\n") ==
              "6:34: \"" + std::string(bound) + "\" is not a finite number: a check compares with a finite number, a "
              "path or a remembered name");
    // A remembered name that starts like one is still a name.
    CHECK(error_of(head + "      load.cold_load_ms: {below: information}\n").find("neither a path nor a name") !=
          std::string::npos);
}

// An endpoint lesson's loads were read only when its step ran: "0.5,0.5"
// exited 1 there, not 2 at the value, and 1e-300 blamed the CLI's --rate.
TEST_CASE("lessons: an endpoint sweep's loads are checked where they are written, and its requests are counted") {
    const auto sweep = [](const std::string& request) {
        return error_of("title: A\nmodel: {kind: endpoint, url: \"http://127.0.0.1:9\"}\nsteps:\n  - request: {" + request + "}\n    run: all\n");
    };
    CHECK(sweep("utilizations: \"0.5,0.5\"") == "4:29: \"utilizations\" must ascend: 0.5 after 0.5");
    CHECK(sweep("utilizations: \"1e-300\"") ==
          "4:29: \"utilizations\": 1e-300 is not from 0.01 to below 1 (at 1 the queue never settles; below 0.01 it is "
          "empty and the run only takes longer)");
    CHECK(sweep("utilizations: \"abc\"") ==
          "4:29: \"utilizations\": \"abc\" is not a number (write them like 0.2,0.5,0.8)");
    // Hexadecimal, which strtod reads and the command line refuses.
    CHECK(sweep("utilizations: \"0x1p-1,0.8\"") ==
          "4:29: \"utilizations\": \"0x1p-1\" is not a number (write them like 0.2,0.5,0.8)");
    CHECK(sweep("utilizations: \"0.2,0.5\"") == "(valid)");
    // 9 rates × 2000 requests, and twice 17 to time the service: over the
    // budget, at the step that sends them.
    CHECK(sweep("utilizations: \"0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9\", requests: 2000") ==
          "5:10: step 1 takes the lesson to 18034 served requests, over its budget of 10000; if it really needs that "
          "many, raise it with budget: {served_requests: N}");
    // 3 rates × 500 requests of 256 tokens: within the requests, over the tokens.
    CHECK(sweep("utilizations: \"0.2,0.5,0.8\", requests: 500, max_tokens: 256").find(
              "step 1 takes the lesson to 392704 generated tokens, over its budget of 100000") != std::string::npos);
}

// "run: token" stops at the next generated token; the delivery and serving
// models generate none, and the delivery lesson ran to postprocess without a
// word.
TEST_CASE("lessons: run: token is refused for a model that generates no tokens") {
    CHECK(error_of("title: A\nsteps:\n  - request: {distance: \"3 km\"}\n    run: token\n") ==
          "4:10: \"run: token\" runs to the next generated token, and the delivery model generates none: run to a "
          "stage (postprocess) or all");
    CHECK(error_of("title: A\nmodel: {kind: serving, random: tiny}\nsteps:\n  - run: token\n") ==
          "4:10: \"run: token\" runs to the next generated token, and the serving model generates none: run to a "
          "stage (postprocess) or all");
}

// An llm lesson's values are checked where they are written, before step 1:
// these failed only when their step ran (exit 1 at the step, not exit 2 at
// the value).
TEST_CASE("lessons: kv_calc sizes, an empty prompt and a malformed force are errors at their value") {
    // `sixstep check` on a lesson written to a file of this name.
    const auto check_text = [](const std::string& name, const std::string& text) {
        return run_sixstep("check '" + write_text(name, text) + "'");
    };
    const std::string head = std::string("title: t\nmodel: {kind: llm, file: \"") + SIXSTEP_SOURCE_DIR +
                             "/assets/models/stories-3m-f16.gguf\"}\nsteps:\n";
    CHECK(error_of(head + "  - kv_calc: {preset: stories-3m, tokens: 0.5}\n").rfind("4:14: tokens: must be at least 1, got 0.5", 0) == 0);
    CHECK(error_of(head + "  - kv_calc: {layers: 1, kv_heads: 1, head_dim: 5, dtype: q8_0, tokens: 1}\n")
              .find("head dim 5 must be a multiple of 32") != std::string::npos);
    CHECK(error_of(head + "  - kv_calc: {preset: stories-3m, tokens: 1e12, sessions: 1e9}\n")
              .find("beyond 2^64 bytes") != std::string::npos);
    CHECK(error_of(head + "  - request: {prompt: \"\"}\n").rfind("4:23: prompt is empty", 0) == 0);
    for (const char* force : {"\"-1\"", "\"0:412:3\"", "x"})
        CHECK_MESSAGE(error_of(head + "  - request: {prompt: Once, force: " + force + "}\n").find("is not index:id") !=
                          std::string::npos,
                      force);
    // A token id the vocabulary lacks, against the model file before step 1.
    const auto vocab = check_text("force-id.yaml", head + "  - request: {prompt: Once, force: \"0:99999\"}\n    run: all\n");
    CHECK(vocab.exit_code == 2);
    CHECK(contains(vocab.output, "force-id.yaml:4:36: request field force = \"0:99999\": token id 99999 does not exist: "
                                 "the vocabulary has ids 0..1999"));
    // An experiment longer than the model's context, and a draft that is no model.
    const auto long_kv = check_text("kv-long.yaml", head + "  - kv_experiment: 600\n");
    CHECK(long_kv.exit_code == 2);
    CHECK(contains(long_kv.output, "kv_experiment: 600 tokens after the prompt do not fit the model's context of 512"));
    const std::string serving = std::string("title: t\nmodel: {kind: serving, file: \"") + SIXSTEP_SOURCE_DIR +
                                "/assets/models/stories-3m-f16.gguf\"}\nsteps:\n";
    const auto text_draft = check_text("draft-text.yaml", serving + "  - request: {experiment: speculative, draft: \"" +
                                          std::string(SIXSTEP_SOURCE_DIR) + "/README.md\"}\n    run: all\n");
    CHECK(text_draft.exit_code == 2);
    CHECK(contains(text_draft.output, "not a GGUF file"));
    // Fields each valid alone and not together, as the experiment reads them.
    const auto tight = check_text("tight-kv.yaml", serving + "  - request: {experiment: traffic, kv_blocks: 2, block_size: 16, max_batch: 8}\n    run: all\n");
    CHECK(tight.exit_code == 2);
    CHECK(contains(tight.output, "tight-kv.yaml:4:5: max batch 8 is beyond the KV capacity: 2 blocks of 16 positions hold "
                                 "at most 2 requests at once"));
    // A request whose error a later step that runs it expects is no problem
    // before step 1; `error: ""` expects none, so its request is checked.
    CHECK(check_text("tight-later.yaml", serving + "  - request: {experiment: traffic, kv_blocks: 2, max_batch: 8}\n"
                                           "  - run: all\n    expect: {error: {contains: KV capacity}}\n")
              .exit_code == 0);
    CHECK(check_text("tight-none.yaml", serving + "  - request: {experiment: traffic, kv_blocks: 2, max_batch: 8}\n"
                                           "    run: all\n    expect: {error: \"\"}\n")
              .exit_code == 2);
    const auto lengths = check_text("lengths.yaml", serving + "  - request: {experiment: traffic, min_tokens: 20, max_tokens: 10}\n    run: all\n");
    CHECK(lengths.exit_code == 2);
    CHECK(contains(lengths.output, "lengths.yaml:4:5: \"min_tokens\" 20 is above \"max_tokens\" 10"));
    // spec_overlap needs a second thread of the target's CPU pool.
    const std::string one_thread = std::string("title: t\nmodel: {kind: serving, threads: 1, file: \"") +
                                   SIXSTEP_SOURCE_DIR + "/assets/models/stories-3m-f16.gguf\"}\nsteps:\n";
    const auto overlap = check_text("overlap-1.yaml", one_thread + "  - request: {experiment: speculative, spec_overlap: yes}\n    run: all\n");
    CHECK(overlap.exit_code == 2);
    CHECK(contains(overlap.output, "overlap-1.yaml:4:54: spec_overlap: needs 2 threads or more (one of them the draft's); "
                                   "the model has threads: 1"));
    CHECK(check_text("overlap-off.yaml", one_thread + "  - request: {experiment: speculative, spec_overlap: no}\n    run: all\n")
              .exit_code == 0);
    // And a step that expects the error still shows it.
    CHECK(error_of(head + "  - kv_calc: {preset: stories-3m, tokens: 0.5}\n    expect:\n      error: {contains: tokens}\n") ==
          "(valid)");
    // The delivery model's minimum: 1e308 promised "1e+308 minutes".
    CHECK(error_of("title: t\nsteps:\n  - set: {minimum_minutes: 1e308}\n").find("minimum_minutes") != std::string::npos);
    CHECK(error_of("title: t\nsteps:\n  - set: {minimum_minutes: 30}\n") == "(valid)");
}

// Data of 10¹⁰⁰ minutes: the narration printed a loss of two hundred digits.
TEST_CASE("lessons: a training step's huge loss and gradients are narrated with a power of ten") {
    write_text("huge.csv", "distance_km,congestion,express_lane,minutes\n1e100,0,0,1e100\n");
    const std::string lesson = write_text(
        "huge.yaml", "title: t\nsteps:\n  - train: {steps: 2, data: huge.csv, learning_rate: 1e-300}\n");
    const auto r = run_sixstep("--headless '" + lesson + "'");
    CAPTURE(r.output);
    CHECK(contains(r.output, "loss    1×10²⁰⁰"));
    CHECK(contains(r.output, "grad [+2×10¹⁰⁰, +2×10²⁰⁰"));
    CHECK_FALSE(contains(r.output, "0000000000"));
}

// With one token per request no request has a TPOT: the median of nothing
// read "0 ms", and `{below: 1}` held for nothing. Absent now, and said so.
TEST_CASE("lessons: a traffic run with no second token has no TPOT to expect on") {
    const std::string lesson = write_text(
        "no-tpot.yaml", std::string("title: t\nmodel: {kind: serving, file: \"") + SIXSTEP_SOURCE_DIR +
                            "/assets/models/stories-3m-f16.gguf\", threads: 1}\nsteps:\n"
                            "  - request: {experiment: traffic, requests: 2, rate: 1, max_tokens: 1, min_tokens: 1}\n"
                            "    run: all\n    expect:\n      output.tpot_p50_ms: {below: 1}\n");
    const auto r = run_sixstep("--headless '" + lesson + "'", 60);
    CAPTURE(r.output);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.output, "output.tpot_p50_ms: expected < 1, got (nothing"));
    CHECK(contains(r.output, "median TPOT none (no request had a second token)"));
}

TEST_CASE("lessons: show names a panel once") {
    const std::string head = "title: A\nmodel: {kind: llm, file: m.gguf}\nsteps:\n";
    CHECK(error_of(head + "  - {show: [tokens, tokens]}\n") ==
          "4:21: \"show\" names the panel \"tokens\" twice; name it once, or two different panels");
    CHECK(error_of(head + "  - {show: [tokens, next_token]}\n") == "(valid)");
}

TEST_CASE("lessons: a request value is checked at load unless its step expects the error it gives") {
    const std::string head = "title: A\nmodel: {kind: llm, file: m.gguf}\nsteps:\n"
                             "  - request: {prompt: hi, temperature: -1}\n    run: all\n";
    CHECK(error_of(head + "    expect: {error: {contains: temperature}}\n") == "(valid)");
    // error: "" expects none: the value is refused where it is written.
    CHECK(error_of(head + "    expect: {error: \"\"}\n") == "4:40: \"temperature\" must be from 0 to 100, got -1");
}

// "1 requests served", "1 forward passes": one of each is singular, in the
// terminal's English and through the Chinese catalogue.
namespace {

// The narration of a one-step serving lesson that runs `request`, in English
// (top "title: t") or through the Chinese catalogue.
std::string serving_narration(const std::string& name, const std::string& top, const std::string& request) {
    const std::string lesson = top + "model: {kind: serving, file: \"" + SIXSTEP_SOURCE_DIR +
                               "/assets/models/stories-3m-f16.gguf\", threads: 1}\nsteps:\n  - request: " + request +
                               "\n    run: all\n";
    const auto r = run_sixstep("--headless '" + write_text(name, lesson) + "'", 60);
    CHECK(r.exit_code == 0);
    return r.output;
}

// "1 tokens" as a count of its own, not the tail of a measured "2611 tokens/s".
bool counts(const std::string& text, const std::string& count) {
    return std::regex_search(text, std::regex("(^|[^0-9.,])" + count));
}

}  // namespace

TEST_CASE("lessons: a traffic run of one request and one pass is counted in the singular") {
    const std::string request = "{experiment: traffic, requests: 1, rate: 1, max_tokens: 1, min_tokens: 1}";
    const std::string en = serving_narration("one.yaml", "title: t\n", request);
    CAPTURE(en);
    CHECK(contains(en, "1 request at 1 req/s"));
    CHECK(contains(en, "1 forward pass"));
    CHECK(contains(en, "1 request served in"));
    CHECK_FALSE(counts(en, "1 requests"));
    CHECK_FALSE(counts(en, "1 forward passes"));
    const std::string zh = serving_narration("one-zh.yaml", "title: t\nlanguage: zh\n", request);
    CAPTURE(zh);
    CHECK(contains(zh, "1 个请求在"));
    CHECK(contains(zh, "1 次前向计算"));
    CHECK_FALSE(contains(zh, "1 request"));
}

// The waits summary and the batch job's verdict count each of their five
// numbers with its own noun: "1 token streamed", "1 call × 1 token".
TEST_CASE("lessons: the three users' waits of one token, one call and one request are counted in the singular") {
    const std::string request = "{experiment: waits, chat_tokens: 1, agent_calls: 1, agent_tokens: 1, "
                                "batch_requests: 1, batch_tokens: 1}";
    const std::string en = serving_narration("waits-one.yaml", "title: t\n", request);
    CAPTURE(en);
    CHECK(contains(en, "chat: 1 token streamed; agent: 1 call \u00d7 1 token; batch job: 1 request \u00d7 1 token"));
    CHECK(contains(en, "1 request \u00d7 1 token batched: "));
    CHECK_FALSE(counts(en, "1 tokens"));
    CHECK_FALSE(counts(en, "1 calls"));
    CHECK_FALSE(counts(en, "1 requests"));
    const std::string zh = serving_narration("waits-one-zh.yaml", "title: t\nlanguage: zh\n", request);
    CAPTURE(zh);
    CHECK(contains(zh, "聊天：流式输出 1 个词元；智能体：1 次调用 \u00d7 1 个词元；批处理作业：1 个请求 \u00d7 1 个词元"));
    CHECK(contains(zh, "1 个请求 \u00d7 1 个词元批量处理"));
    const std::string many = serving_narration("waits-many.yaml", "title: t\n",
                                               "{experiment: waits, chat_tokens: 3, agent_calls: 2, agent_tokens: 2, "
                                               "batch_requests: 2, batch_tokens: 2}");
    CHECK(contains(many, "chat: 3 tokens streamed; agent: 2 calls \u00d7 2 tokens; batch job: 2 requests \u00d7 2 tokens"));
}

// What failed at its step (exit 1) is invalid before step 1 (exit 2), at its
// place: a request that lacks a field its model needs, a step that runs
// with no request before it, and a value a later `set:` makes unreadable.
TEST_CASE("lessons: a request the model cannot read, or none at all, is invalid where it is written") {
    // A missing feature ("missing feature \"congestion\"" when step 1 ran).
    CHECK(error_of("title: A\nsteps:\n  - request: {distance: \"3 km\", express_lane: 0}\n    run: all\n") ==
          "3:5: the request has no \"congestion\": every delivery request gives distance, congestion, express_lane");
    // Expected by the step that runs it, it is the lesson's point.
    CHECK(error_of("title: A\nsteps:\n  - request: {distance: \"3 km\", express_lane: 0}\n  - run: all\n"
                   "    expect: {error: {contains: congestion}}\n") == "(valid)");
    // A run with nothing to run, for a model whose request has no defaults.
    CHECK(error_of("title: A\nsteps:\n  - say: hi\n  - run: all\n") ==
          "4:5: step 2 runs the request, and no step up to here gives one: add request: {…} to this step or one "
          "before it (every delivery request gives distance, congestion, express_lane)");
    CHECK(error_of("title: A\nmodel: {kind: llm, random: tiny}\nsteps:\n  - run: token\n") ==
          "4:5: step 1 runs the request, and no step up to here gives one: add request: {…} to this step or one "
          "before it (every llm request gives prompt)");
    CHECK(error_of("title: A\nmodel: {kind: llm, random: tiny}\nsteps:\n  - force: 3\n") ==
          "4:12: step 1 forces a token of the request, and no step up to here gives one: add request: {…} to this "
          "step or one before it (every llm request gives prompt)");
    // normalize: false lets "2" through at the request; true, set later, does not.
    const std::string skew = "title: A\nsteps:\n  - set: {normalize: false}\n"
                             "    request: {distance: \"3 km\", congestion: 0, express_lane: 2}\n    run: all\n";
    CHECK(error_of(skew) == "(valid)");
    CHECK(error_of(skew + "  - set: {normalize: true}\n    run: all\n") ==
          "4:62: express_lane: \"2\" must be 0 or 1 (step 2 runs this request under settings changed since step 1)");
    CHECK(error_of(skew + "  - set: {normalize: true}\n  - request: {distance: 3, congestion: 0, express_lane: 0}\n"
                          "    run: all\n") == "(valid)");  // a new request before the next run
    // A serving model asks with defaults of its own: a bare run is fine.
    CHECK(error_of("title: A\nmodel: {kind: serving, random: tiny}\nsteps:\n  - run: all\n") == "(valid)");
}

// A number no check can compare was taken as the text "1e400".
TEST_CASE("lessons: a value past a double's range, or YAML's .inf and .nan, is refused where it is written") {
    const std::string head = "title: A\nsteps:\n  - request: {distance: 3, congestion: 0, express_lane: 0}\n"
                             "    run: all\n    expect: ";
    CHECK(error_of(head + "{response.minutes: 1e400}\n") ==
          "5:32: \"1e400\" is not a finite number: a check compares with a finite number, a path or a remembered "
          "name (quote it to compare with the text)");
    CHECK(error_of(head + "{response.minutes: .nan}\n").rfind("5:32: \".nan\" is not a finite number", 0) == 0);
    CHECK(error_of(head + "{response.minutes: {value: 1e400, tol: 1}}\n").rfind("5:40: \"1e400\" is not a finite", 0) == 0);
    // Words strtod would read as infinity are words here; quoted, the number is text.
    CHECK(error_of(head + "{response.text: {not: {contains: inf}}}\n") == "(valid)");
    CHECK(error_of(head + "{response.text: {not: {contains: \"1e400\"}}}\n") == "(valid)");
}

TEST_CASE("lessons: a step written without its dash is named, first or not, with what to write") {
    // The only step: steps is a mapping of a step's keys.
    CHECK(error_of("title: t\nsteps:\n  title: one\n  say: hi\n") ==
          "3:3: \"steps\" must be a non-empty list, got a mapping of a step's keys \u2014 a list's items begin with "
          "\"- \": write \"- title:\" here and indent the step's other keys under it");
    // A mapping of other keys is only a mapping.
    CHECK(error_of("title: t\nsteps:\n  one: 1\n") == "3:3: \"steps\" must be a non-empty list, got a mapping");
    // The first of several: the parser stops at the next dash; the slip is where the item began.
    CHECK(error_of("title: t\nsteps:\n  say: hi\n\n  # the next\n  run: all\n  - title: two\n    say: there\n") ==
          "3:3: invalid YAML: this item of the list has no \"- \", as the one at line 7 has: write \"- say:\" and "
          "indent its other keys under it (the parser stopped at line 7: end of map not found)");
    // A dash under plain keys that is not an item of mappings keeps the parser's words.
    CHECK(error_of("title: t\nmodel:\n  kind: delivery\n  - x\nsteps:\n  - say: hi\n")
              .rfind("4:3: invalid YAML: end of map not found \u2014 check the indentation", 0) == 0);
}

TEST_CASE("lessons: a '#' that would cut a title or a narration short is named, and a comment written as one passes") {
    CHECK(error_of("title: Step #1 of it\nsteps:\n  - say: hi\n") ==
          "1:13: \" #\" starts a comment in YAML, so the title reads \"Step\" and \"#1 of it\" is left out: quote the "
          "whole text (\"\u2026\"), or write a comment as \"  # \" with a space after the \"#\"");
    CHECK(error_of("title: t\nsteps:\n  - say: The answer is 13 min #no-surprise\n").rfind(
              "3:31: \" #\" starts a comment in YAML, so the narration reads \"The answer is 13 min\"", 0) == 0);
    // The text's own: quoted, a block, no space before it; and a comment as comments are written.
    CHECK(error_of("title: \"Step #1\"\nsteps:\n  - say: |\n      Step #1\n") == "(valid)");
    CHECK(error_of("title: C# in a week\nsteps:\n  - say: hi  # a note for the author\n") == "(valid)");
}

TEST_CASE("lessons: a comment in another language's syntax is named at its line") {
    for (const char* opener : {"/*", "--", ";"}) {
        CAPTURE(opener);
        CHECK(error_of(std::string("title: t\nsteps:\n  ") + opener + " the first step\n  - say: hi\n")
                  .rfind(std::string("3:3: invalid YAML: a comment in YAML starts with \"#\", not \"") + opener + "\"", 0) == 0);
    }
}

TEST_CASE("lessons: a decimal comma inside a {...} is named, not taken for a field") {
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: 5 km, congestion: 0,3, express_lane: 0}\n") ==
          "3:45: \"3\" is read as a request field: in a {\u2026} a comma separates the entries, so the decimal comma of "
          "0,3 ended one: write 0.3");
    // A pasted run of digits is cut in the message, not repeated whole.
    CHECK(error_of("title: t\nsteps:\n  - request: {distance: 5, congestion: 0," + std::string(500, '3') + "}\n").size() <
          400);
}
