// Where the bundled assets and lessons are: $SIXSTEP_DATA_DIR when set, else
// the source tree the binary was built from (SIXSTEP_DATA_DIR at build time).
//
//     data_path("assets/models/stories-3m-f16.gguf")
#pragma once
#include <filesystem>
#include <string_view>

namespace sixstep {

std::filesystem::path data_dir();
std::filesystem::path data_path(std::string_view relative);

}  // namespace sixstep
