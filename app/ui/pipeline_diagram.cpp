// The six-step diagram: six boxes in order, the stage that ran last filled
// in amber, finished stages in green with their output, and the request's
// values travelling in a lane underneath from box to box.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/text_capture.h"
#include "app/ui/theme.h"
#include "pipeline/core/text.h"
#include "pipeline/core/trace_keys.h"

namespace sixstep::ui {

namespace {

// Generated text may hold line breaks; a box or the chip shows one line (↵).
std::string one_line(std::string s) {
    std::string out;
    for (char c : s) {
        if (c == '\n') out += "\u21b5";
        else if (c != '\r') out += c;
    }
    return out;
}

// The request before stage 1 ran: its raw fields, the first (the prompt, the
// distance, the experiment) alone and the others by name, "The cat sat on
// the · max tokens 6 · temperature 0": bare values read as a riddle.
std::string raw_request(const app::LessonState& st) {
    std::string s;
    bool first = true;
    for (const auto& [k, v] : st.request.fields) {
        s += first ? v : " \u00b7 " + key_as_words(tr(k)) + " " + v;
        first = false;
    }
    return s;
}

void arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float head) {
    dl->AddLine(a, ImVec2(b.x - head * 0.9f, b.y), color, thickness);
    dl->AddTriangleFilled(ImVec2(b.x, b.y), ImVec2(b.x - head, b.y - head * 0.6f), ImVec2(b.x - head, b.y + head * 0.6f),
                          color);
}

// While a lesson trains (and no request is being served), the diagram shows
// what inference is not: forward, loss, gradients, update — in a loop.
void draw_training_loop(const app::Snapshot& s, ViewState& v) {
    const Fonts& F = fonts();
    const float f = v.font_px;
    const Rect& r = v.layout.diagram;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const app::TrainingState& t = s.state.training;
    const bool frozen = t.frozen;
    const char* names[4] = {"forward", "loss", "gradients", "update"};
    std::string values[4];
    if (t.last) {
        const auto& l = *t.last;
        if (!l.predictions.empty() && !l.labels.empty())
            values[0] = "\u0177 " + pretty_number(l.predictions[0], 3) + "  y " + pretty_number(l.labels[0], 3);
        values[1] = pretty_number(l.loss, 4);
        values[2] = pretty_value(l.grad, 3);
        values[3] = pretty_value(l.params, 3);
    }
    // Four boxes over the width of the six.
    const Rect first = stage_box(r, 0, f), last = stage_box(r, 5, f);
    const float gap = std::round(f * 1.6f);
    const float w = (last.right() - first.x - 3 * gap) / 4.0f;
    Rect boxes[4];
    for (int i = 0; i < 4; ++i) boxes[i] = {first.x + i * (w + gap), first.y, w, first.h};
    const float pad = f * 0.4f;
    for (int i = 0; i < 4; ++i) {
        const Rect& b = boxes[i];
        const std::uint32_t fill = frozen ? 0xF3F4F6 : theme::done_rgb, border = frozen ? theme::pending_border_rgb : theme::done_border_rgb;
        dl->AddRectFilled(ImVec2(b.x, b.y), ImVec2(b.right(), b.bottom()), theme::col(fill), f * 0.35f);
        dl->AddRect(ImVec2(b.x, b.y), ImVec2(b.right(), b.bottom()), theme::col(border), f * 0.35f, 0, 2.5f);
        add_text(dl, F.bold, F.bold->FontSize, ImVec2(b.x + pad, b.y + pad), theme::col(frozen ? theme::muted_rgb : theme::text_rgb),
                    tr(names[i]));
        ImFont* hf = i == 1 ? F.big : F.bold;
        const std::string val = fit_clauses(hf, hf->FontSize, values[i], b.w - 2 * pad);
        add_text(dl, hf, hf->FontSize, ImVec2(b.x + pad, b.y + pad + F.bold->FontSize + pad * 0.4f),
                    theme::col(frozen ? theme::muted_rgb : theme::text_rgb), val.c_str());
        if (i < 3) {
            const float y = b.y + b.h * 0.5f;
            arrow(dl, ImVec2(b.right() + 3, y), ImVec2(boxes[i + 1].x - 3, y),
                  theme::col(frozen ? theme::pending_border_rgb : theme::done_border_rgb), 4.0f, f * 0.45f);
        }
    }
    // The loop back from update to forward, with the step count on it.
    const Rect lane = packet_lane(r, f);
    const float ly = lane.y + lane.h * 0.5f;
    const float x0 = boxes[0].x + boxes[0].w * 0.5f, x3 = boxes[3].x + boxes[3].w * 0.5f;
    const ImU32 loop_col = theme::col(frozen ? theme::pending_border_rgb : theme::accent_rgb);
    dl->AddLine(ImVec2(x3, boxes[3].bottom() + 2), ImVec2(x3, ly), loop_col, 3.0f);
    dl->AddLine(ImVec2(x3, ly), ImVec2(x0, ly), loop_col, 3.0f);
    const float head = f * 0.45f;
    dl->AddLine(ImVec2(x0, ly), ImVec2(x0, boxes[0].bottom() + head), loop_col, 3.0f);
    dl->AddTriangleFilled(ImVec2(x0, boxes[0].bottom() + 2), ImVec2(x0 - head * 0.6f, boxes[0].bottom() + head + 2),
                          ImVec2(x0 + head * 0.6f, boxes[0].bottom() + head + 2), loop_col);
    char label[96];
    const char* plural = t.loss.size() == 1 ? "" : "s";
    if (frozen)
        std::snprintf(label, sizeof label, "\u2744 frozen \u2014 %zu step%s, never again", t.loss.size(), plural);
    else
        std::snprintf(label, sizeof label, "\u21bb %zu step%s", t.loss.size(), plural);
    const char* shown = tr(label);
    const ImVec2 ls = F.bold->CalcTextSizeA(F.bold->FontSize, 1e9f, 0, shown);
    const float lx = (x0 + x3) * 0.5f - ls.x * 0.5f - pad;
    dl->AddRectFilled(ImVec2(lx, ly - ls.y * 0.5f - 2), ImVec2(lx + ls.x + 2 * pad, ly + ls.y * 0.5f + 2), loop_col, ls.y);
    add_text(dl, F.bold, F.bold->FontSize, ImVec2(lx + pad, ly - ls.y * 0.5f), theme::col(0xFFFFFF), shown);
}

}  // namespace

