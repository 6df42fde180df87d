// sixstep screenshot LESSON.yaml --out DIR [--size WxH] [--font-scale F]
// Renders the classroom app at every step of a lesson to DIR/step-NN.png,
// with no display needed (EGL surfaceless; see app/ui/gui.h).
#include <cstdio>
#include <string>

#include "app/cli/commands.h"
#if SIXSTEP_HAVE_GUI
#include "app/ui/gui.h"
#endif

namespace sixstep::cli {

void add_screenshot(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("screenshot", "Render each step of a lesson to DIR/step-NN.png (no display needed)");
    auto lesson = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto size = std::make_shared<std::string>("1280x720");
    auto scale = std::make_shared<float>(1.0f);
    sub->add_option("lesson", *lesson, "the lesson file (.yaml)")->required()->check(CLI::ExistingFile);
    sub->add_option("--out", *out, "folder for the PNG files (created if missing)")->required();
    sub->add_option("--size", *size, "image size WIDTHxHEIGHT in pixels")->capture_default_str();
    sub->add_option("--font-scale", *scale, "font size relative to the default for the height")->capture_default_str();
    commands.push_back({sub, [=]() -> int {
        int w = 0, h = 0;
        char x = 0, extra = 0;
        if (std::sscanf(size->c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X') || w <= 0 || h <= 0) {
            std::fprintf(stderr, "sixstep: error: --size \"%s\": expected WIDTHxHEIGHT, e.g. 1280x720\n", size->c_str());
            return exit_bad_input;
        }
#if SIXSTEP_HAVE_GUI
        ui::ScreenshotOptions o;
        o.lesson_path = *lesson;
        o.out_dir = *out;
        o.width = w;
        o.height = h;
        o.font_scale = *scale;
        return ui::render_screenshots(o);
#else
        std::fprintf(stderr,
                     "sixstep: error: 'screenshot' needs the GUI, and this build has none "
                     "(install libimgui-dev libglfw3-dev libegl-dev and reconfigure)\n");
        return exit_bad_input;
#endif
    }});
}

}  // namespace sixstep::cli
