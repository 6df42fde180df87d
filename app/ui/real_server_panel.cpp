// A real server under load (lesson 17), drawn from the endpoint model's
// exhibit: TTFT p50, p90 and p99 against the arrival rate, measured at the
// client (solid, with dots) beside the serving lab's prediction for the same
// rates (dashed), the two compared at the highest rate's p90, and below it
// the throughput against the rate —
// measured requests per second, and the prediction (every arrival served).
// Every number on it is the exhibit's.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/server/endpoint_model.h"
#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace {

constexpr std::uint32_t p50_rgb = 0x15803D;
constexpr std::uint32_t p90_rgb = 0x1D4ED8;
constexpr std::uint32_t p99_rgb = 0xB91C1C;
constexpr std::uint32_t predicted_rgb = 0x9CA3AF;
// Throughput in a colour of its own: in the accent blue it read as the p90
// of the chart beside it.
constexpr std::uint32_t throughput_rgb = 0x111418;

// A chart of series against the rate: solid measured lines with dots,
// dashed predicted ones.
struct Series {
    std::vector<double> ys;
    std::uint32_t rgb;
    bool measured;
};

void rate_chart(const std::vector<double>& rates, const std::vector<Series>& series, const char* unit, ImVec2 size) {
    double top = 0;
    for (const Series& s : series)
        for (double y : s.ys) top = std::max(top, y);
    const float text_h = ImGui::GetTextLineHeightWithSpacing();
    const double x1 = plot::nice_ceiling(rates.back() * 1.05);
    const plot::Frame f = plot::begin(size, 0, x1, 0,
                                      plot::nice_ceiling(std::max(top, 1e-9) * 1.1), ImGui::CalcTextSize("00000").x,
                                      text_h * 1.6f);  // the ticks' values, and the axis's name under them
    const float font = ImGui::GetFontSize();
    plot::y_axis(f, unit, f.height() < font * 5 ? 2 : 4);  // a short chart: fewer gridlines, labels apart
    // Measured first, predicted dashed over them: where the two agree the
    // dashes still show on the measured line.
    for (const Series& s : series)
        if (s.measured) plot::line(f, rates, s.ys, s.rgb, 2.5f, true);
    for (const Series& s : series)
        if (!s.measured) plot::dashed_line(f, rates, s.ys, s.rgb, 1.8f);
    // Each tick's value under it; the first starts at the frame's edge,
    // clear of the y axis's 0, the last ends at the other edge instead of
    // past it (clipped). The axis's name on the line below: above the
    // frame's right corner it read as a second y unit, and on the last
    // tick ("100 req/s", right-aligned) it put the number left of its place.
    for (double x : plot::nice_ticks(0, x1, 5)) {
        const std::string text = pretty_number(x, 3);
        const bool past = f.px(x) + ImGui::CalcTextSize(text.c_str()).x * 0.8f * 0.5f > f.max.x;
        const float align = past ? 1.0f : x == 0 ? 0.0f : 0.5f;
        plot::label(ImVec2(past ? f.max.x : f.px(x), f.max.y + 2), text, theme::muted_rgb, align, 0.8f);
    }
    plot::label(ImVec2((f.min.x + f.max.x) / 2, f.max.y + 2 + font * 0.85f), "arrival rate (req/s)", theme::muted_rgb, 0.5f,
                0.8f);
}

}  // namespace

