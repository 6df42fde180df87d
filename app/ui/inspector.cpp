// The inspector: everything about one stage of the current request — what
// went in and came out (with units), the arithmetic with the numbers
// substituted, warnings, the weights and their checksum, the timings — and,
// under it, the answers given so far so an absurd one sits beside a right one.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/text_capture.h"
#include "app/ui/theme.h"
#include "pipeline/core/error.h"
#include "pipeline/core/text.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/llm/trace_keys.h"

namespace sixstep::ui {

namespace {

void colored(std::uint32_t rgb, const std::string& text, bool wrap = false) {
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(rgb));
    if (wrap) text_wrapped(text);
    else ImGui::TextUnformatted(text.c_str());
    ImGui::PopStyleColor();
}

void section(const char* label) {
    ImGui::Spacing();
    ImGui::PushFont(fonts().bold);
    ImGui::TextUnformatted(label);
    ImGui::PopFont();
}

// A heading with what it heads on the same line, to its right.
void inline_section(const char* label) {
    section(label);
    ImGui::SameLine(0, ImGui::GetFontSize() * 0.5f);
}

// Stage 1: each raw field beside what normalization made of it.
bool raw_vs_normalized(const TraceEvent& ev) {
    std::vector<std::pair<const Field*, const Field*>> rows;
    for (const auto& in : ev.inputs) {
        const std::string name = key_as_words(field_label(in));
        const Field* match = nullptr;
        for (const auto& out : ev.outputs)
            if (key_as_words(field_label(out)) == name || key_as_words(out.key).rfind(name, 0) == 0) match = &out;
        rows.push_back({&in, match});
    }
    if (rows.empty()) return false;
    const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
    if (ImGui::BeginTable("##rawnorm", 3, flags)) {
        ImGui::TableSetupColumn(tr("field"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
        ImGui::TableSetupColumn(tr("raw"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
        ImGui::TableSetupColumn(tr("normalized"), ImGuiTableColumnFlags_WidthStretch, 1.2f);
        ImGui::TableHeadersRow();
        for (const auto& [in, out] : rows) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(key_as_words(field_label(*in)).c_str());
            ImGui::TableNextColumn();
            ImGui::PushFont(fonts().mono);
            ImGui::Text("\"%s\"", pretty_value(in->value).c_str());
            ImGui::PopFont();
            ImGui::TableNextColumn();
            // The number in bold and its unit muted beside it: "3 km" in
            // the raw column is text, the 3 here is what the model reads.
            std::string value = out ? field_text(*out) : "\u2014", unit;
            if (out && !out->unit.empty()) {
                Field bare = *out;
                bare.unit.clear();
                const std::string number = field_text(bare);
                if (value.rfind(number, 0) == 0) unit = value.substr(number.size()), value = number;
            }
            ImGui::PushFont(fonts().bold);
            ImGui::TextUnformatted(out ? ("\u2192 " + value).c_str() : value.c_str());
            ImGui::PopFont();
            if (!unit.empty()) {
                ImGui::SameLine(0, 0);
                ImGui::TextDisabled("%s", unit.c_str());
            }
        }
        ImGui::EndTable();
    }
    return true;
}

// A stage's fields as a grid of cells, "name value" in each, packed in
// order: a field takes as many of the k cells of a row as its text needs
// (a long value the whole row, wrapped). A two-column table gave the
// forward pass's sixteen fields sixteen rows, and the pane scrolled; packed,
// they take five or six. The names are captions: muted, a little smaller.
void field_grid(const std::vector<Field>& fields, Stage stage, const ModelDescription* model) {
    if (fields.empty()) return;
    const Fonts& F = fonts();
    constexpr float caption = 0.8f;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float gap = style.ItemSpacing.x;
    // The cells span the pane's width; the first row may start beside a
    // heading, in the first cell right of it.
    const float left = ImGui::GetWindowContentRegionMin().x, full = ImGui::GetWindowContentRegionMax().x - left;
    const float left_screen = ImGui::GetWindowPos().x + left;
    // Values in the bold face at the body size: the grid is a dense table.
    const float name_px = F.body->FontSize * caption, value_px = F.body->FontSize;
    const int k = std::clamp(static_cast<int>(full / (F.body->FontSize * 2.5f)), 1, 12);
    const float cell_w = full / static_cast<float>(k);
    int col = std::clamp(static_cast<int>(std::ceil((ImGui::GetCursorPosX() - left - 0.5f) / cell_w)), 0, k);
    // Baselines level: the smaller name sits lower by the difference.
    const float name_drop = value_px - name_px;
    bool first = true;
    for (const auto& f : fields) {
        const std::string name = key_as_words(field_label(f)), value = field_text(f, stage, model);
        const float need = F.body->CalcTextSizeA(name_px, FLT_MAX, 0, name.c_str()).x + gap +
                           F.bold->CalcTextSizeA(value_px, FLT_MAX, 0, value.c_str()).x + 2 * gap;
        const int span = std::clamp(static_cast<int>(std::ceil(need / cell_w)), 1, k);
        if (col + span > k) {
            if (first) ImGui::NewLine();  // no room beside the heading: under it
            col = 0;
        }
        if (col == 0 && !first) {  // a new row: a faint rule under the last
            const float y = ImGui::GetCursorScreenPos().y - style.ItemSpacing.y * 0.5f;
            ImGui::GetWindowDrawList()->AddLine(ImVec2(left_screen, y), ImVec2(left_screen + full, y),
                                                theme::col(theme::pending_border_rgb, 90));
        }
        if (col > 0 && first) ImGui::SetCursorPosX(left + static_cast<float>(col) * cell_w);
        else if (col > 0) ImGui::SameLine(left + static_cast<float>(col) * cell_w);
        first = false;
        const float y = ImGui::GetCursorPosY();
        ImGui::SetCursorPosY(y + name_drop);
        ImGui::SetWindowFontScale(caption);
        colored(theme::muted_rgb, name);
        ImGui::SetWindowFontScale(1.0f);
        ImGui::SameLine(0, gap);
        ImGui::SetCursorPosY(y);
        ImGui::PushFont(F.bold);
        ImGui::SetWindowFontScale(value_px / F.bold->FontSize);
        // A value wider than the row wraps at the pane's edge.
        ImGui::PushTextWrapPos(col + span >= k ? 0.0f : left + static_cast<float>(col + span) * cell_w);
        ImGui::TextUnformatted(value.c_str());
        ImGui::PopTextWrapPos();
        ImGui::SetWindowFontScale(1.0f);
        ImGui::PopFont();
        col += span;
        if (col >= k) col = 0;
    }
}

// The arithmetic, one line each; the forward pass's equation in the big face.
// A language model's output stage (one "p(token) = …" line per candidate)
// gets a bar per line, so "mat 0.42" visibly beats "rug 0.18".
void arithmetic(const TraceEvent& ev, float width) {
    const Fonts& F = fonts();
    const Field* probs = ev.find(llm::keys::top_probs);
    if (ev.stage == Stage::output && probs && std::holds_alternative<std::vector<double>>(probs->value) &&
        std::get<std::vector<double>>(probs->value).size() == ev.arithmetic.size()) {
        const auto& p = std::get<std::vector<double>>(probs->value);
        ImGui::PushFont(F.mono);
        float text_w = 0;
        for (const auto& line : ev.arithmetic) text_w = std::max(text_w, ImGui::CalcTextSize(line.c_str()).x);
        for (size_t i = 0; i < p.size(); ++i) {
            const ImVec2 at = ImGui::GetCursorScreenPos();
            ImGui::TextUnformatted(ev.arithmetic[i].c_str());
            const float x0 = at.x + text_w + ImGui::GetFontSize(), bar_w = std::max(0.0f, at.x + width - x0);
            const float h = ImGui::GetTextLineHeight();
            ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(x0, at.y + h * 0.15f),
                                                      ImVec2(x0 + bar_w * static_cast<float>(std::clamp(p[i], 0.0, 1.0)), at.y + h * 0.85f),
                                                      theme::col(i == 0 ? theme::active_rgb : theme::accent_rgb));
        }
        ImGui::PopFont();
        return;
    }
    for (const auto& en : ev.arithmetic) {
        const std::string line = tr(en);
        ImFont* f = F.mono;
        if (ev.stage == Stage::forward && line.find(" = ") != std::string::npos &&
            F.big->CalcTextSizeA(F.big->FontSize, 1e9f, 0, line.c_str()).x < width)
            f = F.big;
        ImGui::PushFont(f);
        text_wrapped(line);
        ImGui::PopFont();
    }
}

// An output the arithmetic already ends with ("KV cache per token = … =
// 2048 B" above "KV cache per token 2048 B"): said once, in the arithmetic.
bool in_arithmetic(const TraceEvent& ev, const Field& f) {
    const std::string name = key_as_words(field_label(f)), result = " = " + field_text(f);
    for (const auto& line : ev.arithmetic)
        if (line.rfind(name, 0) == 0 && line.size() >= result.size() &&
            line.compare(line.size() - result.size(), result.size(), result) == 0)
            return true;
    return false;
}

// The weights the model holds, and the checksum that proves inference never
// wrote them — unless the load stage's outputs, shown below, carry that
// checksum already.
void weights(const app::LessonState& st, const TraceEvent& load) {
    if (!st.loaded || st.checksum.empty()) return;
    const Field* out = load.find(keys::weights_checksum);
    const bool in_outputs = out && field_text(*out) == st.checksum;
    if (in_outputs && st.weights_file.empty()) return;
    // The summary above names the file it mapped ("mapped stories-3m-f16.gguf
    // (3.8 M parameters…)"): its whole path again was a line the pane lacked.
    const std::string file_name = std::filesystem::path(st.weights_file).filename().string();
    if (in_outputs && !file_name.empty() && load.summary.find(file_name) != std::string::npos) return;
    // Only the file's path (the checksum is among the outputs): beside its
    // heading, one line less.
    if (in_outputs) inline_section(tr("Weights"));
    else section(tr("Weights"));
    if (!in_outputs) {
        ImGui::Text("%s", tr("checksum"));
        ImGui::SameLine();
        ImGui::PushFont(fonts().mono);
        ImGui::TextUnformatted(st.checksum.c_str());
        ImGui::PopFont();
    }
    if (!st.weights_file.empty()) colored(theme::muted_rgb, st.weights_file, true);
}

// One line beside its heading, in a smaller face: each stage's time when
// they fit on it, else the first and last stage and the sum (each stage's
// time stays in its box of the diagram).
void timings(const app::LessonState& st) {
    inline_section(tr("Timing"));
    double total = 0;
    std::string line, first, last;
    for (const Stage s : all_stages)
        if (const TraceEvent* ev = st.trace.last(s)) {
            total += ev->elapsed_ms;
            last = tr(stage_name(s).data());
            if (first.empty()) first = last;
            line += (line.empty() ? "" : " \u00b7 ") + last + " " + time_text(ev->elapsed_ms);
        }
    const std::string tot = "  =  " + ms_text(total);
    ImGui::SetWindowFontScale(0.85f);
    line += tot;
    if (ImGui::CalcTextSize(line.c_str()).x > ImGui::GetContentRegionAvail().x) line = first + " \u2026 " + last + tot;
    colored(theme::text_rgb, line, true);
    ImGui::SetWindowFontScale(1.0f);
}

// Answers given so far in this lesson, newest last: the skew's absurd number
// sits beside the right one. Each card names only the request fields that
// differ between the cards ("distance 3000 m" beside "distance 1.864 mi"),
// ("the same request" when none does), and the cards sit beside their heading when they fit there, else under it
// across the pane: with every field, beside the heading, they were cut to
// "6005 …" and "distance 3000 m,…".
// One request field on an answer card, short enough that three fit a card:
// "3 km" (a quantity says what it is), "congestion 0.5", "express lane yes"
// (a yes/no knob in words). It read "distance 3 km, congestion 0,
// express_lan…", the field the step was about cut off.
std::string asked_field(const app::Snapshot& s, const std::string& key, const std::string& value) {
    std::string label = tr(key);
    if (label == key) label = key_as_words(key);
    const Knob* knob = s.state.description ? s.state.description->find_knob(key) : nullptr;
    if (knob && knob->type == KnobType::boolean) {
        try {
            return label + " " + tr(knob->check(value) == knob->spelled(true) ? "yes" : "no");
        } catch (const Error&) {
            // A lesson's `request:` holds its values as written, and the
            // model's own normalization, not the knob, judged them: show
            // such a value as the request held it.
            return label + " " + value;
        }
    }
    const auto lead = leading_number(value);
    if (lead && lead->rest.size() > 1 && lead->rest.front() == ' ') return value;
    return label + " " + value;
}

void answers(const app::Snapshot& s) {
    if (s.answers.size() < 2) return;
    const Fonts& F = fonts();
    const size_t first = s.answers.size() > 3 ? s.answers.size() - 3 : 0;
    const auto differs = [&](const std::string& key) {
        const std::string* seen = nullptr;
        for (size_t i = first; i < s.answers.size(); ++i) {
            const std::string* v = s.answers[i].request.get(key);
            if (!v) return true;
            if (seen && *seen != *v) return true;
            seen = v;
        }
        return false;
    };
    bool any_differs = false;
    for (const auto& field : s.answers.back().request.fields) any_differs = any_differs || differs(field.first);
    struct Card {
        std::string big, asked, how;
        bool bad = false;
    };
    const Headline* headline = s.state.description ? s.state.description->headline(Stage::respond) : nullptr;
    const float small_px = F.body->FontSize * 0.8f, pad = 8.0f, gap = 8.0f;
    std::vector<Card> cards;
    float widest = 0;  // what a card needs to show its three lines whole
    for (size_t i = first; i < s.answers.size(); ++i) {
        const app::AnswerRecord& a = s.answers[i];
        Card c;
        c.bad = !a.warnings.empty() || !a.cautions.empty();
        c.big = headline_text(a.answer, headline, Stage::respond, s.state.description);
        for (const auto& [k, value] : a.request.fields)
            if (differs(k)) c.asked += (c.asked.empty() ? "" : " \u00b7 ") + asked_field(s, k, value);
        // The same request each time: what differs is how it was served
        // (lesson 03's "11 min · the same request" twice, cold and warm).
        if (!any_differs) c.asked = a.how.empty() ? tr("the same request") : tr(a.how);
        // Why a card is red: the risky settings first, then the engine's warnings.
        for (const auto& caution : a.cautions)
            c.how += std::string(c.how.empty() ? "\u26a0 " : " \u00b7 ") + tr(caution.c_str());
        if (c.how.empty() && !a.warnings.empty()) c.how = "\u26a0 " + std::string(tr(a.warnings.front()));
        if (c.how.empty()) c.how = a.checked.empty() ? "\u2713" : std::string(tr(a.checked.c_str())) + " \u2713";
        widest = std::max({widest, F.big->CalcTextSizeA(F.big->FontSize, FLT_MAX, 0, c.big.c_str()).x,
                           F.body->CalcTextSizeA(small_px, FLT_MAX, 0, c.asked.c_str()).x,
                           F.body->CalcTextSizeA(small_px, FLT_MAX, 0, c.how.c_str()).x});
        cards.push_back(std::move(c));
    }
    const int n = static_cast<int>(cards.size());
    const char* heading = tr("Answers so far");
    section(heading);
    const float beside = ImGui::GetContentRegionAvail().x - ImGui::GetItemRectSize().x - ImGui::GetFontSize() * 0.5f;
    if ((beside - gap * static_cast<float>(n - 1)) / static_cast<float>(n) >= widest + 2 * pad)
        ImGui::SameLine(0, ImGui::GetFontSize() * 0.5f);
    const float avail = ImGui::GetContentRegionAvail().x;
    const float w = (avail - gap * static_cast<float>(n - 1)) / static_cast<float>(n);
    const float h = F.big->FontSize + F.body->FontSize * 2.2f;
    for (int i = 0; i < n; ++i) {
        const Card& c = cards[static_cast<size_t>(i)];
        if (i > 0) ImGui::SameLine(0, gap);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        ImDrawList* dl = ImGui::GetWindowDrawList();
        const std::uint32_t rgb = c.bad ? theme::bad_rgb : theme::good_rgb;
        dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), theme::col(rgb, 28), 6.0f);
        dl->AddRect(p, ImVec2(p.x + w, p.y + h), theme::col(rgb), 6.0f, 0, i + 1 == n ? 3.0f : 1.5f);
        add_text(dl, F.big, F.big->FontSize, ImVec2(p.x + pad, p.y + 4), theme::col(rgb),
                 fit_text(F.big, F.big->FontSize, c.big, w - 2 * pad).c_str());
        add_text(dl, F.body, small_px, ImVec2(p.x + pad, p.y + 4 + F.big->FontSize), theme::col(theme::text_rgb),
                 fit_text(F.body, small_px, c.asked, w - 2 * pad).c_str());
        add_text(dl, F.body, small_px, ImVec2(p.x + pad, p.y + 4 + F.big->FontSize + F.body->FontSize * 0.9f),
                 theme::col(c.bad ? theme::bad_rgb : theme::muted_rgb), fit_text(F.body, small_px, c.how, w - 2 * pad).c_str());
        ImGui::Dummy(ImVec2(w, h));
    }
}

// Load once, serve many: every request of a `serve:` step as a bar, the cold
// one (which paid the load) in amber, the warm ones in blue.
void served(const app::LessonState& st) {
    if (st.served.empty()) return;
    inline_section(tr("Served requests"));
    double total = 0, warm = 0, cold = 0, top = 0;
    int warm_n = 0, cold_n = 0;
    for (const auto& r : st.served) {
        total += r.total_ms;
        top = std::max(top, r.total_ms);
        if (r.cold) cold += r.total_ms, ++cold_n;
        else warm += r.total_ms, ++warm_n;
    }
    const Fonts& F = fonts();
    char line[200];
    std::snprintf(line, sizeof line, "%zu requests \u00b7 %.3f ms in all", st.served.size(), total);
    colored(theme::text_rgb, tr(line));
    ImGui::PushFont(F.bold);
    if (cold_n) {
        std::snprintf(line, sizeof line, "cold: %.4f ms", cold / cold_n);
        colored(theme::active_border_rgb, tr(line));
        ImGui::SameLine(0, ImGui::GetFontSize());
    } else if (st.cold_load_ms > 0) {
        // Every request here was warm: the load was paid once, earlier.
        std::snprintf(line, sizeof line, "cold load: %.4f ms (once)", st.cold_load_ms);
        colored(theme::active_border_rgb, tr(line));
        ImGui::SameLine(0, ImGui::GetFontSize());
    }
    std::snprintf(line, sizeof line, "warm: %.4f ms%s", warm_n ? warm / warm_n : 0.0, warm_n ? " mean" : "");
    colored(theme::accent_rgb, tr(line));
    ImGui::PopFont();
    // The same question should get the same answer; dropout left on breaks that.
    const Headline* headline = st.description ? st.description->headline(Stage::respond) : nullptr;
    std::vector<std::string> distinct;
    for (const auto& r : st.served) {
        std::string a = headline_text(r.fields, headline, Stage::respond, st.description);
        if (a.empty()) a = r.text;
        if (std::find(distinct.begin(), distinct.end(), a) == distinct.end()) distinct.push_back(a);
    }
    if (distinct.size() > 1) {
        std::string all;
        const char* comma = frame_language() == "zh" ? "\u3001" : ", ";  // Chinese lists with 、
        for (size_t i = 0; i < distinct.size() && i < 6; ++i) all += (i ? comma : "") + distinct[i];
        if (distinct.size() > 6) all += comma + std::string("\u2026");
        std::snprintf(line, sizeof line, "\u26a0 %zu different answers: ", distinct.size());
        colored(theme::bad_rgb, tr(line + all), true);
    }
    // The bars.
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float w = ImGui::GetContentRegionAvail().x, h = ImGui::GetTextLineHeight() * 1.2f;
    ImGui::Dummy(ImVec2(w, h));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), theme::col(0xF8FAFC), 4.0f);
    // When every request was warm, the one-off cold load stands first, for scale.
    const bool load_bar = cold_n == 0 && st.cold_load_ms > 0;
    if (load_bar) top = std::max(top, st.cold_load_ms);
    const size_t bars = st.served.size() + (load_bar ? 1 : 0);
    const float bw = w / static_cast<float>(bars);
    for (size_t i = 0; i < bars; ++i) {
        const bool is_load = load_bar && i == 0;
        const auto& r = st.served[is_load ? 0 : i - (load_bar ? 1 : 0)];
        const double ms = is_load ? st.cold_load_ms : r.total_ms;
        const float bh = top > 0 ? static_cast<float>(ms / top) * (h - 4) : 0.0f;
        const float x = p.x + i * bw;
        dl->AddRectFilled(ImVec2(x + (bw > 3 ? 0.5f : 0.0f), p.y + h - std::max(1.5f, bh)), ImVec2(x + std::max(1.0f, bw - 0.5f), p.y + h),
                          theme::col(r.cold || is_load ? theme::active_rgb : theme::accent_rgb));
    }
}

