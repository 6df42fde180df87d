// Where sixstep's bundled data lives: the folder that holds assets/ (models,
// the delivery data) and lessons/. Looked for in this order, the first that
// holds assets/ winning:
//
//   1. $SIXSTEP_DATA_DIR, when set — and then nowhere else, so a wrong value
//      is an error rather than a silent fall-back;
//   2. next to the binary: its own folder (a release folder, sixstep beside
//      assets/ and lessons/), then <its folder>/../share/sixstep (an
//      installed tree, wherever it was installed or unpacked: the FHS layout
//      bin/sixstep + share/sixstep/ that `cmake --install` and the .deb make);
//   3. the install prefix chosen at configure time, <prefix>/share/sixstep;
//   4. the source tree — only for a binary that still sits in the build tree
//      it was built in (a developer's build and the tests). A binary copied
//      out of the build tree never reads the source tree by accident.
//
//     data_path("assets/models/stories-3m-f16.gguf")
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace sixstep {

// One place the lookup tries, with why.
struct DataDirCandidate {
    std::filesystem::path dir;
    std::string why;  // "$SIXSTEP_DATA_DIR", "next to the binary", "the install prefix", …
};

// The places, in order, for this process (the binary's own path from /proc).
std::vector<DataDirCandidate> data_dir_candidates();

// The data folder. Throws sixstep::Error naming every place it looked, with
// the fix: "set SIXSTEP_DATA_DIR to the folder that holds assets/ and lessons/".
std::filesystem::path data_dir();
std::filesystem::path data_path(std::string_view relative);
// The bundled file of this name — in assets/models/, else assets/data/ of
// the data folder — or empty when there is none (or no data folder). For a
// lesson's file that is not where the lesson says.
std::filesystem::path bundled_file(const std::filesystem::path& name);
// The names of the bundled models (assets/models/*.gguf), sorted; empty
// when there is no data folder.
std::vector<std::string> bundled_models();
// What follows "no such file" for a model: "; the bundled models, found by
// name from any folder: a.gguf, b.gguf", or, with no data folder, where it
// looked for one (a bare name found no bundled model, and said nothing of
// why).
std::string bundled_models_hint();

}  // namespace sixstep
