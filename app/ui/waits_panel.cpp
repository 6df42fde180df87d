// What the user waits for (lesson 15), from the serving exhibit: the chat's
// tokens as they arrived beside a reader reading them (the stream far ahead
// of any reader), the agent's calls split into first token and the rest,
// and the batch job's throughput.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::ui {

void draw_waits_chart(const serving::ServingExhibit& e, ImVec2 avail) {
    if (!e.waits) return;
    const serving::UserWaits& w = *e.waits;
    const serving::ChatWait& c = w.chat;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float h = std::max(90.0f, (avail.y - line * 6) / 2);
    const float font = ImGui::GetFontSize();
    // Chat: tokens on screen and tokens read against time.
    plot::legend({{theme::lab_a_rgb, "tokens streamed"}, {theme::lab_b_rgb, "tokens read"}});
    std::vector<double> n;
    for (std::size_t i = 0; i < c.arrival_ms.size(); ++i) n.push_back(static_cast<double>(i + 1));
    const double t_max = std::max(1.0, std::max(c.reader_done_ms, w.params.flow_ms) * 1.05) / 1000;
    const plot::Frame f = plot::begin(ImVec2(avail.x, h), 0, t_max, 0, plot::nice_ceiling(std::max(1.0, n.empty() ? 1 : n.back())),
                                      font * 3.2f, font * 1.3f);
    plot::y_axis(f, "tokens");
    auto seconds = [](const std::vector<double>& ms) {
        std::vector<double> s;
        for (double x : ms) s.push_back(x / 1000);
        return s;
    };
    plot::line(f, seconds(c.arrival_ms), n, theme::lab_a_rgb, 2.5f, false);
    plot::line(f, seconds(c.read_ms), n, theme::lab_b_rgb, 2.5f, false);
    plot::vline(f, w.params.flow_ms / 1000, theme::muted_rgb, "1 s (Nielsen)");
    plot::label(ImVec2(f.max.x, f.max.y + 2), fmt::format("{:.3g} s", t_max), theme::muted_rgb, 1, 0.8f);
    ImGui::TextWrapped("%s", tr(fmt::format("chat: TTFT {:.2f} ms; stream {:.0f} tok/s = {:.0f}\u00d7 reading ({:.1f} tok/s)",
                                          c.ttft_ms, c.decode_tok_s, c.stream_over_reading, c.reading_tok_s)));
    // Agent: each call's first token and the rest.
    std::vector<std::string> calls;
    plot::Series first{"first token", theme::lab_b_rgb, {}}, rest{"rest of the answer", theme::lab_a_rgb, {}};
    for (std::size_t i = 0; i < w.agent.calls.size(); ++i) {
        calls.push_back(fmt::format("call {}", i + 1));
        first.values.push_back(w.agent.calls[i].ttft_ms);
        rest.values.push_back(w.agent.calls[i].total_ms - w.agent.calls[i].ttft_ms);
    }
    plot::legend({{first.rgb, "agent: first token, ms"}, {rest.rgb, "rest of the answer, ms"}});
    plot::grouped_bars(ImVec2(avail.x, h), calls, {first, rest}, "ms");
    ImGui::TextWrapped("%s", tr(fmt::format("agent: end-to-end {:.1f} ms, first tokens {:.0f}% of it; batch job: {:.0f} tok/s "
                                          "batched, {:.0f} one at a time",
                                          w.agent.end_to_end_ms, 100 * w.agent.ttft_share, w.batch.batched_tok_s,
                                          w.batch.sequential_tok_s)));
}

}  // namespace sixstep::ui
