#include "pipeline/delivery/dataset.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/file.h"

namespace sixstep::delivery {

std::vector<Example> load_deliveries_csv(const std::string& path) {
    constexpr double max_value = 1e100;
    // Regular files only (a FIFO would block); the bundled CSV is a few KiB.
    std::istringstream f(read_regular_file(path, "the training data", 256u << 20));
    static const std::string header = "distance_km,congestion,express_lane,minutes";
    std::string line;
    int line_no = 0;
    std::vector<Example> rows;
    while (std::getline(f, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line_no == 1) {
            if (line != header) throw Error(SourceLocation{path, 1, 1}, "expected the header \"" + header + "\"");
            continue;
        }
        if (line.empty()) continue;
        std::array<double, 4> v{};
        size_t pos = 0;
        for (int col = 0; col < 4; ++col) {
            size_t end = line.find(',', pos);
            if (col < 3 && end == std::string::npos)
                throw Error(SourceLocation{path, line_no, static_cast<int>(line.size()) + 1},
                            "expected 4 comma-separated numbers");
            if (col == 3) {
                // A fifth value: said where it starts, not read as a fourth that is not a number.
                if (end != std::string::npos)
                    throw Error(SourceLocation{path, line_no, static_cast<int>(end) + 1}, "more than 4 columns");
                end = line.size();
            }
            const char* b = line.data() + pos;
            const char* e = line.data() + end;
            auto [ptr, ec] = std::from_chars(b, e, v[static_cast<size_t>(col)]);
            if (ec != std::errc() || ptr != e || !std::isfinite(v[static_cast<size_t>(col)]))
                throw Error(SourceLocation{path, line_no, static_cast<int>(pos) + 1},
                            "\"" + std::string(b, e) + "\" is not a number");
            // Training squares errors and multiplies them by inputs: past
            // this, the first step overflows and "diverged" would blame the
            // learning rate for the data.
            if (std::fabs(v[static_cast<size_t>(col)]) > max_value)
                throw Error(SourceLocation{path, line_no, static_cast<int>(pos) + 1},
                            fmt::format("\"{}\" is too large to train on (at most {:g} in size)",
                                        std::string_view(b, static_cast<std::size_t>(e - b)), max_value));
            pos = end + 1;
        }
        rows.push_back({{v[0], v[1], v[2]}, v[3]});
    }
    if (rows.empty()) throw Error(SourceLocation{path}, "no training examples");
    return rows;
}

}  // namespace sixstep::delivery