void draw_real_server_panel(const app::Snapshot& s, ViewState& v, app::Session&, const Rect& r) {
    (void)v;
    if (begin_panel("##real_server", r)) {
        panel_title(tr("A real server under load"));
        const auto* e = dynamic_cast<const server::EndpointExhibit*>(s.state.exhibit.get());
        if (!e || e->points.empty()) {
            ImGui::TextDisabled("%s", tr("Runs when the step times the service and sweeps the arrival rate."));
            end_panel();
            return;
        }
        ImGui::SetWindowFontScale(0.85f);
        char line[256];
        std::snprintf(line, sizeof line, "%s \u00b7 %s \u00b7 a request alone %s ms \u00b7 its TTFT %s ms", e->url.c_str(),
                      e->served_model.c_str(), pretty_number(e->service_ms, 3).c_str(), pretty_number(e->alone_ttft_ms, 3).c_str());
        ImGui::TextUnformatted(tr(line));
        // The forward pass times the service and runs every rate at once;
        // the rates' charts wait for the raw output, so that the step about
        // the service does not show the next step's waits early.
        if (!s.state.trace.last(Stage::output)) {
            ImGui::TextDisabled("%s", tr("the rates' waits are drawn with the raw output"));
            ImGui::SetWindowFontScale(1.0f);
            end_panel();
            return;
        }
        std::vector<double> rates;
        Series m50{{}, p50_rgb, true}, m90{{}, p90_rgb, true}, m99{{}, p99_rgb, true};
        Series q50{{}, p50_rgb, false}, q90{{}, p90_rgb, false}, q99{{}, p99_rgb, false};
        Series thr{{}, throughput_rgb, true}, qthr{{}, predicted_rgb, false};
        for (const server::EndpointPoint& p : e->points) {
            rates.push_back(p.rate);
            m50.ys.push_back(p.ttft_p50_ms), m90.ys.push_back(p.ttft_p90_ms), m99.ys.push_back(p.ttft_p99_ms);
            q50.ys.push_back(p.predicted_ttft_p50_ms), q90.ys.push_back(p.predicted_ttft_p90_ms);
            q99.ys.push_back(p.predicted_ttft_p99_ms);
            thr.ys.push_back(p.request_throughput), qthr.ys.push_back(p.predicted_throughput);
        }
        // The legend's percentiles, and the line styles beside them where they fit.
        const std::vector<std::pair<std::uint32_t, std::string>> percentiles{
            {p50_rgb, "p50"}, {p90_rgb, "p90"}, {p99_rgb, "p99"}};
        // The M/G/1 prediction of TTFT with the response (lesson 17's
        // "Measured beside predicted"): the measured waits alone before it.
        const bool predicted = s.state.trace.last(Stage::respond) != nullptr;
        const char* styles = predicted ? tr("solid: measured, dashed: predicted (M/G/1)") : tr("measured; the prediction (M/G/1) comes with the response");
        const std::vector<Series> ttft_series =
            predicted ? std::vector<Series>{q50, q90, q99, m50, m90, m99} : std::vector<Series>{m50, m90, m99};
        auto with_styles = percentiles;
        with_styles.emplace_back(predicted_rgb, styles);
        const int legend_lines = plot::legend_lines(with_styles, ImGui::GetContentRegionAvail().x);
        // How far the prediction is off where it matters most: the highest rate's p90.
        const server::EndpointPoint& top = e->points.back();
        std::string against;
        if (predicted && top.predicted_ttft_p90_ms > 0 && top.ttft_p90_ms > 0) {
            const auto places = [](double x, int p) { return fmt::format("{:.{}f}", x, p); };
            const Division d = division(top.ttft_p90_ms, top.predicted_ttft_p90_ms, 1, places,
                                        [](double q) { return fmt::format("{:.2f}", q); });
            against = tr(fmt::format("at the highest rate, p90 measured \u00f7 predicted = {} \u00f7 {} ms = {}\u00d7", d.a,
                                     d.b, d.q));
        }
        // TPOT at each rate, beside the TTFT chart: with one request at a time
        // the queue is paid before the first token, and TPOT hardly moves.
        // The rates beside them: a bare list of TPOTs did not say which was which.
        std::vector<double> tpots;
        for (const server::EndpointPoint& pt : e->points) tpots.push_back(pt.tpot_p50_ms);
        const std::string tpot_line = tr(fmt::format("TPOT p50 at {} req/s: {} ms", pretty_value(Value{rates}, 3),
                                                     pretty_value(Value{tpots}, 3)));
        const float text_h = ImGui::GetTextLineHeightWithSpacing();
        const float width = ImGui::GetContentRegionAvail().x;
        // A machine that slows the server between the timing and the sweep
        // moves the curve; say what the top rate was at the pace it kept.
        if (top.service_measured) {
            std::snprintf(line, sizeof line, "TTFT against the arrival rate; highest \u03c1 at the server's pace %.2f "
                          "(planned %.2f)", top.utilization_measured(), top.utilization);
            ImGui::TextUnformatted(tr(line));
        } else {
            ImGui::TextUnformatted(tr("TTFT against the arrival rate"));
        }
        // On a wide pane the two charts stand side by side, each under its
        // legend (stacked, the throughput chart was a strip 35 px tall at
        // 1280x720); the line styles and the comparison go under both.
        if (plot::side_by_side_fits(width)) {
            const float half = plot::side_width(width);
            const std::vector<std::pair<std::uint32_t, std::string>> throughput{
                {throughput_rgb, tr("throughput, measured")}, {predicted_rgb, tr("dashed: predicted, every arrival served")}};
            const int head = std::max(1, plot::legend_lines(throughput, half));
            const float chart_h = std::max(text_h * 3, ImGui::GetContentRegionAvail().y -
                                                           text_h * (static_cast<float>(head) + (against.empty() ? 2.2f : 3.2f)) -
                                                           2 * ImGui::GetStyle().ItemSpacing.y);
            plot::side_by_side(
                width, chart_h, head,
                [&](int side) {
                    if (side == 0) plot::legend(percentiles);
                    else plot::legend(throughput, true, {false, true});
                },
                [&](int side, ImVec2 size) {
                    if (side == 0) rate_chart(rates, ttft_series, "ms", size);
                    else rate_chart(rates, {qthr, thr}, "req/s", size);
                });
            ImGui::TextDisabled("%s", styles);
            if (!against.empty()) ImGui::TextUnformatted(against.c_str());
            ImGui::TextUnformatted(tpot_line.c_str());
            ImGui::SetWindowFontScale(1.0f);
            end_panel();
            return;
        }
        // The throughput chart's legend goes on its title's line when it fits there.
        const std::vector<std::pair<std::uint32_t, std::string>> served{
            {throughput_rgb, tr("measured")}, {predicted_rgb, tr("dashed: predicted, every arrival served")}};
        const char* served_title = tr("Throughput against the arrival rate");
        const float title_w = ImGui::CalcTextSize(served_title).x + ImGui::GetStyle().ItemSpacing.x * 2;
        const bool served_beside = plot::legend_lines(served, ImGui::GetContentRegionAvail().x - title_w) == 1;
        const float lines =
            2.2f + static_cast<float>(legend_lines) + (against.empty() ? 0.0f : 1.0f) + (served_beside ? 0.0f : 1.0f);
        const float avail = ImGui::GetContentRegionAvail().y - text_h * lines - 2 * ImGui::GetStyle().ItemSpacing.y;
        rate_chart(rates, ttft_series, "ms", ImVec2(width, std::max(text_h * 3, avail * 0.6f)));
        // The colours are the percentiles; the line's style says which is which.
        plot::legend(percentiles);
        ImGui::SameLine();
        if (legend_lines > 1) ImGui::NewLine();
        ImGui::TextDisabled("%s", styles);
        if (!against.empty()) ImGui::TextUnformatted(against.c_str());
        ImGui::TextUnformatted(tpot_line.c_str());
        ImGui::TextUnformatted(served_title);
        if (served_beside) {
            ImGui::SameLine(0, ImGui::GetStyle().ItemSpacing.x * 2);
            plot::legend(served, false, {false, true});
        }
        rate_chart(rates, {qthr, thr}, "req/s", ImVec2(width, std::max(text_h * 2, avail * 0.4f)));
        if (!served_beside) plot::legend(served, true, {false, true});
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

}  // namespace sixstep::ui
