// Placeholder: registers the command so the CLI's shape is fixed; replaced by its implementation.
#include <cstdio>
#include "app/cli/commands.h"
namespace sixstep::cli {
void add_tokenize(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("tokenize", "Split text into tokens with a model's vocabulary");
    sub->allow_extras();
    commands.push_back({sub, [] {
        std::fprintf(stderr, "sixstep: error: 'tokenize' is not available in this build\n");
        return exit_bad_input;
    }});
}
}  // namespace sixstep::cli
