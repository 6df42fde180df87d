// The right-hand area. For a model that offers panels (the transformer's:
// tokens, next token, KV cache, …) a strip of tabs picks them; a lesson step
// chooses with `show:` and a click overrides it until the next step (Shift+
// click stacks a second panel under the first). The window tells the session
// which panels it shows, so that tensors are captured only while a panel
// that needs them is on screen. Without panels: the inspector, or the
// training view while the lesson trains.
#include <algorithm>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace {

const char* inspector_name = "inspector";

// Tab labels, short enough for nine tabs at 1280×720.
const char* tab_label(const std::string& name) {
    static const std::pair<const char*, const char*> labels[] = {
        {"inspector", "Inspector"},  {"tokens", "Tokens"},       {"next_token", "Next token"},
        {"kv_cache", "KV cache"},    {"timeline", "Timeline"},   {"attention", "Attention"},
        {"logit_lens", "Logit lens"}, {"kv_experiment", "No cache?"}, {"kv_calc", "KV memory"},
        {"real_server", "Real server"},
    };
    for (const auto& [n, l] : labels)
        if (name == n) return l;
    return name.c_str();
}

// The tabs: the inspector and the panels this lesson shows somewhere (or
// all the model's, when it names none), and any shown now; the model's
// other panels behind "more". Ten tabs in one row at 1280x720 had 12 px
// text; a lesson's three or four read at the size of the rest.
void draw_tabs(const app::Snapshot& s, ViewState& v, const std::vector<std::string>& shown) {
    const Rect& r = v.layout.tabs;
    if (begin_panel("##tabs", r, false, theme::background_rgb)) {
        const auto& used = s.state.panels_used;
        std::vector<std::string> names = {inspector_name}, more;
        for (const PanelInfo& p : s.state.description->panels) {
            const bool in_lesson = used.empty() || std::find(used.begin(), used.end(), p.name) != used.end() ||
                                   std::find(shown.begin(), shown.end(), p.name) != shown.end();
            (in_lesson ? names : more).push_back(p.name);
        }
        const char* more_label = tr("more\u2026");
        // One row of tabs: shrink the text when they would not fit. Only the
        // text scales with the window's font scale, not the buttons' padding
        // and the spacing between them.
        const ImGuiStyle& style = ImGui::GetStyle();
        float text = more.empty() ? 0 : ImGui::CalcTextSize(more_label).x;
        float fixed = 2 * style.WindowPadding.x + 2 * style.WindowBorderSize +
                      (more.empty() ? 0 : style.FramePadding.x * 2 + style.ItemSpacing.x);
        for (size_t i = 0; i < names.size(); ++i) {
            text += ImGui::CalcTextSize(tr(tab_label(names[i]))).x;
            fixed += style.FramePadding.x * 2 + (i ? style.ItemSpacing.x : 0.0f);
        }
        const float scale = std::clamp((r.w - fixed) / std::max(1.0f, text), 0.55f, 0.9f);
        ImGui::SetWindowFontScale(scale);
        ImGui::SetCursorPosY(std::max(0.0f, (r.h - ImGui::GetFrameHeight()) * 0.5f));
        const auto choose = [&](const std::string& name) {
            std::vector<std::string> next = {name};
            if (ImGui::GetIO().KeyShift && !shown.empty() && shown.front() != name) next = {shown.front(), name};
            v.panel_choice = next;
            v.panel_choice_position = s.state.position;
        };
        for (size_t i = 0; i < names.size(); ++i) {
            if (i) ImGui::SameLine();
            const bool on = std::find(shown.begin(), shown.end(), names[i]) != shown.end();
            ImGui::PushStyleColor(ImGuiCol_Button, theme::vec(on ? theme::accent_rgb : theme::panel_rgb));
            ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(on ? theme::header_text_rgb : theme::text_rgb));
            ImGui::PushID(static_cast<int>(i));
            if (ImGui::Button(tr(tab_label(names[i])))) choose(names[i]);
            ImGui::PopID();
            ImGui::PopStyleColor(2);
        }
        if (!more.empty()) {
            ImGui::SameLine();
            if (ImGui::Button(more_label)) ImGui::OpenPopup("##more_panels");
            if (ImGui::BeginPopup("##more_panels")) {
                for (const std::string& name : more)
                    if (ImGui::Selectable(tr(tab_label(name)))) choose(name);
                ImGui::EndPopup();
            }
        }
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

// The inspector draws into the layout's inspector rectangle; lend it the slot.
void draw_inspector_in(const app::Snapshot& s, ViewState& v, const Rect& r) {
    const Rect whole = v.layout.inspector;
    v.layout.inspector = r;
    draw_inspector(s, v);
    v.layout.inspector = whole;
}

void draw_one(const std::string& name, const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r) {
    if (name == "tokens") draw_tokens_panel(s, v, session, r);
    else if (name == "next_token") draw_next_token_panel(s, v, session, r);
    else if (name == "kv_cache") draw_kv_cache_panel(s, v, session, r);
    else if (name == "timeline") draw_timeline_panel(s, v, session, r);
    else if (name == "attention") draw_attention_panel(s, v, session, r);
    else if (name == "logit_lens") draw_logit_lens_panel(s, v, session, r);
    else if (name == "kv_experiment") draw_kv_experiment_panel(s, v, session, r);
    else if (name == "kv_calc") draw_kv_calc_panel(s, v, session, r);
    else if (name == "real_server") draw_real_server_panel(s, v, session, r);
    else draw_inspector_in(s, v, r);
}

}  // namespace

