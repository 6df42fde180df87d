// The terminal speaks the lesson's language too: every bundled Chinese lesson
// narrated headless, and its text read word by word. An English word may
// appear only when the lesson author wrote it, when it is a value the engine
// computed (a token, the generated text, a file name), or when it is a term
// Chinese keeps in English (the catalogue's list).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/catalogue.h"
#include "app/core/headless.h"

namespace fs = std::filesystem;
using namespace sixstep;

namespace {

std::set<std::string> words_of(const std::string& text) {
    std::set<std::string> out;
    auto path_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-'; };
    auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t i = 0; i < text.size();) {
        if (!word_char(text[i])) {
            ++i;
            continue;
        }
        // A path or a file name is data, not words: "assets/data/deliveries.csv".
        size_t end = i;
        while (end < text.size() && path_char(text[end])) ++end;
        const std::string run = text.substr(i, end - i);
        auto ends_with = [&](const char* ext) { return run.size() > std::strlen(ext) && run.compare(run.size() - std::strlen(ext), std::string::npos, ext) == 0; };
        if (run.find('/') != std::string::npos || ends_with(".gguf") || ends_with(".csv") || ends_with(".json") || ends_with(".yaml")) {
            i = end;
            continue;
        }
        size_t j = i;
        while (j < text.size() && word_char(text[j])) ++j;
        const bool notation = j - i >= 2 && std::all_of(text.begin() + i + 1, text.begin() + j,
                                                        [](char d) { return std::isdigit(static_cast<unsigned char>(d)); });
        if (std::isalpha(static_cast<unsigned char>(text[i])) && !notation) out.insert(text.substr(i, j - i));
        i = j;
    }
    return out;
}

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
    const fs::path root = fs::path(SIXSTEP_SOURCE_DIR) / "lessons" / "zh";
    std::vector<fs::path> lessons;
    for (const auto& e : fs::directory_iterator(root))
        if (e.path().extension() == ".yaml") lessons.push_back(e.path());
    std::sort(lessons.begin(), lessons.end());
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
        std::ifstream in(lesson);
        std::stringstream authored_text;
        authored_text << in.rdbuf();
        const std::set<std::string> authored = words_of(authored_text.str());
        // Text values the engine computed, not the labels around them.
        std::string values;
        for (const auto& step : outcome.json["steps"])
            for (const auto& ev : step["events"]) {
                computed_text(ev["inputs"], values);
                computed_text(ev["outputs"], values);
            }
        const std::set<std::string> computed = words_of(values);
        std::string stray;
        for (const std::string& w : words_of(narration))
            if (!zh->kept.count(w) && !authored.count(w) && !computed.count(w)) stray += " " + w;
        CHECK_MESSAGE(stray.empty(), "English words in the narration:" << stray);
    }
}
