// For the tests that read a Chinese lesson's screen or narration for English
// the message catalogue should have translated: the English words of a text,
// and the bundled Chinese lessons.
#pragma once
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace sixstep::test {

// Runs of ASCII letters, digits and _ that start with a letter. Not words:
// numbers ("7.7e-05", "8x"), paths or file names ("/tmp/x/weights.json",
// "assets/data/deliveries.csv", "stories-3m-f16.gguf", a model's name
// "stories-3m-f16"): data, not language;
// and a word cut short by an ellipsis ("instan…"): the rest is not shown.
inline std::set<std::string> english_words(const std::string& text) {
    auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    auto path_char = [&](char c) { return word_char(c) || c == '.' || c == '/' || c == '-'; };
    auto data_file = [](const std::string& run) {
        for (const char* ext : {".gguf", ".csv", ".json", ".yaml"}) {
            const std::string e = ext;
            if (run.size() > e.size() && run.compare(run.size() - e.size(), e.size(), e) == 0) return true;
        }
        // a path, or a model's name ("stories-3m-f16")
        return run.find('/') != std::string::npos ||
               (run.find('-') != std::string::npos && run.find_first_of("0123456789") != std::string::npos &&
                std::isalpha(static_cast<unsigned char>(run.front())));
    };
    std::set<std::string> out;
    size_t i = 0;
    while (i < text.size()) {
        if (!path_char(text[i])) {
            ++i;
            continue;
        }
        size_t end = i;
        while (end < text.size() && path_char(text[end])) ++end;
        if (data_file(text.substr(i, end - i))) {
            i = end;
            continue;
        }
        if (!word_char(text[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < text.size() && word_char(text[j])) ++j;
        const bool cut = text.compare(j, 3, "\u2026") == 0;
        if (std::isalpha(static_cast<unsigned char>(text[i])) && !cut) out.insert(text.substr(i, j - i));
        i = j;
    }
    return out;
}

inline std::string read_text_file(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// lessons/zh/*.yaml, sorted.
inline std::vector<std::filesystem::path> chinese_lessons(const std::filesystem::path& source_dir) {
    std::vector<std::filesystem::path> lessons;
    for (const auto& e : std::filesystem::directory_iterator(source_dir / "lessons" / "zh"))
        if (e.path().extension() == ".yaml") lessons.push_back(e.path());
    std::sort(lessons.begin(), lessons.end());
    return lessons;
}

}  // namespace sixstep::test
