// sixstep screenshot LESSON.yaml --out DIR [--size WxH] [--font-scale F]
// Renders the classroom app at every step of a lesson to DIR/step-NN.png,
// with no display needed (EGL surfaceless; see app/ui/gui.h), and says which
// panes' content did not fit at that size: a lesson author checks a lesson
// at the projector's size (1024x768 is common) before the class.
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/cli/validators.h"
#include "pipeline/core/text.h"
#if SIXSTEP_HAVE_GUI
#include "app/ui/fonts.h"
#include "app/ui/gui.h"
#endif

namespace sixstep::cli {

void add_screenshot(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("screenshot", "Render each step of a lesson to DIR/step-NN.png (no display needed)");
    // Held by the command's closure, which CLI11 writes through while it
    // parses: captured by name, so that a build without the GUI (whose
    // closure reads only the size) still keeps the lesson and folder alive.
    auto lesson = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto size = std::make_shared<std::string>("1280x720");
    auto scale = std::make_shared<float>(1.0f);
    // The reason a lesson cannot be read, as the other commands give it: a
    // link loop is "Too many levels of symbolic links", not "File does not exist".
    sub->add_option("lesson", *lesson, "the lesson file (.yaml)")
        ->required()
        ->check(CLI::Validator(
            [](const std::string& path) -> std::string {
                std::error_code ec;
                const std::filesystem::file_status st = std::filesystem::status(path, ec);
                if (ec) return fmt::format("{}: cannot open the lesson: {}", printable_cut(path, 200), ec.message());
                if (st.type() == std::filesystem::file_type::not_found)
                    return fmt::format("{}: no such lesson file", printable_cut(path, 200));
                if (st.type() == std::filesystem::file_type::directory)
                    return fmt::format("{}: a folder, not a lesson file", printable_cut(path, 200));
                return {};
            },
            "FILE"));
    sub->add_option("--out", *out, "folder for the PNG files (created if missing)")
        ->required()
        ->check([](const std::string& dir) { return dir.empty() ? std::string("give a folder, not an empty name") : std::string(); });
    sub->add_option("--size", *size, "image size WIDTHxHEIGHT in pixels")->capture_default_str();
    sub->add_option("--font-scale", *scale, "font size relative to the default for the height (0.25 to 4)")
        ->capture_default_str()
        ->check(finite_number(0.25, 4.0));
    add_examples(sub, {"sixstep screenshot lessons/04-one-token-at-a-time.yaml --out shots --size 1920x1080"});
    commands.push_back({sub, [lesson, out, size, scale]() -> int {
        // Checked here, before any of it reaches ImGui or GL: an absurd size
        // or font scale would abort in an assertion or crash the renderer.
        int w = 0, h = 0;
        const std::string& sz = *size;
        const auto x = sz.find_first_of("xX");
        const auto whole = [](std::string_view t, int& v) {
            const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
            return !t.empty() && ec == std::errc() && p == t.data() + t.size();
        };
        if (x == std::string::npos || !whole(std::string_view(sz).substr(0, x), w) ||
            !whole(std::string_view(sz).substr(x + 1), h)) {
            std::fprintf(stderr, "sixstep: error: --size \"%s\": expected WIDTHxHEIGHT, e.g. 1280x720\n",
                         printable(sz).c_str());
            return exit_bad_input;
        }
        if (w < 320 || h < 240 || w > 8192 || h > 8192) {
            std::fprintf(stderr, "sixstep: error: --size %dx%d is out of range (320x240 to 8192x8192)\n", w, h);
            return exit_bad_input;
        }
#if SIXSTEP_HAVE_GUI
        ui::ScreenshotOptions o;
        o.lesson_path = *lesson;
        o.out_dir = *out;
        o.width = w;
        o.height = h;
        o.font_scale = *scale;
        std::vector<std::string> overflows, shrunk;
        o.narration_notes = &shrunk;
        const int rc = ui::render_screenshots(o, nullptr, &overflows);
        // The window logs it; pictures drawn with a fallback font say so too.
        if (!ui::fonts().problem.empty())
            std::fprintf(stderr, "sixstep: warning: %s\n", printable(ui::fonts().problem).c_str());
        for (const std::string& line : overflows)
            std::fprintf(stderr, "sixstep: warning: %dx%d, %s\n", w, h, printable(line).c_str());
        // Not an error: a lesson author's hint that a step says too much for the room.
        for (const std::string& line : shrunk)
            std::fprintf(stderr, "sixstep: note: %dx%d, %s: a shorter text reads larger\n", w, h, printable(line).c_str());
        if (!overflows.empty())
            std::fprintf(stderr, "sixstep: warning: %zu place%s where a pane's content does not fit at %dx%d "
                         "(cut, scrolled or drawn over other text): a larger --size or a smaller --font-scale shows all\n",
                         overflows.size(), overflows.size() == 1 ? "" : "s", w, h);
        return rc;
#else
        (void)lesson, (void)out, (void)scale;
        std::fprintf(stderr,
                     "sixstep: error: 'screenshot' needs the GUI, and this build has none "
                     "(install libimgui-dev libglfw3-dev libegl-dev and reconfigure)\n");
        return exit_bad_input;
#endif
    }});
}

}  // namespace sixstep::cli
