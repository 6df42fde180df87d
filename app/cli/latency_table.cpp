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

}  // namespace sixstep::cli
