#include "pipeline/serving/bundled_model.h"

#include <string>

#include "pipeline/core/data_dir.h"

namespace sixstep::serving {

std::filesystem::path bundled_model_path(std::string_view file) {
    return data_path("assets/models/" + std::string(file));
}

}  // namespace sixstep::serving
