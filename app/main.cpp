// sixstep — argument parsing and wiring only. Every command lives in app/cli/.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "app/cli/commands.h"

int main(int argc, char** argv) {
    using namespace sixstep::cli;
    CLI::App app{"sixstep — walk one AI inference request through its six steps, then serve millions",
                 "sixstep"};
    app.set_version_flag("--version", std::string("sixstep ") + SIXSTEP_VERSION);
    app.require_subcommand(0, 1);

    Commands commands;
    add_infer(app, commands);
    add_check(app, commands);
    add_generate(app, commands);
    add_tokenize(app, commands);
    add_bench(app, commands);
    add_inspect(app, commands);
    add_screenshot(app, commands);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? exit_ok : exit_bad_input;
    }
    for (const auto& c : commands)
        if (c.app->parsed()) return guarded(c.run);
    std::printf("%s", app.help().c_str());
    return exit_ok;
}
