// Pieces of the UI that need no GL context: key names, text reflow, number
// formatting, the layout.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <imgui.h>

#include "app/core/catalogue.h"
#include "app/ui/fonts.h"
#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/layout.h"
#include "app/ui/overflow.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/presenter_keys.h"
#include "app/ui/text_capture.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/models.h"
#include "pipeline/llm/trace_keys.h"
#include "pipeline/server/endpoint_description.h"
#include "pipeline/serving/serving_keys.h"
#include "pipeline/serving/serving_model.h"
#include "long_work.h"

using namespace sixstep;

TEST_CASE("presenter keys: autoplay names parse, an unknown one is an error") {
    const auto keys = ui::parse_keys("right space left home end f11 ctrl+= ctrl+- ctrl+r");
    CHECK(keys.size() == 9);
    CHECK(keys[6].mods != 0);
    CHECK(keys[0].mods == 0);
    CHECK_THROWS_AS(ui::parse_keys("right sideways"), std::invalid_argument);
}

TEST_CASE("work status: what runs, how far and for how long, and stopping says so") {
    ui::set_frame_language("");  // English, whatever a test before drew in this process
    app::WorkStatus w;
    w.running = true;
    w.elapsed_s = 12.4;
    CHECK(ui::work_text(w) == "working\u2026 12 s");  // a command that reported nothing (yet)
    w.progress = {"batch sweep: round 2 of 3, batch 8", 37, 100};
    CHECK(ui::work_text(w) == "batch sweep: round 2 of 3, batch 8: 37 of 100 \u2014 12 s");
    w.progress = {"training (steps)", 5000, 0};
    CHECK(ui::work_text(w) == "training (steps): 5000 \u2014 12 s");
    w.stopping = true;
    CHECK(ui::work_text(w) == "stopping\u2026 12 s");
}

TEST_CASE("work status: a Chinese window says what runs in Chinese") {
    app::WorkStatus w;
    w.running = true;
    w.elapsed_s = 12.4;
    ui::set_frame_language("zh");
    CHECK(ui::work_text(w) == "处理中\u2026 12 s");
    w.progress = {"batch sweep: round 2 of 3, batch 8", 37, 100};
    CHECK(ui::work_text(w) == "批大小扫描：第 2 轮（共 3 轮），批大小 8: 37 / 100 \u2014 12 s");
    w.progress = {"training (steps)", 5000, 0};
    CHECK(ui::work_text(w) == "训练（步数）: 5000 \u2014 12 s");
    // Every task a lesson's long work reports in the window has its words.
    for (const char* task : {"batch sweep: prefill", "batch sweep: done", "checking the weights (MiB)", "agent: calls",
                             "batch job: requests one at a time", "batch job: requests all at once", "queue simulations",
                             "serving traffic (requests finished)", "timing decode steps", "speculative sweep (settings)"}) {
        CAPTURE(task);
        CHECK(app::translate("zh", task).has_value());
    }
    w.stopping = true;
    CHECK(ui::work_text(w) == "正在停止\u2026 12 s");
    ui::set_frame_language("");
}

