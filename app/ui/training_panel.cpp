// The training view (lesson 3): the loss falling step by step, the four
// parameters moving toward the values the data was made with, the gradients
// of the latest step — and then the frozen badge, after which only serving
// happens.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace fs = std::filesystem;

namespace {

void text_colored(std::uint32_t rgb, const char* t) {
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(rgb));
    ImGui::TextUnformatted(t);
    ImGui::PopStyleColor();
}

// A line chart drawn with ImDrawList: the values, the latest as a dot, and an
// optional dashed target line.
// Long histories (10 000 steps) are thinned to a few hundred points: the chart
// is a few hundred pixels wide, and llvmpipe draws every segment.
std::vector<float> thin(const std::vector<float>& ys, size_t max_points) {
    if (ys.size() <= max_points) return ys;
    std::vector<float> out;
    for (size_t k = 0; k < max_points; ++k) out.push_back(ys[k * (ys.size() - 1) / (max_points - 1)]);
    return out;
}

void chart(const char* id, const std::vector<float>& all, ImVec2 size, std::uint32_t rgb, const float* target) {
    const std::vector<float> ys = thin(all, static_cast<size_t>(std::max(8.0f, size.x / 3.0f)));
    ImGui::PushID(id);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(p, ImVec2(p.x + size.x, p.y + size.y), theme::col(0xF8FAFC), 4.0f);
    dl->AddRect(p, ImVec2(p.x + size.x, p.y + size.y), theme::col(theme::pending_border_rgb), 4.0f);
    if (!ys.empty()) {
        float lo = *std::min_element(ys.begin(), ys.end()), hi = *std::max_element(ys.begin(), ys.end());
        if (target) lo = std::min(lo, *target), hi = std::max(hi, *target);
        if (hi - lo < 1e-9f) hi = lo + 1;
        const float pad = 4;
        auto pt = [&](size_t i, float y) {
            const float x = ys.size() > 1 ? static_cast<float>(i) / static_cast<float>(ys.size() - 1) : 1.0f;
            return ImVec2(p.x + pad + x * (size.x - 2 * pad), p.y + size.y - pad - (y - lo) / (hi - lo) * (size.y - 2 * pad));
        };
        if (target) {
            const float ty = pt(0, *target).y;
            for (float x = p.x + pad; x < p.x + size.x - pad; x += 12)
                dl->AddLine(ImVec2(x, ty), ImVec2(std::min(x + 6, p.x + size.x - pad), ty), theme::col(theme::good_rgb), 2.0f);
        }
        for (size_t i = 1; i < ys.size(); ++i) dl->AddLine(pt(i - 1, ys[i - 1]), pt(i, ys[i]), theme::col(rgb), 2.5f);
        dl->AddCircleFilled(pt(ys.size() - 1, ys.back()), 4.5f, theme::col(rgb));
    }
    ImGui::PopID();
}

