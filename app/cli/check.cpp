#include "app/cli/commands.h"
namespace sixstep::cli {
void add_check(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("check", "Run lessons headless and verify every expect");
    static std::vector<std::string> paths;
    sub->add_option("paths", paths, "Lesson files or folders")->required();
    commands.push_back({sub, [] { return exit_ok; }});
}
}  // namespace sixstep::cli
