// Where text may break into lines, for the window and the terminal alike:
// a lesson's narration joined into paragraphs (reflow), then broken at
// spaces, or between Chinese characters, never inside a number ("0.⏎260"),
// never before a closer ("。", ")") or after an opener ("（"), never between
// a relation and its number ("≤ 0.91"). The window measures characters in
// pixels of its font; the terminal in display columns (a Chinese character
// takes two).
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sixstep::app {

// Lines wrapped in the YAML source joined into paragraphs: blank lines and
// list items ("- ", "* ", "1. ") keep their line, Chinese joins without a space.
std::string reflow(std::string_view text);

// `text` broken into lines no wider than `width`, as `width_of` measures one
// UTF-8 character; a word wider than the line is cut where it must be. Each
// '\n' starts a new line; a blank line stays as an empty one. `cut`, when
// given, is set when a line had to be cut where no break is allowed.
std::vector<std::string> break_lines(std::string_view text, float width,
                                     const std::function<float(std::string_view)>& width_of, bool* cut = nullptr);

// A Chinese, Japanese or Korean character, or full-width punctuation: it may
// break anywhere and takes two columns of a terminal.
bool wide_char(std::string_view ch);
int display_columns(std::string_view text);

// break_lines for a terminal `columns` wide.
std::vector<std::string> break_lines_columns(std::string_view text, int columns);

}  // namespace sixstep::app
