// The knobs a lesson step allows, each drawn from its declaration in the
// model's description (type, range): a checkbox for a bool, a radio button
// per choice, a slider for a number with a usual range, a text field for the
// rest ("3 km", a prompt). Every change is a command to the session; the
// values shown always come from the snapshot.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <imgui.h>

#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace {

// A knob's value as a number; the fallback when its text is not one.
double as_number(const std::string& text, double fallback) {
    try {
        return std::stod(text);
    } catch (...) {
        return fallback;
    }
}

// Four knobs or more, none of them a row of radio buttons: two to a row, so
// that the narration above keeps its room (lesson 7's five sampler knobs).
bool two_columns(const app::LessonState& st) {
    if (st.knobs.size() < 4) return false;
    for (const auto& name : st.knobs) {
        const Knob* k = st.description ? st.description->find_knob(name) : nullptr;
        if (k && k->type == KnobType::choice) return false;
    }
    return true;
}

}  // namespace

std::string knob_slider(const std::string& value, double lo, double hi, bool whole) {
    // A value typed outside where values usually lie (Ctrl+click) widens the
    // slider rather than showing its end as the value.
    const double now = as_number(value, lo);
    lo = std::min(lo, now), hi = std::max(hi, now);
    // A range over two decades or more (requests per day 10…100,000, a rate
    // 1…500) slides in ratios: linear, the low end is a pixel or two wide.
    const ImGuiSliderFlags flags = lo > 0 && hi >= 100 * lo ? ImGuiSliderFlags_Logarithmic : ImGuiSliderFlags_None;
    if (whole) {  // a count or a size
        int n = static_cast<int>(std::lround(std::clamp(as_number(value, lo), lo, hi)));
        ImGui::SliderInt("##v", &n, static_cast<int>(std::ceil(lo)), static_cast<int>(std::floor(hi)), "%d", flags);
        return ImGui::IsItemDeactivatedAfterEdit() ? std::to_string(n) : std::string();
    }
    float x = static_cast<float>(as_number(value, lo));
    // Decimals that matter at this size: "100000", "12.5", "0.95".
    const float mag = std::fabs(x);
    const char* shown = mag >= 100 ? "%.0f" : mag >= 10 ? "%.1f" : "%.2f";
    ImGui::SliderFloat("##v", &x, static_cast<float>(lo), static_cast<float>(hi), shown, flags);
    return ImGui::IsItemDeactivatedAfterEdit() ? format_value(Value{double{x}}, 3) : std::string();
}

int knobs_rows(const app::Snapshot& s) {
    const int n = static_cast<int>(s.state.knobs.size());
    return two_columns(s.state) ? (n + 1) / 2 : n;
}

