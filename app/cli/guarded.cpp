#include <cstdio>
#include <exception>

#include "app/cli/commands.h"
#include "pipeline/core/error.h"

namespace sixstep::cli {

int guarded(const std::function<int()>& fn) {
    try {
        return fn();
    } catch (const sixstep::Error& e) {
        std::fprintf(stderr, "sixstep: error: %s\n", e.what());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sixstep: error: %s\n", e.what());
    }
    return exit_bad_input;
}

}  // namespace sixstep::cli