// The loss against the step, the loss on a log scale (it falls by orders of
// magnitude), the steps as they come (so that "it falls fast at first"
// shows), with the decades written at the left and the steps under it.
void loss_chart(const std::vector<double>& loss, ImVec2 size) {
    const float font = ImGui::GetFontSize(), label_px = font * 0.85f;
    const std::size_t n = loss.size();
    std::vector<double> xs, ys;
    const std::size_t every = std::max<std::size_t>(1, n / static_cast<std::size_t>(std::max(8.0f, size.x / 3.0f)));
    for (std::size_t i = 0; i < n; ++i)
        if (i % every == 0 || i + 1 == n) {
            xs.push_back(static_cast<double>(i + 1));
            ys.push_back(std::log10(std::max(loss[i], 1e-9)));
        }
    const double lo = *std::min_element(ys.begin(), ys.end()), hi = *std::max_element(ys.begin(), ys.end());
    // Whole decades, with a twentieth of one to spare: a loss just under a
    // power of ten (945 under 1000) sat on the frame's top edge.
    const double y0 = std::floor(lo - 0.05), y1 = std::max(std::ceil(hi + 0.05), y0 + 1);
    // One step alone sits in the middle, its tick under it, not in the
    // corner of an axis from 1 to 2.
    const bool alone = n == 1;
    plot::Frame f = plot::begin(size, alone ? 0 : 1, alone ? 2 : static_cast<double>(n), y0, y1, font * 2.6f,
                                label_px * 1.3f);
    // A label for every decade, or every other one when they would crowd.
    const int decades = static_cast<int>(y1 - y0);
    const int stride = std::max(1, static_cast<int>(std::ceil(decades * label_px * 1.15f / std::max(1.0f, f.height()))));
    std::vector<double> y_ticks;
    std::vector<std::string> y_labels;
    for (int k = static_cast<int>(y0); k <= static_cast<int>(y1); k += stride) {
        y_ticks.push_back(k);
        y_labels.push_back(pretty_number(std::pow(10.0, k)));
    }
    plot::y_axis(f, "loss", y_ticks, y_labels);
    plot::label(ImVec2(f.max.x, plot::above(f)), "training step", theme::muted_rgb, 1, 0.85f);
    // Steps are whole: no "1.2, 1.4 … 1.8" while only one or two were taken.
    std::vector<double> x_ticks;
    for (double x : plot::axis_ticks(1, f.x1, f.width(), ImGui::CalcTextSize("10,000").x * 1.5f, 5))
        if (std::fabs(x - std::round(x)) < 1e-9 && x <= static_cast<double>(n)) x_ticks.push_back(std::round(x));
    std::vector<std::string> x_labels;
    for (double x : x_ticks) x_labels.push_back(plot::chart_number(x, x_ticks.empty() ? 0 : x_ticks.back()));
    plot::x_axis(f, x_ticks, x_labels);
    plot::line(f, xs, ys, theme::bad_rgb, 2.5f, false);
    plot::dot(f, xs.back(), ys.back(), theme::bad_rgb, 4.5f);
}

// The height of what draw_training puts under the loss chart (the
// parameters' table, the predictions, the weights file), so that the chart
// takes the rest of the pane.
float height_below(const app::TrainingState& t, bool with_predictions) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const Fonts& F = fonts();
    const float gap = style.ItemSpacing.y, cell = 2 * style.CellPadding.y, line = ImGui::GetTextLineHeight();
    float h = gap + gap;  // the chart's spacing, Spacing()
    if (!t.param_keys.empty())  // a header row, then a row per parameter as tall as its 1.1-line chart
        h += line + cell + static_cast<float>(t.param_keys.size()) * (line * 1.1f + cell) + gap;
    if (with_predictions && t.last && !t.last->predictions.empty()) h += gap + 2 * (F.mono->FontSize + gap);
    return h;
}

}  // namespace