// While the lesson has a training history, a way back to the training view.
void training_button(const app::Snapshot& s, ViewState& v) {
    if (!s.state.training.active || s.state.training.loss.empty()) return;
    const char* label = tr("Training");
    ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize(label).x - ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::SmallButton(label)) v.right_tab = 1;
}

const char* charts_label = "charts \u2192";

// The width training_button and serving_button take at the title's right.
float title_buttons_width(const app::Snapshot& s) {
    float w = 0;
    const float pad = ImGui::GetStyle().FramePadding.x * 2 + ImGui::GetStyle().ItemSpacing.x;
    if (s.state.training.active && !s.state.training.loss.empty())
        w += ImGui::CalcTextSize(tr("Training")).x + pad;
    if (serving_exhibit(s)) w += ImGui::CalcTextSize(charts_label).x + pad;
    return w;
}

// While a serving experiment has run, a way back to its charts.
void serving_button(const app::Snapshot& s, ViewState& v) {
    if (!serving_exhibit(s)) return;
    const char* label = charts_label;
    ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize(label).x - ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::SmallButton(label)) v.right_tab = 2;
}

}  // namespace

void draw_inspector(const app::Snapshot& s, ViewState& v) {
    const Rect& r = v.layout.inspector;
    if (begin_panel("##inspector", r)) {
        const app::LessonState& st = s.state;
        // A stage the class clicked, else the one the lesson points at
        // (`inspect:`) once it has run, else the latest.
        int sel = v.selected_stage >= 0 ? v.selected_stage : active_stage(s);
        if (v.selected_stage < 0 && st.inspect && st.trace.last(*st.inspect)) sel = stage_index(*st.inspect);
        if (sel < 0 && st.next_stage) sel = stage_index(*st.next_stage);
        if (sel < 0 && st.trace.empty() && st.request.fields.empty() && !st.training.active && st.training.data) {
            draw_training_data(st.training);  // a training lesson before its first step: what it learns from
        } else if (sel < 0 || !st.trace.last(all_stages[static_cast<size_t>(sel)])) {
            // Nothing has run yet: the request as it arrives, still text.
            panel_title(tr("The request as it arrives"));
            training_button(s, v);
            const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
            if (!st.request.fields.empty() && ImGui::BeginTable("##arrives", 2, flags)) {
                for (const auto& [k, val] : st.request.fields) {
                    ImGui::TableNextRow();
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(key_as_words(tr(k)).c_str());
                    ImGui::TableNextColumn();
                    ImGui::PushFont(fonts().big);
                    ImGui::Text("\"%s\"", val.c_str());
                    ImGui::PopFont();
                    // The text as sent; a word the catalogue knows ("continuous",
                    // "true") is also said in the lesson's language beside it.
                    if (const std::string said = tr_value(val); said != val) {
                        ImGui::SameLine();
                        ImGui::TextDisabled("%s", said.c_str());
                    }
                }
                ImGui::EndTable();
            }
            // A step that only talks (a lesson's opening): say so, rather
            // than leave a titled pane empty.
            if (st.request.fields.empty() && sel < 0 && s.answers.size() < 2 && st.served.empty())
                colored(theme::muted_rgb, tr("No request yet: the lesson's steps send one."), true);
            if (sel >= 0) {
                ImGui::Spacing();
                colored(theme::accent_rgb,
                        std::string(tr("next")) + ": " + tr(stage_title(all_stages[static_cast<size_t>(sel)]).data()));
            }
            answers(s);
            served(st);
        } else {
            const Stage stage = all_stages[static_cast<size_t>(sel)];
            const TraceEvent* ev = st.trace.last(stage);
            panel_title(tr(stage_title(stage).data()));
            ImGui::SameLine(0, v.font_px);
            colored(theme::muted_rgb, ms_text(ev->elapsed_ms));
            // The stage's summary on the title's line when it fits between
            // the time and the buttons at the right (one line less below).
            const float buttons = title_buttons_width(s);
            const float room = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x - ImGui::GetItemRectMax().x - v.font_px;
            const std::string summary = ev->summary.empty() ? std::string() : tr(ev->summary);
            const bool summary_up = !summary.empty() && ImGui::CalcTextSize(summary.c_str()).x + buttons <= room;
            if (summary_up) {
                ImGui::SameLine(0, v.font_px);
                colored(theme::muted_rgb, summary);
            }
            training_button(s, v);
            serving_button(s, v);
            ImGui::BeginChild("##inspect", ImVec2(0, 0), false);
            if (s.served_this_step > 0) served(st);  // the point of a serve step: first
            if (!summary_up) colored(theme::muted_rgb, summary, true);
            // This stage's warnings, and those of earlier stages: a warning
            // raised at the request still qualifies the answer at the end.
            for (const Stage earlier : all_stages) {
                if (earlier > stage) break;
                if (const TraceEvent* e = st.trace.last(earlier))
                    for (const auto& w : e->warnings)
                        colored(theme::bad_rgb,
                                earlier == stage ? "\u26a0 " + std::string(tr(w))
                                                 : std::string(tr("\u26a0 " + std::string(stage_name(earlier)) + ": " + w)),
                                true);
            }
            if (stage == Stage::request) {
                raw_vs_normalized(*ev);  // its headers say what it is: field, raw, normalized
            } else if (stage != Stage::load && stage != Stage::respond) {
                std::vector<Field> ins;
                for (const auto& f : ev->inputs)
                    if (!ev->find(f.key) || ev->find(f.key) == &f) ins.push_back(f);
                if (!ins.empty()) {
                    inline_section(tr("Inputs"));
                    field_grid(ins, stage, st.description);
                }
            }
            if (!ev->arithmetic.empty() && stage != Stage::respond) {
                // One line in the plain face (the load's KV formula) starts
                // beside its heading; the forward pass's equation in the big
                // face and the output's bars keep the pane's width.
                if (ev->arithmetic.size() == 1 && stage != Stage::forward && stage != Stage::output)
                    inline_section(tr("Arithmetic"));
                else
                    section(tr("Arithmetic"));
                arithmetic(*ev, ImGui::GetContentRegionAvail().x);
            }
            // On a serve step the served requests and the answer cards carry
            // the answers (and the diagram's pill this one): no Response line.
            if (stage == Stage::respond && st.response && s.served_this_step == 0) {
                inline_section(tr("Response"));
                // The big face when the answer fits the rest of the line.
                const Fonts& F = fonts();
                const std::string text = response_text(*st.response);
                const bool fits =
                    F.big->CalcTextSizeA(F.big->FontSize, FLT_MAX, 0, text.c_str()).x <= ImGui::GetContentRegionAvail().x;
                ImGui::PushFont(fits ? F.big : F.bold);
                text_wrapped(text);
                ImGui::PopFont();
            }
            if (stage >= Stage::forward) answers(s);
            if (stage == Stage::load) weights(st, *ev);
            // A serve step's times are the served block's (per request, cold and warm).
            if (stage == Stage::respond && s.served_this_step == 0) timings(st);
            if (stage != Stage::request) {
                std::vector<Field> outs;
                for (const auto& f : ev->outputs)
                    if (!(stage == Stage::respond && f.key == keys::text) && !in_arithmetic(*ev, f))
                        outs.push_back(f);  // else shown above
                if (!outs.empty()) {
                    inline_section(tr("Outputs"));
                    field_grid(outs, stage, st.description);
                }
            }
            if (s.served_this_step == 0) served(st);
            ImGui::EndChild();
        }
    }
    end_panel();
}

}  // namespace sixstep::ui
