// The GUI smoke test: every bundled lesson rendered off-screen at every step
// (EGL surfaceless, no display), and each image checked: not blank, the
// header and the narration's text drawn, and the stage that ran last filled
// with the highlight colour in its box of the diagram — and no other box.
#include <doctest/doctest.h>

#include "temp_dir.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include <stb_image.h>

#include "app/core/interpreter.h"
#include "app/core/lesson.h"
#include "app/ui/fonts.h"
#include "app/ui/gui.h"
#include "app/ui/layout.h"
#include "app/ui/theme.h"

namespace fs = std::filesystem;
using namespace sixstep;

namespace {

struct Image {
    int w = 0, h = 0;
    std::vector<unsigned char> px;  // RGB
    std::uint32_t at(int x, int y) const {
        const unsigned char* p = &px[(static_cast<size_t>(y) * w + x) * 3];
        return (static_cast<std::uint32_t>(p[0]) << 16) | (p[1] << 8) | p[2];
    }
};

Image load_png(const std::string& path) {
    Image img;
    int n = 0;
    unsigned char* data = stbi_load(path.c_str(), &img.w, &img.h, &n, 3);
    if (data) {
        img.px.assign(data, data + static_cast<size_t>(img.w) * img.h * 3);
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

// Renders every step of a bundled lesson into a fresh temporary folder.
std::vector<std::string> render_lesson(const char* file, const char* tag, fs::path& out_root) {
    out_root = sixstep::test::process_temp_dir(tag);
    ui::ScreenshotOptions o;
    o.lesson_path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/" + file;
    o.out_dir = out_root.string();
    o.quiet = true;
    std::vector<std::string> written;
    REQUIRE(ui::render_screenshots(o, &written) == 0);
    return written;
}

}  // namespace

TEST_CASE("screenshots: every lesson, every step, off-screen at 1280x720") {
    const std::string lessons = std::string(SIXSTEP_SOURCE_DIR) + "/lessons";
    const auto out_root = sixstep::test::process_temp_dir("ui-smoke");
    const float f = ui::default_font_px(720);
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
        ui::ScreenshotOptions o;
        o.lesson_path = path;
        o.out_dir = (out_root / fs::path(path).stem()).string() + (lesson.language == "en" ? "" : "-" + lesson.language);
        o.quiet = true;
        std::vector<std::string> written;
        REQUIRE_MESSAGE(ui::render_screenshots(o, &written) == 0,
                        "no image: is Mesa's EGL (libegl-mesa0) installed? the GUI smoke test needs it");
        REQUIRE(written.size() == lesson.steps.size());

        // What the interpreter says ran last at each step: the stage the diagram must highlight.
        app::Interpreter it(lesson);
        for (size_t k = 0; k < written.size(); ++k) {
            it.step();
            const auto& st = it.state();
            CAPTURE(k + 1);
            const Image img = load_png(written[k]);
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
    std::error_code ec;
    fs::remove_all(out_root, ec);
}

// Lesson 05 shows the KV cache panel (first of two stacked) while it walks a
// prompt through prefill and two decode steps. Every cell of the grid has the
// same size, so the decode colour's pixels over the prefill colour's are the
// decode positions over the prompt's: one more column per decode step. The
// legend's swatches are there at every step; the decode swatch is measured on
// the prefill step, where no cell is green yet.
TEST_CASE("screenshots: the KV cache grid fills as one block, then one column per decode step") {
    const std::string path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/05-prefill-decode-kv-cache.yaml";
    fs::path out_root;
    const std::vector<std::string> written = render_lesson("05-prefill-decode-kv-cache.yaml", "ui-kv-grid", out_root);
    REQUIRE(written.size() >= 5);

    const float f = ui::default_font_px(720);
    const ui::Layout layout = ui::compute_layout(1280, 720, f, 0, 1, true);
    const ui::Rect kv_slot = ui::panel_slot(layout.inspector, 2, 0);
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
        const Image img = load_png(written[k]);
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
    std::error_code ec;
    fs::remove_all(out_root, ec);
}

// Lesson 04's step 6 shows attention over the 6-token prompt: the 15 cells
// above the diagonal are the causal mask, in its own colour, and the step
// before (the next-token panel) has none of it.
TEST_CASE("screenshots: the attention map draws the causal mask") {
    const std::string path = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/04-one-token-at-a-time.yaml";
    fs::path out_root;
    const std::vector<std::string> written = render_lesson("04-one-token-at-a-time.yaml", "ui-attention", out_root);
    REQUIRE(written.size() >= 6);
    app::Interpreter it(app::load_lesson(path));
    for (int k = 0; k < 6; ++k) it.step();
    const auto& map = it.state().panels.attention;
    REQUIRE(map);
    const int n = map->n_pos;
    REQUIRE(n == 6);

    const float f = ui::default_font_px(720);
    const ui::Layout layout = ui::compute_layout(1280, 720, f, 0, 1, true);
    const ui::Rect slot = ui::panel_slot(layout.inspector, 2, 0);
    auto masked = [&](const std::string& png) {
        const Image img = load_png(png);
        return share(img, slot, ui::theme::mask_rgb) * slot.w * slot.h;
    };
    const double before = masked(written[4]), with_map = masked(written[5]);
    CHECK(before == 0);
    // At least n(n-1)/2 cells of 2×2 pixels (plus the legend's swatch).
    CHECK(with_map >= n * (n - 1) / 2 * 4);
    std::error_code ec;
    fs::remove_all(out_root, ec);
}

// Lesson 16: step 1 runs the metre-trained v2 as a canary and rolls it back;
// step 5 runs a sound v2 that is promoted. The deployment chart draws v2's
// line in the canary colour both times, and the rollback marker only when
// the engine rolled back.
TEST_CASE("screenshots: the canary chart marks the rollback only when there is one") {
    fs::path out_root;
    const std::vector<std::string> written = render_lesson("16-inference-serving-deployment.yaml", "ui-canary", out_root);
    REQUIRE(written.size() == 5);
    const ui::Rect whole{0, 0, 1280, 720};
    auto pixels = [&](const std::string& png, std::uint32_t rgb) {
        const Image img = load_png(png);
        REQUIRE(img.w == 1280);
        return share(img, whole, rgb) * whole.w * whole.h;
    };
    const double rollback = pixels(written[3], ui::theme::rollback_rgb);
    const double promoted = pixels(written[4], ui::theme::rollback_rgb);
    CHECK(rollback > 20);  // a dashed line across the chart and its label
    CHECK(promoted == 0);
    CHECK(pixels(written[3], ui::theme::canary_rgb) > 20);
    CHECK(pixels(written[4], ui::theme::canary_rgb) > 20);
    std::error_code ec;
    fs::remove_all(out_root, ec);
}

TEST_CASE("screenshots: a broken lesson is one clear error, no images") {
    const auto dir = sixstep::test::process_temp_dir("ui-broken");
    fs::create_directories(dir);
    const auto lesson = dir / "broken.yaml";
    { std::FILE* f = std::fopen(lesson.c_str(), "w"); std::fputs("title: [unclosed\n", f); std::fclose(f); }
    ui::ScreenshotOptions o;
    o.lesson_path = lesson.string();
    o.out_dir = (dir / "out").string();
    o.quiet = true;
    std::vector<std::string> written;
    CHECK(ui::render_screenshots(o, &written) == 2);
    CHECK(written.empty());
    std::error_code ec;
    fs::remove_all(dir, ec);
}
