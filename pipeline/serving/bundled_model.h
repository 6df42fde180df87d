// The bundled story model as the calculators name it: where its file lies
// and how many tokens its recipe trained it on. The parameter count is not
// here: it is counted from the file (GGUFFile::n_params).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace sixstep::serving {

// assets/models/<file> in the data folder (pipeline/core/data_dir.h).
std::filesystem::path bundled_model_path(std::string_view file = "stories-3m-f16.gguf");

// The training run of assets/models/recipe: `run.sh` calls `train.py --steps
// 640` with the defaults --batch 8 --seq 160, and every step reads one batch
// of windows, so D = steps × batch × seq tokens (train.py logs the same
// product as "tokens_seen").
struct TrainingRecipe {
    std::int64_t steps = 640;  // optimizer steps (run.sh)
    std::int64_t batch = 8;    // windows per step (train.py --batch)
    std::int64_t seq = 160;    // tokens per window (train.py --seq)
    std::int64_t tokens() const { return steps * batch * seq; }
};
inline constexpr TrainingRecipe bundled_model_recipe{};

}  // namespace sixstep::serving
