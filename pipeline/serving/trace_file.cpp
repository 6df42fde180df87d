#include "pipeline/serving/trace_file.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/file.h"
#include "pipeline/serving/arrivals.h"

namespace sixstep::serving {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Characters, not bytes, before `byte`: a column as an editor and a lesson's
// errors count it ("héllo" puts what follows one column nearer than its bytes).
int chars_before(std::string_view s, std::size_t byte) {
    int n = 0;
    for (std::size_t i = 0; i < byte && i < s.size(); ++i) n += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    return n;
}

// The next whitespace-separated field of `line` from `pos`, with its 1-based column.
struct Field {
    std::string_view text;
    int column = 0;
};
Field next_field(std::string_view line, std::size_t& pos) {
    while (pos < line.size() && blank(line[pos])) ++pos;
    const std::size_t begin = pos;
    while (pos < line.size() && !blank(line[pos])) ++pos;
    return {line.substr(begin, pos - begin), chars_before(line, begin) + 1};
}

std::string unescape(std::string_view s, const SourceLocation& where) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\') {
            out += s[i];
            continue;
        }
        if (i + 1 == s.size()) return out += '\\', out;  // a lone backslash at the end stays
        switch (s[++i]) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case '\\': out += '\\'; break;
        default: {
            SourceLocation at = where;
            at.column += chars_before(s, i - 1);
            throw Error(at, fmt::format("unknown escape '\\{}' in the prompt (use \\n, \\t or \\\\)", s[i]));
        }
        }
    }
    return out;
}

constexpr double max_arrival_ms = 1e9;
constexpr int max_trace_tokens = 1 << 20;

}  // namespace

std::vector<TraceEntry> parse_trace(std::string_view text, const std::string& file_name) {
    // A UTF-8 byte-order mark, as some Windows editors save text, is not
    // part of the first arrival time (it was read as "arrival time '\ufeff0'").
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    std::vector<TraceEntry> entries;
    int line_no = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        start = end + 1;
        ++line_no;
        while (!line.empty() && line.back() == '\r') line.remove_suffix(1);

        std::size_t pos = 0;
        const Field t = next_field(line, pos);
        if (t.text.empty() || t.text[0] == '#') continue;
        const SourceLocation at_t{file_name, line_no, t.column};

        TraceEntry e;
        e.line = line_no;
        const auto rt = std::from_chars(t.text.data(), t.text.data() + t.text.size(), e.arrival_ms);
        if (rt.ec != std::errc() || rt.ptr != t.text.data() + t.text.size() || !std::isfinite(e.arrival_ms))
            throw Error(at_t, fmt::format("arrival time '{}' is not a number of milliseconds", t.text));
        if (e.arrival_ms < 0) throw Error(at_t, fmt::format("arrival time {} ms is before the start (>= 0)", t.text));
        // Past this the virtual clock's sums lose their milliseconds (1e308 + 5 ms is 1e308 ms).
        if (e.arrival_ms > max_arrival_ms)
            throw Error(at_t, fmt::format("arrival time {} ms is after the longest trace ({:g} ms, 11.6 days)", t.text,
                                          max_arrival_ms));
        if (!entries.empty() && e.arrival_ms < entries.back().arrival_ms)
            throw Error(at_t, fmt::format("arrival time {} ms comes before line {}'s {} ms (a trace is in arrival order)",
                                          t.text, entries.back().line, entries.back().arrival_ms));

        const Field n = next_field(line, pos);
        const SourceLocation at_n{file_name, line_no, n.column};
        if (n.text.empty()) throw Error({file_name, line_no, 0}, "no max tokens and prompt after the arrival time");
        const auto rn = std::from_chars(n.text.data(), n.text.data() + n.text.size(), e.max_tokens);
        if (rn.ec != std::errc() || rn.ptr != n.text.data() + n.text.size() || e.max_tokens < 1 ||
            e.max_tokens > max_trace_tokens)
            throw Error(at_n, fmt::format("max tokens '{}' must be a whole number from 1 to {}", n.text, max_trace_tokens));

        while (pos < line.size() && blank(line[pos])) ++pos;
        if (pos >= line.size()) throw Error({file_name, line_no, 0}, "no prompt after the max tokens");
        e.prompt = unescape(line.substr(pos), {file_name, line_no, chars_before(line, pos) + 1});
        entries.push_back(std::move(e));
        if (static_cast<int>(entries.size()) > max_request_count)
            throw Error({file_name, line_no, 0},
                        fmt::format("more than {} requests: split the trace", max_request_count));
    }
    if (entries.empty()) throw Error({file_name, 0, 0}, "no requests (every line is blank or a comment)");
    return entries;
}

std::vector<TraceEntry> load_trace(const std::filesystem::path& path) {
    return parse_trace(read_regular_file(path.string(), "the trace file", 256u << 20), path.string());
}

}  // namespace sixstep::serving
