#include "app/cli/commands.h"
namespace sixstep::cli {
void add_infer(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("infer", "Send one request through the six steps");
    commands.push_back({sub, [] { return exit_ok; }});
}
}  // namespace sixstep::cli
