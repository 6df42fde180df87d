#include "app/core/lesson_reference.h"

#include <fmt/format.h>

#include "app/core/lesson_paths.h"
#include "pipeline/core/error.h"
#include "pipeline/models.h"

namespace sixstep::app {

namespace {

// A table cell: `|` would end the cell, a line break the row.
std::string cell(std::string s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += "\\|";
        else if (c == '\n') out += ' ';
        else out += c;
    }
    return out;
}

std::string code(const std::string& s) { return s.empty() ? std::string() : "`" + s + "`"; }

}  // namespace

std::string reference_markdown(const ModelDescription& d) {
    std::string out = fmt::format("**Knobs of the {} model** ({}). `request:` takes those that edit the request, "
                                  "`set:` those that edit a setting; `knobs:` lets the class turn any of them.\n\n",
                                  d.kind, cell(d.title));
    out += "| knob | edits | type | values | default | meaning |\n|---|---|---|---|---|---|\n";
    for (const Knob& k : d.knobs) {
        const std::string meaning = k.unit.empty() ? k.meaning : fmt::format("{} [{}]", k.meaning, k.unit);
        out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", code(k.name),
                           k.target == KnobTarget::request ? "request" : "setting", knob_type_name(k.type),
                           cell(k.range_text()), k.default_value.empty() ? "\u2014" : code(k.default_value), cell(meaning));
    }
    out += fmt::format("\n**Paths of the {} model**: what `expect:` can check.\n\n", d.kind);
    out += "| path | type | unit | meaning |\n|---|---|---|---|\n";
    for (const PathInfo& p : ordered_lesson_paths(d))
        out += fmt::format("| {} | {} | {} | {} |\n", code(p.path), value_type_name(p.type), cell(p.unit), cell(p.meaning));
    return out;
}

std::string reference_begin_marker(const std::string& kind) {
    return fmt::format("<!-- BEGIN generated: sixstep paths --markdown --model {} -->", kind);
}

std::string reference_end_marker(const std::string& kind) {
    return fmt::format("<!-- END generated: sixstep paths --markdown --model {} -->", kind);
}

std::string update_reference(const std::string& text, int* sections) {
    const std::string begin_prefix = "<!-- BEGIN generated: sixstep paths --markdown --model ";
    std::string out;
    std::size_t pos = 0;
    int found = 0;
    for (;;) {
        const std::size_t b = text.find(begin_prefix, pos);
        if (b == std::string::npos) break;
        const std::size_t kind_at = b + begin_prefix.size();
        const std::size_t kind_end = text.find(' ', kind_at);
        const std::string kind = text.substr(kind_at, kind_end == std::string::npos ? std::string::npos : kind_end - kind_at);
        const ModelDescription& d = model_description(kind);  // an unknown kind throws
        const std::string begin = reference_begin_marker(kind), end = reference_end_marker(kind);
        if (text.compare(b, begin.size(), begin) != 0)
            throw Error(fmt::format("a marker for the {} model is not \"{}\"", kind, begin));
        const std::size_t e = text.find(end, b + begin.size());
        if (e == std::string::npos) throw Error(fmt::format("\"{}\" has no \"{}\" after it", begin, end));
        // A BEGIN inside the section (a second one pasted in) would be
        // rewritten away, and its END left behind as a stray.
        if (const std::size_t inner = text.find(begin_prefix, b + begin.size()); inner < e)
            throw Error(fmt::format("\"{}\" has another BEGIN marker before its \"{}\": one section per kind, "
                                    "each closed before the next",
                                    begin, end));
        out += text.substr(pos, b - pos) + begin + "\n\n" + reference_markdown(d) + "\n" + end;
        pos = e + end.size();
        ++found;
    }
    out += text.substr(pos);
    if (sections) *sections = found;
    return out;
}

}  // namespace sixstep::app
