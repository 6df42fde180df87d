// Messages that quote what a file or a user wrote: no raw terminal escapes,
// and nothing cut short at a NUL byte.
#include <doctest/doctest.h>

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
    CHECK(printable("\xff\xfe ok \xe4\xb8") == "\\xff\\xfe ok \\xe4\\xb8");
    CHECK(printable("预计送达时间 — ✓") == "预计送达时间 — ✓");
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
