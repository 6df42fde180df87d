#include "pipeline/delivery/features.h"

namespace sixstep::delivery {

int feature_index(std::string_view name) {
    for (int i = 0; i < n_features; ++i)
        if (features[static_cast<size_t>(i)].name == name) return i;
    return -1;
}

}  // namespace sixstep::delivery