std::vector<std::string> shown_panels(const app::Snapshot& s, const ViewState& v) {
    const ModelDescription* d = s.state.description;
    if (!d || d->panels.empty()) return {inspector_name};
    std::vector<std::string> out;
    const std::vector<std::string>& wanted =
        !v.panel_choice.empty() && v.panel_choice_position == s.state.position ? v.panel_choice : s.state.panels.shown;
    for (const auto& name : wanted)
        if (name == inspector_name || d->find_panel(name)) out.push_back(name);
    if (out.empty()) out.push_back(inspector_name);
    return out;
}

int right_pane(const app::Snapshot& s, const ViewState& v) {
    if (v.right_tab >= 0) return v.right_tab;
    const bool training = s.state.training.active && !s.state.training.loss.empty();
    return (training && s.state.trace.empty()) ? 1 : serving_exhibit(s) != nullptr ? 2 : 0;
}

void next_right_pane(const app::Snapshot& s, ViewState& v) {
    std::vector<int> panes{0};  // the inspector, then what this step has
    if (s.state.training.active && !s.state.training.loss.empty()) panes.push_back(1);
    if (serving_exhibit(s) != nullptr) panes.push_back(2);
    const auto at = std::find(panes.begin(), panes.end(), right_pane(s, v));
    v.right_tab = at == panes.end() || at + 1 == panes.end() ? panes.front() : *(at + 1);
}

void show_answer(const app::Snapshot& s, ViewState& v) {
    v.selected_stage = static_cast<int>(stage_count) - 1;
    v.selection_version = static_cast<std::uint64_t>(s.state.position);
    const ModelDescription* d = s.state.description;
    if (!d || d->panels.empty()) {
        v.right_tab = 0;
    } else {
        v.panel_choice = {inspector_name};
        v.panel_choice_position = s.state.position;
    }
}

void draw_panel_area(const app::Snapshot& s, ViewState& v, app::Session& session) {
    const ModelDescription* d = s.state.description;
    if (!d || d->panels.empty()) {
        // Training while the lesson trains, the serving charts once an
        // experiment ran, else the inspector.
        const bool training = s.state.training.active && !s.state.training.loss.empty();
        const bool charts = serving_exhibit(s) != nullptr;
        const int tab = right_pane(s, v);
        if (tab == 1 && training) draw_training(s, v);
        else if (tab == 2 && charts) draw_serving(s, v);
        else draw_inspector(s, v);
        return;
    }
    const std::vector<std::string> shown = shown_panels(s, v);
    // The session captures what the visible panels need (attention, logit lens).
    if (!v.panels_told_once || shown != v.panels_told) {
        std::vector<std::string> visible;
        for (const auto& name : shown)
            if (name != inspector_name) visible.push_back(name);
        session.show_in_window(visible);
        v.panels_told = shown;
        v.panels_told_once = true;
    }
    draw_tabs(s, v, shown);
    const int n = static_cast<int>(shown.size());
    for (int i = 0; i < n; ++i) draw_one(shown[static_cast<size_t>(i)], s, v, session, panel_slot(v.layout.inspector, shown, i));
}

void panel_message(const app::Snapshot& s, const char* panel) {
    const auto& m = s.state.panels.message;
    if (!m || m->panel != panel) return;
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::bad_rgb));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(("\u26a0 " + m->text).c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
}

std::string visible_piece(const std::string& piece) {
    std::string out;
    for (char c : piece) {
        if (c == ' ') out += "\u2423";
        else if (c == '\n') out += "\u21b5";
        else if (c == '\t') out += "\\t";
        else out += c;
    }
    return out;
}

}  // namespace sixstep::ui
