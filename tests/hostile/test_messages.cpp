// Messages that quote what a file or a user wrote: no raw terminal escapes,
// and nothing cut short at a NUL byte.
#include <doctest/doctest.h>

#include <algorithm>

#include "hostile.h"
#include "pipeline/core/error.h"
#include "pipeline/core/text.h"

using namespace sixstep;
using namespace sixstep::test;

TEST_CASE("printable: control characters, C1 controls and invalid UTF-8 become visible escapes") {
    using namespace std::string_literals;
    CHECK(printable("a\x1b[2Jb") == "a\\x1b[2Jb");
    CHECK(printable("a\0b"s) == "a\\x00b");
    CHECK(printable("line\nnext\ttab\r") == "line\\nnext\\ttab\\r");
    CHECK(printable("line\nnext\ttab", true) == "line\nnext\ttab");
    CHECK(printable("\x7f") == "\\x7f");
    CHECK(printable("csi \xc2\x9b" "31m") == "csi \\u009b31m");  // U+009B, a terminal's CSI
    CHECK(printable("a\xc2\x9fz") == "a\\u009fz");                 // U+009F, the last C1 control
    CHECK(printable("a\xed\xa0\x80z") == "a\\xed\\xa0\\x80z");   // a UTF-16 surrogate is not UTF-8
    CHECK(printable("\xff\xfe ok \xe4\xb8") == "\\xff\\xfe ok \\xe4\\xb8");
    CHECK(printable("预计送达时间 — ✓") == "预计送达时间 — ✓");
    // A right-to-left override turned the rest of a terminal's line around;
    // an isolate too. Plain direction marks stay (U+200F).
    CHECK(printable("title \u202e!olleh") == "title \\u202e!olleh");
    CHECK(printable("\u2066a\u2069 \u202a") == "\\u2066a\\u2069 \\u202a");
    CHECK(printable("a\u200fb") == "a\u200fb");
    CHECK(quote_text("\x1b\"x\"") == "\"\\x1b\\\"x\\\"\"");
}

TEST_CASE("errors: what() is printable and whole, message() keeps the text") {
    using namespace std::string_literals;
    const Error e(SourceLocation{"f\x1b.yaml", 2, 3}, "bad key \"a\0\x1b[31mb\""s);
    CHECK(std::string(e.what()) == "f\\x1b.yaml:2:3: bad key \"a\\x00\\x1b[31mb\"");
    CHECK(e.message() == "bad key \"a\0\x1b[31mb\""s);
}

TEST_CASE("cli: a lesson's escape sequences and NUL bytes reach the terminal escaped and whole") {
    const std::string path = write_text("escapes.yaml", "title: T\nsteps:\n  - say: hi\n    \"k\\e[2J\\0tail\": 1\n");
    for (const std::string& cmd : {std::string("check"), std::string("--headless")}) {
        const auto r = run_sixstep(cmd + " '" + path + "'", 10);
        CAPTURE(cmd);
        CHECK(r.exit_code == 2);
        CHECK(contains(r.output, "unknown key \"k\\x1b[2J\\x00tail\" in step 1"));
        CHECK(r.output.find('\x1b') == std::string::npos);
        CHECK(r.output.find('\0') == std::string::npos);
    }
    // Narration quotes the lesson's text: line breaks stay, escapes do not.
    const std::string said = write_text("says.yaml", "title: \"T\\e]0;pwned\\a\"\nsteps:\n  - say: \"one\\ntwo \\e[5m\"\n");
    const auto r = run_sixstep("--headless '" + said + "'", 10);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "T\\x1b]0;pwned\\x07"));
    CHECK(contains(r.output, "one\n  two \\x1b[5m"));
    CHECK(r.output.find('\x1b') == std::string::npos);
}

TEST_CASE("elide: long text cut in the middle with what was left out, never inside a UTF-8 sequence") {
    CHECK(elide("short", 100) == "short");
    CHECK(elide(std::string(10, 'a'), 10) == std::string(10, 'a'));  // exactly the limit: whole
    const std::string head(5000, 'h'), tail(5000, 't');
    const std::string cut = elide(head + tail, 300);
    CHECK(cut.size() < 400);
    CHECK(cut.rfind("hhh", 0) == 0);                                  // the head is kept
    CHECK(cut.substr(cut.size() - 3) == "ttt");                       // and the tail
    CHECK(cut.find(" … [9,700 bytes left out] … ") != std::string::npos);
    // Three-byte characters: whatever the limit, the cut falls between characters.
    std::string han;
    for (int i = 0; i < 1000; ++i) han += "预";
    for (std::size_t limit : {100, 101, 102, 103}) {
        const std::string c = elide(han, limit);
        CAPTURE(limit);
        CHECK(c.size() < han.size());
        CHECK(printable(c) == c);  // valid UTF-8 throughout: no escapes needed
    }
}