TEST_CASE("presenter keys: Esc stops the long work running now, and is harmless while idle") {
    const std::string lesson = sixstep::test::long_training_lesson("view");
    app::Session session;
    ui::ViewState view;
    const auto esc = ui::parse_key("escape");
    REQUIRE(esc);
    session.open(lesson);
    session.wait_idle();
    ui::handle_key(*esc, false, session, view, *session.snapshot());  // idle: nothing happens
    session.next();
    while (session.work().progress.task.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ui::handle_key(*esc, false, session, view, *session.snapshot());
    session.wait_idle();
    CHECK(session.snapshot()->state.position == 1);
    CHECK(session.snapshot()->log.back().text == "interrupted: step 2 is not done (\u2192 runs it again)");
}

TEST_CASE("presenter keys: T moves through the right-hand panes the step has, and only those") {
    app::Snapshot snap;
    snap.has_lesson = true;
    ui::ViewState view;
    const auto t = ui::parse_key("t");
    REQUIRE(t);
    app::Session session;
    // No training, no charts: the inspector alone, T stays there.
    CHECK(ui::right_pane(snap, view) == 0);
    ui::handle_key(*t, false, session, view, snap);
    CHECK(ui::right_pane(snap, view) == 0);
    // A lesson that trains opens on the training pane; T goes to the
    // inspector and back.
    snap.state.training.active = true;
    snap.state.training.loss = {3.0, 2.0};
    view.right_tab = -1;
    CHECK(ui::right_pane(snap, view) == 1);
    ui::handle_key(*t, false, session, view, snap);
    CHECK(ui::right_pane(snap, view) == 0);
    ui::handle_key(*t, false, session, view, snap);
    CHECK(ui::right_pane(snap, view) == 1);
}

// A click on the diagram's cut answer shows the respond stage in the
// inspector: the right pane switches to it from the training or serving
// pane, or from the transformer panels a step shows.
TEST_CASE("the whole answer: the respond stage in the inspector, whatever the right-hand side showed") {
    app::Snapshot snap;
    snap.has_lesson = true;
    snap.state.position = 4;
    snap.state.training.active = true;
    snap.state.training.loss = {3.0, 2.0};
    ui::ViewState view;
    REQUIRE(ui::right_pane(snap, view) == 1);
    ui::show_answer(snap, view);
    CHECK(ui::right_pane(snap, view) == 0);
    CHECK(view.selected_stage == stage_count - 1);
    CHECK(view.selection_version == 4);

    ModelDescription d;
    d.panels = {{"kv_cache", ""}, {"timeline", ""}};
    snap.state.description = &d;
    snap.state.panels.shown = {"kv_cache", "timeline"};
    ui::ViewState panels;
    REQUIRE(ui::shown_panels(snap, panels) == std::vector<std::string>{"kv_cache", "timeline"});
    ui::show_answer(snap, panels);
    CHECK(ui::shown_panels(snap, panels) == std::vector<std::string>{"inspector"});
    CHECK(panels.selected_stage == stage_count - 1);
    // The next step shows what it asks for again.
    snap.state.position = 5;
    CHECK(ui::shown_panels(snap, panels) == std::vector<std::string>{"kv_cache", "timeline"});
}

// ImGui's built-in font in a context of its own (the atlas needs no GL
// context), for measuring text.
struct DefaultFont {
    ImGuiContext* ctx = ImGui::CreateContext();
    ImFont* font = ImGui::GetIO().Fonts->AddFontDefault();
    DefaultFont() {
        unsigned char* pixels = nullptr;
        int w = 0, h = 0;
        ImGui::GetIO().Fonts->GetTexDataAsAlpha8(&pixels, &w, &h);
    }
    ~DefaultFont() { ImGui::DestroyContext(ctx); }
    DefaultFont(const DefaultFont&) = delete;
    DefaultFont& operator=(const DefaultFont&) = delete;
};

// A step title in even lines: lesson zh/04's "5 · 后处理：选一个词元，变回文字"
// ended on "字" alone, and English titles can leave one word.
TEST_CASE("balanced lines: as many lines as wrapping takes, none left with a lone character") {
    const DefaultFont f;
    ImFont* font = f.font;
    auto width = [&](const std::string& t) { return font->CalcTextSizeA(13, 1e9f, 0, t.c_str()).x; };
    const std::string zh = "5 \u00b7 后处理：选一个词元，变回文字";
    const float room = width("5 \u00b7 后处理：选一个词元，变回文") + 2;  // the last character wraps alone
    const std::vector<std::string> greedy = ui::wrap_lines(font, 13, zh, room);
    REQUIRE(greedy.size() == 2);
    REQUIRE(greedy[1] == "字");
    const std::vector<std::string> even = ui::balanced_lines(font, 13, zh, room);
    REQUIRE(even.size() == 2);
    CHECK(even[0] + even[1] == zh);
    // At a punctuation mark, not inside a word ("注⏎意力").
    CHECK(even == std::vector<std::string>{"5 \u00b7 后处理：", "选一个词元，变回文字"});
    const std::string inside = "前向计算内部：注意力与 logit 透镜";
    const std::vector<std::string> at_mark = ui::balanced_lines(font, 13, inside, width(inside) * 0.7f);
    CHECK(at_mark == std::vector<std::string>{"前向计算内部：", "注意力与 logit 透镜"});
    const std::string en = "Paging admits more, and sometimes takes back";
    const std::vector<std::string> en_even = ui::balanced_lines(font, 13, en, width("Paging admits more, and sometimes takes") + 2);
    REQUIRE(en_even.size() == 2);
    CHECK(en_even[0] + " " + en_even[1] == en);
    CHECK(en_even[1] != "back");
    // Never narrower than a break allows: "Temperature⏎1, nothing cut" was
    // as even, cut where no break is allowed.
    const std::string t = "Temperature 1, nothing cut";
    CHECK(ui::balanced_lines(font, 13, t, width("Temperature 1, nothing") + 2) ==
          std::vector<std::string>{"Temperature 1,", "nothing cut"});
    // One line stays one line.
    CHECK(ui::balanced_lines(font, 13, "Bytes", 500) == std::vector<std::string>{"Bytes"});
}

// wrap_lines: what ImGui's own wrapping got wrong on the panels ("0.⏎260",
// "（⏎M/G/1"), and a long answer wrapped at once.
TEST_CASE("wrap lines: at spaces, never inside a number, Chinese anywhere but before a closer or after an opener") {
    const DefaultFont f;
    ImFont* font = f.font;
    auto width = [&](const std::string& t) { return font->CalcTextSizeA(13, 1e9f, 0, t.c_str()).x; };
    auto joined = [](const std::vector<std::string>& lines, const char* sep) {
        std::string out;
        for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? sep : "") + lines[i];
        return out;
    };

    const std::vector<std::string> latin = ui::wrap_lines(font, 13, "aaa bbb ccc", width("aaa bbb") + 1);
    CHECK(latin == std::vector<std::string>{"aaa bbb", "ccc"});

    // Every width from a number and three characters to the whole line: the
    // number and the bracket's first character stay together, no line starts
    // with a closer, every line fits, and the lines put back together are
    // the text.
    const std::string zh = "等待时间为0.260毫秒（M/G/1），然后继续。";
    for (float room = width("等等等0.260"); room <= width(zh) + 1; room += 3) {
        CAPTURE(room);
        const std::vector<std::string> lines = ui::wrap_lines(font, 13, zh, room);
        CHECK(joined(lines, "") == zh);
        for (const std::string& l : lines) {
            CHECK((l.find("0.") == std::string::npos || l.find("0.260") != std::string::npos));
            CHECK(l.find("（") != l.size() - std::string("（").size());
            CHECK(l.rfind("，", 0) != 0);
            CHECK(l.rfind("。", 0) != 0);
            if (l.size() > std::string("等").size()) CHECK(width(l) <= room);
        }
    }

    // A relation keeps its number and a number its percent sign ("≥⏎85%"
    // on the knee's verdict); a real minus keeps its digits.
    const std::string verdict = "the breakpoint reaches only 62% of the peak (a knee needs \u2265 85%), "
                                "slope \u22122.5 and \u2248 0.3";
    for (float room = width("reaches only"); room <= width(verdict) + 1; room += 2) {
        CAPTURE(room);
        const std::vector<std::string> lines = ui::wrap_lines(font, 13, verdict, room);
        CHECK(joined(lines, " ") == verdict);
        for (const std::string& l : lines) {
            CHECK(l.rfind("%", 0) != 0);
            for (const char* end : {"\u2265", "\u2248", "\u2212"})
                CHECK(l.compare(l.size() - std::min(l.size(), std::strlen(end)), std::string::npos, end) != 0);
        }
    }

    // A unit's "/" keeps its halves ("词元/⏎秒" on the waits lab), and a
    // relation's space keeps its left side ("ρ⏎≤ 0.91" on the queue lab).
    const std::string units = "输出流 11261 词元/秒，阅读 5.6 词元/秒；ρ \u2264 0.91 时等待 2 ms";
    for (float room = width("输出流 11261"); room <= width(units) + 1; room += 3) {
        CAPTURE(room);
        const std::vector<std::string> lines = ui::wrap_lines(font, 13, units, room);
        for (const std::string& l : lines) {
            CHECK(l.rfind("/", 0) != 0);
            CHECK((l.empty() || l.back() != '/'));
            CHECK(l.rfind("\u2264", 0) != 0);
        }
    }

    // A long answer (a model may write 4096 tokens): every line fits and
    // nothing is lost.
    std::string big;
    while (big.size() < (200u << 10)) big += "The cat sat on the mat, 0.431 of the time. ";
    const std::vector<std::string> lines = ui::wrap_lines(font, 13, big, 300);
    CHECK(lines.size() > 100);
    std::string back = joined(lines, " ");
    while (!big.empty() && big.back() == ' ') big.pop_back();
    CHECK(back == big);
    for (const std::string& l : lines) CHECK(width(l) <= 300);
}

