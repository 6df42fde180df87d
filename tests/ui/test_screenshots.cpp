// The GUI smoke test: every bundled lesson rendered off-screen at every step
// (EGL surfaceless, no display), and each image checked: not blank, the
// header and the narration's text drawn, and the stage that ran last filled
// with the highlight colour in its box of the diagram — and no other box.
#include <doctest/doctest.h>

#include "temp_dir.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>
#include <stb_image.h>

#include "app/core/interpreter.h"
#include "app/core/lesson.h"
#include "app/core/session.h"
#include "app/server/endpoint_model.h"
#include "app/ui/fonts.h"
#include "app/ui/format.h"
#include "app/ui/gui.h"
#include "app/ui/i18n.h"
#include "app/ui/layout.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"
#include "pipeline/llm/cpu/cpu_load.h"
#include "pipeline/llm/llm_view.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/serving/serving_model.h"
#include "pipeline/serving/traffic_metrics.h"

namespace fs = std::filesystem;
using namespace sixstep;

namespace {

// A lesson written to a fresh folder of this process's temp dir; the folder
// is dir.parent_path() of the returned path.
fs::path lesson_file(const char* dir_name, const char* file, const char* text) {
    const auto dir = sixstep::test::process_temp_dir(dir_name);
    fs::create_directories(dir);
    const fs::path lesson = dir / file;
    std::FILE* f = std::fopen(lesson.c_str(), "w");
    REQUIRE(f);
    std::fputs(text, f);
    std::fclose(f);
    return lesson;
}

// Each step's screen text and the snapshot drawn, for a lesson written from
// `yaml` to a scratch folder (removed again).
struct Screen {
    std::string text;
    app::Snapshot shown;
};
std::vector<Screen> screens_of(const char* dir_name, const char* yaml, std::vector<std::string>* overflows = nullptr) {
    const fs::path lesson = lesson_file(dir_name, "lesson.yaml", yaml);
    std::vector<Screen> screens;
    ui::ScreenshotOptions o;
    o.lesson_path = lesson.string();
    o.on_text = [&](int, const std::string& text, const app::Snapshot& shown) { screens.push_back({text, shown}); };
    const int rc = ui::render_screenshots(o, nullptr, overflows);
    std::error_code ec;
    fs::remove_all(lesson.parent_path(), ec);
    REQUIRE(rc == 0);
    return screens;
}

struct Image {
    int w = 0, h = 0;
    std::vector<unsigned char> px;  // RGBA
    Image() = default;
    explicit Image(const ui::Frame& f) : w(f.width), h(f.height), px(f.rgba) {}
    std::uint32_t at(int x, int y) const {
        const unsigned char* p = &px[(static_cast<size_t>(y) * w + x) * 4];
        return (static_cast<std::uint32_t>(p[0]) << 16) | (p[1] << 8) | p[2];
    }
};

Image load_png(const std::string& path) {
    Image img;
    int n = 0;
    unsigned char* data = stbi_load(path.c_str(), &img.w, &img.h, &n, 4);
    if (data) {
        img.px.assign(data, data + static_cast<size_t>(img.w) * img.h * 4);
        stbi_image_free(data);
    }
    return img;
}

// Fraction of the pixels in r whose colour is exactly rgb.
double share(const Image& img, const ui::Rect& r, std::uint32_t rgb) {
    long hit = 0, all = 0;
    for (int y = static_cast<int>(r.y); y < static_cast<int>(r.bottom()); ++y)
        for (int x = static_cast<int>(r.x); x < static_cast<int>(r.right()); ++x, ++all)
            if (img.at(x, y) == rgb) ++hit;
    return all ? static_cast<double>(hit) / static_cast<double>(all) : 0.0;
}

// Dark pixels (text) in r.
long dark_pixels(const Image& img, const ui::Rect& r) {
    long n = 0;
    for (int y = static_cast<int>(r.y); y < static_cast<int>(r.bottom()); ++y)
        for (int x = static_cast<int>(r.x); x < static_cast<int>(r.right()); ++x) {
            const std::uint32_t c = img.at(x, y);
            const int luma = (299 * static_cast<int>((c >> 16) & 0xFF) + 587 * static_cast<int>((c >> 8) & 0xFF) +
                              114 * static_cast<int>(c & 0xFF)) / 1000;
            if (luma < 90) ++n;
        }
    return n;
}

size_t distinct_colours(const Image& img) {
    std::set<std::uint32_t> seen;
    for (int y = 0; y < img.h; y += 3)
        for (int x = 0; x < img.w; x += 3) seen.insert(img.at(x, y));
    return seen.size();
}

// Every step of a bundled lesson, drawn at 1280x720 (pixels in memory, no
// PNG files: the one test of the files is "the PNG files hold the pixels").
// Every step of the lesson at `path`, at 1280x720, in memory; the renderer's
// lines about content that does not fit its pane go to `overflows`.
// `notes` (optional): the steps whose narration was drawn below the body
// size; `checks_held` (optional): per step, whether every check passed.
std::vector<Image> render_lesson_at(const std::string& path, std::vector<std::string>* overflows = nullptr,
                                    std::vector<std::string>* notes = nullptr,
                                    std::vector<app::LessonState>* states = nullptr) {
    ui::ScreenshotOptions o;
    o.lesson_path = path;
    o.narration_notes = notes;
    std::vector<Image> images;
    o.on_frame = [&](const ui::Frame& f, const app::Snapshot& shown) {
        images.emplace_back(f);
        if (states) states->push_back(shown.state);
    };
    REQUIRE_MESSAGE(ui::render_screenshots(o, nullptr, overflows) == 0,
                    "no image: is Mesa's EGL (libegl-mesa0) installed? the GUI smoke test needs it");
    return images;
}

// The same for a bundled lesson, by file name.
std::vector<Image> render_lesson(const char* file) {
    return render_lesson_at(std::string(SIXSTEP_SOURCE_DIR) + "/lessons/" + file);
}

// The connected regions (4-neighbours) of exactly rgb in r with at least
// min_px pixels: a chip, a bar, a legend swatch (glyphs drawn over a fill do
// not split it while the fill has a margin around them).
struct Region {
    int x0, y0, x1, y1;  // bounding box, exclusive ends
    long px;
};
std::vector<Region> regions(const Image& img, const ui::Rect& r, std::uint32_t rgb, long min_px) {
    const int X0 = static_cast<int>(r.x), Y0 = static_cast<int>(r.y);
    const int W = static_cast<int>(r.right()) - X0, H = static_cast<int>(r.bottom()) - Y0;
    std::vector<char> seen(static_cast<size_t>(W) * H, 0);
    std::vector<Region> out;
    std::vector<std::pair<int, int>> stack;
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            if (seen[static_cast<size_t>(y) * W + x] || img.at(X0 + x, Y0 + y) != rgb) continue;
            Region g{x, y, x + 1, y + 1, 0};
            stack.push_back({x, y});
            seen[static_cast<size_t>(y) * W + x] = 1;
            while (!stack.empty()) {
                const auto [cx, cy] = stack.back();
                stack.pop_back();
                ++g.px;
                g.x0 = std::min(g.x0, cx), g.y0 = std::min(g.y0, cy), g.x1 = std::max(g.x1, cx + 1), g.y1 = std::max(g.y1, cy + 1);
                const int nx[4] = {cx - 1, cx + 1, cx, cx}, ny[4] = {cy, cy, cy - 1, cy + 1};
                for (int k = 0; k < 4; ++k) {
                    if (nx[k] < 0 || ny[k] < 0 || nx[k] >= W || ny[k] >= H) continue;
                    char& s = seen[static_cast<size_t>(ny[k]) * W + nx[k]];
                    if (!s && img.at(X0 + nx[k], Y0 + ny[k]) == rgb) s = 1, stack.push_back({nx[k], ny[k]});
                }
            }
            if (g.px >= min_px) out.push_back({g.x0 + X0, g.y0 + Y0, g.x1 + X0, g.y1 + Y0, g.px});
        }
    return out;
}

// Horizontal bars as plot::hbar draws them: a fill in one of `fills` from the
// left, then the grey track to the bar's full width (a tick on the track, at
// most 3 pixels wide, is stepped over). One entry per bar, top to bottom, from
// the pixel rows that show both parts.
struct HBar {
    int y = 0, x = 0;     // first row, left edge
    int fill = 0, width = 0;
    std::uint32_t rgb = 0;
    double fraction() const { return static_cast<double>(fill) / width; }
};
constexpr std::uint32_t hbar_track_rgb = 0xE5E7EB;  // plot::hbar's default track
std::vector<HBar> hbars(const Image& img, const ui::Rect& r, const std::vector<std::uint32_t>& fills) {
    std::vector<HBar> out;
    auto is_fill = [&](std::uint32_t c) { return std::find(fills.begin(), fills.end(), c) != fills.end(); };
    const int right = static_cast<int>(r.right());
    // From x, the end of a run of `rgb` along row y, across ticks at most 3
    // pixels wide that the run resumes after.
    auto run_end = [&](int x, int y, std::uint32_t rgb) {
        for (;;) {
            while (x < right && img.at(x, y) == rgb) ++x;
            int t = x;
            while (t < right && t - x < 4 && img.at(t, y) != rgb) ++t;
            if (t == x || t >= right || img.at(t, y) != rgb) return x;
            x = t;
        }
    };
    int last_row = -2;
    for (int y = static_cast<int>(r.y); y < static_cast<int>(r.bottom()); ++y) {
        bool found = false;
        for (int x = static_cast<int>(r.x); x < right && !found;) {
            const std::uint32_t c = img.at(x, y);
            if (!is_fill(c)) { ++x; continue; }
            const int a = x;
            x = run_end(x, y, c);
            const int b = x;
            x = run_end(x, y, hbar_track_rgb);
            if (x - b >= 1 && x - a >= 40) {
                const HBar h{y, a, b - a, x - a, c};
                const bool same = !out.empty() && last_row == y - 1 && out.back().x == h.x && out.back().fill == h.fill &&
                                  out.back().width == h.width;
                if (!same) out.push_back(h);
                last_row = y;
                found = true;
            }
        }
    }
    return out;
}

// The pixel row with the most pixels of the given colours (a bar chart's
// baseline, which every bar reaches), and on it the runs of `rgb` — runs
// closer than `gap` pixels joined (a dashed line may cross the bars).
int runs_on_baseline(const Image& img, const ui::Rect& r, const std::vector<std::uint32_t>& bars, std::uint32_t rgb, int gap) {
    int best_y = -1;
    long best = 0;
    for (int y = static_cast<int>(r.y); y < static_cast<int>(r.bottom()); ++y) {
        long n = 0;
        for (int x = static_cast<int>(r.x); x < static_cast<int>(r.right()); ++x)
            if (std::find(bars.begin(), bars.end(), img.at(x, y)) != bars.end()) ++n;
        if (n > best) best = n, best_y = y;
    }
    if (best_y < 0) return 0;
    std::vector<std::pair<int, int>> runs;  // [first, last] pixel
    for (int x = static_cast<int>(r.x); x < static_cast<int>(r.right()); ++x)
        if (img.at(x, best_y) == rgb) {
            if (runs.empty() || x - runs.back().second > gap) runs.push_back({x, x});
            else runs.back().second = x;
        }
    return static_cast<int>(std::count_if(runs.begin(), runs.end(), [](const auto& run) { return run.second - run.first >= 2; }));
}


}  // namespace

