// Placeholder: registers the command so the CLI's shape is fixed; replaced by its implementation.
#include <cstdio>
#include "app/cli/commands.h"
namespace sixstep::cli {
void add_bench(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("bench", "Measure prefill and decode tokens/s");
    sub->allow_extras();
    commands.push_back({sub, [] {
        std::fprintf(stderr, "sixstep: error: 'bench' is not available in this build\n");
        return exit_bad_input;
    }});
}
}  // namespace sixstep::cli
