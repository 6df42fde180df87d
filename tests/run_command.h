// Runs a shell command from a test and captures its output and exit code.
// Used by the CLI tests to drive the real `sixstep` binary (SIXSTEP_BINARY).
#pragma once
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace sixstep::test {

struct CommandResult {
    int exit_code = -1;
    std::string output;  // stdout and stderr together, in order
};

inline CommandResult run_command(const std::string& command) {
    CommandResult r;
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

inline std::string sixstep_cmd(const std::string& args) { return std::string("'") + SIXSTEP_BINARY + "' " + args; }

inline std::string last_line(const std::string& s) {
    std::string t = s;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    const auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

}  // namespace sixstep::test