// Also the 1280x720 half of "every pane's content fits" (below): the same
// frames, rendered once. And no step's narration drawn smaller than the body
// text (`screenshot`'s note).
TEST_CASE("screenshots: every lesson, every step, off-screen at 1280x720, every pane's content fitting") {
    const std::string lessons = std::string(SIXSTEP_SOURCE_DIR) + "/lessons";
    const float f = ui::default_font_px(1280, 720);
    const ui::Layout layout = ui::compute_layout(1280, 720, f, 0, 1);

    int images = 0;
    for (const std::string& path : app::find_lessons(lessons)) {
        CAPTURE(path);
        app::Lesson lesson;
        try {
            lesson = app::load_lesson(path);
        } catch (const std::exception& e) {
            FAIL_CHECK("lesson does not load: " << e.what());
            continue;
        }
        std::vector<std::string> overflows, shrunk;
        std::vector<app::LessonState> states;  // what each frame was drawn from
        const std::vector<Image> frames = render_lesson_at(path, &overflows, &shrunk, &states);
        REQUIRE(frames.size() == lesson.steps.size());
        REQUIRE(states.size() == frames.size());
        std::vector<bool> held;
        for (const app::LessonState& st : states)
            held.push_back(std::all_of(st.checks.begin(), st.checks.end(), [](const app::CheckResult& c) { return c.passed; }));
        std::string unfit;
        for (const std::string& line : overflows) unfit += "\n  " + line;
        CHECK_MESSAGE(unfit.empty(), "content that does not fit its pane at 1280x720:" << unfit);
        // Each step's narration at the body size or larger: read from the
        // back of the room. (A failed check's lines take the narration's room
        // first: a timing check that fails on a busy machine may shrink it.)
        std::string small;
        for (const std::string& line : shrunk) {
            const std::size_t step = std::stoul(line.substr(5));  // "step 4: the narration is shown at 85% …"
            if (step >= 1 && step <= held.size() && held[step - 1]) small += "\n  " + line;
        }
        CHECK_MESSAGE(small.empty(), "narration shrunk below the body size at 1280x720 (shorten the say: text):" << small);

        // What the interpreter says ran last at each step (the state the
        // frame was drawn from: running the lesson again would double the
        // case's time, lesson 17 serving real requests for ten seconds): the
        // stage the diagram must highlight.
        for (size_t k = 0; k < frames.size(); ++k) {
            const app::LessonState& st = states[k];
            CAPTURE(k + 1);
            const Image& img = frames[k];
            REQUIRE(img.w == 1280);
            REQUIRE(img.h == 720);
            CHECK(distinct_colours(img) > 20);                                 // not blank
            CHECK(img.at(2, 2) == ui::theme::header_rgb);                       // the header bar
            CHECK(dark_pixels(img, layout.narration) > 800);                    // the narration's text
            CHECK(dark_pixels(img, layout.diagram) > 400);                      // the boxes' labels
            const bool training_view = st.training.active && !st.training.loss.empty() && st.trace.empty();
            for (int i = 0; i < stage_count && !training_view; ++i) {
                const double s = share(img, ui::stage_box(layout.diagram, i, f), ui::theme::active_rgb);
                if (st.last_stage && stage_index(*st.last_stage) == i) CHECK_MESSAGE(s > 0.30, "stage " << i << " not highlighted");
                else CHECK_MESSAGE(s < 0.02, "stage " << i << " highlighted but not active");
            }
            ++images;
        }
    }
    CHECK(images >= 20);
}

// Lesson 05 shows the KV cache panel (first of two stacked) while it walks a
// prompt through prefill and two decode steps. Every cell of the grid has the
// same size, so the decode colour's pixels over the prefill colour's are the
// decode positions over the prompt's: one more column per decode step. The
// legend's swatches are there at every step; the decode swatch is measured on
// the prefill step, where no cell is green yet.
TEST_CASE("screenshots: the KV cache grid fills as one block, then one column per decode step") {
    const std::string path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/05-prefill-decode-kv-cache.yaml";
    const std::vector<Image> frames = render_lesson("05-prefill-decode-kv-cache.yaml");
    REQUIRE(frames.size() >= 5);

    const float f = ui::default_font_px(1280, 720);
    const ui::Layout layout = ui::compute_layout(1280, 720, f, 0, 1, true);
    const ui::Rect kv_slot = ui::panel_slot(layout.inspector, {"kv_cache", "timeline"}, 0);
    auto pixels = [&](const Image& img, std::uint32_t rgb) {
        return static_cast<double>(share(img, kv_slot, rgb) * kv_slot.w * kv_slot.h);
    };
    app::Interpreter it(app::load_lesson(path));
    std::vector<double> prefill, decode;
    std::vector<int> n_prompt, n_decoded;
    for (size_t k = 0; k < 5; ++k) {
        it.step();
        const auto& view = it.state().panels.view;
        n_prompt.push_back(view ? view->n_prompt : 0);
        n_decoded.push_back(view ? view->kv.n_filled - view->n_prompt : 0);
        const Image& img = frames[k];
        REQUIRE(img.w == 1280);
        prefill.push_back(pixels(img, ui::theme::kv_prefill_rgb));
        decode.push_back(pixels(img, ui::theme::kv_decode_rgb));
    }
    // Step 1 tokenizes only: no cell yet. Step 2 is the prefill (and step 3
    // samples): the prompt's block, nothing green beyond the swatch.
    CHECK(prefill[0] == 0);
    CHECK(n_decoded[1] == 0);
    CHECK(prefill[1] > 0);
    CHECK(prefill[2] == prefill[1]);
    CHECK(decode[2] == decode[1]);
    const double swatch = decode[1];
    REQUIRE(n_prompt[3] > 10);
    // Steps 4 and 5: one decode step each.
    CHECK(n_decoded[3] == 1);
    CHECK(n_decoded[4] == 2);
    for (size_t k : {3u, 4u}) {
        CAPTURE(k + 1);
        const double ratio = (decode[k] - swatch) / (prefill[k] - swatch);
        CHECK(ratio * n_prompt[k] == doctest::Approx(n_decoded[k]).epsilon(0.05));
    }
}

// Lesson 04's step 6 shows attention over the 6-token prompt: the 15 cells
// above the diagonal are the causal mask, in its own colour, and the step
// before (the next-token panel) has none of it.
TEST_CASE("screenshots: the attention map draws the causal mask") {
    const std::string path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/04-one-token-at-a-time.yaml";
    const std::vector<Image> frames = render_lesson("04-one-token-at-a-time.yaml");
    REQUIRE(frames.size() >= 6);
    app::Interpreter it(app::load_lesson(path));
    for (int k = 0; k < 6; ++k) it.step();
    const auto& map = it.state().panels.attention;
    REQUIRE(map);
    const int n = map->n_pos;
    REQUIRE(n == 6);

    const float f = ui::default_font_px(1280, 720);
    const ui::Layout layout = ui::compute_layout(1280, 720, f, 0, 1, true);
    const ui::Rect slot = ui::panel_slot(layout.inspector, {"attention", "logit_lens"}, 0);
    // Squares of 2×2 pixels in the mask's colour (its cells are at least
    // that big; a glyph's anti-aliased edge may hit the colour in a pixel
    // or two, never in a square).
    auto masked = [&](const Image& img) {
        int squares = 0;
        auto is = [&](int x, int y) { return img.at(x, y) == ui::theme::mask_rgb; };
        for (int y = static_cast<int>(slot.y); y + 1 < static_cast<int>(slot.bottom()); ++y)
            for (int x = static_cast<int>(slot.x); x + 1 < static_cast<int>(slot.right()); ++x)
                squares += is(x, y) && is(x + 1, y) && is(x, y + 1) && is(x + 1, y + 1);
        return squares;
    };
    const int before = masked(frames[4]), with_map = masked(frames[5]);
    CHECK(before == 0);
    // At least n(n-1)/2 cells of 2×2 pixels (plus the legend's swatch).
    CHECK(with_map >= n * (n - 1) / 2);
}

// Lesson 04 shows the tokens, next-token, timeline and logit-lens panels at
// several steps. Each panel's picture is checked against the engine's
// snapshot of that step (the lesson run again by an interpreter: greedy, so
// the same tokens and probabilities) — nothing from one run typed in:
// - Tokens: one chip per token, coloured prompt / generated / byte-or-control
//   (plus one legend swatch of each colour), so the generated chips grow by
//   one per token;
// - Next token: one bar per candidate, top to bottom, each filled to its
//   probability (so the first is the longest), the chosen one highlighted;
// - Timeline: on the chart's baseline one prefill bar and one bar per decode
//   step;
// - Logit lens: one bar per layer filled to that layer's top probability,
//   the last (the output stage's) highlighted; and its token is the output
//   stage's top token.
// One rendering serves the four (doctest runs each subcase in the same process).
TEST_CASE("screenshots: the tokens, next-token, timeline and logit-lens panels show the engine's numbers") {
    const std::string path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/04-one-token-at-a-time.yaml";
    static const std::vector<Image> frames = render_lesson("04-one-token-at-a-time.yaml");
    static const std::vector<app::PanelsState> panels = [&] {
        app::Interpreter it(app::load_lesson(path));
        std::vector<app::PanelsState> out;
        while (!it.finished()) {
            it.step();
            out.push_back(it.state().panels);
        }
        return out;
    }();
    REQUIRE(frames.size() == panels.size());

    const float f = ui::default_font_px(1280, 720);
    const ui::Layout layout = ui::compute_layout(1280, 720, f, 0, 1, true);
    // The steps showing `name`, each with its image and the panel's rectangle.
    struct Shown {
        size_t step;
        Image img;
        ui::Rect slot;
    };
    auto showing = [&](const std::string& name) {
        std::vector<Shown> out;
        for (size_t k = 0; k < panels.size(); ++k) {
            const auto& shown = panels[k].shown;
            const auto at = std::find(shown.begin(), shown.end(), name);
            if (at == shown.end()) continue;
            const int i = static_cast<int>(at - shown.begin());
            out.push_back({k, frames[k], ui::panel_slot(layout.inspector, shown, i)});
        }
        return out;
    };

    SUBCASE("tokens: one chip per token, in its kind's colour") {
        int most_generated = 0, steps = 0;
        for (const Shown& sh : showing("tokens")) {
            const auto& view = panels[sh.step].view;
            if (!view || view->tokens.empty()) continue;
            CAPTURE(sh.step + 1);
            long prompt = 0, generated = 0, other = 0;
            for (const auto& t : view->tokens) (t.byte || t.special ? other : t.prompt ? prompt : generated) += 1;
            // Each count plus the legend's swatch.
            CHECK(regions(sh.img, sh.slot, ui::theme::token_prompt_rgb, 40).size() == prompt + 1);
            CHECK(regions(sh.img, sh.slot, ui::theme::token_generated_rgb, 40).size() == generated + 1);
            CHECK(regions(sh.img, sh.slot, ui::theme::token_byte_rgb, 40).size() == other + 1);
            most_generated = std::max(most_generated, static_cast<int>(generated));
            ++steps;
        }
        CHECK(steps >= 2);
        CHECK(most_generated >= 1);  // a step where generated chips were appended
    }

    SUBCASE("next token: one bar per candidate, filled to its probability") {
        int steps = 0;
        for (const Shown& sh : showing("next_token")) {
            const auto& view = panels[sh.step].view;
            if (!view || view->next.top.empty()) continue;
            CAPTURE(sh.step + 1);
            const auto& next = view->next;
            const auto bars = hbars(sh.img, sh.slot, {ui::theme::accent_rgb, ui::theme::active_rgb});
            // All of them, or the first few when the sampler's table needs
            // the room (greedy here: the token taken is the first).
            REQUIRE(bars.size() >= 2);
            REQUIRE(bars.size() <= next.top.size());
            for (size_t i = 0; i < bars.size(); ++i) {
                CAPTURE(i);
                CHECK(bars[i].x == bars[0].x);
                CHECK(bars[i].width == bars[0].width);
                CHECK(std::abs(bars[i].fraction() - next.top[i].p) <= 1.5 / bars[i].width);
                CHECK(bars[i].rgb == (next.top[i].id == next.chosen ? ui::theme::active_rgb : ui::theme::accent_rgb));
                if (i) CHECK(bars[i].fill <= bars[0].fill);
            }
            ++steps;
        }
        CHECK(steps >= 2);
    }

    SUBCASE("timeline: one prefill bar, then one bar per decode step") {
        int most_decode = 0, steps = 0;
        for (const Shown& sh : showing("timeline")) {
            const auto& view = panels[sh.step].view;
            if (!view || view->passes.empty()) continue;
            CAPTURE(sh.step + 1);
            const int n_prefill = static_cast<int>(std::count_if(view->passes.begin(), view->passes.end(),
                                                                 [](const auto& p) { return p.prefill; }));
            const int n_decode = static_cast<int>(view->passes.size()) - n_prefill;
            const std::vector<std::uint32_t> bar_rgb = {ui::theme::prefill_bar_rgb, ui::theme::decode_bar_rgb};
            CHECK(runs_on_baseline(sh.img, sh.slot, bar_rgb, ui::theme::prefill_bar_rgb, 6) == n_prefill);
            CHECK(runs_on_baseline(sh.img, sh.slot, bar_rgb, ui::theme::decode_bar_rgb, 6) == n_decode);
            most_decode = std::max(most_decode, n_decode);
            ++steps;
        }
        CHECK(steps >= 2);
        CHECK(most_decode >= 2);
    }

    SUBCASE("logit lens: one row per layer, the last one the output stage's") {
        int steps = 0;
        for (const Shown& sh : showing("logit_lens")) {
            const auto& p = panels[sh.step];
            if (p.lens.empty()) continue;
            CAPTURE(sh.step + 1);
            REQUIRE(p.n_layer > 1);
            REQUIRE(p.lens.size() == static_cast<size_t>(p.n_layer));
            REQUIRE(p.view);
            REQUIRE(!p.view->next.top.empty());
            CHECK(p.lens.back().top.front().id == p.view->next.top.front().id);
            CHECK(p.lens.back().top.front().p == doctest::Approx(p.view->next.top.front().p).epsilon(1e-4));
            const auto bars = hbars(sh.img, sh.slot, {ui::theme::accent_rgb, ui::theme::active_rgb});
            REQUIRE(bars.size() == p.lens.size());
            for (size_t i = 0; i < bars.size(); ++i) {
                CAPTURE(i);
                REQUIRE(!p.lens[i].top.empty());
                CHECK(std::abs(bars[i].fraction() - p.lens[i].top.front().p) <= 1.5 / bars[i].width);
                CHECK(bars[i].rgb == (i + 1 == bars.size() ? ui::theme::active_rgb : ui::theme::accent_rgb));
            }
            ++steps;
        }
        CHECK(steps >= 1);
    }
}

