// Placeholder: registers the command so the CLI's shape is fixed; replaced by its implementation.
#include <cstdio>
#include "app/cli/commands.h"
namespace sixstep::cli {
void add_screenshot(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("screenshot", "Render each step of a lesson to PNG files");
    sub->allow_extras();
    commands.push_back({sub, [] {
        std::fprintf(stderr, "sixstep: error: 'screenshot' is not available in this build\n");
        return exit_bad_input;
    }});
}
}  // namespace sixstep::cli