// fit_text keeps the longest prefix that fits beside an ellipsis — on a
// 1 MB prompt as on a line (the font atlas needs no GL context).
TEST_CASE("fit text: the longest prefix that fits, at once on a megabyte") {
    const DefaultFont f;
    ImFont* font = f.font;
    auto width = [&](const std::string& t) { return font->CalcTextSizeA(13, 1e9f, 0, t.c_str()).x; };
    const std::string line = "The cat sat on the mat. The dog sat on the rug.";
    CHECK(ui::fit_text(font, 13, line, 1000) == line);  // fits: unchanged
    const std::string cut = ui::fit_text(font, 13, line, 120);
    REQUIRE(cut.size() > 3);
    const std::string kept = cut.substr(0, cut.size() - 3);  // less the ellipsis (3 bytes)
    CHECK(cut.compare(cut.size() - 3, 3, "\u2026") == 0);
    CHECK(line.compare(0, kept.size(), kept) == 0);
    CHECK(width(cut) <= 120);
    CHECK(width(line.substr(0, kept.size() + 1) + "\u2026") > 120);  // one character more does not fit
    CHECK(ui::fit_text(font, 13, line, 1) == "\u2026");
    std::string big;
    while (big.size() < (1u << 20)) big += "greedy (1); softmax (2) \u2192 ";
    CHECK(ui::fit_text(font, 13, big, 300) == ui::fit_text(font, 13, big.substr(0, 2048), 300));
}

// A lab's answer in the diagram's lane: cut after its last whole clause
// that fits, never inside a number ("0.4…"); fit_text's cut where no clause
// end fits; Chinese clauses end at full-width punctuation, with no space.
TEST_CASE("fit clauses: a sentence cut after its last whole clause that fits") {
    const DefaultFont f;
    ImFont* font = f.font;
    auto width = [&](const std::string& t) { return font->CalcTextSizeA(13, 1e9f, 0, t.c_str()).x; };
    const std::string answer = "continuous vs static: median TTFT 5.0 vs 16.4 ms, median TPOT 1.33 vs 0.442 ms, batch slots 93% vs 59%";
    CHECK(ui::fit_clauses(font, 13, answer, 2000) == answer);
    const std::string two = "continuous vs static: median TTFT 5.0 vs 16.4 ms \u2026";
    // Room for the first two clauses and a little of the third: the third is dropped whole.
    CHECK(ui::fit_clauses(font, 13, answer, width(two) + width("median TPOT 1.3")) == two);
    CHECK(ui::fit_clauses(font, 13, answer, width(two)) == two);
    CHECK(ui::fit_clauses(font, 13, answer, width(two) - 1) == "continuous vs static \u2026");
    // Less than the first clause: the prefix that fits, as fit_text cuts it.
    CHECK(ui::fit_clauses(font, 13, answer, 60) == ui::fit_text(font, 13, answer, 60));
    const std::string zh = "\u8fde\u7eed\u6279\u5904\u7406\uff1a\u4e2d\u4f4d\u6570\u0020TTFT\u0020\u0035\u002e\u0030\u0020ms\uff0c\u4e2d\u4f4d\u6570\u0020TPOT\u0020\u0031\u002e\u0033\u0033\u0020ms";
    const std::string zh_first = "\u8fde\u7eed\u6279\u5904\u7406\uff1a\u4e2d\u4f4d\u6570\u0020TTFT\u0020\u0035\u002e\u0030\u0020ms\u2026";
    CHECK(ui::fit_clauses(font, 13, zh, width(zh_first) + 2) == zh_first);
    // A megabyte of clauses: at once, as fit_text.
    std::string big;
    while (big.size() < (1u << 20)) big += "greedy (1), softmax (2); ";
    CHECK(ui::fit_clauses(font, 13, big, 300).size() < 200);
}

TEST_CASE("fields: times with three significant digits, one of a counted thing in the singular") {
    const auto text = [](double v, const char* unit) { return ui::field_text(Field{"k", Value{v}, unit, ""}); };
    CHECK(text(3.91141, "ms") == "3.91 ms");
    CHECK(text(0.0123456, "ms") == "0.0123 ms");
    CHECK(text(412.34, "ms") == "412 ms");
    CHECK(text(1234.5, "ms") == "1235 ms");
    CHECK(text(12, "ms") == "12 ms");
    CHECK(text(3.14159, "km") == "3.14159 km");  // not a time: as precise as before
    CHECK(text(1, "tokens") == "1 token");
    CHECK(text(6, "tokens") == "6 tokens");
    CHECK(text(0, "tokens") == "0 tokens");
    CHECK(text(1, "positions") == "1 position");
    CHECK(text(1, "min") == "1 min");
}

TEST_CASE("pretty numbers use a real minus sign") {
    CHECK(ui::pretty_number(-2) == "\u22122");
    CHECK(ui::pretty_number(11) == "11");
    CHECK(ui::pretty_value(Value{std::vector<double>{5, 2, 10, -2}}) == "[5, 2, 10, \u22122]");
    // No computer's exponent, alone or in a list (lesson 3's gradients read "−2.09e-06").
    CHECK(ui::pretty_number(-2.09e-6, 3) == "\u22122.09\u00d710\u207b\u2076");
    CHECK(ui::pretty_value(Value{std::vector<double>{0.000378, -2.09e-6}}, 3) ==
          "[0.000378, \u22122.09\u00d710\u207b\u2076]");
}

