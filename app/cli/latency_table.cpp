#include "app/cli/latency_table.h"

#include <cstdio>
#include <string>

#include <fmt/format.h>

namespace sixstep::cli {

namespace {
std::string ms_cell(double ms) { return ms < 10 ? fmt::format("{:.3g}", ms) : fmt::format("{:.1f}", ms); }
}  // namespace

void print_latency_table(const std::vector<serving::LatencyMetric>& latencies, int name_width) {
    std::printf("\n%-*s %9s %9s %9s %9s %9s  %s\n", name_width, "latency (ms)", "mean", "p50", "p90", "p99", "max",
                "definition");
    for (const serving::LatencyMetric& m : latencies) {
        const serving::Summary& s = m.summary;
        if (s.count == 0) {
            std::printf("%-*s %9s %9s %9s %9s %9s  %s (none measured in this run)\n", name_width, m.name.c_str(), "-", "-",
                        "-", "-", "-", m.definition.c_str());
            continue;
        }
        std::printf("%-*s %9s %9s %9s %9s %9s  %s\n", name_width, m.name.c_str(), ms_cell(s.mean).c_str(),
                    ms_cell(s.p50).c_str(), ms_cell(s.p90).c_str(), ms_cell(s.p99).c_str(), ms_cell(s.max).c_str(),
                    m.definition.c_str());
    }
}

nlohmann::ordered_json latencies_json(const std::vector<serving::LatencyMetric>& latencies) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const serving::LatencyMetric& m : latencies) {
        const serving::Summary& s = m.summary;
        const auto figure = [&](double v) { return s.count == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v); };
        out.push_back({{"key", m.key}, {"name", m.name}, {"unit", "ms"}, {"definition", m.definition},
                       {"count", s.count}, {"mean", figure(s.mean)}, {"p50", figure(s.p50)}, {"p90", figure(s.p90)},
                       {"p99", figure(s.p99)}, {"max", figure(s.max)}});
    }
    return out;
}

nlohmann::ordered_json totals_json(const std::vector<serving::Metric>& totals) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const serving::Metric& m : totals)
        out.push_back({{"key", m.key}, {"name", m.name}, {"unit", m.unit}, {"definition", m.definition}, {"value", m.value}});
    return out;
}

nlohmann::ordered_json measured_or_null(double ms) {
    return ms < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(ms);
}

}  // namespace sixstep::cli