TEST_CASE("errors: a message that quotes a huge value is cut to one readable line") {
    const std::string value(100000, 'x');
    const Error e(SourceLocation{"f.yaml", 2, 3}, "unknown knob \"" + value + "\" (known: distance)");
    CHECK(std::string(e.what()).size() < 2100);
    CHECK(std::string(e.what()).rfind("f.yaml:2:3: unknown knob \"xxx", 0) == 0);
    CHECK(contains(e.what(), "bytes left out"));
    CHECK(contains(e.what(), "xxx\" (known: distance)"));
    CHECK(e.message().size() > 100000);  // whole, so that wrapping it cuts once
    const std::string wrapped = e.with_context("loading lesson").what();
    CHECK(wrapped.size() < 2100);
    CHECK(wrapped.find("left out") == wrapped.rfind("left out"));
}

TEST_CASE("cli: a lesson with a 100 KB value gets short messages, invalid or failed") {
    const std::string big(100000, 'x');
    // An unknown knob: the lesson is invalid.
    const std::string knob = write_text(
        "big-knob.yaml", "title: T\nmodel: {kind: delivery}\nsteps:\n  - say: hi\n    knobs: [distance" + big + "]\n");
    const auto invalid = run_sixstep("check '" + knob + "'", 20);
    CHECK(invalid.exit_code == 2);
    CHECK(contains(invalid.output, "unknown knob \"distancexxx"));
    CHECK(invalid.output.size() < 3000);
    // A unit nobody knows: invalid when the lesson loads, the unit quoted briefly.
    const std::string unit = write_text("big-unit.yaml",
                                        "title: T\nmodel: {kind: delivery}\nsteps:\n"
                                        "  - request: {distance: \"3 km" + big + "\", congestion: 0, express_lane: 0}\n");
    const auto bad_unit = run_sixstep("check '" + unit + "'", 20);
    CHECK(bad_unit.exit_code == 2);
    CHECK(contains(bad_unit.output, "is not a length"));
    CHECK(contains(bad_unit.output, "bytes left out"));
    CHECK(bad_unit.output.size() < 3000);
    // A check that quotes 100 KB fails, briefly.
    const std::string check = write_text("big-check.yaml",
                                         "title: T\nmodel: {kind: delivery}\nsteps:\n"
                                         "  - request: {distance: \"3 km\", congestion: 0, express_lane: 0}\n"
                                         "  - run: load\n    expect: {load.cold: \"" + big + "\"}\n");
    const auto failed = run_sixstep("check '" + check + "'", 20);
    CHECK(failed.exit_code == 1);
    CHECK(contains(failed.output, "bytes left out"));
    CHECK(failed.output.size() < 8000);
    // The same text for a number: the lesson is invalid, and says so briefly.
    const std::string number = write_text("big-number.yaml", "title: T\nmodel: {kind: delivery}\nsteps:\n"
                                                             "  - run: load\n    expect: {load.bias: \"" + big + "\"}\n");
    const auto text_for_number = run_sixstep("check '" + number + "'", 20);
    CHECK(text_for_number.exit_code == 2);
    CHECK(contains(text_for_number.output, "load.bias is a number"));
    CHECK(text_for_number.output.size() < 3000);
}

TEST_CASE("cli: generated text and the echoed prompt reach the terminal with their control bytes escaped") {
    // The tiny random model samples byte tokens at a high temperature:
    // backspaces, ESC, bytes that are not UTF-8.
    const auto r = run_sixstep("generate -m '" + tiny_model() +
                                   "' -n 200 --temp 2 --seed 1 --prompt \"$(printf 'hi\\033[2J')\"",
                               60);
    CHECK(r.exit_code == 0);
    CHECK(r.output.rfind("hi\\x1b[2J", 0) == 0);
    CHECK(contains(r.output, "\\x"));  // some of what the model said was escaped
    const auto raw_controls = std::count_if(r.output.begin(), r.output.end(), [](unsigned char c) {
        return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
    });
    CHECK(raw_controls == 0);
}

TEST_CASE("cli: --json output stays JSON when a path is not UTF-8") {
    const fs::path odd = scratch() / "odd-\xfe.gguf";
    fs::copy_file(tiny_model(), odd, fs::copy_options::overwrite_existing);
    const auto r = run_sixstep("perplexity -m '" + odd.string() + "' --json", 60);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "odd-\xef\xbf\xbd.gguf"));  // U+FFFD in place of the byte
    CHECK_FALSE(contains(r.output, "json.exception"));
}

