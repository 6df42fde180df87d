// The frame loop, twice: run_app drives a GLFW window from the keyboard;
// render_screenshots drives an offscreen canvas through every step of a
// lesson. Both draw the same screen (draw_app) from the session's snapshot.
//
// Diagnostics (environment): SIXSTEP_FRAME_STATS=1 prints the frame-time
// max / mean / p99 when the window closes (and turns vsync off);
// SIXSTEP_FRAME_DEBUG=1 prints every frame's phases (ui, gl, swap) and each
// font atlas build.
#include "app/ui/gui.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include "app/core/lesson.h"
#include "app/core/report.h"
#include "app/core/session.h"
#include "app/ui/fonts.h"
#include "app/ui/i18n.h"
#include "app/ui/overflow.h"
#include "app/ui/panels.h"
#include "app/ui/platform.h"
#include "app/ui/presenter_keys.h"
#include "app/ui/text_capture.h"
#include "app/ui/theme.h"
#include "pipeline/core/error.h"
#include "pipeline/core/text.h"

namespace sixstep::ui {

namespace {

FrameStats last_stats;

// Every character the screen may show for this snapshot: the lesson, the
// traces, the log, the app's own words in the lesson's language. (The lesson
// text includes the answers its checks expect, a Chinese one included.)
std::string glyph_text(const app::Snapshot& s, const std::string& language) {
    std::string t = s.lesson_text;
    t += translated_text(language.empty() ? s.state.language : language);
    for (const auto& ev : s.state.trace.events()) {
        t += ev.summary;
        for (const auto& a : ev.arithmetic) t += a;
        for (const auto& w : ev.warnings) t += w;
        for (const auto& f : ev.outputs)
            if (std::holds_alternative<std::string>(f.value)) t += std::get<std::string>(f.value);
    }
    if (s.state.response) t += s.state.response->text;
    // The transformer panels' token pieces (a lens row may name a token no trace did).
    const app::PanelsState& p = s.state.panels;
    if (p.view) {
        for (const auto& tok : p.view->tokens) t += tok.piece;
        for (const auto& stage : p.view->next.chain)
            for (const auto& c : stage.rows) t += c.piece;
    }
    for (const auto& row : p.lens)
        for (const auto& c : row.top) t += c.piece;
    if (p.kv_experiment)
        for (const auto& piece : p.kv_experiment->pieces) t += piece;
    if (p.message) t += p.message->text;
    if (s.state.error) t += *s.state.error;
    for (const auto& l : s.log) t += l.text;
    for (const auto& c : s.catalog) t += c.title;
    t += s.load_error;
    return t;
}

// The screen that both front ends draw: keeps the font atlas in step with
// the screen size, the presenter's font scale and the lesson's characters.
class Frontend {
public:
    app::Session session;
    ViewState view;

    // Before NewFrame. Returns true when the font atlas was rebuilt.
    bool prepare(const app::Snapshot& s, int fb_width, int fb_height) {
        const float px = std::round(default_font_px(fb_width, fb_height) * view.font_scale * 2.0f) / 2.0f;
        // Compared with this front end's own build: a new ImGui context
        // (the next screenshot run) starts with an empty atlas.
        bool rebuild = px != built_px_;
        if (s.version != glyph_version_) {
            glyph_version_ = s.version;
            std::string text = glyph_text(s, view.language);
            if (fonts_missing_glyphs(text)) rebuild = true;
            if (rebuild) glyphs_ = std::move(text);
        }
        if (!rebuild) return false;
        if (glyphs_.empty()) glyphs_ = glyph_text(s, view.language);
        build_fonts(px, glyphs_);
        // The atlas must fit one texture: every Chinese character of a lesson
        // at a large size on a 4K screen made 4096×32768, drawn as black
        // blocks where the GL takes 16384. Smaller until it fits.
        const int max_side = gl_max_texture_size();
        float fitted = px;
        while (ImGui::GetIO().Fonts->TexHeight > max_side && fitted > 8.0f) {
            fitted = std::floor(fitted * 0.85f);
            build_fonts(fitted, glyphs_);
        }
        if (fitted != px)
            session.log(app::LogEntry::Level::warning,
                        fmt::format("font size {:.0f} px does not fit one texture of this GPU ({} px a side): drawn at "
                                    "{:.0f} px",
                                    px, max_side, fitted));
        if (std::getenv("SIXSTEP_FRAME_DEBUG"))
            std::fprintf(stderr, "font atlas %dx%d at %.1f px\n", ImGui::GetIO().Fonts->TexWidth, ImGui::GetIO().Fonts->TexHeight, fitted);
        built_px_ = px;
        if (!fonts().problem.empty() && fonts().problem != reported_) {
            reported_ = fonts().problem;
            session.log(app::LogEntry::Level::warning, reported_);
        }
        theme::apply(fitted);
        view.font_px = fitted;
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
        return true;
    }

