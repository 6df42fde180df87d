// The CLI's commands. Each lives in its own file under app/cli/ and registers
// itself on the CLI11 app; main.cpp only wires them together.
//
// Exit codes, for every command: 0 success; 1 a check or expectation failed;
// 2 bad input (a broken lesson, file, argument or request).
#pragma once
#include <functional>
#include <vector>

#include <CLI/CLI.hpp>

namespace sixstep::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;
inline constexpr int exit_bad_input = 2;

// A registered subcommand and what to run when it was chosen.
struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};
using Commands = std::vector<Command>;

void add_infer(CLI::App& app, Commands& commands);     // sixstep infer delivery ...
void add_check(CLI::App& app, Commands& commands);     // sixstep check PATH...

// Runs fn, turning a sixstep::Error (or any std::exception) into one clear
// message on stderr and exit code 2.
int guarded(const std::function<int()>& fn);

}  // namespace sixstep::cli
