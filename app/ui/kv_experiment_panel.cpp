// With vs without the KV cache: the same greedy generation twice — once
// reading one new token per step with the cache, once recomputing the whole
// sequence at every step — and each step's forward time, measured. Without
// the cache the line climbs with the context; with it, it stays flat. The
// tokens are the same and the logits agree to rounding, which is the proof
// that the cache is only a saving. Run here (a button) or by a lesson step.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

void draw_kv_experiment_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r) {
    if (begin_panel("##kv_experiment", r)) {
        const auto& x = s.state.panels.kv_experiment;
        panel_title(tr("With vs without the KV cache"));
        // The slider shows the length of the run on screen whenever a new
        // one arrives or the step changes (a lesson's `kv_experiment: 48`);
        // between those it is the class's, to choose the next run.
        const int ran = x ? static_cast<int>(x->result.steps.size()) : 0;
        if (ran > 0 && (ran != v.kv_experiment_seen || s.state.position != v.kv_experiment_position)) {
            v.kv_experiment_seen = ran;
            v.kv_experiment_position = s.state.position;
            v.kv_experiment_tokens = ran;
        }
        ImGui::SameLine(0, v.font_px);
        ImGui::SetNextItemWidth(ImGui::CalcTextSize("000000").x * 1.6f);
        ImGui::SliderInt("##n", &v.kv_experiment_tokens, 4, 128);
        ImGui::SameLine();
        if (ImGui::SmallButton(tr("run both"))) session.run_kv_experiment(v.kv_experiment_tokens);
        panel_message(s, "kv_experiment");
        if (!x || x->result.steps.empty()) {
            ImGui::TextDisabled("%s", tr("Generates from the current prompt twice: with the cache, then recomputing everything."));
            end_panel();
            return;
        }
        const llm::KvExperiment& e = x->result;
        const int n = static_cast<int>(e.steps.size());
        char line[256];
        ImGui::SetWindowFontScale(0.85f);
        std::snprintf(line, sizeof line, "%s %s \u00b7 %s %s", tr("same tokens:"), e.identical_tokens ? "\u2713" : "\u2717",
                      tr("largest logit difference"), pretty_number(e.max_logit_diff, 2).c_str());
        ImGui::TextColored(theme::vec(e.identical_tokens ? theme::good_rgb : theme::bad_rgb), "%s", line);
        ImGui::TextUnformatted(tr(fmt::format("tokens read by the model: {} with the cache, {} without",
                                              e.forward_tokens_cached, e.forward_tokens_uncached)));

        // Each step's forward pass, both ways. Step 0 is the prompt (a prefill either way).
        std::vector<double> xs, cached, uncached;
        double top = 0;
        for (const auto& st : e.steps) {
            xs.push_back(st.index);
            cached.push_back(st.cached_ms);
            uncached.push_back(st.uncached_ms);
            top = std::max({top, st.cached_ms, st.uncached_ms});
        }
        const std::vector<std::pair<std::uint32_t, std::string>> legend{
            {theme::cached_rgb, "with the cache: one new token per step"},
            {theme::uncached_rgb, "without: the whole sequence every step"}};
        const float text_h = ImGui::GetTextLineHeightWithSpacing();
        // Under the chart: its x labels, the legend (two lines in a narrow pane), the totals.
        const float below = text_h * (1.4f + plot::legend_lines(legend, ImGui::GetContentRegionAvail().x));
        const float chart_h = std::max(text_h * 3, ImGui::GetContentRegionAvail().y - below);
        const plot::Frame f = plot::begin(ImVec2(ImGui::GetContentRegionAvail().x, chart_h), 0, std::max(1, n - 1), 0,
                                          plot::nice_ceiling(top * 1.1), ImGui::CalcTextSize("0000").x, text_h * 0.8f);
        plot::y_axis(f, "ms");
        plot::line(f, xs, uncached, theme::uncached_rgb, 2.5f, n <= 48);
        plot::line(f, xs, cached, theme::cached_rgb, 2.5f, n <= 48);
        plot::label(ImVec2(f.min.x, f.max.y + 2), "0", theme::muted_rgb, 0, 0.8f);
        std::snprintf(line, sizeof line, "%s %d", tr("step"), n - 1);
        plot::label(ImVec2(f.max.x, f.max.y + 2), line, theme::muted_rgb, 1, 0.8f);
        plot::legend(legend);
        ImGui::TextUnformatted(tr(fmt::format("all steps: {} ms with \u00b7 {} ms without", pretty_number(e.cached_total_ms, 3),
                                              pretty_number(e.uncached_total_ms, 3))));
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

}  // namespace sixstep::ui