TEST_CASE("invalid_utf8_at: the first byte that does not begin a UTF-8 sequence") {
    CHECK(invalid_utf8_at("plain and 预计 —") == std::string::npos);
    CHECK(invalid_utf8_at("hi\xff there") == 2);
    CHECK(invalid_utf8_at("ok \xe4\xb8") == 3);  // a sequence cut short
    CHECK(invalid_utf8_at("\xc0\xaf") == 0);     // an overlong "/"
    CHECK(invalid_utf8_at("a\xed\xa0\x80z") == 1);  // a surrogate (U+D800)
}

TEST_CASE("load: a prompt file that is not UTF-8 is refused at its line and column, before any request") {
    // Before, the load generator's threads threw from the JSON encoder and the process aborted.
    const std::string prompts = write_text("prompts.txt", "fine\nhi\xff there\n");
    const auto r = run_sixstep("load --url http://127.0.0.1:1/v1 --rate 5 --duration 1 --prompt-file '" + prompts + "'", 20);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, prompts + ":2:3: the prompt is not UTF-8 text (byte 0xff)"));
}

TEST_CASE("cli: inspect shows a file's keys, names and values escaped, and a 100 KB key cut") {
    llm::GGUFWriter w;
    w.set("general.architecture", llm::GGUFValue(std::string("llama")));
    w.set("evil\x1b[2J.key", llm::GGUFValue(std::string("value \x1b]0;x\x07 \xff")));
    w.set(std::string(100000, 'k'), llm::GGUFValue(std::uint32_t{1}));
    const fs::path path = scratch() / "evil-keys.gguf";
    w.write(path);
    const auto r = run_sixstep("inspect '" + path.string() + "'", 20);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "evil\\x1b[2J.key"));
    CHECK(contains(r.output, "value \\x1b]0;x\\x07 \\xff"));
    CHECK(contains(r.output, "bytes left out"));
    CHECK(r.output.size() < 3000);  // every row was padded to the 100 KB key: 300 KB
    CHECK(r.output.find('\x1b') == std::string::npos);
}

TEST_CASE("cli: serve's banner escapes the model id") {
    // The id is the file's name when --name is not given (a --name with
    // control characters is refused).
    const fs::path model = scratch() / "x\x1b[31m.gguf";
    fs::copy_file(std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf", model,
                  fs::copy_options::overwrite_existing);
    // SIGTERM after the banner: the server stops cleanly.
    const auto r = run_command("timeout -s TERM 3 " + sixstep_cmd("serve -m '" + model.string() + "' --port 0"));
    CHECK(contains(r.output, "sixstep serve: model x\\x1b[31m on http://127.0.0.1:"));
    CHECK(r.output.find('\x1b') == std::string::npos);
}

// A model file whose name holds an escape sequence: every command that
// names the model (or a file it wrote) prints it escaped, never raw.
TEST_CASE("cli: commands that name their model file escape its control characters") {
    const fs::path model = scratch() / "m\x1b]0;pwn\x07.gguf";
    fs::copy_file(fs::path(SIXSTEP_SOURCE_DIR) / "assets" / "models" / "stories-3m-q8_0.gguf", model,
                  fs::copy_options::overwrite_existing);
    const std::string m = "'" + model.string() + "'";
    for (const std::string& args :
         {"bench -m " + m + " -p 4 -n 4 -r 1", "bench -m " + m + " --batch 1,2 --steps 2 -r 1 --context 4",
          "kv-calc -m " + m, "bill -m " + m + " -n 2 --train-tokens 1e6", "traffic -m " + m + " --count 2 --max-tokens 2",
          "coldstart -m " + m + " -n 2 --requests 1 --idle 0,1 --no-drop", "waits -m " + m + " --chat-tokens 2 --agent-calls 1 "
          "--agent-tokens 2 --batch-requests 2 --batch-tokens 2",
          "speculate -m " + m + " --draft " + m + " --k 1 --temp 0 -n 4 -r 1",
          "queue -m " + m + " --utilization 0.5 --samples 4 --context 4 --requests 2000",
          "perplexity -m " + m + " --ref " + m + " --docs 1"}) {
        CAPTURE(args);
        const auto r = run_sixstep(args, 60);
        CHECK(r.exit_code == 0);
        CHECK(contains(r.output, "\\x1b]0;pwn\\x07"));
        CHECK(r.output.find('\x1b') == std::string::npos);
    }
}