int active_stage(const app::Snapshot& s) {
    if (!s.has_lesson) return -1;
    if (s.state.last_stage) return stage_index(*s.state.last_stage);
    return -1;
}

void draw_pipeline_diagram(const app::Snapshot& s, ViewState& v) {
    const Rect& r = v.layout.diagram;
    if (!begin_panel("##diagram", r)) {
        end_panel();
        return;
    }
    const Fonts& F = fonts();
    const float f = v.font_px;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const app::LessonState& st = s.state;
    if (s.has_lesson && st.training.active && !st.training.loss.empty() && st.trace.empty()) {
        draw_training_loop(s, v);
        end_panel();
        return;
    }
    const int active = active_stage(s);
    const int next = st.next_stage ? stage_index(*st.next_stage) : -1;
    const int failed = st.failed_stage ? stage_index(*st.failed_stage) : -1;

    // ---- the six boxes ----
    for (int i = 0; i < stage_count; ++i) {
        const Stage stage = all_stages[static_cast<size_t>(i)];
        const TraceEvent* ev = s.has_lesson ? st.trace.last(stage) : nullptr;
        const Rect b = stage_box(r, i, f);
        const ImVec2 p0(b.x, b.y), p1(b.right(), b.bottom());
        const bool is_active = i == active, done = ev != nullptr, is_next = i == next, is_failed = i == failed;
        std::uint32_t fill = theme::pending_rgb, border = theme::pending_border_rgb, text = theme::muted_rgb;
        float thick = 2.0f;
        // The stage whose error stopped the request: red, as the error under the narration.
        if (is_failed) fill = theme::error_fill_rgb, border = theme::bad_rgb, text = theme::text_rgb, thick = 4.0f;
        else if (is_active) fill = theme::active_rgb, border = theme::active_border_rgb, text = theme::text_rgb, thick = 4.0f;
        else if (done) fill = theme::done_rgb, border = theme::done_border_rgb, text = theme::text_rgb, thick = 2.5f;
        else if (is_next) border = theme::accent_rgb, text = theme::text_rgb, thick = 2.5f;
        const float round = f * 0.35f;
        dl->AddRectFilled(p0, p1, theme::col(fill), round);
        dl->AddRect(p0, p1, theme::col(border), round, 0, thick);
        if (v.selected_stage == i) {
            const float o = 4.0f;
            dl->AddRect(ImVec2(p0.x - o, p0.y - o), ImVec2(p1.x + o, p1.y + o), theme::col(theme::accent_rgb), round + o, 0, 2.0f);
        }

        // Title: a numbered disc and the stage's name, shrunk to fit.
        const float pad = f * 0.4f;
        const float disc = F.bold->FontSize * 0.5f;
        const ImVec2 dc(b.x + pad + disc, b.y + pad + disc);
        dl->AddCircleFilled(dc, disc, theme::col(done || is_active || is_failed ? theme::text_rgb : theme::pending_border_rgb));
        const std::string n = std::to_string(i + 1);
        const ImVec2 ns = F.bold->CalcTextSizeA(F.bold->FontSize * 0.8f, 1e9f, 0, n.c_str());
        add_text(dl, F.bold, F.bold->FontSize * 0.8f, ImVec2(dc.x - ns.x * 0.5f, dc.y - ns.y * 0.5f), theme::col(0xFFFFFF),
                    n.c_str());
        const float tx = dc.x + disc + pad * 0.5f, tw = b.right() - pad * 0.5f - tx;
        const char* name = tr(stage_name(stage).data());
        float name_size = F.bold->FontSize;
        const float name_w = F.bold->CalcTextSizeA(name_size, 1e9f, 0, name).x;
        if (name_w > tw) name_size *= tw / name_w;
        add_text(dl, F.bold, name_size, ImVec2(tx, dc.y - name_size * 0.5f), theme::col(text), name);

        // Its output, in the big face when it fits; its time underneath.
        const float line2 = b.y + pad + F.bold->FontSize + pad * 0.4f;
        const float small = F.body->FontSize * 0.8f;
        if (ev) {
            const std::string h = one_line(headline_text(*ev, st.description));
            ImFont* hf = F.big;
            float hs = F.big->FontSize;
            if (hf->CalcTextSizeA(hs, 1e9f, 0, h.c_str()).x > b.w - 2 * pad) hf = F.bold, hs = F.bold->FontSize;
            if (hf->CalcTextSizeA(hs, 1e9f, 0, h.c_str()).x > b.w - 2 * pad) hf = F.body, hs = F.body->FontSize;
            const std::string fitted = fit_clauses(hf, hs, h, b.w - 2 * pad);  // "[10.8, 168 …", never "21…" for 213
            const float y = line2 + (F.big->FontSize - hs) * 0.5f;
            add_text(dl, hf, hs, ImVec2(b.x + pad, y), theme::col(theme::text_rgb), fitted.c_str());
            // The warning mark sits on this line, as tall as its text: a
            // larger one reached up into the headline on short boxes.
            const float mark = small * 0.6f;
            const float ms_room = b.w - 2 * pad - (ev->warnings.empty() ? 0.0f : 2 * mark + pad * 0.5f);
            std::string ms = ms_text(ev->elapsed_ms);
            const Field* cold = stage == Stage::load ? ev->find(keys::cold) : nullptr;
            if (cold && std::holds_alternative<std::string>(cold->value)) {
                const bool is_cold = std::get<std::string>(cold->value) == "yes";
                const std::string time = ms;
                ms = fmt::format("{} \u00b7 {}", is_cold ? tr("cold start") : tr("reused"), time);
                if (is_cold && F.body->CalcTextSizeA(small, 1e9f, 0, ms.c_str()).x > ms_room)
                    ms = fmt::format("{} \u00b7 {}", tr("cold"), time);  // the time whole rather than "start"
            } else if (const std::string what = headline_label(*ev, st.description); !what.empty()) {
                ms = what;  // what the big number is; beside it, the stage's time read as that number's (the inspector has it)
            }
            add_text(dl, F.body, small, ImVec2(b.x + pad, b.bottom() - pad * 0.5f - small), theme::col(theme::muted_rgb),
                        fit_text(F.body, small, ms, ms_room).c_str());
            if (!ev->warnings.empty()) {
                const ImVec2 c(b.right() - pad - mark, b.bottom() - pad * 0.5f - small * 0.5f);
                dl->AddCircleFilled(c, mark, theme::col(theme::bad_rgb));
                const ImVec2 es = F.bold->CalcTextSizeA(small, 1e9f, 0, "!");
                add_text(dl, F.bold, small, ImVec2(c.x - es.x * 0.5f, c.y - es.y * 0.5f), theme::col(0xFFFFFF), "!");
            }
        } else {
            const char* label = is_failed ? tr("error") : is_next ? tr("next") : "\u2014";
            const std::uint32_t ink = is_failed ? theme::bad_rgb : is_next ? theme::accent_rgb : theme::pending_border_rgb;
            ImFont* lf = is_failed ? F.big : F.body;
            add_text(dl, lf, lf->FontSize, ImVec2(b.x + pad, line2 + (F.big->FontSize - lf->FontSize) * 0.5f), theme::col(ink),
                     label);
        }

        // Click a box to inspect that stage.
        ImGui::SetCursorScreenPos(p0);
        ImGui::PushID(i);
        if (ImGui::InvisibleButton("box", ImVec2(b.w, b.h))) {
            v.selected_stage = v.selected_stage == i ? -1 : i;
            v.selection_version = static_cast<std::uint64_t>(st.position);
        }
        ImGui::PopID();

        // The arrow to the next box.
        if (i + 1 < stage_count) {
            const Rect nb = stage_box(r, i + 1, f);
            const float y = b.y + b.h * 0.5f;
            const bool flowed = st.trace.last(all_stages[static_cast<size_t>(i + 1)]) != nullptr;
            arrow(dl, ImVec2(b.right() + 3, y), ImVec2(nb.x - 3, y),
                  theme::col(flowed ? theme::done_border_rgb : theme::pending_border_rgb), flowed ? 4.0f : 2.5f, f * 0.45f);
        }
    }

    // ---- the request's data, travelling underneath ----
    // Before any request (lesson 06's calculator steps): why the six boxes
    // are empty, in the lane the request will travel.
    if (s.has_lesson && st.request.fields.empty() && st.trace.empty()) {
        const Rect lane = packet_lane(r, f);
        const char* idle = tr("no request yet: each box fills as a request goes through its step");
        const float size = F.body->FontSize * 0.85f;
        const std::string shown = fit_text(F.body, size, idle, lane.w - 2 * f);
        const ImVec2 sz = F.body->CalcTextSizeA(size, 1e9f, 0, shown.c_str());
        add_text(dl, F.body, size, ImVec2(lane.x + (lane.w - sz.x) * 0.5f, lane.y + (lane.h - sz.y) * 0.5f),
                 theme::col(theme::muted_rgb), shown.c_str());
    }
    if (s.has_lesson && !st.request.fields.empty()) {
        const Rect lane = packet_lane(r, f);
        const float cy = lane.y + lane.h * 0.5f;
        auto center_x = [&](float pos) {
            // pos −1 = before box 0; 0..5 = under box i.
            const Rect b0 = stage_box(r, 0, f), b1 = stage_box(r, 1, f);
            const float step = b1.x - b0.x;
            return b0.x + b0.w * 0.5f + pos * step;
        };
        // Target: under the box that ran last; before box 1 when none has.
        v.packet_target = active >= 0 ? static_cast<float>(active) : -0.55f;
        if (v.packet_pos < -0.9f) v.packet_pos = v.packet_target;  // first frame: no animation
        const float d = v.packet_target - v.packet_pos;
        const float speed = std::max(4.0f, std::fabs(d) * 2.5f);  // boxes per second
        const float stepd = speed * v.dt;
        v.packet_pos = std::fabs(d) <= stepd ? v.packet_target : v.packet_pos + (d > 0 ? stepd : -stepd);

        // The track.
        dl->AddLine(ImVec2(center_x(-0.55f), cy), ImVec2(center_x(5.0f), cy), theme::col(theme::pending_border_rgb), 2.0f);
        for (int i = 0; i < stage_count; ++i)
            dl->AddCircleFilled(ImVec2(center_x(static_cast<float>(i)), cy), 4.0f,
                                theme::col(st.trace.last(all_stages[static_cast<size_t>(i)]) ? theme::done_border_rgb
                                                                                             : theme::pending_border_rgb));

        // What it carries: the output of the last finished box it has passed.
        std::string payload = raw_request(st);
        // The answer, once it has arrived, may take the whole lane: the track
        // behind it has nothing left to show, and a lab's answer is a sentence.
        float max_w = r.w * 0.45f;
        const int passed = static_cast<int>(std::floor(v.packet_pos + 0.5f));
        bool answer = false;  // the pill carries the response
        for (int i = std::min(passed, stage_count - 1); i >= 0; --i)
            if (const TraceEvent* ev = st.trace.last(all_stages[static_cast<size_t>(i)])) {
                payload = headline_text(*ev, st.description);
                if (i == stage_count - 1 && st.response) {
                    payload = response_text(*st.response);
                    answer = true;
                    if (v.packet_pos == v.packet_target) max_w = r.w - 8 - f;
                }
                break;
            }
        // A sentence a little too long for the lane is drawn a little
        // smaller (to 0.8 of the size, still read from the back of the room)
        // before it is cut: the pill is where the room looks for the answer.
        // Text widths scale with the size, so one measure says which size fits.
        ImFont* pf = F.bold;
        float ps = F.bold->FontSize;
        const std::string whole = one_line(payload);
        if (const float w = pf->CalcTextSizeA(ps, 1e9f, 0, whole.c_str()).x; w > max_w)
            ps *= std::max(0.8f, max_w / w);
        payload = fit_clauses(pf, ps, whole, max_w);
        const ImVec2 sz = pf->CalcTextSizeA(ps, 1e9f, 0, payload.c_str());
        const float padx = f * 0.5f, h = std::min(lane.h, sz.y + f * 0.35f);
        float x = center_x(v.packet_pos) - sz.x * 0.5f - padx;
        x = std::clamp(x, r.x + 4, r.right() - sz.x - 2 * padx - 4);
        const ImVec2 c0(x, cy - h * 0.5f), c1(x + sz.x + 2 * padx, cy + h * 0.5f);
        dl->AddRectFilled(c0, c1, theme::col(theme::packet_rgb), h * 0.5f);
        add_text(dl, pf, ps, ImVec2(c0.x + padx, cy - sz.y * 0.5f), theme::col(0xFFFFFF), payload.c_str());
        // A lab's answer is a paragraph, cut on the pill: hovered, the pill
        // shows it whole; clicked, the inspector does, at the respond stage.
        if (answer && payload != whole) {
            // The button within the pane's content (the pill may reach into its padding).
            const ImVec2 b0(std::max(c0.x, ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMin().x), c0.y);
            const float b1 = std::min(c1.x, ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x);
            ImGui::SetCursorScreenPos(b0);
            if (ImGui::InvisibleButton("##answer", ImVec2(std::max(1.0f, b1 - b0.x), c1.y - c0.y))) show_answer(s, v);
            if (ImGui::IsItemHovered()) {
                ImGui::BeginTooltip();
                ImGui::PushTextWrapPos(std::min(r.w * 0.6f, f * 32));
                ImGui::TextUnformatted(whole.c_str());
                ImGui::TextDisabled("%s", tr("click: the whole answer in the inspector"));
                ImGui::PopTextWrapPos();
                ImGui::EndTooltip();
            }
        }
    }
    end_panel();
}

}  // namespace sixstep::ui
