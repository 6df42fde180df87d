// KV cache: the keys and values this request has stored, as a grid of
// (layer, KV head) rows × positions — the prefill writes its whole block of
// positions in one pass (blue), each decode step one more column (green) —
// framed by the paged cache's blocks with their physical ids (the block
// table), then the pool of blocks, and the bytes: the formula with the
// loaded model's numbers in it, the whole blocks in use, what the storage
// has allocated, and the room left in the context. Every number comes from the engine.
#include <algorithm>
#include <cmath>
#include <cstdio>
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
#include "pipeline/serving/quantity.h"

namespace sixstep::ui {

namespace {

// For each position, which pass wrote it (-1: none yet).
std::vector<int> writer_of_positions(const llm::LlmView& view, int n) {
    std::vector<int> out(static_cast<std::size_t>(n), -1);
    for (size_t i = 0; i < view.passes.size(); ++i) {
        const llm::ViewPass& p = view.passes[i];
        for (int k = p.pos0; k < p.pos0 + p.n_tokens && k < n; ++k)
            if (k >= 0) out[static_cast<std::size_t>(k)] = static_cast<int>(i);
    }
    return out;
}

void grid(const llm::LlmView& view, float width, float height) {
    const llm::ViewKv& kv = view.kv;
    const int bs = std::max(1, kv.block_size);
    const int cols_all = std::max(bs, static_cast<int>(kv.block_table.size()) * bs);
    const int rows = std::max(1, kv.n_layer * kv.n_head_kv);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float small = ImGui::GetFontSize() * 0.7f;
    const float label_w = std::round(ImGui::GetFont()->CalcTextSizeA(small, 1e9f, 0, "L00 H0").x + 6);
    const float grid_w = width - label_w;
    // Whole blocks that fit, two pixels a position at the least (a framed
    // block still reads as one), the latest ones when not all of them do.
    const int max_cols = std::max(bs, static_cast<int>(grid_w / 2.0f) / bs * bs);
    const int first = cols_all > max_cols ? cols_all - max_cols : 0;
    const int cols = cols_all - first;
    const float cw = std::floor(std::min(28.0f, grid_w / static_cast<float>(cols)));
    const float top_room = std::round(small * 1.3f);
    const float pointer_h = 7;  // the mark under the latest pass's columns
    const float ch = std::floor(std::clamp((height - top_room - pointer_h) / static_cast<float>(rows), 3.0f, 18.0f));
    const float gap = cw >= 6 ? 1 : 0;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const ImVec2 o(std::round(p.x + label_w), std::round(p.y + top_room));
    ImGui::Dummy(ImVec2(width, top_room + rows * ch + 2 + pointer_h));
    const std::vector<int> writer = writer_of_positions(view, cols_all);
    const int latest = static_cast<int>(view.passes.size()) - 1;
    const int n_head_kv = std::max(1, kv.n_head_kv);
    if (ch >= small * 0.9f) {  // a label for every row
        for (int r = 0; r < rows; ++r) {
            const std::string name = fmt::format("L{} H{}", r / n_head_kv, r % n_head_kv);
            plot::label(ImVec2(o.x - 4, o.y + r * ch + (ch - small) * 0.5f), name, theme::muted_rgb, 1, 0.7f);
        }
    } else {
        // Rows too thin for a label each: one per layer, centred on its rows,
        // where it fits — the first and the last layer always, so the
        // labels span the grid ("L0 … L3", never "L0, L2" ending mid-way).
        std::vector<std::pair<float, float>> taken;  // labels placed: their top and bottom
        const auto place = [&](int layer) {
            const float mid = o.y + (static_cast<float>(layer) + 0.5f) * n_head_kv * ch;
            const float y = std::clamp(mid - small * 0.5f, o.y - 1, o.y + rows * ch - small + 1);
            for (const auto& [a, b] : taken)
                if (y < b && a < y + small) return;
            taken.emplace_back(y, y + small);
            plot::label(ImVec2(o.x - 4, y), "L" + std::to_string(layer), theme::muted_rgb, 1, 0.7f);
        };
        place(0);
        if (kv.n_layer > 1) place(kv.n_layer - 1);
        for (int layer = 1; layer + 1 < kv.n_layer; ++layer) place(layer);
    }
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            const int pos = first + c;
            const int w = pos < kv.n_filled ? writer[static_cast<std::size_t>(pos)] : -1;
            const std::uint32_t rgb = w < 0 ? theme::kv_empty_rgb
                                            : view.passes[static_cast<std::size_t>(w)].prefill ? theme::kv_prefill_rgb
                                                                                                : theme::kv_decode_rgb;
            const ImVec2 a(o.x + c * cw, o.y + r * ch);
            dl->AddRectFilled(a, ImVec2(a.x + cw - gap, a.y + ch - gap), theme::col(rgb));
        }
    }
    // Blocks left out before the first drawn: an ellipsis where their ids
    // would be, so "#1" first does not read as the start of the table.
    if (first > 0) plot::label(ImVec2(o.x - 4, o.y - top_room), "\u2026", theme::muted_rgb, 1, 0.7f);
    // The blocks: a frame each, its physical id above (the block table).
    for (int b = first / bs; b < static_cast<int>(kv.block_table.size()); ++b) {
        const float x0 = o.x + (b * bs - first) * cw, x1 = x0 + bs * cw - gap;
        dl->AddRect(ImVec2(x0 - 1, o.y - 1), ImVec2(x1 + 1, o.y + rows * ch), theme::col(theme::border_rgb), 0, 0, 1.5f);
        char id[24];
        std::snprintf(id, sizeof id, "#%d", kv.block_table[static_cast<std::size_t>(b)]);
        plot::label(ImVec2(x0 + 2, o.y - top_room), id, theme::muted_rgb, 0, 0.7f);
    }
    // The latest pass's columns, marked above the grid and pointed at from
    // under it: a decode step's one column is a few pixels wide when the
    // grid holds hundreds of positions. (A frame around it would hide its
    // neighbours' cells.)
    if (latest >= 0) {
        const llm::ViewPass& lp = view.passes[static_cast<std::size_t>(latest)];
        const float x0 = o.x + (std::max(lp.pos0, first) - first) * cw, x1 = o.x + (lp.pos0 + lp.n_tokens - first) * cw - gap;
        if (x1 > x0) {
            const ImU32 rgb = theme::col(theme::active_rgb);
            dl->AddRectFilled(ImVec2(x0, o.y - 4), ImVec2(x1, o.y - 2), rgb);
            const float y = o.y + rows * ch + 1, mid = (x0 + x1) * 0.5f;
            if (x1 - x0 < pointer_h * 2)
                dl->AddTriangleFilled(ImVec2(mid, y), ImVec2(mid + pointer_h, y + pointer_h), ImVec2(mid - pointer_h, y + pointer_h), rgb);
            else
                dl->AddRectFilled(ImVec2(x0, y + 1), ImVec2(x1, y + 4), rgb);
        }
    }
}

