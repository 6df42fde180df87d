// The terminal speaks the lesson's language too: every bundled Chinese lesson
// narrated headless, and its text read word by word. An English word may
// appear only when the lesson author wrote it, when it is a value the engine
// computed (a token, the generated text, a file name), or when it is a term
// Chinese keeps in English (the catalogue's list).
#include <doctest/doctest.h>

#include "english_words.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "app/core/catalogue.h"
#include "app/core/headless.h"

namespace fs = std::filesystem;
using namespace sixstep;

namespace {

// Every text value of the run's trace (what the engine computed) and every
// field's key (a path the lesson author names in expectations).
void computed_text(const nlohmann::ordered_json& j, std::string& out) {
    if (j.is_string()) out += j.get<std::string>() + "\n";
    else if (j.is_object())
        for (const auto& [key, item] : j.items()) {
            out += key + "\n";
            computed_text(item, out);
        }
    else if (j.is_array())
        for (const auto& item : j) computed_text(item, out);
}

std::string slurp(std::FILE* f) {
    std::string text;
    std::rewind(f);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    return text;
}

}  // namespace

TEST_CASE("narration: a Chinese lesson's terminal narration has no English the catalogue should have translated") {
    const app::Catalogue* zh = app::catalogue("zh");
    REQUIRE(zh != nullptr);
    const std::vector<fs::path> lessons = test::chinese_lessons(SIXSTEP_SOURCE_DIR);
    REQUIRE(lessons.size() >= 4);
    for (const fs::path& lesson : lessons) {
        CAPTURE(lesson.filename().string());
        std::FILE* f = std::tmpfile();
        REQUIRE(f != nullptr);
        const app::LessonOutcome outcome = app::run_lesson(lesson.string(), f, true);
        const std::string narration = slurp(f);
        std::fclose(f);
        REQUIRE(outcome.valid);
        REQUIRE(narration.size() > 500);
        const std::set<std::string> authored = test::english_words(test::read_text_file(lesson));
        // Text values the engine computed, not the labels around them.
        std::string values;
        for (const auto& step : outcome.json["steps"])
            for (const auto& ev : step["events"]) {
                computed_text(ev["inputs"], values);
                computed_text(ev["outputs"], values);
            }
        const std::set<std::string> computed = test::english_words(values);
        std::string stray;
        for (const std::string& w : test::english_words(narration))
            if (!zh->keeps(w) && !authored.count(w) && !computed.count(w)) stray += " " + w;
        CHECK_MESSAGE(stray.empty(), "English words in the narration:" << stray);
    }
}