// Counts as the lesson's language groups them, tiny values without a
// computer's exponent (lesson 14 wrote "1e+06 requests", lesson 12 "6.99e-06").
TEST_CASE("numbers for the room: counts grouped by language, tiny values as powers of ten") {
    CHECK(ui::count_text(1e6) == "1,000,000");
    CHECK(ui::count_text(-12345) == "\u221212,345");
    CHECK(ui::count_text(9999) == "9999");
    CHECK(ui::count_text(12345.5) == "12345.5");  // not a count: left as it is
    CHECK(ui::short_count_text(191000) == "191k");
    CHECK(ui::short_count_text(2.5e6) == "2.5M");
    CHECK(ui::sci_text(6.99e-6) == "6.99\u00d710\u207b\u2076");
    CHECK(ui::sci_text(9.9999e-6) == "1\u00d710\u207b\u2075");  // rounds up into the next power
    CHECK(ui::sci_text(3.2e12) == "3.2\u00d710\u00b9\u00b2");
    CHECK(ui::sci_text(0) == "0");
    CHECK(ui::sci_text(0.0123) == "0.0123");
    CHECK(ui::sci_text(0.00058, 2) == "0.00058");
    CHECK(ui::sci_text(5.8e-5, 2) == "5.8\u00d710\u207b\u2075");
    // A column of gradients reads alike: below a thousandth always a power
    // of ten (lesson 03 showed 0.000378 beside −2.09×10⁻⁶), with a real minus.
    CHECK(ui::shown_text(0.000378, 4) == "3.78\u00d710\u207b\u2074");
    CHECK(ui::shown_text(-2.09e-6, 4) == "\u22122.09\u00d710\u207b\u2076");
    CHECK(ui::shown_text(-0.25, 4) == "\u22120.25");
    // A column that shrinks tenfold a row keeps one notation (lesson 14:
    // "0.00014%" above "1.4×10⁻⁵%").
    CHECK(ui::decimal_text(13.3) == "13");
    CHECK(ui::decimal_text(1.4) == "1.4");
    CHECK(ui::decimal_text(0.0014) == "0.0014");
    CHECK(ui::decimal_text(1.4e-5) == "0.000014");
    CHECK(ui::decimal_text(0.0995) == "0.10");  // rounds into the next power
    CHECK(ui::decimal_text(-0.25) == "\u22120.25");
    CHECK(ui::decimal_text(0) == "0");
    CHECK(ui::decimal_text(2e-12) == "2\u00d710\u207b\u00b9\u00b2");
    // A pair compared to the same digits, counts whole.
    CHECK(ui::compared_text(31, 24.7) == std::pair<std::string, std::string>{"31.0", "24.7"});
    CHECK(ui::compared_text(24, 0) == std::pair<std::string, std::string>{"24", "0"});
    CHECK(ui::compared_text(7702.4, 8097.9) == std::pair<std::string, std::string>{"7702", "8098"});
    // One chart's numbers alike (lesson 12's bars read "6150" beside "11.6k").
    CHECK(ui::plot::chart_number(6150, 21800) == "6.15k");
    CHECK(ui::plot::chart_number(21800, 21800) == "21.8k");
    CHECK(ui::plot::chart_number(6150, 9541) == "6150");
    CHECK(ui::plot::chart_number(950, 21800) == "950");
    CHECK(ui::plot::chart_number(2.5, 21800) == "2.5");
    ui::set_frame_language("zh");
    CHECK(ui::plot::chart_number(6150, 21800) == "6150");  // 万 groups four digits
    CHECK(ui::count_text(1e6) == "100\u4e07");
    CHECK(ui::count_text(123456) == "12.3\u4e07");
    CHECK(ui::count_text(3e8) == "3\u4ebf");
    CHECK(ui::short_count_text(191000) == "19.1\u4e07");
    CHECK(ui::short_count_text(1853) == "1853");
    ui::set_frame_language("");
}

// The model's own text is never a word of the catalogue: in a Chinese
// lesson the token " Yes" showed as "“是”" in the output and postprocess
// boxes (the catalogue's "yes" of a yes/no field), beside "Yes" in the
// tokens panel. An engine's yes/no answer is still said in the language.
TEST_CASE("format: a token and the generated text are shown as the model wrote them, in any language") {
    const ModelDescription& llm = model_description("llm");
    ui::set_frame_language("zh");
    TraceEvent out;
    out.stage = Stage::output;
    out.out(llm::keys::top1_piece, std::string(" Yes"));
    out.out(llm::keys::top1_prob, 0.22);
    CHECK(ui::headline_text(out, &llm) == "\u201c Yes\u201d p = 0.22");
    // Just under 1 at two digits: not "p = 1", which reads as certainty.
    TraceEvent sure;
    sure.stage = Stage::output;
    sure.out(llm::keys::top1_piece, std::string(" looked"));
    sure.out(llm::keys::top1_prob, 0.99999);
    CHECK(ui::headline_text(sure, &llm) == "\u201c looked\u201d p > 0.99");
    sure.outputs[1].value = 1.0;
    CHECK(ui::headline_text(sure, &llm) == "\u201c looked\u201d p = 1");
    TraceEvent pp;
    pp.stage = Stage::postprocess;
    pp.out(llm::keys::token_piece, std::string("No"));
    pp.out(llm::keys::stop, std::string("yes"));
    CHECK(ui::headline_text(pp, &llm) == "\u201cNo\u201d");
    CHECK(ui::field_text(pp.outputs[0], Stage::postprocess, &llm) == "No");
    CHECK(ui::field_text(pp.outputs[1], Stage::postprocess, &llm) == "\u662f");  // the engine's "yes"
    TraceEvent rs;
    rs.stage = Stage::respond;
    rs.out(sixstep::keys::text, std::string("Yes"));
    CHECK(ui::headline_text(rs.outputs, llm.headline(Stage::respond), Stage::respond, &llm) == "Yes");
    ui::set_frame_language("");
}

