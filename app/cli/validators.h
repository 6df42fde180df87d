// Checks for the CLI's number options, run on the text before CLI11 converts
// it. CLI::Range alone lets NaN through (NaN compares false with both ends),
// and the conversions accept what should be refused: "1e400" becomes inf,
// "-1" a seed of 18446744073709551615.
#pragma once
#include <CLI/CLI.hpp>

namespace sixstep::cli {

// A finite number from lo to hi: "0.5", "1e-3"; never nan, inf or 1e400.
CLI::Validator finite_number(double lo, double hi);

// Every number option of `app` and its subcommands refuses an empty value
// (which CLI11 reads as 0). Whole-number options read decimal only ("010" is
// ten, not CLI11's octal eight; "0x10", "2.5" and "1e3" are refused), and
// other number options refuse numbers too close to zero to compute with
// (1e-320: a denormal, which turned a simulation's clock into a loop that
// never advanced, and divided into inf elsewhere) or too large (1e400, read
// as inf, which the option's own check then quoted as "inf"). A literal
// nan or inf and ranges stay with each option's own checks, which name what
// is wrong. Call once the options exist.
void check_every_number(CLI::App& app);

// A model file (GGUF) to read. One that is not where it was named is the
// bundled model of that name, as in a lesson: `-m stories-3m-f16.gguf`
// works from any folder. One that is neither is refused here, with the
// bundled models listed.
CLI::Validator model_file();
// A data file to read (a text, a CSV): not where it was named, the bundled
// one of that name; else left for the command's own message.
CLI::Validator data_file();

// A seed: a whole number from 0 to 18446744073709551615, in decimal.
CLI::Validator seed_number();

}  // namespace sixstep::cli
