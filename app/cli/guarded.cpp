#include <cstdio>
#include <exception>

#include "app/cli/commands.h"
#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"
#include "pipeline/core/text.h"

namespace sixstep::cli {

int guarded(const std::function<int()>& fn) {
    try {
        const int rc = fn();
        // A Ctrl+C that no loop noticed (the command was nearly done) still
        // means the user asked to stop.
        if (cancel_requested()) throw Cancelled();
        return rc;
    } catch (const Cancelled&) {
        clear_progress();
        std::fprintf(stderr, "sixstep: interrupted\n");
        return exit_interrupted;
    } catch (const sixstep::Error& e) {
        clear_progress();
        std::fprintf(stderr, "sixstep: error: %s\n", e.what());  // what() is printable already
    } catch (const std::exception& e) {
        clear_progress();
        std::fprintf(stderr, "sixstep: error: %s\n", printable(e.what()).c_str());
    }
    return exit_bad_input;
}

}  // namespace sixstep::cli