    void draw(const app::Snapshot& s, float width, float height) {
        tr_new_frame();
        if (screen_text) begin_text_capture();
        ImGui::NewFrame();
        draw_app(s, view, session, width, height);
        if (screen_text) *screen_text = end_text_capture();
        ImGui::Render();
    }

    // When set, each frame's text is written here (a test aid: text_capture.h).
    std::string* screen_text = nullptr;

    // The panels' backgrounds, for render_draw_data to clear.
    std::vector<ClearRect> clear_rects() const {
        std::vector<ClearRect> out;
        for (const Backdrop& b : backdrops()) out.push_back({b.rect.x, b.rect.y, b.rect.w, b.rect.h, b.rgb});
        return out;
    }

private:
    float built_px_ = 0;
    std::uint64_t glyph_version_ = ~0ull;
    std::string glyphs_;
    std::string reported_;
};

void init_imgui() {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // the layout is computed, not saved
    io.LogFilename = nullptr;
    io.ConfigWindowsMoveFromTitleBarOnly = true;
}

double process_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

FrameStats summarize(std::vector<double> ms, const std::vector<double>& cpu) {
    FrameStats st;
    if (!cpu.empty()) {
        st.cpu_max_ms = *std::max_element(cpu.begin(), cpu.end());
        st.cpu_mean_ms = std::accumulate(cpu.begin(), cpu.end(), 0.0) / static_cast<double>(cpu.size());
    }
    st.frames = static_cast<int>(ms.size());
    if (ms.empty()) return st;
    st.max_ms = *std::max_element(ms.begin(), ms.end());
    st.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
    std::sort(ms.begin(), ms.end());
    st.p99_ms = ms[std::min(ms.size() - 1, static_cast<size_t>(std::ceil(0.99 * static_cast<double>(ms.size()))) - 1)];
    return st;
}

}  // namespace

FrameStats last_frame_stats() { return last_stats; }

int run_app(const std::string& lesson_path) { return run_app(lesson_path, AppOptions{}); }

int run_app(const std::string& lesson_path, const AppOptions& options) {
    std::vector<KeyPress> script;
    try {
        script = parse_keys(options.autoplay);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sixstep: error: %s\n", e.what());
        return 2;
    }
    init_imgui();
    std::string error;
    auto window = Window::open(options.width, options.height, "sixstep", true, &error);
    if (!window) {
        forget_fonts();
        ImGui::DestroyContext();
        std::fprintf(stderr, "sixstep: %s\n", error.c_str());
        return no_window;
    }
    if (options.frame_stats || std::getenv("SIXSTEP_FRAME_STATS")) window->set_vsync(false);
    {
        Frontend app;
        app.session.set_on_publish([] { Window::wake(); });
        app.view.lessons_folder = app::default_lessons_folder();
        if (lesson_path.empty()) {
            app.view.picker = true;
            app.session.scan(app.view.lessons_folder);
        } else {
            app.session.open(lesson_path);
        }

        std::vector<double> frame_ms, frame_cpu_ms;
        size_t next_key = 0;
        int frame = 0, settle = 0, idle_frames = 0;
        std::uint64_t drawn_version = 0;
        KeyPress held{};  // a simulated key to release next frame
        bool holding = false;
        std::string title;
        using clock = std::chrono::steady_clock;
        auto last = clock::now();
        while (!window->should_close()) {
            // Nothing moving, nothing queued, nobody typing: sleep until input
            // or a new snapshot (the session wakes us).
            // A projector laptop on battery should not redraw an idle slide at 60 fps.
            // While long work runs, ten frames a second move its progress bar
            // and leave the cores to the work.
            if (script.empty() && idle_frames > 2) window->wait_events(app.session.work().running ? 0.1 : 0.5);
            const auto t0 = clock::now();
            const double cpu0 = process_cpu_ms();
            window->poll_events();
            // The autoplay script presses one key every few frames, through
            // GLFW's callback path, and releases it on the next frame.
            if (holding) {
                window->release_key(held.key, held.mods);
                holding = false;
            } else if (next_key < script.size() && frame > 0 && frame % std::max(1, options.autoplay_every) == 0) {
                held = script[next_key++];
                holding = true;
                window->press_key(held.key, held.mods);
            }
            auto snap = app.session.snapshot();
            const bool typing = ImGui::GetIO().WantTextInput;
            for (const KeyPress& k : window->take_key_presses()) {
                switch (handle_key(k, typing, app.session, app.view, *snap)) {
                    case WindowAction::toggle_fullscreen: window->toggle_fullscreen(); break;
                    case WindowAction::quit: window->request_close(); break;
                    case WindowAction::none: break;
                }
            }
            if (snap->has_lesson && snap->state.title != title) {
                title = snap->state.title;
                window->set_title("sixstep \u2014 " + title);
            }
            // ImGui's keyboard navigation only in the picker (↑ ↓ Enter): on a
            // lesson, Space and the arrows belong to the presenter, and must
            // not also toggle whatever widget was clicked last.
            if (app.view.picker || !snap->has_lesson) ImGui::GetIO().ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
            else ImGui::GetIO().ConfigFlags &= ~ImGuiConfigFlags_NavEnableKeyboard;
            int fb_w = 0, fb_h = 0;
            window->framebuffer_size(&fb_w, &fb_h);
            const bool rebuilt = app.prepare(*snap, fb_w, fb_h);
            ImGui_ImplOpenGL3_NewFrame();
            ImGui_ImplGlfw_NewFrame();
            const auto now = clock::now();
            app.view.dt = std::clamp(std::chrono::duration<float>(now - last).count(), 0.0f, 0.1f);
            last = now;
            const ImVec2 size = ImGui::GetIO().DisplaySize;
            const auto t_ui = clock::now();
            app.draw(*snap, size.x, size.y);
            const auto t_draw = clock::now();
            render_draw_data(fb_w, fb_h, app.clear_rects());
            static const bool debug = std::getenv("SIXSTEP_FRAME_DEBUG") != nullptr;
            if (debug) gl_finish();
            const auto t_gl = clock::now();
            window->swap_buffers();
            if (debug)
                std::fprintf(stderr, "frame %d: pre %.2f ui %.2f gl %.2f swap %.2f ms, %d vertices\n", frame,
                             std::chrono::duration<double, std::milli>(t_ui - t0).count(),
                             std::chrono::duration<double, std::milli>(t_draw - t_ui).count(),
                             std::chrono::duration<double, std::milli>(t_gl - t_draw).count(),
                             std::chrono::duration<double, std::milli>(clock::now() - t_gl).count(),
                             ImGui::GetDrawData()->TotalVtxCount);
            const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
            // The first frames build the font atlas and the GL objects: a
            // start-up cost, not a frame of stepping.
            if (frame >= 2 && !rebuilt) {
                frame_ms.push_back(ms);
                frame_cpu_ms.push_back(process_cpu_ms() - cpu0);
            }
            ++frame;
            const bool still = !snap->busy && snap->version == drawn_version && app.view.packet_pos == app.view.packet_target &&
                               !ImGui::GetIO().WantTextInput && !ImGui::IsAnyMouseDown();
            idle_frames = still ? idle_frames + 1 : 0;
            drawn_version = snap->version;
            if (options.max_frames > 0 && frame >= options.max_frames) break;
            if (options.quit_after_autoplay && next_key >= script.size() && !holding) {
                // Let the last command finish and the animation settle.
                if (!snap->busy && app.view.packet_pos == app.view.packet_target) ++settle;
                if (settle > options.autoplay_every) break;
            }
        }
        last_stats = summarize(frame_ms, frame_cpu_ms);
        auto snap = app.session.snapshot();
        last_stats.position = snap->state.position;
        last_stats.step_count = snap->state.step_count;
        if (options.frame_stats || std::getenv("SIXSTEP_FRAME_STATS"))
            std::fprintf(stderr,
                         "sixstep: %d frames; wall time max %.2f ms, mean %.2f ms, p99 %.2f ms; "
                         "CPU time max %.2f ms, mean %.2f ms\n",
                         last_stats.frames, last_stats.max_ms, last_stats.mean_ms, last_stats.p99_ms, last_stats.cpu_max_ms,
                         last_stats.cpu_mean_ms);
    }
    window.reset();
    forget_fonts();
    ImGui::DestroyContext();
    return 0;
}

int render_screenshots(const ScreenshotOptions& o, std::vector<std::string>* written, std::vector<std::string>* overflows) {
    if (o.width < 320 || o.height < 240 || o.width > 8192 || o.height > 8192) {
        std::fprintf(stderr, "sixstep: error: screenshot size %dx%d is out of range (320x240 .. 8192x8192)\n", o.width,
                     o.height);
        return 2;
    }
    init_imgui();
    // EGL surfaceless first: it needs no X server. A hidden window when EGL
    // is unavailable but a display is.
    std::string egl_error, glfw_error;
    std::unique_ptr<Offscreen> offscreen = Offscreen::create(&egl_error);
    std::unique_ptr<Window> window;
    if (!offscreen && display_available()) window = Window::open(o.width, o.height, "sixstep screenshot", false, &glfw_error);
    if (!offscreen && !window) {
        forget_fonts();
        ImGui::DestroyContext();
        std::fprintf(stderr, "sixstep: error: no OpenGL context for screenshots: %s%s%s\n", egl_error.c_str(),
                     glfw_error.empty() ? "" : "; ", glfw_error.c_str());
        return 2;
    }
    int rc = 0;
    {
        Canvas canvas(o.width, o.height);
        Frontend app;
        app.view.lessons_folder = app::default_lessons_folder();
        app.view.font_scale = o.font_scale;
        app.view.language = o.language;
        app.session.open(o.lesson_path);
        app.session.wait_idle();
        auto snap = app.session.snapshot();
        if (!canvas.ok()) {
            std::fprintf(stderr, "sixstep: error: cannot create a %dx%d framebuffer\n", o.width, o.height);
            rc = 2;
        } else if (!snap->has_lesson) {
            std::fprintf(stderr, "sixstep: error: %s\n", snap->load_error.c_str());
            rc = 2;
        } else if (!o.out_dir.empty()) {
            // Only for a lesson that loaded: a refused one leaves no empty folder behind.
            std::error_code ec;
            std::filesystem::create_directories(o.out_dir, ec);
            if (ec) {
                std::fprintf(stderr, "sixstep: error: %s: cannot create the folder: %s\n", printable(o.out_dir).c_str(),
                             ec.message().c_str());
                rc = 2;
            }
        }
        ImGuiIO& io = ImGui::GetIO();
        std::vector<std::string> frame_overflows;  // of the frame drawn last
        if (overflows) set_overflow_sink(&frame_overflows);
        std::string frame_text;  // of the frame drawn last
        if (o.on_text) app.screen_text = &frame_text;
        for (int k = 1; rc == 0 && k <= snap->state.step_count; ++k) {
            // Forward one step at a time, as a presenter walks a lesson
            // (open() ran step 1); go_to(k) would replay the lesson from
            // step 1 for every picture, n²/2 steps in all.
            if (k > 1) app.session.next();
            app.session.wait_idle();
            snap = app.session.snapshot();
            // A fixed clock, so the same lesson gives the same pixels; enough
            // frames for the layout and the travelling request to settle.
            for (int frame = 0; frame < 600; ++frame) {
                canvas.bind();
                app.prepare(*snap, o.width, o.height);
                io.DisplaySize = ImVec2(static_cast<float>(o.width), static_cast<float>(o.height));
                io.DisplayFramebufferScale = ImVec2(1, 1);
                io.DeltaTime = 1.0f / 60.0f;
                io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
                app.view.dt = io.DeltaTime;
                frame_overflows.clear();
                ImGui_ImplOpenGL3_NewFrame();
                app.draw(*snap, io.DisplaySize.x, io.DisplaySize.y);
                if (frame == 0) {
                    // The first frame tells the session which panels it shows
                    // (they may need a capture): draw what that computed.
                    app.session.wait_idle();
                    snap = app.session.snapshot();
                }
                if (frame >= 3 && app.view.packet_pos == app.view.packet_target) break;
            }
            if (overflows)
                for (const std::string& line : frame_overflows) overflows->push_back("step " + std::to_string(k) + ": " + line);
            if (o.narration_notes && app.view.narration_scale < 0.999f)
                o.narration_notes->push_back(fmt::format("step {}: the narration is shown at {:.0f}% of the body size", k,
                                                         100 * app.view.narration_scale));
            // The picture shows a ✗; said here too, or a folder of slides
            // made from a lesson that fails (a timing claim, an error) would
            // pass unnoticed. The first failure stands for the rest.
            const auto& checks = snap->state.checks;
            const auto failed = std::count_if(checks.begin(), checks.end(), [](const app::CheckResult& c) { return !c.passed; });
            if (failed > 0) {
                const auto first = std::find_if(checks.begin(), checks.end(), [](const app::CheckResult& c) { return !c.passed; });
                std::string said = app::format_check(*first, "en");
                said.erase(0, said.find_first_not_of(' '));
                if (!said.empty() && said.back() == '\n') said.pop_back();
                std::fprintf(stderr, "sixstep: warning: step %d: %d of %d checks failed; first: %s\n", k,
                             static_cast<int>(failed), static_cast<int>(checks.size()), said.c_str());
            }
            if (!o.out_dir.empty() || o.on_frame) {
                render_draw_data(o.width, o.height, app.clear_rects());
                Frame frame{o.width, o.height, canvas.read_rgba()};
                for (size_t i = 3; i < frame.rgba.size(); i += 4) frame.rgba[i] = 255;  // opaque, whatever blending left
                if (!o.out_dir.empty()) {
                    char name[32];
                    std::snprintf(name, sizeof name, "step-%02d.png", k);
                    const std::string path = (std::filesystem::path(o.out_dir) / name).string();
                    if (!write_png(path, o.width, o.height, frame.rgba)) {
                        std::fprintf(stderr, "sixstep: error: %s: cannot write the PNG\n", path.c_str());
                        rc = 2;
                        break;
                    }
                    if (written) written->push_back(path);
                    if (!o.quiet) std::printf("wrote %s\n", printable(path).c_str());
                }
                if (o.on_frame) o.on_frame(frame, *snap);
            }
            if (o.on_text) o.on_text(k, frame_text, *snap);
        }
        Canvas::unbind();
        set_overflow_sink(nullptr);
    }
    window.reset();
    offscreen.reset();
    forget_fonts();
    ImGui::DestroyContext();
    return rc;
}

}  // namespace sixstep::ui