// The text's size follows the screen's height, but no more than that of a
// 16:9 screen as wide: a line holds as many characters at 1024x768 (a 4:3
// projector) and 1280x800 (a 16:10 laptop) as at 1280x720.
TEST_CASE("fonts: the default size follows the height of a 16:9 screen as wide, no more") {
    CHECK(ui::default_font_px(1280, 720) == doctest::Approx(23.0));
    CHECK(ui::default_font_px(1920, 1080) == doctest::Approx(34.5));
    CHECK(ui::default_font_px(1366, 768) == doctest::Approx(23.0 * 768 / 720));  // wide enough: by height
    CHECK(ui::default_font_px(2560, 1080) == doctest::Approx(34.5));             // wider still: by height
    CHECK(ui::default_font_px(1024, 768) == doctest::Approx(23.0 * 576 / 720));  // 4:3: as at 1024x576
    CHECK(ui::default_font_px(1280, 800) == doctest::Approx(23.0));              // 16:10: as at 1280x720
    CHECK(ui::default_font_px(720, 1280) == doctest::Approx(23.0 * 405 / 720));  // portrait
    // Characters per line: 1024x768 like 1280x720, where by height alone it had a quarter fewer.
    CHECK(1024 / ui::default_font_px(1024, 768) == doctest::Approx(1280 / 23.0));
    CHECK(ui::default_font_px(0, 0) == doctest::Approx(23.0));  // no size yet (a minimized window)
}

TEST_CASE("layout: the six boxes fit the diagram, in order, without overlapping") {
    for (auto [w, h] : {std::pair{1280.0f, 720.0f}, std::pair{1920.0f, 1080.0f}, std::pair{1024.0f, 768.0f}}) {
        const float f = ui::default_font_px(static_cast<int>(w), static_cast<int>(h));
        const ui::Layout l = ui::compute_layout(w, h, f, 3, 1);
        CHECK(l.diagram.bottom() < l.narration.y);
        CHECK(l.narration.right() < l.inspector.x);
        CHECK(l.knobs.bottom() <= l.log.y);
        for (int i = 0; i < 6; ++i) {
            const ui::Rect b = ui::stage_box(l.diagram, i, f);
            CHECK(b.x >= l.diagram.x);
            CHECK(b.right() <= l.diagram.right());
            CHECK(b.bottom() <= l.diagram.bottom());
            if (i > 0) CHECK(b.x > ui::stage_box(l.diagram, i - 1, f).right());
        }
    }
}

// At a large font the knobs' rows ran over the key hints (lesson 10's three
// knobs at 1280x720 and 1.6x), and the narration kept one line.
TEST_CASE("layout: the knobs stay above the key hints and leave the narration half the column, at any font") {
    for (float scale : {1.0f, 1.2f, 1.4f, ui::max_font_scale})
        for (int rows : {1, 3, 6, 12}) {
            CAPTURE(scale);
            CAPTURE(rows);
            const float f = ui::default_font_px(1280, 720) * scale;
            const ui::Layout l = ui::compute_layout(1280, 720, f, rows, 1);
            CHECK(l.knobs.bottom() <= l.log.y);
            CHECK(l.narration.bottom() < l.knobs.y);
            CHECK(l.narration.h >= l.knobs.h);
            // Room enough: every row shown, as before.
            if (scale == 1.0f && rows <= 3) CHECK(l.knobs.h == doctest::Approx(std::round(f * (2.0f + 1.75f * rows))));
        }
}

// Half the column still left lesson 10's four lines of narration one at
// 1024x768 and 1.6x: the knobs give it the room it needs at its smallest
// size, down to one row of their own, and take their rows where it is short.
TEST_CASE("layout: the knobs leave the narration the height it needs, down to one row") {
    const float f = ui::default_font_px(1024, 768) * ui::max_font_scale;
    const ui::Layout half = ui::compute_layout(1024, 768, f, 3, 1);
    const float column = half.knobs.bottom() - half.narration.y;
    const ui::Layout needs = ui::compute_layout(1024, 768, f, 3, 1, false, column * 0.7f);
    CHECK(needs.narration.h == doctest::Approx(column * 0.7f).epsilon(0.01));
    CHECK(needs.knobs.h < half.knobs.h);
    CHECK(needs.knobs.bottom() == half.knobs.bottom());
    const ui::Layout all = ui::compute_layout(1024, 768, f, 3, 1, false, column);
    CHECK(all.knobs.h == doctest::Approx(std::round(f * 3.75f)));  // one row, the rest scrolls
    CHECK(all.knobs.bottom() == half.knobs.bottom());
    const ui::Layout little = ui::compute_layout(1024, 768, f, 3, 1, false, 100);
    CHECK(little.knobs.h == half.knobs.h);  // a short narration: the knobs keep their rows
}

// A short chart's y axis: its labels never overlap (lesson 13's 17-px bar
// charts wrote 100, 50 and 0 over each other), and a tall one keeps its
// round steps.
TEST_CASE("plot: axis ticks no closer than their labels, the top alone on a very short axis") {
    const float label = 18.4f;
    CHECK(ui::plot::axis_ticks(0, 100, 17, label) == std::vector<double>{100});
    CHECK(ui::plot::axis_ticks(0, 100, 40, label) == std::vector<double>{0, 100});
    CHECK(ui::plot::axis_ticks(0, 100, 200, label) == std::vector<double>{0, 25, 50, 75, 100});
    CHECK(ui::plot::axis_ticks(0, 1.5, 30, label) == std::vector<double>{0, 1.5});  // no round step below the top
    for (float length = 1; length < 400; length += 3.5f)
        for (double hi : {1.0, 1.5, 7.3, 20.0, 100.0, 2190.0}) {
            CAPTURE(length);
            CAPTURE(hi);
            const std::vector<double> t = ui::plot::axis_ticks(0, hi, length, label);
            REQUIRE(!t.empty());
            for (std::size_t i = 1; i < t.size(); ++i) CHECK((t[i] - t[i - 1]) / hi * length >= label);
        }
}

// The overflow check reads text drawn straight into a pane's draw list (chart
// labels): past the pane's edge, or over or against another label, is a
// line; labels a few pixels apart, or each in its own pane, are not.
// DefaultFont's context with a frame begun: no GL, so panes are laid out and
// their text checked, nothing drawn.
struct HeadlessFrame : DefaultFont {
    explicit HeadlessFrame(ImVec2 display) {
        ImGuiIO& io = ImGui::GetIO();
        io.DisplaySize = display;
        io.IniFilename = nullptr;  // no imgui.ini left in the working folder
        ImGui::NewFrame();
    }
    ~HeadlessFrame() { ImGui::EndFrame(); }
};