// The pool: every block by its id, this request's in blue (the counts above
// say how many others hold).
// `beside`: the width left on the line of the text before it, when at
// least 4 px a block fit there (then the pool goes on that line), else 0.
void pool(const llm::ViewKv& kv, float width, float beside) {
    if (kv.n_blocks <= 0) return;
    if (beside > 0) {
        ImGui::SameLine(0, ImGui::GetFontSize());
        width = beside;
    }
    const float h = ImGui::GetTextLineHeight() * 0.7f;
    const float w = std::floor(std::min(h, width / static_cast<float>(kv.n_blocks)));
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(ImVec2(width, h + 2));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (int b = 0; b < kv.n_blocks; ++b) {
        const bool mine = !kv.released && std::find(kv.block_table.begin(), kv.block_table.end(), b) != kv.block_table.end();
        const ImVec2 a(std::round(p.x + b * w), std::round(p.y));
        dl->AddRectFilled(a, ImVec2(a.x + std::max(1.0f, w - 1), a.y + h), theme::col(mine ? theme::accent_rgb : theme::kv_empty_rgb));
    }
}

}  // namespace

void draw_kv_cache_panel(const app::Snapshot& s, ViewState& v, app::Session&, const Rect& r) {
    if (begin_panel("##kv_cache", r)) {
        const auto& view = s.state.panels.view;
        panel_title(tr("KV cache"));
        if (!view || view->kv.n_layer == 0) {
            ImGui::TextDisabled("%s", tr("The cache fills at stage 3 (forward)."));
            end_panel();
            return;
        }
        const llm::ViewKv& kv = view->kv;
        char line[256];
        ImGui::SameLine(0, v.font_px);
        // Positions of the context window (n_ctx), not of the pool, which
        // the line under the grid counts in blocks: once the request is
        // done its room left means nothing, and is not said.
        if (kv.released)
            std::snprintf(line, sizeof line, "it held %d of the context's %d positions", kv.n_filled, kv.n_ctx);
        else
            std::snprintf(line, sizeof line, "%d / %d context positions \u00b7 room for %d more", kv.n_filled, kv.n_ctx,
                          kv.capacity_left);
        ImGui::TextDisabled("%s", tr(line));
        if (kv.released) {  // at the size of the lines under the grid
            ImGui::SetWindowFontScale(0.8f);
            ImGui::TextColored(theme::vec(theme::warn_rgb), "%s", tr("The request finished: its blocks went back to the pool."));
            ImGui::SetWindowFontScale(1.0f);
        }
        const float width = ImGui::GetContentRegionAvail().x;
        const float text_h = ImGui::GetTextLineHeightWithSpacing();
        // Under the grid, at 0.8 of the body size: the legend, the pool's
        // blocks and the bytes (wrapped); the grid takes the rest.
        // The formula's bytes exact and grouped ("307,200 B", not "307200 B";
        // in Chinese too, where a count in 万 was not exact: "30.5万 B");
        // the memory beside it in binary units
        // ("pool 1 MiB"), short enough to leave the grid its rows.
        const std::string formula = tr(fmt::format(
            "bytes = 2 × n_layer {} × n_head_kv {} × head_dim {} × {} B × {} tokens = {} B", kv.n_layer, kv.n_head_kv,
            kv.head_dim, kv.bytes_per_value, kv.n_filled, serving::with_commas(static_cast<std::uint64_t>(kv.bytes_filled))));
        const auto memory = [](std::size_t n) { return serving::bytes_binary(static_cast<double>(n)); };
        // The formula and the bytes in one paragraph: the formula's last
        // line has room for them.
        std::string bytes = fmt::format("{} \u00b7 {} {} \u00b7 {} {} \u00b7 {} {}", formula,
                                        tr(kv.released ? "its blocks held" : "whole blocks"), memory(kv.bytes_used),
                                        tr("allocated"), memory(kv.bytes_allocated), tr("pool"),
                                        memory(kv.bytes_capacity));
        // A number keeps its unit when the paragraph wraps ("12,288 B", not
        // "12,288" at a line's end and "B" under it): a no-break space.
        for (const char* unit : {" B", " KiB", " MiB", " GiB"})
            for (std::size_t at = bytes.find(unit); at != std::string::npos; at = bytes.find(unit, at + 2))
                bytes.replace(at, 1, "\u00a0");
        const std::string pool_text = tr(fmt::format("pool: {} block{} in use, {} free", kv.n_blocks_used,
                                                     kv.n_blocks_used == 1 ? "" : "s", kv.n_blocks_free));
        const std::vector<std::pair<std::uint32_t, std::string>> legend = {
            {theme::kv_prefill_rgb, tr("prefill")}, {theme::kv_decode_rgb, tr("decode")}, {theme::kv_empty_rgb, tr("reserved")}};
        const float spacing = ImGui::GetStyle().ItemSpacing.y;
        ImGui::SetWindowFontScale(0.8f);
        // The legend's line as plot::legend lays it out, then the pool's text.
        float used = ImGui::CalcTextSize(pool_text.c_str()).x + v.font_px;
        for (const auto& [rgb, label] : legend) used += ImGui::GetTextLineHeight() * 1.55f + ImGui::CalcTextSize(label.c_str()).x;
        const float left = width - used - ImGui::GetFontSize();
        const float beside = left >= 4.0f * static_cast<float>(kv.n_blocks) ? left : 0.0f;
        float below = ImGui::GetTextLineHeightWithSpacing() + (kv.n_blocks > 0 && beside == 0 ? ImGui::GetTextLineHeight() * 0.7f + 2 + spacing : 0);
        ImGui::PushFont(fonts().mono);
        below += text_wrapped_height(bytes, width) + spacing;
        ImGui::PopFont();
        ImGui::SetWindowFontScale(1.0f);
        grid(*view, width, std::max(text_h, ImGui::GetContentRegionAvail().y - below - spacing));
        ImGui::SetWindowFontScale(0.8f);
        plot::legend(legend);
        ImGui::SameLine(0, v.font_px);
        ImGui::TextUnformatted(pool_text.c_str());
        pool(kv, width, beside);
        ImGui::PushFont(fonts().mono);
        text_wrapped(bytes);
        ImGui::PopFont();
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

}  // namespace sixstep::ui
