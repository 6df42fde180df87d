// Line breaking without a font (app/core/line_breaks.h): the rules the window
// and the terminal share, measured here in a terminal's columns.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "app/core/line_breaks.h"

using namespace sixstep;

TEST_CASE("reflow: wrapped lines join, blank lines and list items stay, Chinese joins without a space") {
    CHECK(app::reflow("one\ntwo\n") == "one two");
    CHECK(app::reflow("one\n\ntwo") == "one\n\ntwo");
    CHECK(app::reflow("items:\n- a\n- b") == "items:\n- a\n- b");
    CHECK(app::reflow("items:\n* a\n* b") == "items:\n* a\n* b");
    // Full-width punctuation carries its own space: none added after it.
    CHECK(app::reflow("训练模式。\ndropout 开着") == "训练模式。dropout 开着");
    CHECK(app::reflow("首字延迟；\nTPOT 不变") == "首字延迟；TPOT 不变");
    CHECK(app::reflow("第一行\n第二行") == "第一行第二行");
}

TEST_CASE("terminal lines: display columns, words whole, Chinese by its own rules") {
    CHECK(app::display_columns("abc") == 3);
    CHECK(app::display_columns("词元") == 4);
    CHECK(app::display_columns("−2 → 3") == 6);  // symbols take one column
    using Lines = std::vector<std::string>;
    CHECK(app::break_lines_columns("aaa bbb ccc", 7) == Lines{"aaa bbb", "ccc"});
    CHECK(app::break_lines_columns("one\n\ntwo", 40) == Lines{"one", "", "two"});
    // A number never parts at its point, a relation keeps its number.
    bool number_whole = false, relation_whole = false;
    for (const std::string& line : app::break_lines_columns("the speedup is about 0.260 when ρ ≤ 0.91 here", 14)) {
        CAPTURE(line);
        CHECK(app::display_columns(line) <= 14);
        number_whole |= line.find("0.260") != std::string::npos;
        relation_whole |= line.find("ρ ≤ 0.91") != std::string::npos;
    }
    CHECK(number_whole);
    CHECK(relation_whole);
    // A number keeps its unit: "(median step 0.197⏎ms)" under a timeline.
    CHECK(app::break_lines_columns("decode (median step 0.197 ms).", 26) == Lines{"decode (median step", "0.197 ms)."});
    CHECK(app::break_lines_columns("it takes 3 km to go", 10) == Lines{"it takes", "3 km to go"});
    // Not a unit: a word that only begins like one.
    CHECK(app::break_lines_columns("we saw 3 more", 8) == Lines{"we saw 3", "more"});
    // A one- or two-digit label stays with its word ("Temperature⏎1, nothing
    // cut" as a step title; "Step 3", "lesson 06").
    CHECK(app::break_lines_columns("Temperature 1, nothing cut", 14) == Lines{"Temperature 1,", "nothing cut"});
    CHECK(app::break_lines_columns("see lesson 06 now", 11) == Lines{"see", "lesson 06", "now"});
    CHECK(app::break_lines_columns("batch 128 here", 8) == Lines{"batch", "128 here"});  // three digits: a count, free
    // Chinese breaks between characters, within the width in columns, never
    // before a closing mark or inside "6.40".
    const std::string zh = "投机解码让草稿模型先猜接下来的词元，平均产出 6.40 个词元。目标模型一次检查全部猜测。";
    const Lines lines = app::break_lines_columns(zh, 20);
    std::string joined;
    for (const std::string& l : lines) {
        CAPTURE(l);
        CHECK(app::display_columns(l) <= 20);
        CHECK(l.rfind("，", 0) != 0);
        CHECK(l.rfind("。", 0) != 0);
        joined += l;
    }
    CHECK(joined.find("6.40") != std::string::npos);
    CHECK(lines.size() > 1);
    // A token's leading space inside its quotes is not a break: 'p("' was
    // left at a line's end, 'mat")' under it. A space between words in
    // quotes still is.
    CHECK(app::break_lines_columns("the share p(\" mat\") is", 10) == Lines{"the share", "p(\" mat\")", "is"});
    CHECK(app::break_lines_columns("这里用 \" rug\" 代替", 12) == Lines{"这里用", "\" rug\" 代替"});
    CHECK(app::break_lines_columns("say \"three kilometres\" here", 12) == Lines{"say \"three", "kilometres\"", "here"});
}
