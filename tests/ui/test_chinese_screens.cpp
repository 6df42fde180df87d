// A Chinese lesson's screen is Chinese: every bundled lesson under
// lessons/zh/ is rendered off-screen at every step, and the text the window
// put on the screen (text_capture.h) is read word by word. An English word
// may appear only when the lesson author wrote it (the lesson file), when
// the model said it (token pieces, the generated text), or when it is a term
// Chinese texts keep in English (the catalogue's own list). And every string the window
// asked the catalogue for had a translation. ZH_DUMP=1 prints each step's
// screen text on stderr, to see a failure's context.
#include <doctest/doctest.h>

#include "english_words.h"
#include "temp_dir.h"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "app/core/catalogue.h"
#include "app/core/interpreter.h"
#include "app/core/session.h"
#include "app/ui/gui.h"
#include "app/ui/i18n.h"

namespace fs = std::filesystem;
using namespace sixstep;

namespace {

// What the model itself said at this step: its token pieces and its answer
// (the delivery model answers in its `lang` setting). A serving lab's answer
// is the engine's sentence of measured numbers, which the screen translates:
// not the model's words.
std::string model_text(const app::Snapshot& s) {
    std::string t;
    if (s.state.response && !s.state.response->engine_words) t += s.state.response->text + " ";
    const app::PanelsState& p = s.state.panels;
    if (!p.view) return t;
    for (const auto& tok : p.view->tokens) t += tok.piece + " ";
    for (const auto& stage : p.view->next.chain)
        for (const auto& c : stage.rows) t += c.piece + " ";
    for (const auto& row : p.lens)
        for (const auto& c : row.top) t += c.piece + " ";
    if (p.kv_experiment)
        for (const auto& piece : p.kv_experiment->pieces) t += piece + " ";
    return t;
}

}  // namespace

namespace {

// Renders one lesson at every step in `language` and returns the English
// words on its screens that neither the lesson, the model nor the catalogue's
// kept list explains, each with the first step it was seen at.
std::map<std::string, std::string> stray_words(const fs::path& lesson, const std::string& language) {
    const app::Catalogue* zh = app::catalogue("zh");
    REQUIRE(zh != nullptr);
    const std::set<std::string> authored = test::english_words(test::read_text_file(lesson));
    std::set<std::string> spoken;  // the model's words, step by step
    std::map<std::string, std::string> stray;
    ui::ScreenshotOptions o;
    o.lesson_path = lesson.string();
    o.language = language;
    // No out_dir, no on_frame: the screens' text needs no pixels.
    o.on_text = [&](int step, const std::string& screen, const app::Snapshot& shown) {
        for (const std::string& w : test::english_words(model_text(shown))) spoken.insert(w);
        if (std::getenv("ZH_DUMP")) std::fprintf(stderr, "=== %s step %d\n%s\n", lesson.filename().c_str(), step, screen.c_str());
        CHECK_MESSAGE(screen.size() > 100, lesson.filename() << " step " << step << ": no text captured");
        for (const std::string& w : test::english_words(screen))
            if (!zh->keeps(w) && !authored.count(w) && !spoken.count(w) && !stray.count(w))
                stray[w] = lesson.filename().string() + " step " + std::to_string(step);
    };
    REQUIRE(ui::render_screenshots(o) == 0);
    return stray;
}

// Draws each lesson in `language` ("": its own) and checks its screens:
// no stray English word, and no string the catalogue lacks.
void check_screens(const std::vector<fs::path>& lessons, const std::string& language) {
    ui::clear_untranslated();
    std::string report;
    for (const fs::path& lesson : lessons)
        for (const auto& [word, where] : stray_words(lesson, language))
            report += "\n  \"" + word + "\" on " + where;
    CHECK_MESSAGE(report.empty(), "English words on screens drawn in Chinese:" << report);
    std::string missing;
    for (const std::string& en : ui::untranslated()) missing += "\n  \"" + en + "\"";
    CHECK_MESSAGE(missing.empty(), "strings without a Chinese translation:" << missing);
}

}  // namespace

TEST_CASE("screens: a Chinese lesson shows no English the catalogue should have translated") {
    const std::vector<fs::path> lessons = test::chinese_lessons(SIXSTEP_SOURCE_DIR);
    REQUIRE(lessons.size() >= 4);
    check_screens(lessons, "");
}

// The English lessons drawn in Chinese: every panel's words — the serving
// lab's charts included, which no Chinese lesson shows yet — have their
// entries, so a Chinese version of any lesson starts with a Chinese window.
TEST_CASE("screens: every lesson's window, drawn in Chinese, finds its words in the catalogue") {
    std::vector<fs::path> lessons;
    for (const auto& e : fs::directory_iterator(fs::path(SIXSTEP_SOURCE_DIR) / "lessons"))
        if (e.path().extension() == ".yaml") lessons.push_back(e.path());
    std::sort(lessons.begin(), lessons.end());
    REQUIRE(lessons.size() >= 17);
    check_screens(lessons, "zh");
}
