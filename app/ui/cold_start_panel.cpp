// Cold start (lesson 14), from the serving exhibit: each timed request split
// into the instance's load and the request itself, then the keep-warm
// comparison — every request after its idle gap, served by an instance that
// unloads when idle and by one kept warm.
#include <map>
#include <string>
#include <string_view>
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

namespace {

// Each request's bar, by what it found: "from disk", "fresh" (a new
// instance, the file in the page cache) or "warm"; numbered where a kind
// repeats ("fresh 1", "fresh 2"), so that two bars never read alike.
std::vector<std::string> request_names(const std::vector<llm::RequestTiming>& requests) {
    const auto kind = [](llm::Start s) {
        return s == llm::Start::warm ? "warm" : s == llm::Start::cold_disk ? "from disk" : "fresh";
    };
    // Two passes, as many kinds as there are: a warm run may serve a thousand
    // requests, and this runs every frame.
    std::map<std::string_view, int> of, nth;
    for (const llm::RequestTiming& t : requests) ++of[kind(t.start)];
    std::vector<std::string> names;
    names.reserve(requests.size());
    for (const llm::RequestTiming& t : requests) {
        const std::string_view k = kind(t.start);
        const int n = ++nth[k];
        names.push_back(of[k] > 1 ? fmt::format("{} {}", k, n) : std::string(k));
    }
    return names;
}

}  // namespace

void draw_cold_start_chart(const serving::ServingExhibit& e, ImVec2 avail) {
    if (!e.cold_start) return;
    const llm::ColdStartResult& r = *e.cold_start;
    const std::vector<std::string> names = request_names(r.requests);
    plot::Series load{"load", theme::lab_b_rgb, {}}, request{"request", theme::lab_a_rgb, {}};
    for (const llm::RequestTiming& t : r.requests) {
        load.values.push_back(t.load_ms);
        request.values.push_back(t.request_ms);
    }
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float h = std::max(90.0f, (avail.y - line * 6) / 2);
    plot::legend({{load.rgb, "load (map, vocabulary, backend), ms"}, {request.rgb, "the request, ms"}});
    plot::grouped_bars(ImVec2(avail.x, h), names, {load, request}, "ms");
    const llm::KeepWarm& k = r.keep_warm;
    if (k.rows.empty()) return;
    std::vector<std::string> gaps;
    // Two policies, in colours of their own: the first chart's orange and
    // blue mean load and request, and the room reads them so here too.
    constexpr std::uint32_t unloads_rgb = 0x7C3AED, kept_rgb = 0x0F766E;
    plot::Series zero{"unloads when idle", unloads_rgb, {}}, kept{"kept warm", kept_rgb, {}};
    for (const llm::KeepWarmRow& row : k.rows) {
        gaps.push_back(fmt::format("{:g} s{}", row.idle_s, row.unloaded ? " (cold)" : ""));
        zero.values.push_back(row.scale_to_zero_ms);
        kept.values.push_back(row.kept_warm_ms);
    }
    // What the second chart's axes are: its bars alone read as the first's.
    ImGui::TextColored(theme::vec(theme::muted_rgb), "%s", tr("each request's time after the idle gap under it"));
    plot::legend({{zero.rgb, "unloads when idle"}, {kept.rgb, "kept warm"}});
    plot::grouped_bars(ImVec2(avail.x, h), gaps, {zero, kept}, "ms");
    text_wrapped(tr(fmt::format("weights held {:.0f} s against {:.0f} s; {} cold start{}", k.scale_to_zero_held_s,
                                k.kept_warm_held_s, k.n_cold, k.n_cold == 1 ? "" : "s")));
}

}  // namespace sixstep::ui
