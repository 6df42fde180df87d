// The terminal side of long work (pipeline/core/progress.h) for the CLI:
//   - Ctrl+C asks the running command to stop: the engine's loops notice,
//     the command cleans up (no half-written files) and exits with 130. A
//     second Ctrl+C kills the process at once, as usual.
//   - Progress of long work (loading a big model, a benchmark, training)
//     is drawn on stderr as one line redrawn in place — only when stderr is
//     a terminal, or as plain lines when --progress asks for it. Work that
//     ends within half a second draws nothing.
#pragma once
#include <CLI/CLI.hpp>

namespace sixstep::cli {

// Adds --progress to a command that does long work.
void add_progress_option(CLI::App* command);

// Installs the Ctrl+C handler and the progress line (call after parsing).
// Not for the window: the GUI keeps the default Ctrl+C.
void start_terminal_front_end();

}  // namespace sixstep::cli