// The examples as the class first meets them: minutes against distance, a
// point's colour its congestion and a ring for the express lane, so that the
// three effects the weights will learn can be seen before any step runs.
void draw_training_data(const app::TrainingState& t) {
    if (!t.data || t.data->empty()) return;
    const std::vector<delivery::Example>& data = *t.data;
    panel_title(tr("The training data"));
    text_colored(theme::muted_rgb,
                 tr(fmt::format("{} past deliveries from {}", data.size(), fs::path(t.data_path).filename().string())));
    static constexpr std::uint32_t congestion_rgb[] = {theme::accent_rgb, 0xD97706, theme::bad_rgb};  // blue, amber, red
    const auto band = [](double congestion) { return congestion < 1.0 / 3 ? 0 : congestion < 2.0 / 3 ? 1 : 2; };
    plot::legend({{congestion_rgb[0], tr("congestion under 1/3")},
                  {congestion_rgb[1], tr("1/3 to 2/3")},
                  {congestion_rgb[2], tr("over 2/3")}});
    text_colored(theme::muted_rgb, tr("\u25cb a ring: the express lane"));
    double max_km = 0, max_min = 0;
    for (const delivery::Example& e : data) {
        max_km = std::max(max_km, e.x[0]);
        max_min = std::max(max_min, e.minutes);
    }
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // Room at the right for half the last tick's label; the x axis's 0 is
    // the y axis's (one label at the corner).
    const plot::Frame f = plot::begin(ImVec2(avail.x - font, std::max(avail.y, font * 6)), 0, plot::nice_ceiling(max_km),
                                      0, plot::nice_ceiling(max_min), font * 2.4f, font * 2.2f);
    plot::y_axis(f, tr("minutes"));
    std::vector<double> km = plot::nice_ticks(0, f.x1);
    if (!km.empty() && km.front() == 0) km.erase(km.begin());
    plot::x_axis(f, km, tr("distance (km)"));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float r = std::max(2.5f, font * 0.2f);
    for (const delivery::Example& e : data) {
        const ImU32 c = theme::col(congestion_rgb[band(e.x[1])]);
        if (e.x[2] > 0.5) dl->AddCircle(f.at(e.x[0], e.minutes), r, c, 12, 1.5f);
        else dl->AddCircleFilled(f.at(e.x[0], e.minutes), r, c);
    }
}

