// The app's own words in the lesson's language. English is the key; a
// Chinese lesson gets Chinese labels (the font atlas adds their glyphs).
#pragma once
#include <string>
#include <string_view>

namespace sixstep::ui {

// The translation of an English UI string for `lang` ("zh"), or the string itself.
const char* tr(std::string_view lang, const char* en);
// Every translated string, for building glyph ranges.
std::string translated_text(std::string_view lang);

}  // namespace sixstep::ui