TEST_CASE("overflow: drawn text past the pane or over other text is named, text apart is not") {
    const HeadlessFrame frame(ImVec2(400, 300));
    ImFont* font = frame.font;
    std::vector<std::string> lines;
    ui::set_overflow_sink(&lines);
    auto pane = [&](const char* name, ImVec2 at, const std::function<void(ImDrawList*, ImVec2)>& draw) {
        ImGui::SetNextWindowPos(at);
        ImGui::SetNextWindowSize(ImVec2(180, 120));
        ImGui::Begin(name, nullptr, ImGuiWindowFlags_NoDecoration);
        draw(ImGui::GetWindowDrawList(), ImGui::GetWindowPos());
        ui::check_overflow();
        ImGui::End();
    };
    const ImU32 ink = IM_COL32(0, 0, 0, 255);
    const float wide = font->CalcTextSizeA(13, 1e9f, 0, "canary ships").x;
    pane("##apart", ImVec2(0, 0), [&](ImDrawList* dl, ImVec2 o) {
        ui::add_text(dl, font, 13, ImVec2(o.x + 10, o.y + 10), ink, "canary ships");
        ui::add_text(dl, font, 13, ImVec2(o.x + 10 + wide + 6, o.y + 10), ink, "rollback");  // 6 px apart
        ui::add_text(dl, font, 13, ImVec2(o.x + 10, o.y + 40), ink, "100");
        ui::add_text(dl, font, 13, ImVec2(o.x + 10, o.y + 60), ink, "0");  // a line and more below
    });
    CHECK(lines.empty());
    pane("##against", ImVec2(200, 0), [&](ImDrawList* dl, ImVec2 o) {
        ui::add_text(dl, font, 13, ImVec2(o.x + 10, o.y + 10), ink, "canary ships");
        ui::add_text(dl, font, 13, ImVec2(o.x + 10 + wide + 1, o.y + 12), ink, "rollback");  // 1 px apart
    });
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "##against: text \"canary ships\" and \"rollback\" drawn over or against each other");
    lines.clear();
    pane("##past", ImVec2(0, 150), [&](ImDrawList* dl, ImVec2 o) {
        ui::add_text(dl, font, 13, ImVec2(o.x + 170, o.y + 10), ink, "TTFT 23.1 ms");
    });
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind("##past: text \"TTFT 23.1 ms\" drawn past the right edge by ", 0) == 0);
    ui::set_overflow_sink(nullptr);
}

// Lesson 14's keep-warm chart at 1024x768 wrote a warm request's "0.989"
// over its neighbour's "0.995": bars narrower than their values. Values
// that do not fit side by side take turns a line higher; wide apart, every
// value stays on its bar's top.
TEST_CASE("plot: grouped bars' values too wide for their bars are staggered, never drawn over each other") {
    const HeadlessFrame frame(ImVec2(1200, 400));
    std::vector<std::string> lines;
    ui::set_overflow_sink(&lines);
    const std::vector<std::string> gaps{"0 s", "20 s", "300 s (cold)", "5 s", "900 s (cold)", "30 s"};
    const ui::plot::Series cold{"unloads when idle", 0x3366CC, {0.989, 0.995, 3.2, 0.991, 3.1, 0.993}};
    const ui::plot::Series warm{"kept warm", 0xCC6633, {0.995, 0.989, 0.994, 0.990, 0.992, 0.988}};
    ui::plot::Frame narrow, wide;
    auto pane = [&](const char* name, float x, float width, ui::plot::Frame* f) {
        ImGui::SetNextWindowPos(ImVec2(x, 0));
        ImGui::SetNextWindowSize(ImVec2(width, 300));
        ImGui::Begin(name, nullptr, ImGuiWindowFlags_NoDecoration);
        ui::begin_text_capture();
        *f = ui::plot::grouped_bars(ImVec2(width - 20, 200), gaps, {cold, warm}, "ms");
        const std::string text = ui::end_text_capture();
        for (const char* v : {"0.989", "0.995", "3.2", "0.988", "900 s (cold)", "30 s"}) CHECK_MESSAGE(text.find(v) != std::string::npos, v);
        ui::check_overflow();
        ImGui::End();
    };
    auto fits = [&] {
        std::string all;
        for (const std::string& line : lines) all += "\n  " + line;
        lines.clear();
        return all;
    };
    pane("##narrow", 0, 260, &narrow);  // 6 groups of 2 in ~200 px: ~17 px a bar
    CHECK(fits() == "");
    pane("##wide", 300, 880, &wide);
    CHECK(fits() == "");
    CHECK(narrow.y1 >= 3.2);
    CHECK(narrow.height() < wide.height());  // the narrow chart's names on more lines than one
    ui::set_overflow_sink(nullptr);
}

// At font scale 1.4 on a 1024x768 projector the charts were left strips a
// few pixels tall, every bar the same height: a plot keeps a line and a half
// of room, and the pane scrolls to it.
TEST_CASE("plot: a chart given less than a line and a half keeps that much") {
    const HeadlessFrame frame(ImVec2(600, 400));
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(400, 300));
    ImGui::Begin("##strip", nullptr, ImGuiWindowFlags_NoDecoration);
    const ui::plot::Frame strip = ui::plot::begin(ImVec2(300, 12), 0, 1, 0, 1, 0, 0, 0xFFFFFF);
    const ui::plot::Frame roomy = ui::plot::begin(ImVec2(300, 200), 0, 1, 0, 1, 0, 0, 0xFFFFFF);
    CHECK(strip.height() >= ImGui::GetFontSize() * 1.5f - 1);
    CHECK(roomy.height() > 150);  // room enough: as given
    ImGui::End();
}

