// Placeholder: registers the command so the CLI's shape is fixed; replaced by its implementation.
#include <cstdio>
#include "app/cli/commands.h"
namespace sixstep::cli {
void add_generate(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("generate", "Generate text with a GGUF model, token by token");
    sub->allow_extras();
    commands.push_back({sub, [] {
        std::fprintf(stderr, "sixstep: error: 'generate' is not available in this build\n");
        return exit_bad_input;
    }});
}
}  // namespace sixstep::cli