// Lesson 16: steps 1-4 walk the metre-trained v2's canary stage by stage
// (step 1 stops at the load, before anything is served), and it is rolled
// back; step 5 runs a sound v2 that is promoted. The deployment chart draws
// v2's line in the canary colour both times, and the rollback marker only
// when the engine rolled back, and not before the monitor's step (3).
TEST_CASE("screenshots: the canary chart marks the rollback only when there is one") {
    const std::vector<Image> frames = render_lesson("16-inference-serving-deployment.yaml");
    REQUIRE(frames.size() == 5);
    const ui::Rect whole{0, 0, 1280, 720};
    auto pixels = [&](const Image& img, std::uint32_t rgb) {
        REQUIRE(img.w == 1280);
        return share(img, whole, rgb) * whole.w * whole.h;
    };
    const double rollback = pixels(frames[3], ui::theme::rollback_rgb);
    const double promoted = pixels(frames[4], ui::theme::rollback_rgb);
    CHECK(pixels(frames[0], ui::theme::rollback_rgb) == 0);
    // Step 2 stops at the raw output, which holds the verdict the monitor
    // reaches in step 3: the marker waits for it.
    CHECK(pixels(frames[1], ui::theme::rollback_rgb) == 0);
    CHECK(pixels(frames[2], ui::theme::rollback_rgb) > 20);
    CHECK(rollback > 20);  // a dashed line across the chart and its label
    CHECK(promoted == 0);
    CHECK(pixels(frames[3], ui::theme::canary_rgb) > 20);
    CHECK(pixels(frames[4], ui::theme::canary_rgb) > 20);
}

// Lesson 02 step 6: "3 kg" stops the request in its first stage. The six
// boxes were all blank and grey, the error only under the narration; the
// request's box is now red and says so, and no box is red in a step whose
// request went through.
TEST_CASE("screenshots: the stage whose error stopped the request is drawn red, and only then") {
    const std::vector<Image> frames = render_lesson("02-training-serving-skew.yaml");
    REQUIRE(frames.size() == 7);
    const float f = ui::default_font_px(1280, 720);
    const ui::Rect diagram = ui::compute_layout(1280, 720, f, 1, 1).diagram;
    for (std::size_t k = 0; k < frames.size(); ++k) {
        CAPTURE(k + 1);
        for (int i = 0; i < 6; ++i) {
            CAPTURE(i);
            const double red = share(frames[k], ui::stage_box(diagram, i, f), ui::theme::error_fill_rgb);
            if (k == 5 && i == 0) CHECK(red > 0.3);
            else CHECK(red == 0);
        }
    }
}

// Lesson 09: step 2 is about measuring the service time; the forward pass
// has run every simulation by then, but the hockey stick (M/M/1's orange
// line among them) waits for step 3, where the narration comes to it.
TEST_CASE("screenshots: the queue's curve appears with the raw output, not with the measurement") {
    const std::vector<Image> frames = render_lesson("09-queueing-headroom.yaml");
    REQUIRE(frames.size() == 6);
    const ui::Rect right{660, 240, 600, 400};
    CHECK(share(frames[1], right, 0xB45309) == 0);
    CHECK(share(frames[2], right, 0xB45309) > 0.001);
    // What step 2 shows instead: the measured steps' histogram, in their
    // green, where the pane was empty under one line of text.
    CHECK(share(frames[1], right, 0x15803D) > 0.02);
}

// Lesson 07: each candidate's bar is the share the draw uses; a candidate
// the sampler's filters cut is drawn grey. Step 2 cuts nothing (temperature
// 1, no filter: the model's own probabilities), step 4 keeps the top 3
// (top_k 3: their renormalized shares), step 7 sharpens (temperature 0.3).
// At 1024x768 the pane holds the six bars and the whole table; at 1280x720
// it holds the whole table (what the lesson talks about) under two bars:
// the likeliest and the token taken.
TEST_CASE("screenshots: the next-token bars are the sampler's shares, what it cut grey") {
    const std::vector<std::uint32_t> kept = {ui::theme::accent_rgb, ui::theme::active_rgb};
    const std::vector<std::uint32_t> cut = {ui::theme::pending_border_rgb};
    const std::string lesson = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/07-sampling.yaml";
    std::vector<std::string> texts;
    std::vector<llm::ViewNext> nexts;
    const auto render = [&](int w, int h) {
        ui::ScreenshotOptions o;
        o.lesson_path = lesson;
        o.width = w;
        o.height = h;
        std::vector<Image> images;
        texts.clear();
        nexts.clear();
        o.on_frame = [&](const ui::Frame& f, const app::Snapshot& s) {
            images.emplace_back(f);
            nexts.push_back(s.state.panels.view ? s.state.panels.view->next : llm::ViewNext{});
        };
        o.on_text = [&](int, const std::string& t, const app::Snapshot&) { texts.push_back(t); };
        REQUIRE(ui::render_screenshots(o) == 0);
        REQUIRE(images.size() >= 7);
        const ui::Rect right = ui::compute_layout(w, h, ui::default_font_px(w, h), 0, 1, true).inspector;
        return std::make_pair(images, right);
    };
    // The share the draw used for candidate `id`: its row in the last stage before the draw.
    const auto drawn_share = [](const llm::ViewNext& next, int id) {
        REQUIRE(next.chain.size() >= 2);
        const auto& stage = next.chain[next.chain.size() - 2];
        for (const auto& row : stage.rows)
            if (row.id == id) return static_cast<double>(row.p);
        FAIL("candidate " << id << " not kept by " << stage.name);
        return 0.0;
    };
    {
        const auto [frames, right] = render(1024, 768);
        CHECK(hbars(frames[1], right, kept).size() == 6);
        CHECK(hbars(frames[1], right, cut).empty());
        for (const size_t step : {size_t{3}, size_t{6}}) {
            CAPTURE(step + 1);
            const auto bars = hbars(frames[step], right, kept);
            const llm::ViewNext& next = nexts[step];
            // Temperature 0.3 leaves the last few shares below a pixel: no fill to find.
            if (step == 3) REQUIRE(bars.size() == 3);
            else REQUIRE(bars.size() >= 3);
            REQUIRE(next.top.size() >= bars.size());
            CHECK(std::abs(drawn_share(next, next.top[0].id) - next.top[0].p) > 0.15);  // the sampler did move it
            for (size_t i = 0; i < bars.size(); ++i) {
                CAPTURE(i);
                CHECK(std::abs(bars[i].fraction() - drawn_share(next, next.top[i].id)) <= 1.5 / bars[i].width);
            }
        }
        CHECK(hbars(frames[3], right, cut).size() == 3);
        // The cut ones keep the model's own share, greyed.
        const auto grey = hbars(frames[3], right, cut);
        for (size_t i = 0; i < grey.size(); ++i) {
            CHECK(std::abs(grey[i].fraction() - nexts[3].top[3 + i].p) <= 1.5 / grey[i].width);
            // Its number in parentheses: no part of the draw's shares, which sum to 100%.
            CHECK(texts[3].find(fmt::format("({:.1f}%)", 100.0 * nexts[3].top[3 + i].p)) != std::string::npos);
        }
        CHECK(texts[3].find("tick: the model's own") != std::string::npos);  // the bars' legend
        CHECK(texts[1].find("tick: the model's own") == std::string::npos);  // nothing to explain
    }
    const auto [frames, right] = render(1280, 720);
    for (const size_t step : {size_t{1}, size_t{3}, size_t{6}}) {
        CAPTURE(step + 1);
        CHECK(hbars(frames[step], right, kept).size() == 2);
        REQUIRE(texts.size() > step);
        CHECK(texts[step].find("more rows") == std::string::npos);  // the whole table
    }
    CHECK(hbars(frames[1], right, {ui::theme::active_rgb}).size() == 1);  // " seat", drawn fifth
}

// A knob the request leaves out shows the model's default, greyed, where its
// field was empty: lesson 07 opens with top_p unset, 0.95 by default (then
// on the next-token panel's slider alone).
TEST_CASE("screenshots: an unset knob shows the model's default in its field") {
    std::string first;
    ui::ScreenshotOptions o;
    o.lesson_path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/07-sampling.yaml";
    o.on_text = [&](int step, const std::string& text, const app::Snapshot&) {
        if (step == 1) first = text;
    };
    REQUIRE(ui::render_screenshots(o) == 0);
    CAPTURE(first);
    std::size_t shown = 0;
    const std::string field = "top_p { 0.95 }";  // a field as the capture writes it (timings may hold "0.95" too)
    for (std::size_t at = first.find(field); at != std::string::npos; at = first.find(field, at + 1)) ++shown;
    CHECK(shown == 2);  // the knob's field and the slider
}

// At 1024x768 lesson 09's headroom line wrapped as "… 5×:" and "ρ ≤ 0.91 …":
// each limit is kept whole on one line.
TEST_CASE("screenshots: a headroom limit is never split across lines, lesson 09 at 1024x768") {
    ui::ScreenshotOptions o;
    o.lesson_path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/09-queueing-headroom.yaml";
    o.width = 1024;
    o.height = 768;
    int lines_with_limits = 0;
    const auto ends_with_a_limit_name = [](std::string t) {  // "… 5×:"
        while (!t.empty() && t.back() == ' ') t.pop_back();
        const std::string times_colon = "\u00d7:";
        return t.size() >= times_colon.size() && t.compare(t.size() - times_colon.size(), times_colon.size(), times_colon) == 0;
    };
    o.on_text = [&](int step, const std::string& text, const app::Snapshot&) {
        std::size_t from = 0;
        for (std::size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
            const std::string line = text.substr(from, nl - from);  // a wrapped line is a line of the capture
            if (line.find("\u2264") != std::string::npos) ++lines_with_limits;
            CHECK_MESSAGE(!ends_with_a_limit_name(line), "step " << step << ": " << line);
        }
    };
    REQUIRE(ui::render_screenshots(o) == 0);
    CHECK(lines_with_limits > 0);  // the line was there to look at
}

