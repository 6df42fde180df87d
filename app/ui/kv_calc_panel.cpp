// The KV memory calculator (pipeline/serving/kv_calc.h) as a panel: a
// preset shape (the article's 36-layer model, the bundled one), an element
// type, tokens per session and sessions; the engine computes bytes per token,
// per session and for all of them, and the panel shows its three lines with
// the numbers in them and where the formula does not hold. A lesson step
// names a preset with `kv_calc:`; the class edits it here.
#include <algorithm>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace {

// The fields start from what the engine last computed (a lesson's preset),
// once per step; then they are the class's.
void fill_fields(const app::PanelsState& p, ViewState& v, int position) {
    if (v.kv_calc_position == position) return;
    v.kv_calc_position = position;
    if (p.kv_calc) {
        const serving::KvCalcParams& q = p.kv_calc->params;
        v.kv_calc_preset = std::find(p.kv_presets.begin(), p.kv_presets.end(), q.shape_name) != p.kv_presets.end()
                               ? q.shape_name
                               : std::string();
        const std::string dtype = serving::kv_dtype_info(q.dtype).name;
        const auto it = std::find(p.kv_dtypes.begin(), p.kv_dtypes.end(), dtype);
        v.kv_calc_dtype = it == p.kv_dtypes.end() ? 0 : static_cast<int>(it - p.kv_dtypes.begin());
        v.kv_calc_tokens = static_cast<double>(p.kv_calc->n_tokens);
        v.kv_calc_sessions = static_cast<double>(p.kv_calc->n_sessions);
    } else if (v.kv_calc_preset.empty() && !p.kv_presets.empty()) {
        v.kv_calc_preset = p.kv_presets.front();
        v.kv_calc_dtype = 1;  // f16, the usual serving type
        v.kv_calc_tokens = 4096;
        v.kv_calc_sessions = 1;
    }
}

}  // namespace

void draw_kv_calc_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r) {
    if (begin_panel("##kv_calc", r)) {
        const app::PanelsState& p = s.state.panels;
        fill_fields(p, v, s.state.position);
        panel_title(tr("KV memory calculator"));
        ImGui::SetWindowFontScale(0.85f);
        bool compute = false;
        for (const auto& name : p.kv_presets) {
            ImGui::SameLine();
            const bool on = name == v.kv_calc_preset;
            ImGui::PushStyleColor(ImGuiCol_Button, theme::vec(on ? theme::accent_rgb : theme::panel_rgb));
            ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(on ? theme::header_text_rgb : theme::text_rgb));
            if (ImGui::SmallButton(name.c_str())) v.kv_calc_preset = name, compute = true;
            ImGui::PopStyleColor(2);
        }
        const float w = ImGui::CalcTextSize("00000000").x;
        ImGui::TextUnformatted(tr("dtype"));
        ImGui::SameLine();
        ImGui::SetNextItemWidth(w);
        const char* current = v.kv_calc_dtype < static_cast<int>(p.kv_dtypes.size()) ? p.kv_dtypes[static_cast<std::size_t>(v.kv_calc_dtype)].c_str() : "";
        if (ImGui::BeginCombo("##dtype", current)) {
            for (size_t i = 0; i < p.kv_dtypes.size(); ++i)
                if (ImGui::Selectable(p.kv_dtypes[i].c_str(), static_cast<int>(i) == v.kv_calc_dtype))
                    v.kv_calc_dtype = static_cast<int>(i), compute = true;
            ImGui::EndCombo();
        }
        ImGui::SameLine();
        ImGui::TextUnformatted(tr("token count"));
        ImGui::SameLine();
        ImGui::SetNextItemWidth(w * 1.4f);
        ImGui::InputDouble("##tokens", &v.kv_calc_tokens, 0, 0, "%.0f");
        compute |= ImGui::IsItemDeactivatedAfterEdit();
        ImGui::SameLine();
        ImGui::TextUnformatted(tr("sessions"));
        ImGui::SameLine();
        ImGui::SetNextItemWidth(w);
        ImGui::InputDouble("##sessions", &v.kv_calc_sessions, 0, 0, "%.0f");
        compute |= ImGui::IsItemDeactivatedAfterEdit();
        if (compute) {
            app::KvCalcSpec spec;
            spec.preset = v.kv_calc_preset;
            if (v.kv_calc_dtype < static_cast<int>(p.kv_dtypes.size())) spec.dtype = p.kv_dtypes[static_cast<std::size_t>(v.kv_calc_dtype)];
            spec.n_tokens = v.kv_calc_tokens;
            spec.n_sessions = v.kv_calc_sessions;
            session.kv_calc(spec);
        }
        ImGui::SetWindowFontScale(1.0f);
        panel_message(s, "kv_calc");
        if (!p.kv_calc) {
            ImGui::TextDisabled("%s", tr("Pick a preset: the engine computes the bytes."));
            end_panel();
            return;
        }
        const serving::KvCalcResult& k = *p.kv_calc;
        char line[256];
        std::snprintf(line, sizeof line, "%s: %lld %s \u00d7 %lld %s \u00d7 head_dim %lld, %s", k.params.shape_name.c_str(),
                      static_cast<long long>(k.n_layer), tr("layers"), static_cast<long long>(k.n_head_kv),
                      tr("KV heads"), static_cast<long long>(k.head_dim), serving::kv_dtype_info(k.params.dtype).name);
        ImGui::PushFont(fonts().bold);
        ImGui::TextUnformatted(line);
        ImGui::PopFont();
        ImGui::PushTextWrapPos(0.0f);
        ImGui::PushFont(fonts().mono);
        ImGui::SetWindowFontScale(0.85f);
        // A line too long for the panel breaks before its numbers (the second
        // " = "), so that no number is split across two lines.
        for (const auto& en : k.formula) {
            const std::string f = tr(en);
            const std::size_t first = f.find(" = ");
            const std::size_t second = first == std::string::npos ? first : f.find(" = ", first + 3);
            if (second == std::string::npos || ImGui::CalcTextSize(f.c_str()).x <= ImGui::GetContentRegionAvail().x) {
                ImGui::TextUnformatted(f.c_str());
                continue;
            }
            ImGui::TextUnformatted(f.substr(0, second).c_str());
            ImGui::Indent(ImGui::GetFontSize());
            ImGui::TextUnformatted(f.substr(second + 1).c_str());
            ImGui::Unindent(ImGui::GetFontSize());
        }
        ImGui::PopFont();
        if (!k.params.dtype_why.empty()) ImGui::TextDisabled("%s", tr(k.params.dtype_why));
        // The notes on this shape, then the general caveats (the same for
        // every shape) folded under one line that names them: the formula
        // and its numbers keep the pane at both projector sizes.
        const std::size_t own = std::min(k.params.shape_notes.size(), k.notes.size());
        for (std::size_t i = 0; i < own; ++i) ImGui::TextColored(theme::vec(theme::muted_rgb), "\u2022 %s", k.notes[i].c_str());
        if (k.notes.size() > own &&
            ImGui::CollapsingHeader(tr("Where the formula does not hold: MLA, sliding windows, recurrent layers")))
            for (std::size_t i = own; i < k.notes.size(); ++i)
                ImGui::TextColored(theme::vec(theme::muted_rgb), "\u2022 %s", k.notes[i].c_str());
        ImGui::SetWindowFontScale(1.0f);
        ImGui::PopTextWrapPos();
    }
    end_panel();
}

}  // namespace sixstep::ui
