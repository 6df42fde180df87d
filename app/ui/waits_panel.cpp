// What the user waits for (lesson 15), from the serving exhibit: the chat's
// tokens as they arrived beside a reader reading them, on a time axis in
// decades (the stream far ahead of any reader), the agent's calls split into first token and the rest,
// and the batch job's throughput.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/format.h"
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
    const float font = ImGui::GetFontSize();
    // The two legends and the two lines under the charts, measured as they
    // will wrap (a Chinese legend takes two lines at 1920x1080): the charts
    // share the rest.
    // One colour, one meaning across both charts and the lessons before:
    // generated tokens (the stream, the rest of an answer) in decode's green,
    // the first token in prefill's blue, the reader in orange.
    const std::vector<std::pair<std::uint32_t, std::string>> chat_legend = {
        {theme::decode_bar_rgb, "tokens streamed"},
        {theme::lab_b_rgb, "tokens read"},
        {theme::muted_rgb, fmt::format("dashed: {:g} tok/s", w.params.fast_tok_s)}};
    const std::vector<std::pair<std::uint32_t, std::string>> agent_legend = {
        {theme::prefill_bar_rgb, "agent: first token, ms"}, {theme::decode_bar_rgb, "rest of the answer, ms"}};
    const std::string chat_line =
        // TTFT to the digits of the card above it (3 significant): "0.233 ms", not "0.23 ms" beside it.
        tr(fmt::format("chat: TTFT {} ms; stream {:.0f} tok/s = {:.0f}\u00d7 reading ({:.1f} tok/s)",
                       pretty_number(c.ttft_ms, 3), c.decode_tok_s, c.stream_over_reading, c.reading_tok_s));
    const std::string agent_line =
        tr(fmt::format("agent: end-to-end {:.1f} ms, first tokens {:.0f}% of it; batch job: {:.0f} tok/s batched, {:.0f} "
                       "one at a time",
                       w.agent.end_to_end_ms, 100 * w.agent.ttft_share, w.batch.batched_tok_s, w.batch.sequential_tok_s));
    const float line = ImGui::GetTextLineHeightWithSpacing(), gap = ImGui::GetStyle().ItemSpacing.y;
    const float under = static_cast<float>(plot::legend_lines(chat_legend, avail.x) + plot::legend_lines(agent_legend, avail.x)) *
                            line +
                        text_wrapped_height(chat_line, avail.x) + text_wrapped_height(agent_line, avail.x) + 4 * gap;
    const float h = std::max(90.0f, (avail.y - under) / 2);
    // Chat: tokens on screen and tokens read against time, on a time axis
    // in decades: the stream ends in milliseconds, the reader in seconds,
    // and on a linear axis the stream was a sliver at zero.
    plot::legend(chat_legend, true, {false, false, true});
    std::vector<double> n;
    for (std::size_t i = 0; i < c.arrival_ms.size(); ++i) n.push_back(static_cast<double>(i + 1));
    const double first_ms = c.arrival_ms.empty() ? 1 : std::max(c.arrival_ms.front(), 1e-3);
    const double last_ms = std::max({c.reader_done_ms, w.params.flow_ms, 1.0});
    const double lo = std::floor(std::log10(first_ms)), hi = std::ceil(std::log10(last_ms * 1.05));
    // Headroom over the last token: at 48 of 50 a 2.5 px line drew over the frame's top.
    const plot::Frame f = plot::begin(ImVec2(avail.x, h), lo, hi, 0,
                                      plot::nice_ceiling(std::max(1.0, n.empty() ? 1 : n.back() * 1.08)), font * 3.2f,
                                      font * 1.3f);
    plot::y_axis(f, "tokens");
    std::vector<double> decades;
    std::vector<std::string> decade_names;
    for (double d = lo; d <= hi; ++d) {
        decades.push_back(d);
        const double ms = std::pow(10.0, d);
        decade_names.push_back(ms >= 1000 ? fmt::format("{:g} s", ms / 1000) : fmt::format("{:g} ms", ms));
    }
    plot::x_axis(f, decades, decade_names);
    // What the x axis counts, over its right end (the y unit is over its left).
    plot::label(ImVec2(f.max.x, plot::above(f)), "time since the request (log scale)", theme::muted_rgb, 1, 0.85f);
    auto log_ms = [&](const std::vector<double>& ms) {
        std::vector<double> x;
        for (double t : ms) x.push_back(std::log10(std::max(t, first_ms)));
        return x;
    };
    // A stream at the speed that outruns nearly every reader: token i at i ÷ that speed.
    std::vector<double> fast_ms;
    for (double i : n) fast_ms.push_back(i * 1000 / w.params.fast_tok_s);
    plot::dashed_line(f, log_ms(fast_ms), n, theme::muted_rgb);
    plot::line(f, log_ms(c.arrival_ms), n, theme::decode_bar_rgb, 2.5f, false);
    plot::line(f, log_ms(c.read_ms), n, theme::lab_b_rgb, 2.5f, false);
    // Its label on the left, where no curve has reached the top yet: on the
    // right it covered the end of the reader's curve.
    plot::vline(f, std::log10(w.params.flow_ms), theme::muted_rgb, "1 s (Nielsen)", 0, true);
    text_wrapped(chat_line);
    // Agent: each call's first token and the rest.
    std::vector<std::string> calls;
    plot::Series first{"first token", theme::prefill_bar_rgb, {}}, rest{"rest of the answer", theme::decode_bar_rgb, {}};
    for (std::size_t i = 0; i < w.agent.calls.size(); ++i) {
        calls.push_back(fmt::format("call {}", i + 1));
        first.values.push_back(w.agent.calls[i].ttft_ms);
        rest.values.push_back(w.agent.calls[i].total_ms - w.agent.calls[i].ttft_ms);
    }
    plot::legend(agent_legend);
    plot::grouped_bars(ImVec2(avail.x, h), calls, {first, rest}, "ms");
    text_wrapped(agent_line);
}

}  // namespace sixstep::ui
