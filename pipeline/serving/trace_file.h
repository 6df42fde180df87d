// Trace files: recorded traffic to replay — when each request arrived, what
// it asked and how many tokens it may get.
//
// On-disk layout: UTF-8 text, one request per line, three fields separated by
// spaces or tabs, the prompt running to the end of the line:
//
//     # arrival_ms  max_tokens  prompt
//     0        32   Once upon a time, there was a little girl named Lily.
//     12.5     64   The cat sat on the
//     12.5     16   Tom had a red ball.\nHe liked to
//
//   arrival_ms   milliseconds from the start of the run, >= 0, never smaller
//                than the line before (a trace is in arrival order)
//   max_tokens   most tokens to generate, a whole number >= 1
//   prompt       the text; \n, \t and \\ are escapes for a newline, a tab and
//                a backslash
// Lines starting with '#' (after blanks) and blank lines are skipped.
//
// Errors name the place: "trace.txt:3:1: arrival time 'soon' is not a number
// of milliseconds", "trace.txt:5:10: max tokens '0' must be a whole number >= 1",
// "trace.txt:7: no prompt after the max tokens".
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace sixstep::serving {

struct TraceEntry {
    double arrival_ms = 0;  // from the start of the run
    int max_tokens = 1;     // most tokens to generate
    std::string prompt;     // escapes resolved
    int line = 0;           // 1-based line in the file
};

// Parses a trace's text; file_name is used in error messages only.
std::vector<TraceEntry> parse_trace(std::string_view text, const std::string& file_name);
// Reads and parses a trace file. Throws sixstep::Error when the file cannot be
// read, a line is bad, or there is no request at all.
std::vector<TraceEntry> load_trace(const std::filesystem::path& path);

}  // namespace sixstep::serving