void draw_training(const app::Snapshot& s, ViewState& v) {
    const Rect& r = v.layout.inspector;
    if (begin_panel("##training", r)) {
        const app::LessonState& st = s.state;
        const app::TrainingState& t = st.training;
        const Fonts& F = fonts();

        panel_title(tr("Training"));
        const char* inspector = tr("Inspector");
        const float button_x =
            ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize(inspector).x - ImGui::GetStyle().FramePadding.x * 2;
        if (t.frozen) {
            ImGui::SameLine();
            text_colored(theme::good_rgb, (std::string("\u2744 ") + tr("frozen")).c_str());
            // Where the weights went, on the title's line (shortened to the
            // room before the button): a line of its own cut the pane. The
            // file's name; its folder (a temporary one, unless the lesson
            // names it) when the pointer is on it.
            if (!t.weights_file.empty()) {
                ImGui::SameLine();
                const float room = button_x - ImGui::GetCursorPosX() - ImGui::GetStyle().ItemSpacing.x;
                const std::string name = std::filesystem::path(t.weights_file).filename().string();
                const std::string file = fit_text(ImGui::GetFont(), ImGui::GetFontSize() * 0.8f,
                                                  std::string(tr("saved:")) + " " + name, room);
                ImGui::SetWindowFontScale(0.8f);
                text_colored(theme::muted_rgb, file.c_str());
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", t.weights_file.c_str());
                ImGui::SetWindowFontScale(1.0f);
            }
        }
        ImGui::SameLine(button_x);
        if (ImGui::SmallButton(inspector)) v.right_tab = 0;
        char line[200];
        std::snprintf(line, sizeof line, "%zu step%s \u00b7 %d examples \u00b7 learning rate \u03b7 = %s", t.loss.size(),
                      t.loss.size() == 1 ? "" : "s", t.examples, pretty_number(t.learning_rate).c_str());
        text_colored(theme::muted_rgb, tr(line));

        const float avail = ImGui::GetContentRegionAvail().x;
        bool show_predictions = true;
        // ---- loss ----
        {
            ImGui::PushFont(F.bold);
            ImGui::Text("%s", tr("Loss"));
            ImGui::PopFont();
            ImGui::SameLine();
            ImGui::PushFont(F.big);
            ImGui::TextUnformatted(t.loss.empty() ? "" : pretty_number(t.loss.back(), 4).c_str());
            ImGui::PopFont();
            if (t.loss.size() > 1) {
                ImGui::SameLine();
                char from[64];
                std::snprintf(from, sizeof from, "(from %s; log scale)", pretty_number(t.loss.front(), 4).c_str());
                text_colored(theme::muted_rgb, tr(from));
            }
            // The predictions' two lines give way to the chart where the
            // pane is short (1280x720 left the chart 35 px): the diagram's
            // forward box still shows the first prediction and its label.
            const float room = ImGui::GetContentRegionAvail().y;
            show_predictions = room - height_below(t, true) >= v.font_px * 5;
            if (!t.loss.empty())
                loss_chart(t.loss, ImVec2(avail, std::max(v.font_px * 3.5f, room - height_below(t, show_predictions))));
        }
        // ---- parameters, each with its trajectory and the article's value ----
        // (the table's first header names them: no heading above it)
        ImGui::Spacing();
        const std::vector<double>& target = t.target;  // what the data was made with; may be empty
        const std::size_t n = t.param_keys.size();
        const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp;
        if (n > 0 && ImGui::BeginTable("##params", 5, flags)) {
            ImGui::TableSetupColumn("param", ImGuiTableColumnFlags_WidthStretch, 1.2f);
            ImGui::TableSetupColumn("now", ImGuiTableColumnFlags_WidthStretch, 0.9f);
            ImGui::TableSetupColumn("target", ImGuiTableColumnFlags_WidthStretch, 0.7f);
            ImGui::TableSetupColumn("grad", ImGuiTableColumnFlags_WidthStretch, 1.0f);
            ImGui::TableSetupColumn("trajectory", ImGuiTableColumnFlags_WidthStretch, 1.6f);
            ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
            const char* heads[5] = {tr("Parameters"), tr("now"), tr("target"), "\u2202L/\u2202\u03b8", ""};
            for (const char* h : heads) {
                ImGui::TableNextColumn();
                text_colored(theme::muted_rgb, h);
            }
            for (std::size_t k = 0; k < n; ++k) {
                const std::string& name = k < t.param_labels.size() ? t.param_labels[k] : t.param_keys[k];
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(tr(name));
                ImGui::TableNextColumn();
                ImGui::PushFont(F.bold);
                ImGui::TextUnformatted(t.steps() == 0 ? "\u2014" : pretty_number(t.param(t.steps() - 1, k), 4).c_str());
                ImGui::PopFont();
                ImGui::TableNextColumn();
                text_colored(theme::good_rgb, k < target.size() ? pretty_number(target[k]).c_str() : "\u2014");
                ImGui::TableNextColumn();
                ImGui::PushFont(F.mono);
                ImGui::TextUnformatted(t.last && k < t.last->grad.size() ? shown_text(t.last->grad[k], 4).c_str() : "\u2014");
                ImGui::PopFont();
                ImGui::TableNextColumn();
                std::vector<float> traj;
                for (int step = 0; step < t.steps(); ++step) traj.push_back(static_cast<float>(t.param(step, k)));
                const float tv = k < target.size() ? static_cast<float>(target[k]) : 0.0f;
                chart(name.c_str(), traj, ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetTextLineHeight() * 1.1f),
                      theme::accent_rgb, k < target.size() ? &tv : nullptr);
            }
            ImGui::EndTable();
        }
        // ---- the latest step's predictions against the labels ----
        if (show_predictions && t.last && !t.last->predictions.empty()) {
            ImGui::Spacing();
            std::string preds = "\u0177 ";
            std::string labels = "y ";
            for (size_t i = 0; i < t.last->predictions.size(); ++i) {
                preds += (i ? ", " : "") + pretty_number(t.last->predictions[i], 3);
                if (i < t.last->labels.size()) labels += (i ? ", " : "") + pretty_number(t.last->labels[i], 3);
            }
            ImGui::PushFont(F.mono);
            ImGui::TextUnformatted(preds.c_str());
            ImGui::TextUnformatted(labels.c_str());
            ImGui::PopFont();
        }
    }
    end_panel();
}

}  // namespace sixstep::ui
