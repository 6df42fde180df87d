#include "pipeline/delivery/params.h"

namespace sixstep::delivery {

std::string mode_name(Mode m) { return m == Mode::eval ? "eval" : "train"; }

}  // namespace sixstep::delivery
