// Numbers and fields as the class reads them: a real minus sign (−2, not -2),
// units after the value, long text shortened with an ellipsis to fit a box.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <imgui.h>

#include "app/core/line_breaks.h"
#include "pipeline/core/model.h"
#include "pipeline/core/model_description.h"
#include "pipeline/core/trace.h"

namespace sixstep::ui {

std::string pretty_number(double x, int precision = 6);  // 11, 6.4, −2, 1.2e+06
std::string pretty_value(const Value& v, int precision = 6);
// A value that may be tiny or huge, never with a computer's exponent:
// "0.0123", "0.00058", "6.99×10⁻⁶" (not "6.99e-06"), "0".
std::string sci_text(double x, int digits = 3);
// As the narration's out: lines print it (shown_number): below a thousandth
// always a power of ten, so a column of small numbers reads alike
// (3.78×10⁻⁴ beside −2.09×10⁻⁶, not 0.000378), with a real minus sign.
std::string shown_text(double x, int digits = 3);
// Plain decimals to `digits` significant digits however many zeros lead,
// for a column that shrinks tenfold a row (lesson 14's load share: "0.0014",
// "0.00014", "0.000014", not "1.4×10⁻⁵" below them); a power of ten only
// past a billionth.
std::string decimal_text(double x, int digits = 2);
// Two figures compared ("31.0% vs 24.7%"): three significant digits each,
// trailing zeros kept, unless both are whole (counts: "24 vs 0").
std::pair<std::string, std::string> compared_text(double a, double b);
// A large count as the lesson's language groups digits: "1,000,000 requests"
// in English, "100万" in Chinese (万 = 10⁴, 亿 = 10⁸), three significant
// digits past 万. Under 10,000 as pretty_number writes it.
std::string count_text(double x);
// The same in few characters, for an axis's ticks: "191k", "1.85k", "2.5M";
// in Chinese "19.1万", "1853", "2.5亿".
std::string short_count_text(double x);
std::string field_text(const Field& f, int precision = 6);  // "3 km", "[5, 2, 10, −2]"
std::string field_label(const Field& f);                    // label, else key
// field_text, but the model's own text (PathInfo::verbatim: a token, the
// generated text) as it is, never through the catalogue: the token "Yes" in
// a Chinese lesson is "Yes", not "是".
std::string field_text(const Field& f, Stage stage, const ModelDescription* model, int precision = 6);
// A measured time is worth three significant digits, and never an exponent:
// "3.91", "0.0123", "412", "1235" (not "3.91141"); ms_text adds " ms".
std::string time_text(double x);
std::string ms_text(double ms);

// What a stage shows large, as its model's description says (Headline):
// "3 km · 0 · 0", "[5, 2, 10, −2]", "“ mat” p = 0.43". Without a headline, or
// when none of its fields is there, the first output.
std::string headline_text(const TraceEvent& ev, const ModelDescription* model);
// The same for fields kept from an earlier request (an answer card).
std::string headline_text(const std::vector<Field>& fields, const Headline* headline, Stage stage = Stage::respond,
                          const ModelDescription* model = nullptr);
// What a headline of one field is, for a caption under it: its caption
// ("median TTFT"); empty when it has none, or when the headline shows
// several fields or none.
std::string headline_label(const TraceEvent& ev, const ModelDescription* model);

// A response as the room reads it: the engine's own sentences (a serving
// lab's finding) in the lesson's language, the model's words as they are.
std::string response_text(const Response& r);

// YAML block text as the room reads it (app/core/line_breaks.h): the author
// wrapped at 80 columns, the screen wraps at its own width.
using app::reflow;

// Breaks text into lines no wider than `width`: at spaces for Latin text,
// between any two characters for Chinese — except that closing punctuation
// (。，、；：！？）」”) never starts a line. "\n" always breaks.
std::vector<std::string> wrap_lines(ImFont* font, float size, std::string_view text, float width);

// wrap_lines' lines made even: the narrowest width that keeps as many lines,
// so a title never ends on one orphaned character or word ("…变回文" over
// "字"; CSS's text-wrap: balance). Past four lines, wrap_lines' as they are.
std::vector<std::string> balanced_lines(ImFont* font, float size, std::string_view text, float width);

// Text drawn wrapped by wrap_lines at the current font and the width left:
// in place of ImGui's wrapping, which breaks after any point ("0.⏎260") and
// knows no Chinese line rules. The height it takes at `width`, as
// CalcTextSize measures wrapped text.
void text_wrapped(std::string_view text);
float text_wrapped_height(std::string_view text, float width);

// The longest prefix of `text` that fits in `max_width` pixels with "…".
std::string fit_text(ImFont* font, float size, std::string_view text, float max_width);
// The same for a sentence: its longest run of whole clauses (ended by a
// comma, semicolon or colon) that fits with " …", so a finding is never cut
// inside a number or a word; fit_text's cut where not even the first
// clause fits.
std::string fit_clauses(ImFont* font, float size, std::string_view text, float max_width);

}  // namespace sixstep::ui