// The force id field read "0" beside "to be forced: “ rug”" (lesson 07 step
// 9): it holds the token forced, or to be forced.
TEST_CASE("screenshots: the force id field holds the token to be forced") {
    std::vector<std::pair<int, std::string>> pending;  // to_force, the screen's text
    ui::ScreenshotOptions o;
    o.lesson_path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/07-sampling.yaml";
    o.on_text = [&](int, const std::string& text, const app::Snapshot& s) {
        const auto& view = s.state.panels.view;
        if (view && view->next.to_force >= 0) pending.emplace_back(view->next.to_force, text);
    };
    REQUIRE(ui::render_screenshots(o) == 0);
    REQUIRE_FALSE(pending.empty());
    for (const auto& p : pending) {  // not a structured binding: clang 14 cannot capture one
        const int id = p.first;
        const std::string& text = p.second;
        CAPTURE(text);
        CHECK(id != 0);
        CHECK(text.find(fmt::format("force id {{ {} }}", id)) != std::string::npos);
    }
}

// Nothing the window lays out may be cut or hidden: at the projector sizes,
// at every step of a lesson, each pane's content (and each table cell) fits
// in it (gui.h: render_screenshots' overflow lines). The quick case checks
// the lesson with the most panels; the `slow` one every bundled lesson.

// The overflow lines of one lesson rendered at one size.
static std::vector<std::string> overflows_of(const std::string& lesson_path, int width, int height) {
    ui::ScreenshotOptions o;
    o.lesson_path = lesson_path;  // no out_dir, no on_frame: laid out, not rasterized
    o.width = width;
    o.height = height;
    int steps = 0;
    o.on_text = [&](int, const std::string&, const app::Snapshot&) { ++steps; };
    std::vector<std::string> overflows;
    REQUIRE(ui::render_screenshots(o, nullptr, &overflows) == 0);
    REQUIRE(steps > 0);
    return overflows;
}

TEST_CASE("screenshots: every pane's content fits, lesson 04 at 1280x720 and 1920x1080") {
    for (const auto& size : {std::pair{1280, 720}, std::pair{1920, 1080}}) {
        const int w = size.first, h = size.second;  // not a structured binding: clang 14 cannot capture one
        CAPTURE(w);
        std::string all;
        for (const auto& line : overflows_of(std::string(SIXSTEP_SOURCE_DIR) + "/lessons/04-one-token-at-a-time.yaml", w, h))
            all += "\n  " + line;
        CHECK_MESSAGE(all.empty(), "04-one-token-at-a-time.yaml at " << w << "x" << h << ":" << all);
    }
}

// On an 800x600 projector the KV experiment's pane is too narrow for its
// legend on one line: the legend wraps and the chart above it leaves room.
TEST_CASE("screenshots: a legend wider than its pane wraps, lesson 05 at 800x600") {
    std::string all;
    for (const auto& line : overflows_of(std::string(SIXSTEP_SOURCE_DIR) + "/lessons/05-prefill-decode-kv-cache.yaml", 800, 600))
        all += "\n  " + line;
    CHECK_MESSAGE(all.empty(), "05-prefill-decode-kv-cache.yaml at 800x600:" << all);
}

// A stage with a warning draws a red mark in its box. On a 1024x768 screen
// the load box's headline ("cold load") sits just above its time line, and
// a mark as tall as the stage name's face reached up into it. The warning
// here: `backend: auto` where no GPU is usable (where one is, there is no
// warning and nothing to draw over).
TEST_CASE("screenshots: a stage's warning mark stays on its time line, load stage at 1024x768 and 800x600") {
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    const std::string yaml = "title: Wherever there is a GPU\nmodel: {kind: llm, file: " + model +
                             ", backend: auto}\nsteps:\n  - request: {prompt: \"The cat\", max_tokens: 1, "
                             "temperature: 0}\n    run: load\n";
    const fs::path lesson = lesson_file("ui-warning-mark", "auto.yaml", yaml.c_str());
    for (const auto& size : {std::pair{1024, 768}, std::pair{800, 600}}) {
        const int w = size.first, h = size.second;  // not a structured binding: clang 14 cannot capture one
        CAPTURE(w);
        std::string all;
        for (const auto& line : overflows_of(lesson.string(), w, h)) all += "\n  " + line;
        CHECK_MESSAGE(all.empty(), "a load-stage warning at " << w << "x" << h << ":" << all);
    }
}

// Two panels stacked, the next-token panel first: it fits its rows to its
// room, the KV cache panel below it cannot (its grid, legend and byte
// formula), so the taller share goes to the KV cache. With the first panel
// always the taller, the KV cache overflowed by 6–30 px at 1280x720.
TEST_CASE("screenshots: the next-token panel over the KV cache leaves the KV cache room to fit") {
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    const std::string yaml = "title: Both at once\nmodel: {kind: llm, file: " + model +
                             ", threads: 1}\nsteps:\n  - request: {prompt: \"Once upon a time there was a little girl "
                             "named Lily. She loved to play\", max_tokens: 4, temperature: 0}\n"
                             "    show: [next_token, kv_cache]\n    run: all\n";
    const fs::path lesson = lesson_file("ui-two-panels", "both.yaml", yaml.c_str());
    const ui::Rect area = ui::compute_layout(1280, 720, ui::default_font_px(1280, 720), 0, 1, true).inspector;
    CHECK(ui::panel_slot(area, {"next_token", "kv_cache"}, 1).h > ui::panel_slot(area, {"next_token", "kv_cache"}, 0).h);
    CHECK(ui::panel_slot(area, {"kv_cache", "next_token"}, 0).h > ui::panel_slot(area, {"kv_cache", "next_token"}, 1).h);
    for (const auto& size : {std::pair{1280, 720}, std::pair{1024, 768}}) {
        const int w = size.first, h = size.second;
        CAPTURE(w);
        std::string all;
        for (const auto& line : overflows_of(lesson.string(), w, h)) all += "\n  " + line;
        CHECK_MESSAGE(all.empty(), "next token over the KV cache at " << w << "x" << h << ":" << all);
    }
}

// A failed check puts a long line in the log's one-line strip (CI saw lesson
// 05's timing check fail on a loaded machine, and its line was laid out
// 550 px past the pane). The strip shows the line's start with "…" in the
// room left of the presenter's keys; the whole line is in the opened log.
TEST_CASE("screenshots: a failed check's long line fits the log strip, shortened with an ellipsis") {
    const fs::path lesson = lesson_file("ui-log-strip", "fails.yaml",
            "title: A check that fails\nlanguage: en\nmodel:\n  kind: delivery\n"
            "  weights: {bias: 5, distance: 2, congestion: 10, express_lane: -2}\n"
            "steps:\n  - title: Receive\n    say: One step whose check fails.\n"
            "    request: {distance: \"3 km\", congestion: 0, express_lane: 0}\n"
            "    run: request\n    expect:\n      request.features: \"[3, 0, 0] and far more text than any "
            "request has, more than one line of the log strip holds at any of the sizes drawn here\"\n");
    const fs::path dir = lesson.parent_path();
    for (const auto& size : {std::pair{1024, 768}, std::pair{1920, 1080}}) {
        const int w = size.first, h = size.second;  // not a structured binding: clang 14 cannot capture one
        CAPTURE(w);
        ui::ScreenshotOptions o;
        o.lesson_path = lesson.string();
        o.width = w;
        o.height = h;
        std::string text;
        o.on_text = [&](int, const std::string& t, const app::Snapshot& s) {
            text = t;
            REQUIRE(!s.log.empty());
        };
        std::vector<std::string> overflows;
        REQUIRE(ui::render_screenshots(o, nullptr, &overflows) == 0);
        std::string all;
        for (const auto& line : overflows) all += "\n  " + line;
        CHECK_MESSAGE(all.empty(), "fails.yaml:" << all);
        CHECK(text.find("step 1: expected request.features") != std::string::npos);  // the strip shows the line's start
        CHECK(text.find("at any of the sizes drawn here") == std::string::npos);     // not its end
        CHECK(text.find("\u2026") != std::string::npos);
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
}

// Failed checks under the narration: spelled out whole, wrapped, where the
// narration keeps its room; cut to a line each, then only the first on the
// tally's line, where a long narration would not fit above them. Either way
// nothing is laid out past the pane (a timed check that missed on a busy
// machine used to push a long narration 27 px below it).
TEST_CASE("screenshots: failed checks take the narration pane's room left, never more") {
    auto lesson_with = [](const char* dir, int sentences, int failing) {
        std::string say;
        for (int i = 0; i < sentences; ++i) say += "The request travels through each of the six steps, and the room watches. ";
        std::string yaml = "title: Checks that fail\nlanguage: en\nmodel:\n  kind: delivery\n"
                           "  weights: {bias: 5, distance: 2, congestion: 10, express_lane: -2}\n"
                           "steps:\n  - title: Receive\n    say: " + say +
                           "\n    request: {distance: \"3 km\", congestion: 0, express_lane: 0}\n    run: request\n    expect:\n"
                           "      request.congestion: 0\n";
        const char* failures[] = {
            "request.features: \"[3, 0, 0] and far more text than any request has, ending where the line ends\"",
            "request.distance_km: 101", "request.express_lane: 1",
            "request.distance: \"3 km, and more words than one line of the pane holds at any size drawn here\"",
            "request.normalized: \"maybe\"", "request.warnings: \"none at all\""};
        for (int i = 0; i < failing; ++i) yaml += "      " + std::string(failures[i]) + "\n";
        return lesson_file(dir, "fails.yaml", yaml.c_str());
    };
    auto shown = [](const fs::path& lesson, int w, int h, std::vector<std::string>* overflows) {
        ui::ScreenshotOptions o;
        o.lesson_path = lesson.string();
        o.width = w;
        o.height = h;
        std::string text;
        o.on_text = [&](int, const std::string& t, const app::Snapshot&) { text = t; };
        REQUIRE(ui::render_screenshots(o, nullptr, overflows) == 0);
        return text;
    };
    struct Case {
        int sentences, failing;
    };
    // At 1280x720: whole, cut, the first only.
    const Case whole{1, 2}, cut{3, 6}, first_only{9, 6};
    auto render = [&](const Case& c, int w, int h) {
        CAPTURE(c.sentences);
        const fs::path lesson = lesson_with("ui-failed-checks", c.sentences, c.failing);
        std::vector<std::string> overflows;
        const std::string text = shown(lesson, w, h, &overflows);
        std::string all;
        for (const auto& line : overflows) all += "\n  " + line;
        CHECK_MESSAGE(all.empty(), "fails.yaml at " << w << "x" << h << ":" << all);
        fs::remove_all(lesson.parent_path());
        return text;
    };
    std::string text = render(whole, 1280, 720);
    CHECK(text.find("1/3 checks passed") != std::string::npos);
    CHECK(text.find("line ends\" (got [3, 0, 0])") != std::string::npos);  // wrapped, to its end
    CHECK(text.find("request.distance_km = 101 (got 3)") != std::string::npos);

    text = render(cut, 1280, 720);
    CHECK(text.find("1/7 checks passed\n") != std::string::npos);
    CHECK(text.find("\u2717 request.features = \"[3, 0, 0] and far more") != std::string::npos);
    CHECK(text.find("line ends\" (got [3, 0, 0])") == std::string::npos);   // cut
    CHECK(text.find("request.warnings = \"none at all\" (got \"\")") != std::string::npos);  // the sixth, whole

    text = render(first_only, 1280, 720);
    CHECK(text.find("1/7 checks passed \u00b7 request.features") != std::string::npos);
    CHECK(text.find("request.distance_km = 101") == std::string::npos);
    CHECK(text.find("The request travels") != std::string::npos);

    for (const Case& c : {whole, cut, first_only}) render(c, 1024, 768);

    // A step's error is wrapped whole under a short narration, cut to one
    // line under a long one. (The step expects it: a request that does not
    // fit the context is otherwise refused when the lesson loads.)
    for (const int sentences : {1, 8}) {
        CAPTURE(sentences);
        std::string say;
        for (int i = 0; i < sentences; ++i) say += "The request travels through each of the six steps, and the room watches. ";
        const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
        const std::string yaml = "title: A step that fails\nlanguage: en\nmodel: {kind: llm, file: " + model +
                                 "}\nsteps:\n  - title: Too long\n    say: " + say +
                                 "\n    request: {prompt: \"Once upon a time\", max_tokens: 100000}\n    run: all\n"
                                 "    expect:\n      error: {contains: \"does not fit\"}\n";
        const fs::path lesson = lesson_file("ui-step-error", "error.yaml", yaml.c_str());
        std::vector<std::string> overflows;
        const std::string drawn = shown(lesson, 1280, 720, &overflows);
        std::string all;
        for (const auto& line : overflows) all += "\n  " + line;
        CHECK_MESSAGE(all.empty(), "error.yaml:" << all);
        CHECK(drawn.find("\u26a0 prompt (5 tokens) + max_tokens (100000)") != std::string::npos);
        CHECK((drawn.find("it needs no place)\n") != std::string::npos) == (sentences == 1));
        fs::remove_all(lesson.parent_path());
    }
}

// Every bundled lesson, English and Chinese, at 1920x1080 and at 1024x768,
// the 4:3 projector still common in classrooms (1280x720: the case that
// renders every step above): any pane whose content does not fit fails the
// case, named with its lesson, size and step. At 1024x768 the text is as
// large as at 1024x576 (fonts.h); with text sized by height alone, 16 of the
// 17 English lessons had a pane that did not fit (cut on the right in 12).
// One case per size, so that the two can run side by side.
static void check_every_lesson_fits(int w, int h) {
    const fs::path root = fs::path(SIXSTEP_SOURCE_DIR) / "lessons";
    // lessons/ and lessons/zh/ (find_lessons walks the subfolders).
    const std::vector<std::string> paths = app::find_lessons(root.string());
    REQUIRE(paths.size() >= 15);
    std::string unexpected;
    for (const auto& path : paths) {
        const std::string lesson = fs::relative(path, root).generic_string();
        for (const std::string& line : overflows_of(path, w, h))
            unexpected += "\n  " + lesson + " at " + std::to_string(w) + "x" + std::to_string(h) + ", " + line;
    }
    CHECK_MESSAGE(unexpected.empty(), "content that does not fit its pane:" << unexpected);
}

TEST_CASE("screenshots: every pane's content fits, every lesson at 1920x1080") { check_every_lesson_fits(1920, 1080); }

TEST_CASE("screenshots: every pane's content fits, every lesson at 1024x768") { check_every_lesson_fits(1024, 768); }

// The slider above the KV experiment shows the length of the run drawn
// (the lesson's `kv_experiment: 48`), not the window's default of 32.
TEST_CASE("screenshots: the KV experiment's slider shows the length of the run on screen") {
    ui::ScreenshotOptions o;
    o.lesson_path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/05-prefill-decode-kv-cache.yaml";
    std::string last;
    int steps = 0;
    o.on_text = [&](int, const std::string& text, const app::Snapshot& s) {
        ++steps;
        last = text;
        REQUIRE(s.state.panels.kv_experiment.has_value() == (steps == 8));
    };
    REQUIRE(ui::render_screenshots(o) == 0);
    REQUIRE(steps == 8);
    CHECK(last.find("step 47") != std::string::npos);  // the chart: 48 tokens, steps 0 to 47
    CHECK(last.find("With vs without the KV cache { 48 }") != std::string::npos);  // the slider, as ImGui logs it
}

// A step that says too much for its pane is shown smaller; `screenshot`
// tells the author which step and how much smaller. A short step is not named.
TEST_CASE("screenshots: a narration shrunk to fit is named, with its size") {
    std::string long_say;
    for (int i = 0; i < 40; ++i) long_say += "The request walks through the six steps once more. ";
    const std::string yaml = "title: Long\nmodel: {kind: delivery, weights: {bias: 5, distance: 2, congestion: 10, "
                             "express_lane: -2}}\nsteps:\n"
                             "  - say: A short step.\n  - say: \"" + long_say + "\"\n";
    const fs::path lesson = lesson_file("ui-long-say", "long.yaml", yaml.c_str());
    ui::ScreenshotOptions o;
    o.lesson_path = lesson.string();
    std::vector<std::string> notes;
    o.narration_notes = &notes;
    o.on_text = [](int, const std::string&, const app::Snapshot&) {};
    REQUIRE(ui::render_screenshots(o) == 0);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].rfind("step 2: the narration is shown at ", 0) == 0);
    CHECK(notes[0].find("% of the body size") != std::string::npos);
    std::error_code ec;
    fs::remove_all(lesson.parent_path(), ec);
}

