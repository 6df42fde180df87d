// Where a copied or installed binary finds its data (pipeline/core/data_dir.h):
// the binary is copied out of the build tree into scratch folders laid out as
// a user would have them, and run from a folder far from the source tree.
// Lesson 3 trains on the bundled assets/data/deliveries.csv, so it passes
// only when the data folder is found.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "run_command.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using sixstep::test::run_command;

namespace {
const fs::path source = SIXSTEP_SOURCE_DIR;
const std::string lesson3 = "lessons/03-training-vs-inference.yaml";

// A copy of the binary at `dir`/`rel` (its folder created).
fs::path copy_binary(const fs::path& dir, const std::string& rel) {
    const fs::path to = dir / rel;
    fs::create_directories(to.parent_path());
    fs::copy_file(SIXSTEP_BINARY, to, fs::copy_options::overwrite_existing);
    return to;
}

// A data folder at `dir`: assets/ and lessons/ as links to the source tree's.
void data_folder(const fs::path& dir) {
    fs::create_directories(dir);
    fs::create_directory_symlink(source / "assets", dir / "assets");
    fs::create_directory_symlink(source / "lessons", dir / "lessons");
}

// Runs `binary check <lesson>` from a scratch working folder with
// SIXSTEP_DATA_DIR set to `data_dir` ("" unsets it).
sixstep::test::CommandResult check(const fs::path& binary, const fs::path& lesson, const std::string& data_dir = "") {
    const fs::path cwd = sixstep::test::process_temp_dir("data-dir-cwd");
    const std::string env = data_dir.empty() ? "env -u SIXSTEP_DATA_DIR" : "env SIXSTEP_DATA_DIR='" + data_dir + "'";
    return run_command("cd '" + cwd.string() + "' && " + env + " '" + binary.string() + "' check '" + lesson.string() + "'");
}
}  // namespace

TEST_CASE("an installed tree (bin/sixstep + share/sixstep) runs from anywhere") {
    const fs::path prefix = sixstep::test::process_temp_dir("data-dir-prefix");
    const fs::path bin = copy_binary(prefix, "bin/sixstep");
    data_folder(prefix / "share" / "sixstep");
    const auto r = check(bin, prefix / "share" / "sixstep" / lesson3);
    CHECK_MESSAGE(r.exit_code == 0, r.output);
}

TEST_CASE("a release folder (sixstep beside assets/ and lessons/) runs from anywhere") {
    const fs::path dir = sixstep::test::process_temp_dir("data-dir-beside");
    const fs::path bin = copy_binary(dir, "sixstep");
    data_folder(dir);
    const auto r = check(bin, source / lesson3);
    CHECK_MESSAGE(r.exit_code == 0, r.output);
}

TEST_CASE("a binary alone never falls back on its build's source tree: one error naming where it looked, exit 2") {
    const fs::path dir = sixstep::test::process_temp_dir("data-dir-alone");
    const fs::path bin = copy_binary(dir, "bin/sixstep");
    const auto r = check(bin, source / lesson3);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("03-training-vs-inference.yaml:22:") != std::string::npos);  // the first train:
    CHECK(r.output.find("cannot find sixstep's data folder") != std::string::npos);
    CHECK(r.output.find((dir / "share" / "sixstep").string() + " (the binary's prefix)") != std::string::npos);
    CHECK(r.output.find("set SIXSTEP_DATA_DIR") != std::string::npos);
    CHECK(r.output.find(source.string() + " (") == std::string::npos);

    SUBCASE("SIXSTEP_DATA_DIR points it at the data") {
        const fs::path data_root = sixstep::test::process_temp_dir("data-dir-env");
        if (!fs::exists(data_root / "assets")) data_folder(data_root);
        const auto ok = check(bin, source / lesson3, data_root.string());
        CHECK_MESSAGE(ok.exit_code == 0, ok.output);
    }
    SUBCASE("named no lesson, it says there is nothing to list, and why") {
        const auto listed = sixstep::test::run_command("cd / && env -u DISPLAY -u WAYLAND_DISPLAY -u SIXSTEP_DATA_DIR "
                                                       "-u SIXSTEP_LESSONS '" + bin.string() + "'");
        CHECK(listed.exit_code == 2);
        CHECK(listed.output.find("no lessons to list: cannot find sixstep's data folder") != std::string::npos);
    }
    SUBCASE("a SIXSTEP_LESSONS that is not a folder is said to be one") {
        const auto listed = sixstep::test::run_command("cd / && env -u DISPLAY -u WAYLAND_DISPLAY "
                                                       "SIXSTEP_LESSONS=/nonexistent/lessons '" + bin.string() + "'");
        CHECK(listed.exit_code == 2);
        CHECK(listed.output.find("no lessons: SIXSTEP_LESSONS names /nonexistent/lessons, which is not a folder") !=
              std::string::npos);
    }
    SUBCASE("a model named by a bare name says why no bundled model was found") {
        // It said only "no such file", as if the name were wrong.
        const auto named = sixstep::test::run_command("cd / && env -u SIXSTEP_DATA_DIR '" + bin.string() +
                                                      "' generate -m stories-3m-f16.gguf --prompt hi");
        CHECK(named.exit_code == 2);
        CHECK(named.output.find("--model: no such file: \"stories-3m-f16.gguf\"; and no bundled model either: cannot "
                                "find sixstep's data folder") != std::string::npos);
    }
    SUBCASE("a wrong SIXSTEP_DATA_DIR is an error, not a silent fall-back") {
        const auto bad = check(bin, source / lesson3, "/nonexistent/sixstep-data");
        CHECK(bad.exit_code == 2);
        CHECK(bad.output.find("/nonexistent/sixstep-data ($SIXSTEP_DATA_DIR)") != std::string::npos);
    }
}
