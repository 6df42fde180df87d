// Checks the CLI tests share: run sixstep for its JSON, and a bad input that
// must be one line on stderr and exit code 2.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "run_command.h"

namespace sixstep::test {

inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Runs sixstep and parses its stdout as JSON (stderr is dropped: a progress
// line must never spoil the JSON).
inline nlohmann::json run_json(const std::string& args) {
    const auto r = run_command(sixstep_cmd(args) + " 2>/dev/null");
    INFO(args << "\n" << r.output);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.output);
}

// A command that must fail on bad input: exit 2, `message` in one line.
inline void bad_input(const std::string& args, const std::string& message) {
    CAPTURE(args);
    const auto r = run_command(sixstep_cmd(args));
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, message));
    CHECK(r.output.find('\n') == r.output.size() - 1);  // one line
}

// An option CLI11 refuses while parsing: exit 2, `message` on the first line
// (CLI11 adds a second one pointing at --help).
inline void bad_option(const std::string& args, const std::string& message) {
    CAPTURE(args);
    const auto r = run_command(sixstep_cmd(args));
    CHECK(r.exit_code == 2);
    CHECK(has(r.output.substr(0, r.output.find('\n')), message));
}

}  // namespace sixstep::test
