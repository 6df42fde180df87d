#include "app/cli/validators.h"

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <filesystem>

#include <fmt/format.h>

#include "pipeline/core/data_dir.h"
#include "pipeline/core/suggest.h"
#include "pipeline/core/text.h"

namespace sixstep::cli {

namespace {

// The bundled file named by `text` when nothing is at `text` itself.
bool use_bundled(std::string& text) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (text.empty() || fs::exists(fs::symlink_status(text, ec))) return true;
    const fs::path bundled = bundled_file(fs::path(text).filename());
    if (bundled.empty()) return false;
    text = bundled.string();
    return true;
}

// Drops the spaces before and after a value: " 5 " is 5.
void trim_spaces(std::string& text) {
    const std::size_t b = text.find_first_not_of(' ');
    if (b == std::string::npos) {
        text.clear();
        return;
    }
    text = text.substr(b, text.find_last_not_of(' ') - b + 1);
}

}  // namespace

CLI::Validator model_file() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            if (use_bundled(text)) return {};
            return fmt::format("no such file: \"{}\"{}", printable_cut(text, 200), bundled_models_hint());
        },
        "GGUF");
}

CLI::Validator data_file() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            use_bundled(text);
            return {};
        },
        "FILE");
}

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
    // own_range: the option checks itself with finite_number, whose message
    // quotes what was written and names the range; this one then leaves
    // numbers too large to it.
    // own_lo: the least number the option's own range takes; a range that
    // starts above zero says what is wrong with 1e-320 better ("not a
    // finite number from 1 to 10000") than "use 0 or at least 2.2e-308",
    // which named numbers the option refuses.
    const auto finite = [](bool own_range, double own_lo) {
        return CLI::Validator(
            [own_range, own_lo](std::string& text) -> std::string {
                // Spaces around the number are dropped, after it as before
                // it (strtod skipped the leading ones, and "5 " was then
                // CLI11's "Could not convert: --tokens = 5 ").
                trim_spaces(text);
                errno = 0;
                char* end = nullptr;
                const double x = std::strtod(text.c_str(), &end);
                if (text.empty()) return "an empty value is not a number";  // CLI11 would read it as 0
                // Said here, not as CLI11's "Could not convert: --tokens = ５".
                if (end != text.c_str() + text.size()) return fmt::format("\"{}\" is not a number", text);
                if (text.find_first_of("xX") != std::string::npos) return fmt::format("{} is not a number in decimal", text);
                // glibc: a denormal result (1e-320) or one that underflows to 0 (1e-400) sets ERANGE.
                if (((std::isfinite(x) && x != 0 && std::fabs(x) < DBL_MIN) || (errno == ERANGE && std::fabs(x) < 1)) &&
                    !(own_range && own_lo > 0))
                    return fmt::format("{} is too close to zero to compute with (use 0 or at least {:g})", text, DBL_MIN);
                // A spelled-out number past the largest double (1e400) reads as
                // inf, and each option's own check would then quote "inf": say
                // what was written. (A literal "inf" stays with those checks.)
                if (errno == ERANGE && std::isinf(x) && !own_range)
                    return fmt::format("{} is too large to compute with (the largest number is {:g})", text, DBL_MAX);
                return {};
            },
            "");
    };
    // Whole numbers are written in decimal: CLI11 reads "010" as octal (8)
    // and "0x10" as 16, so `-t 010` ran 8 threads and `--batch 1,010` batch
    // 8. The text is rewritten as the decimal number it spells ("010" → 10)
    // or refused ("2.5", "1e3", "0x10"), before any range check.
    const CLI::Validator whole(
        [](std::string& text) -> std::string {
            const std::size_t b = text.find_first_not_of(' '), e = text.find_last_not_of(' ');
            if (b == std::string::npos) return "an empty value is not a number";  // CLI11 would read it as 0
            std::string_view t = std::string_view(text).substr(b, e - b + 1);
            const bool negative = t.front() == '-';
            if (t.front() == '-' || t.front() == '+') t.remove_prefix(1);
            if (t.empty() || t.find_first_not_of("0123456789") != std::string_view::npos)
                return fmt::format("{} is not a whole number", text);
            t.remove_prefix(std::min(t.find_first_not_of('0'), t.size() - 1));  // leading zeros, but the last digit
            text = (negative && t != "0" ? "-" : "") + std::string(t);
            return {};  // one past what the option's type holds: main.cpp words CLI11's "Could not convert"
        },
        "");
    for (CLI::Option* opt : app.get_options()) {
        // The option's own type, before the descriptions of its checks ("INT:INT in [1 - 1000]").
        const std::string type = opt->get_type_name().substr(0, opt->get_type_name().find(':'));
        // First of the option's checks (CLI11 puts a transform in front): an
        // empty value must not reach a range check, which reads it as 0.
        if (type == "FLOAT") {
            const std::string& name = opt->get_type_name();
            const std::size_t range = name.find(":NUMBER in [");
            const double lo = range == std::string::npos ? 0 : std::strtod(name.c_str() + range + 12, nullptr);
            opt->transform(finite(range != std::string::npos, lo));
        }
        else if (type == "INT" || type == "UINT")
            opt->transform(whole);
    }
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
