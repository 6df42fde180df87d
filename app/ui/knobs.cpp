// The knobs a lesson step allows: the class edits the request (distance with
// units, congestion, express lane) or the settings (normalization, eval
// mode) and watches the stages recompute. Every change is a command to the
// session; the values shown always come from the snapshot.
#include <cstdio>
#include <cstring>
#include <string>

#include <imgui.h>

#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

int knobs_rows(const app::Snapshot& s) { return static_cast<int>(s.state.knobs.size()); }

namespace {

std::string request_value(const app::LessonState& st, const std::string& name) {
    const std::string* v = st.request.get(name);
    return v ? *v : std::string();
}

double as_number(const std::string& text, double fallback) {
    try {
        size_t used = 0;
        const double d = std::stod(text, &used);
        return d;
    } catch (...) {
        return fallback;
    }
}

}  // namespace

void draw_knobs(const app::Snapshot& s, ViewState& v, app::Session& session) {
    const Rect& r = v.layout.knobs;
    if (begin_panel("##knobs", r)) {
        const app::LessonState& st = s.state;
        const std::string& lang = st.language;
        panel_title(tr(lang, "Knobs"));
        if (v.knob_text_position != st.position) {  // a new step: start from its request
            v.knob_text.clear();
            v.knob_text_position = st.position;
        }
        const float label_w = r.w * 0.38f;
        for (const auto& name : st.knobs) {
            ImGui::PushID(name.c_str());
            ImGui::AlignTextToFramePadding();
            ImGui::TextUnformatted(tr(lang, name.c_str()));
            ImGui::SameLine(label_w);
            ImGui::SetNextItemWidth(-1);
            if (name == "normalize" || name == "range_check") {
                bool on = name == "normalize" ? st.settings.normalize : st.settings.range_check;
                if (ImGui::Checkbox(on ? "on" : "OFF", &on)) session.turn_knob(name, on ? "true" : "false");
            } else if (name == "mode") {
                bool eval = st.settings.mode == delivery::Mode::eval;
                if (ImGui::Checkbox("eval()", &eval)) session.turn_knob(name, eval ? "eval" : "train");
                ImGui::SameLine();
                ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(eval ? theme::good_rgb : theme::bad_rgb));
                ImGui::TextUnformatted(eval ? tr(lang, "eval mode") : tr(lang, "train mode"));
                ImGui::PopStyleColor();
            } else if (name == "dropout") {
                float p = static_cast<float>(st.settings.dropout);
                ImGui::SliderFloat("##v", &p, 0.0f, 0.9f, "%.2f");
                if (ImGui::IsItemDeactivatedAfterEdit()) session.turn_knob(name, pretty_number(p, 3));
            } else if (name == "express_lane") {
                bool on = as_number(request_value(st, name), 0) != 0;
                if (ImGui::Checkbox(on ? "yes" : "no", &on)) session.turn_knob(name, on ? "1" : "0");
            } else if (name == "congestion") {
                float c = static_cast<float>(as_number(request_value(st, name), 0));
                ImGui::SliderFloat("##v", &c, 0.0f, 1.0f, "%.2f");
                if (ImGui::IsItemDeactivatedAfterEdit()) {
                    char buf[32];
                    std::snprintf(buf, sizeof buf, "%.2f", c);
                    session.turn_knob(name, buf);
                }
            } else {
                // Free text with units: "3 km", "3000 m", "2 mi". Applied on Enter.
                auto it = v.knob_text.find(name);
                if (it == v.knob_text.end()) it = v.knob_text.emplace(name, request_value(st, name)).first;
                char buf[128];
                std::snprintf(buf, sizeof buf, "%s", it->second.c_str());
                if (ImGui::InputText("##v", buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue))
                    session.turn_knob(name, buf);
                if (ImGui::IsItemDeactivatedAfterEdit()) session.turn_knob(name, buf);
                it->second = buf;
            }
            ImGui::PopID();
        }
    }
    end_panel();
}

}  // namespace sixstep::ui
