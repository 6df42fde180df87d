#include "app/cli/validators.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

namespace sixstep::cli {

CLI::Validator finite_number(double lo, double hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            errno = 0;
            char* end = nullptr;
            const double x = std::strtod(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size())
                return fmt::format("\"{}\" is not a number", text);
            if (!std::isfinite(x) || errno == ERANGE || x < lo || x > hi)
                return fmt::format("{} is not a finite number from {} to {}", text, lo, hi);
            return {};
        },
        fmt::format("NUMBER in [{}, {}]", lo, hi));
}

CLI::Validator seed_number() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            std::uint64_t v = 0;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
                return fmt::format("{} is not a whole number from 0 to 18446744073709551615", text);
            return {};
        },
        "UINT64");
}

}  // namespace sixstep::cli
