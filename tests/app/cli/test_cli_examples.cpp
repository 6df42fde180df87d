// Every command line under "Examples:" in a command's --help runs as it is
// written, from a folder of its own: the bundled models by name, lessons/…
// as in the source tree. An example that stopped working is a failure here,
// not a reader's first surprise.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "run_command.h"
#include "temp_dir.h"

using sixstep::test::run_command;
using sixstep::test::sixstep_cmd;

namespace {

// The subcommands `sixstep --help` lists.
std::vector<std::string> commands() {
    const auto help = run_command(sixstep_cmd("--help"));
    std::vector<std::string> out;
    std::istringstream in(help.output);
    bool listing = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("Subcommands:", 0) == 0) listing = true;
        else if (line == "Examples:") break;
        else if (listing && line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ')
            out.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
    return out;
}

// The lines under "Examples:" that run sixstep, without a trailing comment.
std::vector<std::string> examples(const std::string& help) {
    std::vector<std::string> out;
    std::istringstream in(help);
    bool listing = false;
    for (std::string line; std::getline(in, line);) {
        if (line == "Examples:") listing = true;
        else if (listing && line.rfind("  sixstep ", 0) == 0) {
            std::string cmd = line.substr(2);
            if (const auto hash = cmd.find("   #"); hash != std::string::npos) cmd.erase(hash);
            out.push_back(cmd);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("cli examples: every example in every command's --help runs as written") {
    const std::filesystem::path dir = sixstep::test::process_temp_dir("cli-examples");
    std::filesystem::create_directory_symlink(std::string(SIXSTEP_SOURCE_DIR) + "/lessons", dir / "lessons");
    std::vector<std::string> names = commands();
    REQUIRE(names.size() >= 15);
    names.insert(names.begin(), "");     // sixstep itself
    names.push_back("infer delivery");  // infer's one model
    int ran = 0;
    for (const std::string& name : names) {
        // "" is sixstep itself
        const std::string help = run_command(sixstep_cmd(name.empty() ? "--help" : name + " --help")).output;
        const std::vector<std::string> lines = examples(help);
        CAPTURE(name);
        CHECK_MESSAGE(!lines.empty(), "no examples in `sixstep " << name << " --help`");
        // serve runs until Ctrl+C, and load needs a server to talk to
        if (name == "serve" || name == "load") continue;
        for (const std::string& line : lines) {
            CAPTURE(line);
            // stdout dropped, stderr kept for the message
            const auto r = run_command("{ cd '" + dir.string() + "' && env -u DISPLAY -u WAYLAND_DISPLAY " +
                                       sixstep_cmd(line.substr(std::string("sixstep ").size())) + " 2>&1 > /dev/null; }");
            // A build without the GUI refuses screenshot in one message (a
            // sanitizer build is one); anything else is a broken example.
            if (name == "screenshot" && r.exit_code == 2 &&
                r.output.find("'screenshot' needs the GUI, and this build has none") != std::string::npos)
                continue;
            CHECK_MESSAGE(r.exit_code == 0, r.output);
            ++ran;
        }
    }
    CHECK(ran >= 30);
}

TEST_CASE("cli: a model not where it was named is the bundled model of that name, else one error listing them") {
    const std::filesystem::path dir = sixstep::test::process_temp_dir("cli-bundled");
    const auto found = run_command("cd '" + dir.string() + "' && " + sixstep_cmd("inspect stories-draft-f16.gguf"));
    CHECK(found.exit_code == 0);
    CHECK(found.output.find("/assets/models/stories-draft-f16.gguf: GGUF v3") != std::string::npos);
    const auto missing = run_command("cd '" + dir.string() + "' && " + sixstep_cmd("generate -m storie-3m.gguf --prompt hi"));
    CHECK(missing.exit_code == 2);
    CHECK(missing.output.find("--model: no such file: \"storie-3m.gguf\"; the bundled models, found by name from any "
                              "folder: stories-3m-f16.gguf, ") != std::string::npos);
}