TEST_CASE("screenshots: a broken lesson is one clear error, no images and no folder") {
    const fs::path lesson = lesson_file("ui-broken", "broken.yaml", "title: [unclosed\n");
    const fs::path dir = lesson.parent_path();
    ui::ScreenshotOptions o;
    o.lesson_path = lesson.string();
    o.out_dir = (dir / "out").string();
    o.quiet = true;
    std::vector<std::string> written;
    CHECK(ui::render_screenshots(o, &written) == 2);
    CHECK(written.empty());
    CHECK_FALSE(fs::exists(dir / "out"));  // the folder is made only for a lesson that loads
    std::error_code ec;
    fs::remove_all(dir, ec);
}

// The files the `screenshot` command writes: one PNG per step, named by its
// step, each decoding to exactly the pixels drawn (the other cases read the
// pixels in memory).
TEST_CASE("screenshots: the PNG files hold the pixels drawn, one per step") {
    const auto dir = sixstep::test::process_temp_dir("ui-png");
    const std::string path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/01-six-steps.yaml";
    ui::ScreenshotOptions o;
    o.lesson_path = path;
    o.out_dir = (dir / "out").string();
    o.width = 640;
    o.height = 360;
    o.quiet = true;
    std::vector<Image> frames;
    o.on_frame = [&](const ui::Frame& frame, const app::Snapshot&) { frames.emplace_back(frame); };
    std::vector<std::string> written;
    REQUIRE(ui::render_screenshots(o, &written) == 0);
    REQUIRE(written.size() == app::load_lesson(path).steps.size());
    REQUIRE(frames.size() == written.size());
    for (size_t k = 0; k < written.size(); ++k) {
        CAPTURE(written[k]);
        char name[32];
        std::snprintf(name, sizeof name, "step-%02zu.png", k + 1);
        CHECK(fs::path(written[k]).filename() == name);
        const Image png = load_png(written[k]);
        CHECK(png.w == 640);
        CHECK(png.h == 360);
        CHECK(png.px == frames[k].px);
        CHECK(distinct_colours(png) > 20);
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
}

// ---- the serving lab's views ------------------------------------------------
// A small serving lesson on the tiny random model, rendered once: a batch
// sweep (1 … 1024 sequences: a second's work), a traffic run (the timeline), a traffic run comparing KV layouts (the
// block map) and a queue. Each view is checked against the snapshot the image
// was drawn from, since the engine's times differ from run to run.

namespace {

struct ServingShot {
    Image img;
    std::shared_ptr<const serving::ServingExhibit> exhibit;
    std::string text;  // what the screen wrote, in drawing order
};

const std::vector<ServingShot>& serving_shots() {
    static const std::vector<ServingShot> shots = [] {
        const fs::path lesson = lesson_file("ui-serving", "serving-views.yaml",
                "title: Serving views\nmodel: {kind: serving, random: tiny}\nsteps:\n"
                "  - say: A sweep.\n"
                "    request: {experiment: batch_sweep, batch_sizes: \"1,4,16,64,256,1024\", context: 8, steps: 8, "
                "repetitions: 3}\n    run: all\n"
                "  - say: A burst, three waves of two.\n"
                "    request: {experiment: traffic, requests: 6, rate: 100000, max_batch: 2, max_tokens: 8, "
                "min_tokens: 8}\n    run: all\n"
                "  - say: The same burst in both KV layouts.\n"
                "    request: {experiment: traffic, requests: 6, rate: 100000, max_batch: 3, max_tokens: 8, "
                "min_tokens: 8, kv_blocks: 48, block_size: 8, compare: kv_layout}\n    run: all\n"
                "  - say: A queue.\n"
                "    request: {experiment: queue, utilizations: \"0.2,0.5,0.8\", utilization: 0.6, samples: 8, "
                "context: 8, sim_requests: 1000}\n    run: all\n");
        const fs::path dir = lesson.parent_path();
        std::vector<ServingShot> out;
        ui::ScreenshotOptions o;
        o.lesson_path = lesson.string();
        o.on_frame = [&](const ui::Frame& frame, const app::Snapshot& shown) {
            ServingShot s;
            s.img = Image(frame);
            s.exhibit = std::dynamic_pointer_cast<const serving::ServingExhibit>(shown.state.exhibit);
            out.push_back(std::move(s));
        };
        std::vector<std::string> texts;
        o.on_text = [&](int, const std::string& text, const app::Snapshot&) { texts.push_back(text); };
        const int rc = ui::render_screenshots(o);
        if (texts.size() == out.size())
            for (size_t i = 0; i < out.size(); ++i) out[i].text = std::move(texts[i]);
        std::error_code ec;
        fs::remove_all(dir, ec);
        if (rc != 0) out.clear();
        return out;
    }();
    return shots;
}

// The image of step k (0-based) and the exhibit it was drawn from.
const ServingShot& serving_shot(size_t k) {
    const auto& shots = serving_shots();
    REQUIRE_MESSAGE(shots.size() == 4, "the serving lesson did not render");
    REQUIRE(shots[k].exhibit);
    return shots[k];
}

// The serving panel's rectangle at 1280×720.
ui::Rect serving_rect() {
    const float f = ui::default_font_px(1280, 720);
    return ui::compute_layout(1280, 720, f, 0, 1).inspector;
}

// The solid vertical marker of colour rgb: the mean of the columns holding
// nearly as many of its pixels as the fullest one, and the run's middle row.
struct Marker {
    double x = -1;
    int mid_y = -1;
    long pixels = 0;  // in the fullest column
};
Marker find_marker(const Image& img, const ui::Rect& r, std::uint32_t rgb) {
    Marker m;
    std::vector<long> count(static_cast<size_t>(img.w), 0);
    for (int x = static_cast<int>(r.x); x < static_cast<int>(r.right()); ++x)
        for (int y = static_cast<int>(r.y); y < static_cast<int>(r.bottom()); ++y)
            if (img.at(x, y) == rgb) ++count[static_cast<size_t>(x)];
    m.pixels = *std::max_element(count.begin(), count.end());
    if (m.pixels == 0) return m;
    double sum = 0;
    int n = 0, col = 0;
    for (int x = 0; x < img.w; ++x)
        if (count[static_cast<size_t>(x)] >= m.pixels * 8 / 10) sum += x, ++n, col = x;
    m.x = sum / n + 0.5;  // the centre of the columns
    int top = -1, bottom = -1;
    for (int y = static_cast<int>(r.y); y < static_cast<int>(r.bottom()); ++y)
        if (img.at(col, y) == rgb) bottom = y, top = top < 0 ? y : top;
    m.mid_y = (top + bottom) / 2;
    return m;
}

constexpr std::uint32_t chart_background = 0xF8FAFC;

// A chart's frame on screen, found from its background around a point
// inside it: the background fills it but for a one-pixel outline (the scan
// steps over gridlines, curves and markers, a few pixels wide).
struct Box {
    int left = 0, right = 0, top = 0, bottom = 0;  // right and bottom one past the frame
};
Box frame_around(const Image& img, int x, int y) {
    auto bg = [&](int px, int py) {
        return px >= 0 && py >= 0 && px < img.w && py < img.h && img.at(px, py) == chart_background;
    };
    auto along = [&](int from, int step, auto&& hit) {  // the last position still in the frame
        int last = from;
        for (int p = from, misses = 0; misses < 10 && p >= 0 && p < std::max(img.w, img.h); p += step) {
            if (hit(p)) last = p, misses = 0;
            else ++misses;
        }
        return last;
    };
    auto row = [&](int px) { return bg(px, y) || bg(px, y - 3) || bg(px, y + 3); };
    auto col = [&](int py) { return bg(x, py) || bg(x - 3, py) || bg(x + 3, py); };
    return {along(x, -1, row) - 1, along(x, 1, row) + 2, along(y, -1, col) - 1, along(y, 1, col) + 2};
}

// How many pixels a marker lies from where a fraction t of its chart's
// width puts it.
double marker_miss(const Image& img, const Marker& m, double t) {
    const Box box = frame_around(img, static_cast<int>(m.x), m.mid_y);
    return std::abs(m.x - (box.left + t * (box.right - box.left)));
}

// Regions of 4-connected pixels whose colour is one of `colours`, of at least
// min_area pixels (stray anti-aliased text pixels are smaller).
int regions(const Image& img, const ui::Rect& r, const std::set<std::uint32_t>& colours, int min_area) {
    const int x0 = static_cast<int>(r.x), y0 = static_cast<int>(r.y), w = static_cast<int>(r.w), h = static_cast<int>(r.h);
    std::vector<char> seen(static_cast<size_t>(w) * h, 0);
    auto in = [&](int x, int y) { return colours.count(img.at(x0 + x, y0 + y)) > 0; };
    int n = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            if (seen[static_cast<size_t>(y) * w + x] || !in(x, y)) continue;
            int area = 0;
            std::vector<std::pair<int, int>> todo{{x, y}};
            seen[static_cast<size_t>(y) * w + x] = 1;
            while (!todo.empty()) {
                const auto [cx, cy] = todo.back();
                todo.pop_back();
                ++area;
                const int nx[] = {cx + 1, cx - 1, cx, cx}, ny[] = {cy, cy, cy + 1, cy - 1};
                for (int k = 0; k < 4; ++k) {
                    if (nx[k] < 0 || ny[k] < 0 || nx[k] >= w || ny[k] >= h) continue;
                    char& s = seen[static_cast<size_t>(ny[k]) * w + nx[k]];
                    if (!s && in(nx[k], ny[k])) s = 1, todo.push_back({nx[k], ny[k]});
                }
            }
            if (area >= min_area) ++n;
        }
    return n;
}

}  // namespace

