#include "pipeline/core/data_dir.h"

#include <cstdlib>
#include <string>

namespace sixstep {

std::filesystem::path data_dir() {
    const char* env = std::getenv("SIXSTEP_DATA_DIR");
    return env && *env ? std::filesystem::path(env) : std::filesystem::path(SIXSTEP_DATA_DIR);
}

std::filesystem::path data_path(std::string_view relative) { return data_dir() / std::string(relative); }

}  // namespace sixstep
