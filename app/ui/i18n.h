// The window's words in the lesson's language, from the message catalogue
// (app/core/catalogue.h). English is the key; a Chinese lesson gets Chinese
// (the font atlas adds their glyphs).
#pragma once
#include <set>
#include <string>
#include <string_view>

namespace sixstep::ui {

// The translation of an English UI string for `lang` ("zh"), or the string
// itself when the catalogue has none (recorded: see untranslated()). The
// pointer stays valid until the next tr_new_frame().
const char* tr(std::string_view lang, const char* en);
const char* tr(std::string_view lang, const std::string& en);

// The lesson's language for this frame (draw_app sets it first): the
// one-argument tr() translates into it.
void set_frame_language(std::string_view lang);
std::string_view frame_language();
const char* tr(const char* en);
const char* tr(const std::string& en);

// A value that may be a word of the catalogue ("yes", "none", "min") or free
// text (a prompt, a path, a token): its translation when the catalogue has
// one, else itself, and never recorded as missing.
std::string tr_value(const std::string& v);

// At the start of each frame: lets tr() drop translations no longer drawn.
void tr_new_frame();

// Every translated string, for building glyph ranges.
std::string translated_text(std::string_view lang);

// A test aid: English strings asked for in a language whose catalogue lacks
// them, since the last clear.
const std::set<std::string>& untranslated();
void clear_untranslated();

}  // namespace sixstep::ui
