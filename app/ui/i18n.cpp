#include "app/ui/i18n.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "app/core/catalogue.h"

namespace sixstep::ui {

namespace {

// Translations made so far, by English text. Values are node-stable, so a
// pointer handed out stays valid while the entry lives; the map is emptied
// only between frames, when it has grown (timings change every step).
std::unordered_map<std::string, std::string>& kept() {
    static std::unordered_map<std::string, std::string> map;
    return map;
}

std::string& language() {
    static std::string lang;
    return lang;
}

std::set<std::string>& missing() {
    static std::set<std::string> set;
    return set;
}

}  // namespace

const char* tr(std::string_view lang, const std::string& en) {
    if (!app::catalogue(lang)) return en.c_str();
    auto& map = kept();
    if (auto it = map.find(en); it != map.end()) return it->second.c_str();
    std::optional<std::string> t = app::translate(lang, en);
    if (!t) {
        // Text with Chinese in it is a translation already (a title passed
        // through tr() twice), or the lesson's own words: not missing.
        const bool has_cjk = std::any_of(en.begin(), en.end(), [](char c) {
            const auto b = static_cast<unsigned char>(c);
            return b >= 0xE3 && b <= 0xE9;  // UTF-8 lead bytes of U+3000..U+9FFF
        });
        if (!has_cjk) missing().insert(en);
        t = en;
    }
    return map.emplace(en, std::move(*t)).first->second.c_str();
}

const char* tr(std::string_view lang, const char* en) {
    if (!app::catalogue(lang)) return en;
    return tr(lang, std::string(en));
}

void set_frame_language(std::string_view lang) { language() = lang; }
std::string_view frame_language() { return language(); }
const char* tr(const char* en) { return tr(language(), en); }
const char* tr(const std::string& en) { return tr(language(), en); }

std::string tr_value(const std::string& v) {
    if (!app::catalogue(language())) return v;
    std::optional<std::string> t = app::translate(language(), v);
    return t ? *t : v;
}

void tr_new_frame() {
    if (kept().size() > 4096) kept().clear();
}

std::string translated_text(std::string_view lang) { return app::all_translations(lang); }

const std::set<std::string>& untranslated() { return missing(); }
void clear_untranslated() { missing().clear(); }

}  // namespace sixstep::ui
