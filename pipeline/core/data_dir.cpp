#include "pipeline/core/data_dir.h"

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/suggest.h"

// Set for this file only (pipeline/CMakeLists.txt), so no other code can
// reach for the build or source tree by itself.
#ifndef SIXSTEP_INSTALL_DATA_DIR
#error "SIXSTEP_INSTALL_DATA_DIR, SIXSTEP_BUILD_TREE and SIXSTEP_SOURCE_TREE come from pipeline/CMakeLists.txt"
#endif

namespace sixstep {

namespace fs = std::filesystem;

namespace {

fs::path executable() {
    std::error_code ec;
    fs::path p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : p;
}

bool inside(const fs::path& file, const fs::path& folder) {
    const fs::path rel = file.lexically_normal().lexically_relative(folder.lexically_normal());
    return !rel.empty() && *rel.begin() != "..";
}

bool holds_assets(const fs::path& dir) {
    std::error_code ec;
    return !dir.empty() && fs::is_directory(dir / "assets", ec);
}

}  // namespace

std::vector<DataDirCandidate> data_dir_candidates() {
    if (const char* env = std::getenv("SIXSTEP_DATA_DIR"); env && *env) return {{fs::path(env), "$SIXSTEP_DATA_DIR"}};
    std::vector<DataDirCandidate> out;
    const fs::path exe = executable();
    if (!exe.empty()) {
        out.push_back({exe.parent_path(), "next to the binary"});
        out.push_back({(exe.parent_path() / ".." / "share" / "sixstep").lexically_normal(), "the binary's prefix"});
    }
    out.push_back({fs::path(SIXSTEP_INSTALL_DATA_DIR), "the install prefix"});
    if (!exe.empty() && inside(exe, SIXSTEP_BUILD_TREE))
        out.push_back({fs::path(SIXSTEP_SOURCE_TREE), "the source tree (a binary in its build tree)"});
    return out;
}

fs::path data_dir() {
    const std::vector<DataDirCandidate> places = data_dir_candidates();
    for (const auto& c : places)
        if (holds_assets(c.dir)) return c.dir;
    std::string looked;
    for (const auto& c : places) looked += fmt::format("{}{} ({})", looked.empty() ? "" : ", ", c.dir.string(), c.why);
    throw Error(fmt::format("cannot find sixstep's data folder (the one with assets/ and lessons/): looked in {}; "
                            "set SIXSTEP_DATA_DIR to it",
                            looked));
}

fs::path data_path(std::string_view relative) { return data_dir() / std::string(relative); }

fs::path bundled_file(const fs::path& name) {
    try {
        for (const char* folder : {"assets/models", "assets/data"}) {
            std::error_code ec;
            const fs::path p = data_path(folder) / name;
            if (fs::is_regular_file(p, ec)) return p;
        }
    } catch (const Error&) {
        // No data folder: nothing bundled.
    }
    return {};
}

std::vector<std::string> bundled_models() {
    std::vector<std::string> names;
    try {
        std::error_code ec;
        for (fs::directory_iterator d(data_path("assets/models"), ec), end; !ec && d != end; d.increment(ec))
            if (d->path().extension() == ".gguf") names.push_back(d->path().filename().string());
    } catch (const Error&) {
        return {};  // no data folder: nothing bundled
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::string bundled_models_hint() {
    try {
        (void)data_dir();
    } catch (const Error& e) {
        return "; and no bundled model either: " + e.message();
    }
    const std::vector<std::string> names = bundled_models();
    return names.empty() ? "" : "; the bundled models, found by name from any folder: " + join_names(names);
}

}  // namespace sixstep