// Two bars side by side whose values touch: the taller bar's value is the
// one lifted, so the higher number is never written lower. Written left to
// right, a short bar's 11.9k went up over its taller neighbour's 14.5k.
TEST_CASE("plot: of two touching bar values, the taller bar's is written higher") {
    const HeadlessFrame frame(ImVec2(600, 400));
    auto y_of = [](const std::string& text) {
        for (const ui::PlacedText& p : ui::captured_placements())
            if (p.text == text) return p.min.y;
        FAIL("no label " << text);
        return 0.0f;
    };
    for (const bool taller_first : {true, false}) {
        CAPTURE(taller_first);
        const ui::plot::Series a{"measured", 0x3366CC, {taller_first ? 12400.0 : 11900.0}};
        const ui::plot::Series b{"predicted", 0xCC6633, {taller_first ? 11900.0 : 12400.0}};
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImVec2(120, 300));
        ImGui::Begin(taller_first ? "##taller-first" : "##taller-second", nullptr, ImGuiWindowFlags_NoDecoration);
        ui::begin_text_capture();
        ui::plot::grouped_bars(ImVec2(100, 200), {"F16"}, {a, b}, "tok/s");
        ui::end_text_capture();
        ImGui::End();
        // The case drawn: two values too wide to sit side by side at one height.
        CHECK(y_of("12.4k") < y_of("11.9k"));
    }
}

// A value wider than its bar, beside a taller bar: it moves aside, off the
// taller bar's body, and stays on its own bar's top ("1.72万" was written on
// the Q4_0 bar beside it).
TEST_CASE("plot: a bar's value wider than its bar keeps off a taller neighbour, on its own bar's top") {
    const HeadlessFrame frame(ImVec2(600, 400));
    const ui::plot::Series a{"measured", 0x3366CC, {9979, 15900}};
    const ui::plot::Series b{"predicted", 0xCC6633, {9979, 35400}};
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(200, 300));
    ImGui::Begin("##aside", nullptr, ImGuiWindowFlags_NoDecoration);
    ui::begin_text_capture();
    const ui::plot::Frame f = ui::plot::grouped_bars(ImVec2(150, 200), {"F16", "Q8_0"}, {a, b}, "tok/s");
    ui::end_text_capture();
    ImGui::End();
    const ui::PlacedText* label = nullptr;
    for (const ui::PlacedText& p : ui::captured_placements())
        if (p.text == "15.9k") label = &p;
    REQUIRE(label);
    const float taller_left = f.px(1.5);  // the second group's second bar starts half way along it
    REQUIRE(label->max.x - label->min.x > taller_left - f.px(1.12));  // the case: wider than its bar
    CHECK(label->max.x <= taller_left);
    CHECK(label->max.y <= f.py(15900));  // over its own bar
    CHECK(label->max.y > f.py(35400));   // not lifted over the taller one
}

// One chart's values alike: a measured 2 ms beside 2.04 ms reads "2.00"
// (lesson 14 wrote "2" there), a count stays whole, and four digits beside
// five are in k (lesson 12: "6150" beside "11.6k").
TEST_CASE("plot: a bar chart writes its values alike") {
    const HeadlessFrame frame(ImVec2(800, 400));
    const auto texts = [](const std::vector<ui::plot::Series>& series) {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImVec2(700, 300));
        ImGui::Begin("##alike", nullptr, ImGuiWindowFlags_NoDecoration);
        ui::begin_text_capture();
        ui::plot::grouped_bars(ImVec2(650, 200), {"a", "b"}, series, "ms");
        ui::end_text_capture();
        ImGui::End();
        std::set<std::string> out;
        for (const ui::PlacedText& p : ui::captured_placements()) out.insert(p.text);
        return out;
    };
    const auto measured = texts({{"cold", 0x3366CC, {2.0, 2.04}}, {"warm", 0xCC6633, {0, 17.71}}});
    for (const char* t : {"2.00", "2.04", "0", "17.7"}) CHECK_MESSAGE(measured.count(t), t);
    // A series of counts beside a measured one stays whole (k + 1 beside tokens per pass).
    const auto beside = texts({{"per pass", 0x3366CC, {1.88, 6.4}}, {"k + 1", 0xCC6633, {2, 9}}});
    for (const char* t : {"1.88", "6.40", "2", "9"}) CHECK_MESSAGE(beside.count(t), t);
    const auto counts = texts({{"n", 0x3366CC, {2, 40}}, {"m", 0xCC6633, {3, 7}}});
    for (const char* t : {"2", "40", "3", "7"}) CHECK_MESSAGE(counts.count(t), t);
    const auto large = texts({{"tok/s", 0x3366CC, {6150, 21800}}, {"predicted", 0xCC6633, {950, 11600}}});
    for (const char* t : {"6.15k", "21.8k", "950", "11.6k"}) CHECK_MESSAGE(large.count(t), t);
}

// A chart's dashed rule through the middle of a text is named; one that runs
// just under a label (the rule's own) is not.
TEST_CASE("overflow: a chart's line through a text is named, a line under its label is not") {
    const HeadlessFrame frame(ImVec2(400, 300));
    std::vector<std::string> lines;
    ui::set_overflow_sink(&lines);
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(300, 200));
    ImGui::Begin("##chart", nullptr, ImGuiWindowFlags_NoDecoration);
    const ui::plot::Frame f = ui::plot::begin(ImVec2(260, 150), 0, 1, 0, 1, 30, 20);
    ui::plot::hline(f, 0.5, 0x16A34A, "TPOT 0.3 ms");
    const float y = f.py(0.5), h = ImGui::GetFontSize() * 0.8f;
    ui::plot::label(ImVec2(f.px(0.1), y - h * 0.5f), "TTFT 29.6 ms", 0xDC2626, 0, 0.8f);  // through it
    ui::plot::label(ImVec2(f.px(0.1), f.py(0.9)), "far above", 0xDC2626, 0, 0.8f);
    ui::check_overflow();
    ImGui::End();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "##chart: text \"TTFT 29.6 ms\" crossed by a line drawn across the chart");
    ui::set_overflow_sink(nullptr);
}