// Under the charts, the KV cache a step reads at the largest batch beside
// the weights: lesson 08's last step speaks of that share and gives the
// context knob to move it, but no panel showed it.
TEST_CASE("screenshots: the batch sweep gives the KV cache read at its largest batch beside the weights") {
    const ServingShot& s = serving_shot(0);
    REQUIRE(s.exhibit->sweep);
    const serving::BatchSweepResult& r = *s.exhibit->sweep;
    const double share = serving::kv_to_weights_at_largest(r);
    CHECK(share > 0);
    CHECK(share == doctest::Approx(r.points.back().cost.kv_bytes / static_cast<double>(r.shape.weight_bytes)));
    std::string screen = s.text;
    std::replace(screen.begin(), screen.end(), '\n', ' ');
    CAPTURE(screen);
    CHECK(screen.find(fmt::format("KV cache read per step at batch {}: ", r.points.back().n_batch)) != std::string::npos);
    CHECK(screen.find(ui::pretty_number(share, 2) + "\u00d7 the weights") != std::string::npos);
}

TEST_CASE("screenshots: the batch sweep draws the snapshot's points and marks its knee at its knee batch") {
    const ServingShot& s = serving_shot(0);
    REQUIRE(s.exhibit->sweep);
    const serving::BatchSweepResult& r = *s.exhibit->sweep;
    // The tokens/s chart is the first chart background from the top; each
    // measured point is a dot of the curve's colour where its batch size
    // (on a log axis) and its tokens/s put it.
    const ui::Rect rect = serving_rect();
    const int x_mid = static_cast<int>(rect.x + rect.w / 2);
    int y_in = -1;
    for (int y = static_cast<int>(rect.y); y < static_cast<int>(rect.bottom()) && y_in < 0; ++y)
        if (s.img.at(x_mid, y) == chart_background) y_in = y;
    REQUIRE(y_in > 0);
    const Box box = frame_around(s.img, x_mid, y_in);
    double tps_max = 0;
    for (const serving::BatchSweepPoint& p : r.points) tps_max = std::max(tps_max, p.tokens_per_s);
    const double lx0 = std::log2(r.points.front().n_batch), lx1 = std::log2(r.points.back().n_batch);
    int checked = 0;
    for (const serving::BatchSweepPoint& p : r.points) {
        CAPTURE(p.n_batch);
        const int x = static_cast<int>(std::lround(box.left + (std::log2(p.n_batch) - lx0) / (lx1 - lx0) * (box.right - box.left)));
        const int y = static_cast<int>(std::lround(box.bottom - p.tokens_per_s / (tps_max * 1.1) * (box.bottom - box.top)));
        if (r.knee.found && p.n_batch == r.knee.x) continue;  // under the knee's marker
        // A dot fills about 20 of the 25 pixels around its centre with its
        // exact colour, the curve through them about 8. The centre is
        // rounded to a pixel and the dot's rim is blended, so the best of
        // the nine windows one pixel around is counted.
        int hits = 0;
        for (int oy = -1; oy <= 1; ++oy)
            for (int ox = -1; ox <= 1; ++ox) {
                int in_window = 0;
                for (int dy = -2; dy <= 2; ++dy)
                    for (int dx = -2; dx <= 2; ++dx) in_window += s.img.at(x + ox + dx, y + oy + dy) == 0x1D4ED8;
                hits = std::max(hits, in_window);
            }
        CHECK(hits >= 15);
        ++checked;
    }
    CHECK(checked >= 3);
    const Marker m = find_marker(s.img, rect, ui::theme::bad_rgb);
    if (!r.knee.found) {
        // No knee on this machine's curve: then no marker either.
        MESSAGE("no knee found: " << r.knee.verdict);
        CHECK(m.pixels < 20);
        return;
    }
    REQUIRE(m.pixels >= 30);  // a line across the chart, not a letter of its label
    // Batch sizes 1 … 1024 on a log axis (the tiny model's throughput flattens
    // past a few dozen sequences: the knee).
    const double t = std::log2(r.knee.x / r.points.front().n_batch) /
                     std::log2(static_cast<double>(r.points.back().n_batch) / r.points.front().n_batch);
    CAPTURE(r.knee.x);
    CHECK(marker_miss(s.img, m, t) <= 2.0);
}

TEST_CASE("screenshots: the scheduler timeline has one row per request of the snapshot") {
    const ServingShot& s = serving_shot(1);
    REQUIRE(s.exhibit->run);
    REQUIRE_FALSE(s.exhibit->baseline);
    const std::set<std::uint32_t> phases = {0xD1D5DB, ui::theme::prefill_bar_rgb, ui::theme::decode_bar_rgb, 0xFDE68A,
                                            0xDC2626};
    const ui::Rect rect = serving_rect();
    // A line of the chart is covered by its background and the bars (the
    // legend's swatches and text are not); a row is a run of such lines
    // holding bars, and rows are a background line apart.
    int rows = 0;
    bool in_row = false;
    for (int y = static_cast<int>(rect.y); y < static_cast<int>(rect.bottom()); ++y) {
        int bars = 0, background = 0;
        for (int x = static_cast<int>(rect.x); x < static_cast<int>(rect.right()); ++x) {
            const std::uint32_t c = s.img.at(x, y);
            bars += phases.count(c) ? 1 : 0;
            background += c == chart_background ? 1 : 0;
        }
        const bool row = bars > 0 && bars + background >= rect.w / 2;
        rows += row && !in_row;
        in_row = row;
    }
    CHECK(rows == static_cast<int>(s.exhibit->run->requests.size()));
    CHECK(rows == 6);
}

TEST_CASE("screenshots: the KV block map fills one cell per block in use at the pool's fullest") {
    const ServingShot& s = serving_shot(2);
    REQUIRE(s.exhibit->run);
    REQUIRE(s.exhibit->baseline);
    REQUIRE(s.exhibit->about_memory());  // so the panel opens on the block map
    std::set<std::uint32_t> owners;
    int owned = 0, banded = 0;  // banded: reserved for a request, empty, its colour along the bottom edge
    for (const serving::KvSnapshot* k : {&s.exhibit->run->kv_peak, &s.exhibit->baseline->kv_peak})
        for (const serving::KvBlockView& b : k->blocks) {
            if (!b.owners.empty()) owners.insert(ui::plot::category_rgb(b.owners.front())), ++owned;
            else if (b.reserved_for >= 0) owners.insert(ui::plot::category_rgb(b.reserved_for)), ++banded;
        }
    REQUIRE(owned > 0);
    CHECK(banded > 0);  // the contiguous baseline's reservations run past its tokens
    CHECK(owned == s.exhibit->run->kv_peak.n_used() + s.exhibit->baseline->kv_peak.n_used());
    // The legend's swatch is the first request's colour.
    const int swatch = owners.count(ui::plot::category_rgb(0)) ? 1 : 0;
    CHECK(regions(s.img, serving_rect(), owners, 4) == owned + banded + swatch);
}

TEST_CASE("screenshots: the queueing curve marks the snapshot's utilization") {
    const ServingShot& s = serving_shot(3);
    REQUIRE(s.exhibit->queue);
    const Marker m = find_marker(s.img, serving_rect(), ui::theme::bad_rgb);
    REQUIRE(m.pixels >= 30);
    CHECK(s.exhibit->utilization == doctest::Approx(0.6));
    CHECK(marker_miss(s.img, m, s.exhibit->utilization) <= 2.0);
}

// `inspect: request` keeps the inspector on the stage the lesson is about
// (lesson 2's metres), where it showed the latest stage, the answer.
TEST_CASE("screenshots: inspect opens the inspector on the lesson's stage, else the latest") {
    const auto screens = screens_of("ui-inspect",
            "title: Inspect\nsteps:\n"
            "  - request: {distance: \"3000 m\", congestion: 0, express_lane: 0}\n    run: all\n"
            "  - inspect: request\n");
    REQUIRE(screens.size() == 2);
    CHECK(screens[0].text.find("6 \u00b7 respond") != std::string::npos);
    CHECK(screens[0].text.find("1 \u00b7 request: receive and normalize") == std::string::npos);
    CHECK(screens[1].text.find("1 \u00b7 request: receive and normalize") != std::string::npos);
    CHECK(screens[1].text.find("6 \u00b7 respond") == std::string::npos);
}

// Answer cards name what differs, short enough to show whole: lesson 01's
// cards read "distance 3 km, congestion 0, express_lan…", the field the
// step was about cut off.
TEST_CASE("screenshots: answer cards say each request in few words, a yes/no field in words") {
    const auto screens = screens_of("ui-answers",
            "title: Answers\nsteps:\n"
            "  - request: {distance: \"3 km\", congestion: 0, express_lane: 0}\n    run: all\n"
            "  - request: {distance: \"7.5 km\", congestion: 0.5, express_lane: 1}\n    run: all\n");
    REQUIRE(screens.size() == 2);
    const std::string& screen = screens[1].text;
    CAPTURE(screen);
    CHECK(screen.find("3 km \u00b7 congestion 0 \u00b7 express lane no") != std::string::npos);
    CHECK(screen.find("7.5 km \u00b7 congestion 0.5 \u00b7 express lane yes") != std::string::npos);
    CHECK(screen.find("express_lane") == std::string::npos);  // words, not the key
}

// Cards of the same request say how each was served: lesson 03's read
// "11 min · the same request" twice, the cold load and a hundred warm ones.
TEST_CASE("screenshots: answer cards of the same request say how each was served") {
    const auto screens = screens_of("ui-served",
            "title: Served\nsteps:\n"
            "  - request: {distance: \"3 km\", congestion: 0, express_lane: 0}\n    run: all\n"
            "  - serve: {requests: 5}\n"
            "  - set: {mode: train, dropout: 0.5, seed: 7}\n    serve: {requests: 20}\n");
    REQUIRE(screens.size() == 3);
    const std::string& screen = screens[2].text;
    CAPTURE(screen);
    CHECK(screen.find("cold load\n") != std::string::npos);
    CHECK(screen.find("5 served") != std::string::npos);
    CHECK(screen.find(" answers of 20") != std::string::npos);  // dropout: answers differ
    CHECK(screen.find("the same request") == std::string::npos);
}

