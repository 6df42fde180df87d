// Quantization (lesson 12), from the serving exhibit: per weight type the
// bytes one decode step reads, the decode rate measured beside the rate the
// bytes alone predict, and the quality kept (perplexity, KL, top-1 agreement).
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

void draw_quantization_chart(const serving::ServingExhibit& e, ImVec2 avail) {
    const auto& rows = e.quantization;
    if (rows.empty()) return;
    std::vector<std::string> types;
    plot::Series mb{"bytes per decode step, MB", theme::lab_a_rgb, {}};
    plot::Series measured{"measured", theme::lab_a_rgb, {}}, predicted{"predicted from bytes", theme::lab_b_rgb, {}};
    for (const auto& r : rows) {
        types.push_back(r.type);
        mb.values.push_back(r.step_bytes / 1e6);
        measured.values.push_back(r.decode_tok_s);
        predicted.values.push_back(r.predicted_tok_s);
    }
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float h = std::max(90.0f, (avail.y - line * (4.5f + rows.size())) / 2);
    ImGui::TextUnformatted(tr("Weight bytes read per decode step"));
    plot::grouped_bars(ImVec2(avail.x, h), types, {mb}, "MB");
    plot::legend({{measured.rgb, "decode tokens/s, measured"}, {predicted.rgb, "predicted from bytes alone"}});
    plot::grouped_bars(ImVec2(avail.x, h), types, {measured, predicted}, "tok/s");
    ImGui::TextUnformatted(tr("Quality on the held-out stories"));
    for (const auto& r : rows)
        ImGui::TextUnformatted(tr(fmt::format("  {:<5} perplexity {:.4f}   KL {:.2e} nats   top-1 same {:.1f}%", r.type,
                                              r.perplexity, r.kl_mean, 100 * r.top1_agreement)));
}

}  // namespace sixstep::ui
