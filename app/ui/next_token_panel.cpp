// Next token: what the model thinks comes next, and what the sampler does
// with it. Top-N candidates as bars — when the sampler filters or reshapes
// them, each bar is the share the draw uses, a tick marks the model's own
// (softmax at temperature 1) and a cut one is grey — click one to force it
// and generation continues from there; the sampler's table after each stage
// of its chain (top-k → top-p → min-p → temperature → draw), so the class
// sees what each filter cut; the sampling knobs, which recompute the
// request through the session; and a typed token id to force.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"
#include "pipeline/llm/trace_keys.h"

namespace sixstep::ui {

namespace {

// The value of a sampling knob now: the request's, else the declared default.
std::string knob_value(const app::LessonState& st, const char* name) {
    if (const std::string* v = st.request.get(name)) return *v;
    const Knob* k = st.description ? st.description->find_knob(name) : nullptr;
    return k ? k->default_value : std::string();
}

// A slider over the usual range of one sampling knob; the session checks
// and applies the value when the slider is released.
void sampling_slider(const app::LessonState& st, app::Session& session, const char* name, float lo, float hi,
                     bool whole, float width) {
    ImGui::PushID(name);
    ImGui::TextUnformatted(tr(name));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(width);
    const std::string turned = knob_slider(knob_value(st, name), lo, hi, whole);
    if (!turned.empty()) session.turn_knob(name, turned);
    ImGui::PopID();
}

// What the sampler made of a candidate before its draw: its share after the
// last filter or temperature (nothing when the chain has none: greedy, or
// the plain distribution), or that a filter cut it.
struct AfterSampler {
    bool changed = false;  // a filter or temperature stands between the model and the draw
    bool cut = false;      // a filter removed this candidate
    float p = 0;           // its share after them (when not cut)
};
AfterSampler after_sampler(const llm::ViewNext& next, int id) {
    const llm::ViewSamplerStage* before = nullptr;
    for (const auto& stage : next.chain)
        if (stage.name != "greedy" && stage.name != "dist") before = &stage;
    AfterSampler a;
    if (before == nullptr || before->name == "softmax") return a;
    a.changed = true;
    const auto it = std::find_if(before->rows.begin(), before->rows.end(), [&](const auto& x) { return x.id == id; });
    if (it != before->rows.end()) a.p = it->p;
    // Not among the rows the stage kept: cut, when the rows are all it kept.
    else a.cut = before->n_kept <= static_cast<int>(before->rows.size());
    return a;
}

// A probability as a share, and as the table's cell: one decimal of a per
// cent (three of a unit), or two significant digits below that, so the
// token a hot sampler drew from far down the list reads "0.0031%", not 0.
std::string percent_text(float p) {
    const double pct = 100.0 * p;
    return (pct >= 0.1 || pct == 0 ? fmt::format("{:.1f}", pct) : sci_text(pct, 2)) + "%";
}
// The table's cells alike down a column: three decimals from a hundredth,
// two significant digits below ("0.0031", not "0.003"), and a power of ten
// below a thousandth ("4.4×10⁻⁴" under "6.9×10⁻⁶", not "0.00044").
std::string probability_text(float p) {
    if (p >= 0.01f || p == 0) return fmt::format("{:.3f}", p);
    return p >= 0.001f ? decimal_text(p, 2) : shown_text(p, 3);
}

// The bars: the model's most likely candidates, then the token taken when
// it is not among them (a hot sampler draws one far down the list, and the
// class should see where it came from).
bool chosen_among_top(const llm::ViewNext& next) {
    return std::any_of(next.top.begin(), next.top.end(), [&](const auto& c) { return c.id == next.chosen; });
}
// At most `max_rows` of them: the most likely, the last place kept for the
// token taken when it ranks below them.
std::vector<llm::ViewCandidate> bar_rows(const llm::ViewNext& next, size_t max_rows = SIZE_MAX) {
    std::vector<llm::ViewCandidate> rows = next.top;
    if (next.chosen >= 0 && !chosen_among_top(next)) rows.push_back({next.chosen, next.chosen_piece, next.chosen_p, 0.0f});
    if (rows.size() > max_rows && max_rows > 0) {
        const auto chosen = std::find_if(rows.begin(), rows.end(), [&](const auto& c) { return c.id == next.chosen; });
        const bool chosen_cut = chosen != rows.end() && static_cast<size_t>(chosen - rows.begin()) >= max_rows;
        const llm::ViewCandidate taken = chosen_cut ? *chosen : llm::ViewCandidate{};
        rows.resize(max_rows);
        if (chosen_cut) rows.back() = taken;
    }
    return rows;
}

// Whether the sampler cut a candidate or moved its share (temperature 1
// moves none): then the bars need their legend.
bool sampler_changes(const llm::ViewNext& next) {
    return std::any_of(next.top.begin(), next.top.end(), [&](const auto& c) {
        const AfterSampler a = after_sampler(next, c.id);
        return a.changed && (a.cut || std::fabs(a.p - c.p) >= 0.0005f);
    });
}

// The candidates as bars; a click forces one. Each bar is the share the draw
// takes the token with: the model's own probability, or — when the sampler
// filters or reshapes them — its share after that, a dark tick where the
// model had it. A candidate a filter cut keeps its own share, greyed.
void candidate_bars(const llm::ViewNext& next, app::Session& session, size_t max_rows) {
    const Fonts& F = fonts();
    const std::vector<llm::ViewCandidate> rows = bar_rows(next, max_rows);
    // Measured in bold, as the token taken is drawn: its bar began under the word.
    float piece_w = 0;
    ImGui::PushFont(F.bold);
    for (const auto& c : rows) piece_w = std::max(piece_w, ImGui::CalcTextSize(visible_piece(c.piece).c_str()).x);
    ImGui::PopFont();
    const float avail = ImGui::GetContentRegionAvail().x;
    // A cut candidate's share in parentheses: the model's own, not part of
    // the draw's (the column summed past 100%: 71.1 + 28.9 + 10.9 + …).
    const auto cut_text = [](float p) { return "(" + percent_text(p) + ")"; };
    // The token taken, on the last bar below ranks it skips (lesson 07 drew
    // mat, rug, seat and left out floor, more likely than seat): its rank.
    const auto rank_of = [&](int id) {
        const auto at = std::find_if(next.top.begin(), next.top.end(), [&](const auto& c) { return c.id == id; });
        return at != next.top.end() ? static_cast<int>(at - next.top.begin()) : next.chosen_rank;
    };
    const auto rank_note = [&](size_t i, const llm::ViewCandidate& c) -> std::string {
        const int rank = c.id == next.chosen ? rank_of(c.id) : -1;
        return rank > static_cast<int>(i) ? std::string(" ") + tr(fmt::format("(rank {})", rank + 1)) : std::string();
    };
    float pct_w = ImGui::CalcTextSize("100.0%").x;
    for (size_t i = 0; i < rows.size(); ++i)
        for (const float p : {rows[i].p, after_sampler(next, rows[i].id).p})
            pct_w = std::max(pct_w, ImGui::CalcTextSize((cut_text(p) + rank_note(i, rows[i])).c_str()).x);
    const float bar_w = std::max(20.0f, avail - piece_w - pct_w - 3 * ImGui::GetStyle().ItemSpacing.x);
    for (size_t i = 0; i < rows.size(); ++i) {
        const llm::ViewCandidate& c = rows[i];
        const AfterSampler after = after_sampler(next, c.id);
        const bool reshaped = after.changed && !after.cut;
        const float shown_p = reshaped ? after.p : c.p;  // the bar's length and its number
        ImGui::PushID(static_cast<int>(i));
        const ImVec2 row = ImGui::GetCursorScreenPos();
        if (ImGui::InvisibleButton("##pick", ImVec2(avail, ImGui::GetTextLineHeight()))) session.force_token(c.id);
        const bool hovered = ImGui::IsItemHovered();
        if (hovered) {
            if (after.changed && after.cut)
                ImGui::SetTooltip("%s %d\n%s", tr("click to force token"), c.id, tr("cut by the sampler's filters"));
            else if (after.changed)
                ImGui::SetTooltip("%s %d\n%s %s", tr("click to force token"), c.id, tr("the model's own probability:"),
                                  percent_text(c.p).c_str());
            else
                ImGui::SetTooltip("%s %d", tr("click to force token"), c.id);
        }
        ImGui::SetCursorScreenPos(row);
        const bool chosen = c.id == next.chosen;
        const bool to_force = next.chosen < 0 && c.id == next.to_force;  // taken next, by hand
        ImGui::PushFont(chosen ? F.bold : F.body);
        if (after.cut) ImGui::TextDisabled("%s", visible_piece(c.piece).c_str());
        else ImGui::TextUnformatted(visible_piece(c.piece).c_str());
        ImGui::PopFont();
        ImGui::SameLine(piece_w + ImGui::GetStyle().ItemSpacing.x * 2);
        const ImVec2 bar = ImGui::GetCursorScreenPos();
        // The token taken shows however small its share: at least a sliver.
        plot::hbar(bar_w, chosen ? std::max(shown_p, 3.0f / bar_w) : shown_p,
                   chosen ? theme::active_rgb
                   : to_force  ? theme::active_border_rgb
                   : after.cut ? theme::pending_border_rgb
                   : hovered   ? theme::active_border_rgb
                               : theme::accent_rgb);
        if (reshaped && std::fabs(after.p - c.p) >= 0.005f) {  // the model's own share, where the sampler moved it from
            const float x = bar.x + bar_w * std::clamp(c.p, 0.0f, 1.0f), h = ImGui::GetTextLineHeight();
            ImGui::GetWindowDrawList()->AddLine(ImVec2(x, bar.y), ImVec2(x, bar.y + h), theme::col(theme::text_rgb), 2.0f);
        }
        ImGui::SameLine();
        if (after.cut) ImGui::TextDisabled("%s", (cut_text(c.p) + rank_note(i, c)).c_str());
        else ImGui::TextUnformatted((percent_text(shown_p) + rank_note(i, c)).c_str());
        ImGui::PopID();
    }
}

// What the bars mean once the sampler has changed them, in small print: two
// parts, on one line or stacked.
struct Legend {
    std::string first = tr("bar: the draw's share"), second = tr("tick: the model's own \u00b7 grey: cut");
    std::string line() const { return first + " \u00b7 " + second; }
};

// The table's rows: the most likely candidates, as many as `max_rows`,
// the last of them given to the token taken when it ranks below the rest
// (the sampler's tables end with its row then: SamplerStage).
std::vector<const llm::ViewCandidate*> table_rows(const llm::ViewNext& next, size_t max_rows) {
    std::vector<const llm::ViewCandidate*> out;
    if (next.chain.empty() || max_rows == 0) return out;
    const auto& all = next.chain.front().rows;
    for (size_t i = 0; i < std::min(all.size(), max_rows); ++i) out.push_back(&all[i]);
    if (out.size() < all.size() && next.sampled && all.back().id == next.chosen) out.back() = &all.back();
    return out;
}

// Rows: the candidates before any filter; columns: the chain's stages, with
// how many candidates each kept; a cell holds the candidate's probability
// after that stage, or — when it was cut. As many rows as the pane has room for.
void chain_table(const llm::ViewNext& next, size_t max_rows) {
    const std::vector<const llm::ViewCandidate*> rows = table_rows(next, max_rows);
    if (rows.empty()) return;
    const int cols = static_cast<int>(next.chain.size()) + 1;
    const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchSame;
    if (!ImGui::BeginTable("##chain", cols, flags)) return;
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", tr("token"));
    for (const auto& stage : next.chain) {
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", tr(stage.name));
    }
    // "temperature 2000" read as a temperature of 2000: the counts get a row of their own.
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", tr("kept"));
    for (const auto& stage : next.chain) {
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%d", stage.n_kept);
    }
    for (const llm::ViewCandidate* row : rows) {
        const llm::ViewCandidate& c = *row;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(visible_piece(c.piece).c_str());
        for (const auto& stage : next.chain) {
            ImGui::TableNextColumn();
            const auto it = std::find_if(stage.rows.begin(), stage.rows.end(), [&](const auto& x) { return x.id == c.id; });
            if (it == stage.rows.end()) {
                ImGui::TextDisabled("\u2014");
            } else {
                if (it->id == next.chosen && next.sampled && &stage == &next.chain.back())
                    ImGui::TextColored(theme::vec(theme::active_border_rgb), "%s \u2713", probability_text(it->p).c_str());
                else
                    ImGui::TextUnformatted(probability_text(it->p).c_str());
            }
        }
    }
    ImGui::EndTable();
}

}  // namespace

void draw_next_token_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r) {
    if (begin_panel("##next_token", r)) {
        const app::LessonState& st = s.state;
        panel_title(tr("Next token"));
        const auto& view = st.panels.view;
        const bool has = view && !view->next.top.empty();
        if (has) {
            const llm::ViewNext& next = view->next;
            ImGui::SameLine(0, v.font_px);
            // Where the token taken ranks, when it is not among the bars' most likely.
            std::string line = tr("click a candidate to force it");
            const bool pending_force = next.chosen < 0 && next.to_force >= 0;
            if (next.chosen >= 0)
                line = fmt::format("{} \u201c{}\u201d", tr(next.forced ? "forced:" : "sampled:"), visible_piece(next.chosen_piece));
            else if (pending_force)
                line = fmt::format("{} \u201c{}\u201d", tr("to be forced:"), visible_piece(next.to_force_piece));
            // The id field holds the token forced, or to be forced, not the
            // last id typed: "force id 0" beside "to be forced: rug" misled.
            if (const int offer = pending_force ? next.to_force : next.forced ? next.chosen : -1;
                offer >= 0 && offer != v.force_id_offered)
                v.force_id = v.force_id_offered = offer;
            if (next.chosen >= 0 && !chosen_among_top(next) && next.chosen_rank >= 0)
                line += std::string(" ") + tr(fmt::format("(rank {} of {})", next.chosen_rank + 1, next.n_vocab));
            ImGui::TextColored(theme::vec(next.forced || pending_force ? theme::active_border_rgb : theme::muted_rgb), "%s",
                               line.c_str());
        }
        // The bars' legend goes at the title line's right end when it fits
        // there, on one line or two (the table keeps its rows), else on a
        // line under the bars.
        const bool legend = has && sampler_changes(view->next);
        const Legend words;
        bool legend_under = false;
        if (legend) {
            ImGui::SetWindowFontScale(0.8f);
            const float one_w = ImGui::CalcTextSize(words.line().c_str()).x;
            const float two_w = std::max(ImGui::CalcTextSize(words.first.c_str()).x, ImGui::CalcTextSize(words.second.c_str()).x);
            const float right = ImGui::GetWindowContentRegionMax().x;  // window coordinates, as SameLine takes
            const float free = ImGui::GetWindowPos().x + right - ImGui::GetItemRectMax().x - ImGui::GetStyle().ItemSpacing.x;
            if (one_w <= free) {
                ImGui::SameLine(right - one_w);
                ImGui::TextDisabled("%s", words.line().c_str());
            } else if (two_w <= free) {
                ImGui::SameLine(right - two_w);
                ImGui::BeginGroup();
                ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(ImGui::GetStyle().ItemSpacing.x, 0));
                ImGui::TextDisabled("%s", words.first.c_str());
                ImGui::TextDisabled("%s", words.second.c_str());
                ImGui::PopStyleVar();
                ImGui::EndGroup();
            } else {
                legend_under = true;
            }
            ImGui::SetWindowFontScale(1.0f);
        }
        panel_message(s, "next_token");
        // What fits, in this order: the candidates (smaller when the pane is
        // short, and fewer when the sampler's whole table would not fit
        // under them: the table says what each filter kept, the lesson's
        // point, and lists the same candidates), the knobs, then as many rows
        // of the table as there is room for. Shown under another panel, the
        // table and even the knobs may not fit: shown alone, they do.
        const ImGuiStyle& style = ImGui::GetStyle();
        ImGui::SetWindowFontScale(0.8f);
        const float knobs_h = 2 * ImGui::GetFrameHeightWithSpacing();
        const float caption_h = ImGui::GetTextLineHeightWithSpacing();
        const float row_h = ImGui::GetTextLineHeight() + 2 * style.CellPadding.y + 1;  // + the inner border
        ImGui::SetWindowFontScale(1.0f);
        bool knobs = true;
        if (!has) {
            ImGui::TextDisabled("%s", tr("The candidates appear at stage 4 (output)."));
        } else {
            const llm::ViewNext& next = view->next;
            // The bars at the body size when they, the knobs and the whole
            // table fit; else smaller.
            const size_t n_bars = bar_rows(next).size();
            const float bars_h = static_cast<float>(n_bars) * ImGui::GetTextLineHeightWithSpacing();
            // The table: a header, the counts kept, the rows.
            const float table_all_h =
                next.chain.empty() ? 0.0f : caption_h + static_cast<float>(next.chain.front().rows.size() + 2) * row_h;
            const float legend_h = legend_under ? caption_h : 0.0f;
            const float room = ImGui::GetContentRegionAvail().y;
            const bool whole = bars_h + legend_h + knobs_h + table_all_h <= room;
            ImGui::SetWindowFontScale(whole ? 1.0f : 0.8f);
            size_t show_bars = n_bars;
            if (!whole && table_all_h > 0) {
                constexpr size_t fewest_bars = 2;  // the likeliest, and the token taken
                const float bar_room = room - legend_h - knobs_h - table_all_h;
                const auto fit = static_cast<size_t>(std::max(0.0f, bar_room / ImGui::GetTextLineHeightWithSpacing()));
                show_bars = std::clamp(fit, std::min(fewest_bars, n_bars), n_bars);
            }
            candidate_bars(next, session, show_bars);
            if (legend_under) {
                ImGui::SetWindowFontScale(0.8f);
                ImGui::TextDisabled("%s", words.line().c_str());
            }
            ImGui::SetWindowFontScale(1.0f);
            const float left = ImGui::GetContentRegionAvail().y;
            knobs = left >= knobs_h;
            const float table_h = left - (knobs ? knobs_h : 0.0f) - caption_h - 2 * row_h;
            size_t rows = table_h >= row_h ? static_cast<size_t>(table_h / row_h) : 0;
            // Rows the pane has no room for are said, not silently dropped:
            // one row's room goes to saying how many.
            const size_t n_rows = next.chain.empty() ? 0 : next.chain.front().rows.size();
            // With room for one row, the count takes the caption's line.
            const bool cut = rows >= 1 && rows < n_rows, count_as_caption = cut && rows == 1;
            if (cut && !count_as_caption) --rows;
            if (rows > 0) {
                // Shown alone already, only the font is left to offer.
                const bool alone = r.h >= v.layout.inspector.h - 0.5f && r.w >= v.layout.inspector.w - 0.5f;
                const std::string more =
                    !cut    ? std::string()
                    : alone ? tr(std::to_string(n_rows - rows) + " more rows: a smaller font (Ctrl\u00b1) shows them")
                            : tr(std::to_string(n_rows - rows) +
                                 " more rows: a smaller font (Ctrl\u00b1) or this panel alone shows them");
                ImGui::SetWindowFontScale(0.8f);
                ImGui::TextDisabled("%s", count_as_caption ? more.c_str()
                                          : tr(next.sampled || next.forced ? "The sampler's table after each stage"
                                                                           : "The sampler's filters on these logits (the draw comes at stage 5)"));
                chain_table(next, rows);
                if (cut && !count_as_caption) ImGui::TextDisabled("%s", more.c_str());
                ImGui::SetWindowFontScale(1.0f);
            }
        }
        if (!knobs) {
            end_panel();
            return;
        }
        // The knobs: each change recomputes the request (through the session).
        ImGui::SetWindowFontScale(0.8f);
        const float w = std::max(40.0f, ImGui::GetContentRegionAvail().x * 0.16f);
        sampling_slider(st, session, llm::keys::temperature, 0.0f, 2.0f, false, w);
        ImGui::SameLine();
        sampling_slider(st, session, llm::keys::top_k, 0, 100, true, w);
        ImGui::SameLine();
        sampling_slider(st, session, llm::keys::top_p, 0.05f, 1.0f, false, w);
        sampling_slider(st, session, llm::keys::min_p, 0.0f, 0.5f, false, w);
        ImGui::SameLine();
        sampling_slider(st, session, llm::keys::seed, 0, 100, true, w);
        ImGui::SameLine();
        ImGui::TextUnformatted(tr("force id"));
        ImGui::SameLine();
        ImGui::SetNextItemWidth(w);
        ImGui::InputInt("##force", &v.force_id, 0, 0);
        ImGui::SameLine();
        if (ImGui::SmallButton(tr("force"))) session.force_token(v.force_id);
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

}  // namespace sixstep::ui