// A dashed curve of many short segments (lesson 15's 20 tok/s line on a log
// axis) started a dash in every segment, and segments shorter than a dash
// drew it solid. One pattern runs along the whole line: about half of it is
// drawn, whatever its segments.
TEST_CASE("plot: a dashed line of short segments is dashed, not solid") {
    const HeadlessFrame frame(ImVec2(400, 300));
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(300, 200));
    ImGui::Begin("##dashes", nullptr, ImGuiWindowFlags_NoDecoration);
    const ui::plot::Frame f = ui::plot::begin(ImVec2(260, 150), 0, 1, 0, 1, 30, 20);
    std::vector<double> xs, ys;
    for (int i = 0; i <= 120; ++i) xs.push_back(i / 120.0), ys.push_back(0.5);  // 1.9 px a segment
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const int before = dl->VtxBuffer.Size;
    ui::plot::line(f, xs, ys, 0x111111, 2.0f, false);
    const int solid = dl->VtxBuffer.Size - before;
    ui::plot::dashed_line(f, xs, ys, 0x111111, 2.0f);
    const int dashed = dl->VtxBuffer.Size - before - solid;
    ImGui::End();
    CHECK(solid > 0);
    CHECK(dashed < solid * 0.7);
    CHECK(dashed > solid * 0.3);
}

// At a large font a log axis's decades ran together under lesson 15's chart
// ("0.1 ms1 ms", "10 ms100 ms"): a label that would touch the one before it
// is left out, and the ones drawn are apart.
TEST_CASE("plot: x-axis labels that would touch are left out, the first kept") {
    const HeadlessFrame frame(ImVec2(400, 300));
    std::vector<std::string> lines;
    ui::set_overflow_sink(&lines);
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(300, 200));
    ImGui::Begin("##axis", nullptr, ImGuiWindowFlags_NoDecoration);
    const ui::plot::Frame f = ui::plot::begin(ImVec2(110, 100), -1, 2, 0, 1, 10, 30);  // 33 px a decade
    ui::begin_text_capture();
    ui::plot::x_axis(f, {-1, 0, 1, 2}, {"0.1 ms", "1 ms", "10 ms", "100 ms"});
    const std::string text = ui::end_text_capture();
    ui::check_overflow();
    ImGui::End();
    ui::set_overflow_sink(nullptr);
    CHECK(text.find("0.1 ms") != std::string::npos);
    CHECK(text.rfind("0.1 ms\n10 ms", 0) == 0);  // "1 ms" would touch "0.1 ms": left out
    std::string all;
    for (const std::string& line : lines) all += "\n  " + line;
    CHECK(all == "");
}

// Lesson 05's second decode step on a short timeline: TPOT's line near the
// chart's top ran through TTFT's label. The label goes to the line over the
// frame; nothing is drawn over anything else, and no line through a text.
TEST_CASE("timeline: on a short chart TTFT's label stays clear of TPOT's line") {
    const HeadlessFrame frame(ImVec2(700, 400));
    app::Snapshot snap;
    snap.has_lesson = true;
    llm::LlmView view;
    view.tokenize_ms = 0.17;
    view.n_prompt = 149;
    view.tokens.resize(151);
    view.passes = {{true, 0, 149, 29.3, true, 0.3}, {false, 149, 1, 0.40, true, 0.02}, {false, 150, 1, 0.38, true, 0.02}};
    view.ttft_ms = 29.6;
    view.tpot_ms = 0.41;
    snap.state.panels.view = view;
    app::Session session;
    ui::ViewState v;
    v.font_px = 20;
    std::vector<std::string> lines;
    ui::set_overflow_sink(&lines);
    ui::begin_text_capture();
    ui::draw_timeline_panel(snap, v, session, ui::Rect{0, 0, 640, 130});
    const std::string text = ui::end_text_capture();
    ui::set_overflow_sink(nullptr);
    CHECK(text.find("TTFT 29.6 ms") != std::string::npos);
    CHECK(text.find("TPOT 0.41 ms") != std::string::npos);
    std::string all;
    for (const std::string& line : lines) all += "\n  " + line;
    CHECK(all == "");
}

// A stage card with two values says what each is, in their order; with one,
// that one's caption.
TEST_CASE("stage cards: each value shown has its caption under it") {
    namespace k = server::endpoint_keys;
    ModelDescription d = server::endpoint_description();
    for (Headline& h : d.headlines)
        if (h.stage == Stage::postprocess)
            h.fields = {{k::ttft_p90_growth, 3, false, "\u00d7", "p90 growth"},
                        {k::worst_p90_factor, 3, false, "", "vs predicted"}};
    TraceEvent ev;
    ev.stage = Stage::postprocess;
    ev.out(k::ttft_p90_growth, 3.24);
    CHECK(ui::headline_label(ev, &d) == "p90 growth");
    ev.out(k::worst_p90_factor, 5.24);
    CHECK(ui::headline_text(ev, &d) == "3.24\u00d7 \u00b7 5.24");
    CHECK(ui::headline_label(ev, &d) == "p90 growth \u00b7 vs predicted");
    // The real server's own card: one ratio with its unit and words.
    CHECK(ui::headline_text(ev, &server::endpoint_description()) == "3.24\u00d7");
    CHECK(ui::headline_label(ev, &server::endpoint_description()) == "TTFT p90 growth");
}

// The output card's probability says what it is: "“ mat” 0.43" read as two
// unrelated things on the card and on the pill.
TEST_CASE("stage cards: the next token's probability is written p = on the output card") {
    TraceEvent ev;
    ev.stage = Stage::output;
    ev.out(llm::keys::top1_piece, std::string(" mat"));
    ev.out(llm::keys::top1_prob, 0.4312);
    CHECK(ui::headline_text(ev, &llm::LlmModel::describe()) == "\u201c mat\u201d p = 0.43");
}

// A card of alternatives shows the first present: the serving lab's forward
// stage gives a queue's service time, not the 156 ms the whole experiment
// took ("Measure the service time" read the experiment's wall time).
TEST_CASE("stage cards: a headline of alternatives shows the first field present, with its caption") {
    const ModelDescription& d = serving::ServingModel::describe();
    TraceEvent ev;
    ev.stage = Stage::forward;
    ev.out(serving::keys::wall_ms, 156.0, "ms");
    CHECK(ui::headline_text(ev, &d) == "156 ms");
    CHECK(ui::headline_label(ev, &d) == "real time");
    ev.out(serving::keys::service_ms, 0.241, "ms");
    CHECK(ui::headline_text(ev, &d) == "0.241 ms");
    CHECK(ui::headline_label(ev, &d) == "service time");
}