// A training lesson's opening step shows the data it will learn from (lesson
// 3's "200 past deliveries"), not an empty "request as it arrives".
TEST_CASE("screenshots: before a lesson's first training step the window plots its data") {
    const auto screens = screens_of("ui-data", "title: Data\nsteps:\n  - say: Two hundred deliveries.\n  - train: 2\n");
    REQUIRE(screens.size() == 2);
    CAPTURE(screens[0].text);
    CHECK(screens[0].text.find("The training data") != std::string::npos);
    CHECK(screens[0].text.find("200 past deliveries from deliveries.csv") != std::string::npos);
    CHECK(screens[0].text.find("The request as it arrives") == std::string::npos);
    CHECK(screens[1].text.find("200 past deliveries") == std::string::npos);  // training: the training view
    // Two steps taken: the loss chart's axis counts whole steps, not 1.2, 1.4 ….
    CAPTURE(screens[1].text);
    for (const char* fraction : {"\n1.2\n", "\n1.5\n", "\n1.8\n"}) CHECK(screens[1].text.find(fraction) == std::string::npos);
    CHECK(screens[1].text.find("\n2\n") != std::string::npos);
}

// A traffic comparison says its outcome on the panel, in the engine's
// numbers: lesson 11's "median TTFT … vs … ms" and "prompt tokens computed
// … vs …" over the block map (before, only the inspector had them).
TEST_CASE("screenshots: a prefix-cache comparison prints both arms' TTFT and prompt tokens computed") {
    const auto screens = screens_of("ui-compare",
            "title: Compare\nmodel: {kind: serving, random: tiny}\nsteps:\n"
            "  - say: With and without.\n"
            "    request: {experiment: traffic, requests: 4, rate: 1, shared_prefix: 32, max_tokens: 4, "
            "block_size: 8, prefix_cache: true, compare: prefix_cache}\n    run: all\n");
    REQUIRE(!screens.empty());
    std::string screen = screens.back().text;  // one rendered line per line: a wrapped sentence is read whole
    std::replace(screen.begin(), screen.end(), '\n', ' ');
    // A figure is kept whole on its line by no-break spaces: read them as spaces.
    for (std::size_t at = screen.find("\u00a0"); at != std::string::npos; at = screen.find("\u00a0", at))
        screen.replace(at, 2, " ");
    const auto e = std::dynamic_pointer_cast<const serving::ServingExhibit>(screens.back().shown.state.exhibit);
    REQUIRE(e);
    REQUIRE(e->run);
    REQUIRE(e->baseline);
    CHECK(e->compare == "prefix_cache");
    const double on = e->run->report.total("prefill_computed").value;
    const double off = e->baseline->report.total("prefill_computed").value;
    CHECK(on < off);  // the cache's point, measured
    CAPTURE(screen);
    CHECK(screen.find("prefix cache on vs prefix cache off:") != std::string::npos);
    const auto vs = [](double a, double b) {
        const auto texts = ui::compared_text(a, b);
        return texts.first + " vs " + texts.second;
    };
    CHECK(screen.find("prompt tokens computed " + vs(on, off)) != std::string::npos);
    CHECK(screen.find("median TTFT " + vs(e->run->report.latency("ttft").summary.p50, e->baseline->report.latency("ttft").summary.p50) +
                      " ms") != std::string::npos);
    // TPOT, and why it moves with no pass shared (lesson 11 points here).
    CHECK(screen.find("median TPOT " + vs(e->run->report.latency("tpot").summary.p50, e->baseline->report.latency("tpot").summary.p50) +
                      " ms") != std::string::npos);
    const serving::DecodePassCosts run = serving::decode_pass_costs(e->run->steps);
    const serving::DecodePassCosts base = serving::decode_pass_costs(e->baseline->steps);
    REQUIRE(run.n_after_prefill > 0);
    REQUIRE(base.n_after_prefill > 0);
    CHECK(screen.find("decode pass right after a prefill " + vs(run.after_prefill_ms, base.after_prefill_ms) + " ms") !=
          std::string::npos);
}

// The cold start chart names each request's bar by what it found, numbered
// where a kind repeats: lesson 14 showed two bars both called "fresh" (the
// first instance and the second, 29 against 10 ms) and three called "warm".
TEST_CASE("screenshots: the cold start chart's bars never read alike") {
    const std::string yaml = std::string("title: Cold\nmodel: {kind: serving, file: ") + SIXSTEP_SOURCE_DIR +
                             "/assets/models/stories-3m-f16.gguf}\nsteps:\n  - say: Fresh and warm.\n"
                             "    request: {experiment: cold_start, cold_tokens: 2, idle_gaps: \"0\"}\n    run: all\n";
    const auto screens = screens_of("ui-cold-start", yaml.c_str());
    REQUIRE(!screens.empty());
    const auto e = std::dynamic_pointer_cast<const serving::ServingExhibit>(screens.back().shown.state.exhibit);
    REQUIRE(e);
    REQUIRE(e->cold_start);
    int fresh = 0, warm = 0;
    for (const llm::RequestTiming& t : e->cold_start->requests) {
        warm += t.start == llm::Start::warm;
        fresh += t.start == llm::Start::cold_cached;
    }
    REQUIRE(fresh == 2);  // two new instances, the file in the page cache (a lesson never drops it)
    REQUIRE(warm >= 2);
    const std::string& screen = screens.back().text;
    CAPTURE(screen);
    for (int i = 1; i <= fresh; ++i) CHECK(screen.find("fresh " + std::to_string(i)) != std::string::npos);
    for (int i = 1; i <= warm; ++i) CHECK(screen.find("warm " + std::to_string(i)) != std::string::npos);
    CHECK(screen.find("fresh " + std::to_string(fresh + 1)) == std::string::npos);
}

// The canary's panel gives the one request's answer through each version
// (lesson 16: "v2 answers 3 km with a few minutes where v1 says 11"), and
// its card the share answered in percent ("1 · answered" read as one).
TEST_CASE("screenshots: the canary panel shows one request through each version, its card the share answered") {
    const auto screens = screens_of("ui-canary",
            "title: Canary\nmodel: {kind: serving, random: tiny}\nsteps:\n  - say: A canary.\n"
            "    request: {experiment: canary, canary_requests: 400, v2_unit: m}\n    run: all\n");
    REQUIRE(!screens.empty());
    const auto e = std::dynamic_pointer_cast<const serving::ServingExhibit>(screens.back().shown.state.exhibit);
    REQUIRE(e);
    REQUIRE(e->canary);
    const serving::CanaryResult& r = *e->canary;
    const std::string prefix = "Estimated delivery time: ", suffix = " minutes";
    REQUIRE(r.inference_v1.rfind(prefix, 0) == 0);
    REQUIRE(r.inference_v2.rfind(prefix, 0) == 0);
    const auto minutes = [&](const std::string& t) {
        return t.substr(prefix.size(), t.size() - prefix.size() - suffix.size()) + " min";
    };
    std::string screen = screens.back().text;
    std::replace(screen.begin(), screen.end(), '\n', ' ');
    CAPTURE(screen);
    CHECK(screen.find("one request (3 km, no congestion): v1 " + minutes(r.inference_v1) + " \u00b7 v2 " +
                      minutes(r.inference_v2)) != std::string::npos);
    CHECK(r.inference_v1 != r.inference_v2);  // metres read as kilometres: the skew
    CHECK(screen.find("100% answered") != std::string::npos);
    // The monitor's other measure (lesson 16: "how many of its requests lie outside the ranges").
    CHECK(screen.find(fmt::format("outside the training ranges: v1 {} of {}, v2 {} of {}", r.tally_v1.out_of_range,
                                  r.tally_v1.answered, r.tally_v2.out_of_range, r.tally_v2.answered)) !=
          std::string::npos);
}

// A KV layout comparison says what admitting more cost, over the block maps:
// lesson 10 asks whether end-to-end time and throughput came out worse, and
// neither was on the screen (only in the inspector's ratios).
TEST_CASE("screenshots: a KV layout comparison prints both arms' TPOT, end-to-end time and throughput") {
    const ServingShot& shot = serving_shot(2);
    const serving::ServingExhibit& e = *shot.exhibit;
    REQUIRE(e.run);
    REQUIRE(e.baseline);
    CHECK(e.compare == "kv_layout");
    std::string screen = shot.text;
    std::replace(screen.begin(), screen.end(), '\n', ' ');
    for (std::size_t at = screen.find("\u00a0"); at != std::string::npos; at = screen.find("\u00a0", at))
        screen.replace(at, 2, " ");
    CAPTURE(screen);
    const auto vs = [](double a, double b) {
        const auto texts = ui::compared_text(a, b);
        return texts.first + " vs " + texts.second;
    };
    const auto both = [&](const char* latency) {
        return vs(e.run->report.latency(latency).summary.p50, e.baseline->report.latency(latency).summary.p50) + " ms";
    };
    CHECK(screen.find("median TPOT " + both("tpot")) != std::string::npos);
    CHECK(screen.find("median end-to-end " + both("e2e")) != std::string::npos);
    CHECK(screen.find(vs(e.run->report.total("output_throughput").value, e.baseline->report.total("output_throughput").value) +
                      " tokens/s out") != std::string::npos);
}