namespace {

// A knob's name as a label: in the lesson's language, as words ("max batch",
// not max_batch) — the sampler's top_k and the like as the narration writes them.
std::string knob_label(const std::string& name) { return key_as_words(tr(name.c_str())); }

// The knob's value now: the request's field, or the model's setting.
std::string current_value(const app::LessonState& st, const Knob& k) {
    if (k.target == KnobTarget::setting) return st.setting(k.name);
    const std::string* v = st.request.get(k.name);
    return v ? *v : std::string();
}

// Free text, applied on Enter or when the field loses focus (Enter ends the
// edit too: one apply, not two). Empty (the request leaves the field out), it
// shows the model's default greyed. The text starts again from the value
// whenever the value changes under it (a reload, a restart, a replay).
void text_field(const std::string& name, const std::string& value, const std::string& fallback, ViewState& v,
                app::Session& session) {
    auto [it, fresh] = v.knob_text.try_emplace(name, value);
    std::string& seed = v.knob_seed[name];
    if (fresh || seed != value) it->second = seed = value;
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s", it->second.c_str());
    ImGui::InputTextWithHint("##v", fallback.c_str(), buf, sizeof buf);
    if (ImGui::IsItemDeactivatedAfterEdit()) session.turn_knob(name, buf);
    it->second = buf;
}

void knob_widget(const Knob& k, const app::LessonState& st, ViewState& v, app::Session& session) {
    const std::string value = current_value(st, k);
    switch (k.type) {
        case KnobType::boolean: {
            bool on = value == k.spelled(true);
            // A setting reads on/OFF (OFF is the surprise); a request field yes/no.
            const char* label = tr(k.target == KnobTarget::setting ? (on ? "on" : "OFF") : (on ? "yes" : "no"));
            if (ImGui::Checkbox(label, &on)) session.turn_knob(k.name, k.spelled(on));
            break;
        }
        case KnobType::choice: {
            for (size_t i = 0; i < k.choices.size(); ++i) {
                if (i) ImGui::SameLine();
                const std::string label = tr_value(k.choices[i]) + "##" + k.choices[i];  // "训练" for train
                if (ImGui::RadioButton(label.c_str(), value == k.choices[i])) session.turn_knob(k.name, k.choices[i]);
            }
            if (k.caution) {  // "dropout ON" in red, "dropout off" in green
                const bool risky = value == k.caution->value;
                ImGui::SameLine();
                ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(risky ? theme::bad_rgb : theme::good_rgb));
                ImGui::TextUnformatted(tr((risky ? k.caution->warning : k.caution->ok).c_str()));
                ImGui::PopStyleColor();
            }
            break;
        }
        case KnobType::number:
            if (k.has_slider()) {
                const std::string turned = knob_slider(value, k.slider_min, k.slider_max, k.whole);
                if (!turned.empty()) session.turn_knob(k.name, turned);
                break;
            }
            text_field(k.name, value, k.default_value, v, session);
            break;
        case KnobType::text: text_field(k.name, value, k.default_value, v, session); break;
    }
}

}  // namespace

void draw_knobs(const app::Snapshot& s, ViewState& v, app::Session& session) {
    const Rect& r = v.layout.knobs;
    if (begin_panel("##knobs", r)) {
        const app::LessonState& st = s.state;
        panel_title(tr("Knobs"));
        if (v.knob_text_position != st.position) {  // a new step: start from its request
            v.knob_text.clear();
            v.knob_seed.clear();
            v.knob_text_position = st.position;
        }
        // A knob turned while a step runs would land on the step after it
        // finishes and run it again: the knobs wait with the class.
        ImGui::BeginDisabled(session.work().running);
        const bool pairs = two_columns(st);
        const float column_w = pairs ? ImGui::GetContentRegionAvail().x * 0.5f : r.w;
        float label_w = r.w * 0.38f;
        if (pairs) {  // the longest label, and the rest of the column for the field
            label_w = 0;
            for (const auto& name : st.knobs) label_w = std::max(label_w, ImGui::CalcTextSize(knob_label(name).c_str()).x);
            label_w = std::min(label_w + ImGui::GetStyle().ItemSpacing.x * 2, column_w * 0.6f);
        }
        int i = 0;
        for (const auto& name : st.knobs) {
            const Knob* k = st.description ? st.description->find_knob(name) : nullptr;
            if (!k) continue;  // the lesson loader only lets declared knobs through
            const float x0 = pairs && i % 2 ? ImGui::GetCursorPosX() + column_w : 0.0f;
            if (x0 > 0) ImGui::SameLine(x0);
            ++i;
            ImGui::PushID(name.c_str());
            ImGui::AlignTextToFramePadding();
            ImGui::TextUnformatted(knob_label(name).c_str());
            ImGui::SameLine(x0 + label_w);
            ImGui::SetNextItemWidth(pairs ? column_w - label_w - ImGui::GetStyle().ItemSpacing.x * 2 : -1.0f);
            knob_widget(*k, st, v, session);
            ImGui::PopID();
        }
        ImGui::EndDisabled();
    }
    end_panel();
}

}  // namespace sixstep::ui
