#include "app/cli/validators.h"

#include <cerrno>
#include <cfloat>
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

void check_every_number(CLI::App& app) {
    const CLI::Validator finite(
        [](std::string& text) -> std::string {
            errno = 0;
            char* end = nullptr;
            const double x = std::strtod(text.c_str(), &end);
            if (text.empty()) return "an empty value is not a number";  // CLI11 would read it as 0
            if (end != text.c_str() + text.size()) return {};  // CLI11 says it is not a number
            // glibc: a denormal result (1e-320) or one that underflows to 0 (1e-400) sets ERANGE.
            if ((std::isfinite(x) && x != 0 && std::fabs(x) < DBL_MIN) || (errno == ERANGE && std::fabs(x) < 1))
                return fmt::format("{} is too close to zero to compute with (use 0 or at least {:g})", text, DBL_MIN);
            return {};
        },
        "");
    for (CLI::Option* opt : app.get_options())
        // The option's own type, before the descriptions of its checks ("INT:INT in [1 - 1000]").
        if (const std::string type = opt->get_type_name().substr(0, opt->get_type_name().find(':'));
            type == "FLOAT" || type == "INT" || type == "UINT")
            // First of the option's checks (CLI11 puts a transform in front):
            // an empty value must not reach a range check, which reads it as 0.
            opt->transform(CLI::Validator(finite).non_modifying());
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_every_number(*sub);
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