// Beside programs that keep every CPU busy, a request asked to overlap the
// draft with the target takes turns (pipeline/serving/speculative.h); the
// chart and the answer must say so, not speak of a draft running ahead.
// Here the busy programs are spinning threads of this process, one per CPU.
TEST_CASE("screenshots: beside a busy CPU for every CPU, the speculative chart and answer say the overlap took turns") {
    if (!llm::runnable_tasks()) {
        MESSAGE("the machine's runnable tasks are not known here (no /proc/loadavg): nothing to show");
        return;
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> hogs;
    struct Joined {
        std::atomic<bool>& stop;
        std::vector<std::thread>& hogs;
        ~Joined() {
            stop = true;
            for (std::thread& t : hogs) t.join();
        }
    } joined{stop, hogs};
    for (int i = 0; i < llm::online_cpus(); ++i)
        hogs.emplace_back([&stop] {
            while (!stop.load(std::memory_order_relaxed)) {
            }
        });
    // The lesson's screen in English, then in Chinese.
    const auto screen_of = [](const char* language) {
        const std::string yaml = fmt::format(
            "title: Turns\nlanguage: {}\nmodel: {{kind: serving, file: {}/assets/models/stories-3m-f16.gguf, "
            "threads: 2}}\nsteps:\n"
            "  - say: \"...\"\n"
            "    request: {{experiment: speculative, draft: stories-draft-f16.gguf, draft_ks: \"1,2,3\", "
            "temperatures: \"0\", spec_tokens: 16, spec_repetitions: 1, spec_overlap: true}}\n"
            "    run: all\n",
            language, SIXSTEP_SOURCE_DIR);
        std::vector<std::string> overflows;
        const auto screens = screens_of("ui-spec-turns", yaml.c_str(), &overflows);
        REQUIRE(screens.size() == 1);
        CAPTURE(language);
        CHECK(overflows.empty());  // the line fits the 1280×720 pane with the charts and the verdict
        for (const std::string& o : overflows) MESSAGE(o);
        const auto e = std::dynamic_pointer_cast<const serving::ServingExhibit>(screens.back().shown.state.exhibit);
        REQUIRE(e);
        REQUIRE(e->speculative.size() == 3);
        for (const serving::SweepRow& r : e->speculative) CHECK(!r.overlap_declined.empty());
        std::string screen = screens.back().text;
        std::replace(screen.begin(), screen.end(), '\n', ' ');
        return screen;
    };
    const std::string en = screen_of("en");
    CAPTURE(en);
    CHECK(en.find("took turns: no CPU free for the draft's thread") != std::string::npos);
    CHECK(en.find("taking turns: no CPU was free for the draft's thread") != std::string::npos);
    CHECK(en.find("running ahead") == std::string::npos);
    ui::clear_untranslated();
    const std::string zh = screen_of("zh");
    CAPTURE(zh);
    CHECK(zh.find("改为轮流运行：没有空闲的 CPU 给草稿模型的线程") != std::string::npos);
    CHECK(zh.find("提前运行") == std::string::npos);
    CHECK(ui::untranslated().empty());
}

// A crossover past the middle of the bill's chart put "day 24.6" at the top,
// right of its line, over the training line's "6·N·D" at the right end.
TEST_CASE("screenshots: the bill's crossover late in the service life keeps its label clear of the training line's") {
    const std::string yaml = fmt::format(
        "title: Bill\nmodel: {{kind: serving, file: {}/assets/models/stories-3m-f16.gguf, threads: 1}}\nsteps:\n"
        "  - say: \"...\"\n"
        "    request: {{experiment: bill, requests_per_day: 1000, tokens_per_request: 100, days: 30, bench_tokens: 8}}\n"
        "    run: all\n",
        SIXSTEP_SOURCE_DIR);
    std::vector<std::string> overflows;
    const auto screens = screens_of("ui-bill-late", yaml.c_str(), &overflows);
    REQUIRE(screens.size() == 1);
    const auto e = std::dynamic_pointer_cast<const serving::ServingExhibit>(screens.back().shown.state.exhibit);
    REQUIRE(e);
    REQUIRE(e->bill);
    // The case drawn: the crossover within the 30 days, in their second half.
    REQUIRE(e->bill->crossover_day > 15);
    REQUIRE(e->bill->crossover_day < 30);
    for (const std::string& o : overflows) MESSAGE(o);
    CHECK(overflows.empty());
}

namespace {
// Renders `lesson` and calls `check` on every step that shows `panel` with
// an LLM view: its screen's text on one line (a note may wrap between two
// words) and the view drawn. Returns how many steps it checked.
using PanelCheck = std::function<void(int step, const std::string& screen, const llm::LlmView& view)>;
int check_panel_steps(const std::string& lesson, const std::string& panel, const PanelCheck& check) {
    ui::ScreenshotOptions o;
    o.lesson_path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/" + lesson;
    int checked = 0;
    o.on_text = [&](int step, const std::string& text, const app::Snapshot& s) {
        const auto& shown = s.state.panels.shown;
        const auto& view = s.state.panels.view;
        if (std::find(shown.begin(), shown.end(), panel) == shown.end() || !view) return;
        std::string screen = text;
        std::replace(screen.begin(), screen.end(), '\n', ' ');
        CAPTURE(step);
        CAPTURE(screen);
        check(step, screen, *view);
        ++checked;
    };
    REQUIRE(ui::render_screenshots(o) == 0);
    return checked;
}
}  // namespace

// The tabs offer the panels the lesson shows (lesson 06: the KV cache and
// the calculator) and put the model's others behind "more…": ten tabs in a
// row at 1280x720 had 12 px text.
TEST_CASE("screenshots: the tabs are the lesson's panels, the model's others behind more") {
    ui::ScreenshotOptions o;
    o.lesson_path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/06-kv-memory.yaml";
    std::vector<std::string> screens;
    o.on_text = [&](int, const std::string& text, const app::Snapshot&) { screens.push_back(text); };
    REQUIRE(ui::render_screenshots(o) == 0);
    REQUIRE_FALSE(screens.empty());
    const std::string& first = screens.front();
    for (const char* tab : {"Inspector", "KV cache", "KV memory", "more\u2026"}) CHECK_MESSAGE(first.find(tab) != std::string::npos, tab);
    for (const char* tab : {"Logit lens", "Attention", "Next token"}) CHECK_MESSAGE(first.find(tab) == std::string::npos, tab);
}

// Lesson 06 opens on its calculator: no request has gone through the six
// steps, and the lane under them says so; once one has, the lane carries it.
TEST_CASE("screenshots: before any request the diagram's lane says why its boxes are empty") {
    ui::ScreenshotOptions o;
    o.lesson_path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/06-kv-memory.yaml";
    std::vector<bool> idle;
    o.on_text = [&](int, const std::string& text, const app::Snapshot&) {
        idle.push_back(text.find("no request yet: each box fills as a request goes through its step") != std::string::npos);
    };
    REQUIRE(ui::render_screenshots(o) == 0);
    REQUIRE(idle.size() == 6);
    CHECK(idle == std::vector<bool>{true, true, true, true, false, false});  // step 5 sends the request
}

// Beside TPOT (a mean), the timeline names the median decode step: one stall
// of a busy machine (a 3 ms bar among 0.2 ms ones) moved lesson 05's TPOT
// 2.5× while its narration compares medians. The median from the
// snapshot's own passes, as printed.
TEST_CASE("screenshots: the timeline gives the median decode step beside TPOT") {
    const auto check = [](int, const std::string& screen, const llm::LlmView& view) {
        std::vector<double> steps;
        for (const auto& p : view.passes)
            if (!p.prefill && p.sampled) steps.push_back(p.forward_ms + p.sample_ms);
        if (steps.size() < 2) return;
        std::sort(steps.begin(), steps.end());
        const std::size_t m = steps.size() / 2;
        const double median = steps.size() % 2 ? steps[m] : (steps[m - 1] + steps[m]) / 2;
        if (screen.find("Per token: prefill") == std::string::npos) return;  // a pane too short for its notes
        CHECK(screen.find("(TPOT; median step " + ui::pretty_number(median, 3) + " ms)") != std::string::npos);
    };
    CHECK(check_panel_steps("05-prefill-decode-kv-cache.yaml", "timeline", check) >= 1);
}

// Lesson 05's step 7 says a short prompt answers sooner than the long one
// before it, whose TTFT had left the screen: the timeline names the request
// before, its prompt and TTFT from the view the model kept.
TEST_CASE("screenshots: the timeline names the request before, for comparison") {
    int with_before = 0, with_median = 0;
    const auto check = [&](int step, const std::string& screen, const llm::LlmView& view) {
        if (!view.before) {
            CHECK(screen.find("The request before") == std::string::npos);
            return;
        }
        CHECK(step > 1);
        ++with_before;
        CHECK(screen.find(fmt::format("The request before: {} prompt tokens, TTFT {} ms", view.before->n_prompt,
                                      ui::pretty_number(view.before->ttft_ms, 3))) != std::string::npos);
        CHECK(view.before->n_prompt != view.n_prompt);  // step 7: 149 tokens before, 6 now
        // Its median step beside its mean: the narration compares medians.
        if (view.before->tpot_p50_ms > 0 && ++with_median)
            CHECK(screen.find(fmt::format("(median step {} ms).", ui::pretty_number(view.before->tpot_p50_ms, 3))) !=
                  std::string::npos);
    };
    CHECK(check_panel_steps("05-prefill-decode-kv-cache.yaml", "timeline", check) >= 2);
    CHECK(with_before >= 1);
    CHECK(with_median >= 1);
}

// The KV cache panel's bytes read as the room reads numbers: the formula's
// "= 307,200 B" grouped, the pool "1 MiB". Lesson 05 printed "307200 B ·
// … pool 1048576 B", hard to read from the back of a room. Each figure from
// the snapshot's own view.
TEST_CASE("screenshots: the KV cache panel groups the digits of its bytes") {
    const auto check = [](int, const std::string& screen, const llm::LlmView& view) {
        const llm::ViewKv& kv = view.kv;
        if (kv.n_layer == 0) return;  // before the first forward pass
        REQUIRE(kv.bytes_filled >= 10000);  // a count the room reads grouped
        CHECK(screen.find("tokens = " + ui::count_text(static_cast<double>(kv.bytes_filled)) + "\u00a0B") !=
              std::string::npos);
        CHECK(screen.find(std::to_string(kv.bytes_filled)) == std::string::npos);
        // The pool's memory in binary units, the number and its unit kept together.
        std::string pool = "pool " + serving::bytes_binary(static_cast<double>(kv.bytes_capacity));
        pool.replace(pool.rfind(' '), 1, "\u00a0");
        CHECK(screen.find(pool) != std::string::npos);
    };
    CHECK(check_panel_steps("05-prefill-decode-kv-cache.yaml", "kv_cache", check) >= 1);
}

// At a 4:3 projector's 1024x768 with the largest font the grid left out
// block #0 of a 149-token prompt without a sign (nine blocks, "#1" first):
// a block of 16 positions fits at two pixels a position, and every block
// the table holds is drawn, its id over it.
TEST_CASE("screenshots: the KV cache grid at a small screen and a large font still draws every block") {
    ui::ScreenshotOptions o;
    o.lesson_path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/05-prefill-decode-kv-cache.yaml";
    o.width = 1024, o.height = 768, o.font_scale = 1.6f;
    int checked = 0;
    o.on_text = [&](int step, const std::string& text, const app::Snapshot& s) {
        const auto& shown = s.state.panels.shown;
        if (std::find(shown.begin(), shown.end(), "kv_cache") == shown.end() || !s.state.panels.view) return;
        const llm::ViewKv& kv = s.state.panels.view->kv;
        if (kv.block_table.empty()) return;
        CAPTURE(step);
        for (const int id : kv.block_table) CHECK_MESSAGE(text.find("#" + std::to_string(id)) != std::string::npos, id);
        CHECK(text.find("\n\u2026\n") == std::string::npos);  // no ellipsis of its own: nothing left out
        ++checked;
    };
    REQUIRE(ui::render_screenshots(o) == 0);
    CHECK(checked >= 3);
}

// A next-token panel shown alone whose sampler table is cut offers only a
// smaller font: "or this panel alone shows them" was the advice on lesson
// 07's hot-sampler step, where the panel was alone already.
TEST_CASE("screenshots: a cut sampler table shown alone offers only a smaller font") {
    ui::ScreenshotOptions o;
    o.lesson_path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/07-sampling.yaml";
    o.width = 1024;  // short enough to cut the table
    o.height = 576;
    int cut_alone = 0;
    o.on_text = [&](int step, const std::string& text, const app::Snapshot& s) {
        if (s.state.panels.shown != std::vector<std::string>{"next_token"} || text.find(" more rows: ") == std::string::npos)
            return;
        CAPTURE(step);
        CHECK(text.find("more rows: a smaller font (Ctrl\u00b1) shows them") != std::string::npos);
        CHECK(text.find("this panel alone") == std::string::npos);
        ++cut_alone;
    };
    REQUIRE(ui::render_screenshots(o) == 0);
    CHECK(cut_alone >= 1);
}

// The real server's panel gives TPOT at each rate beside the TTFT chart (the
// lesson's narration compares the two), the snapshot's own medians as printed.
TEST_CASE("screenshots: the real server's panel gives the measured TPOT at each rate") {
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    const std::string yaml = "title: A real server\nmodel: {kind: endpoint, file: " + model +
                             ", threads: 1}\nsteps:\n  - title: Sweep\n    request: {utilizations: \"0.1,0.5\", "
                             "requests: 8, max_tokens: 8, samples: 8, max_batch: 1}\n    run: all\n"
                             "    show: real_server\n";
    const fs::path lesson = lesson_file("ui-real-server", "server.yaml", yaml.c_str());
    ui::ScreenshotOptions o;
    o.lesson_path = lesson.string();
    int checked = 0;
    o.on_text = [&](int, const std::string& text, const app::Snapshot& s) {
        const auto* e = dynamic_cast<const server::EndpointExhibit*>(s.state.exhibit.get());
        REQUIRE(e);
        std::vector<double> tpots, rates;
        for (const auto& pt : e->points) tpots.push_back(pt.tpot_p50_ms), rates.push_back(pt.rate);
        REQUIRE(tpots.size() == 2);
        CAPTURE(text);
        // Each TPOT beside its rate.
        CHECK(text.find("TPOT p50 at " + ui::pretty_value(Value{rates}, 3) + " req/s: " + ui::pretty_value(Value{tpots}, 3) +
                        " ms") != std::string::npos);
        ++checked;
    };
    std::vector<std::string> overflows;
    REQUIRE(ui::render_screenshots(o, nullptr, &overflows) == 0);
    CHECK(checked == 1);
    std::string all;
    for (const auto& line : overflows) all += "\n  " + line;
    CHECK_MESSAGE(all.empty(), "server.yaml at 1280x720:" << all);
    fs::remove_all(lesson.parent_path());
}
