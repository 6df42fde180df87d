// The platform layer: where pixels go. Two ways to get an OpenGL 3.3 core
// context, one way to draw into it:
//
//   Window     GLFW + a real (or Xvfb) window — the classroom.
//   Offscreen  EGL with Mesa's surfaceless platform — no X server at all, for
//              `sixstep screenshot` and the smoke tests in CI.
//   Canvas     an FBO of a fixed size in whichever context is current; both
//              paths render screenshots into it and read it back.
//
// Each owns one ImGui context with its platform backend (GLFW or none) and
// the OpenGL3 renderer backend; the frame loop lives in gui.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct GLFWwindow;

namespace sixstep::ui {

// A key press as the presenter makes it: a GLFW key code and modifier bits.
struct KeyPress {
    int key = 0;
    int mods = 0;
};

class Window {
public:
    // Opens a window with a GL 3.3 core context and sets up ImGui's GLFW and
    // OpenGL3 backends. nullptr (and *error) when there is no display or the
    // context fails. `visible` = false gives a hidden window (screenshots).
    static std::unique_ptr<Window> open(int width, int height, const std::string& title, bool visible,
                                        std::string* error);
    ~Window();
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;

    bool should_close() const;
    void request_close();
    void poll_events();
    void wait_events(double timeout_s);  // sleep until input or the timeout (nothing to animate)
    static void wake();                  // ends wait_events early; any thread
    void swap_buffers();
    void framebuffer_size(int* w, int* h) const;
    void toggle_fullscreen();
    void set_title(const std::string& title);
    void set_vsync(bool on);  // off to measure frame times

    // Key presses since the last call (repeats included), in order. Reading
    // them here rather than from ImGui's KeysDown[] means a press and release
    // within one frame is never lost.
    std::vector<KeyPress> take_key_presses();
    // Feeds a key through GLFW's callback path, exactly as a keyboard would:
    // press now; release_key() on a later frame.
    void press_key(int key, int mods);
    void release_key(int key, int mods);

    GLFWwindow* handle() const { return window_; }

private:
    Window() = default;
    static void key_callback(GLFWwindow* w, int key, int scancode, int action, int mods);

    GLFWwindow* window_ = nullptr;
    std::vector<KeyPress> keys_;
    bool fullscreen_ = false;
    int windowed_[4] = {0, 0, 1280, 720};  // x, y, w, h before going fullscreen
};

class Offscreen {
public:
    // An EGL surfaceless display + GL 3.3 core context, made current, with
    // ImGui's OpenGL3 backend initialised. nullptr (and *error) when EGL or
    // Mesa's surfaceless platform is missing.
    static std::unique_ptr<Offscreen> create(std::string* error);
    ~Offscreen();
    Offscreen(const Offscreen&) = delete;
    Offscreen& operator=(const Offscreen&) = delete;

private:
    Offscreen() = default;
    void* display_ = nullptr;  // EGLDisplay
    void* context_ = nullptr;  // EGLContext
};

// An RGBA8 framebuffer object in the current GL context.
class Canvas {
public:
    Canvas(int width, int height);
    ~Canvas();
    Canvas(const Canvas&) = delete;
    Canvas& operator=(const Canvas&) = delete;

    bool ok() const { return ok_; }
    int width() const { return width_; }
    int height() const { return height_; }
    void bind();           // draw into it (and set the viewport)
    static void unbind();  // back to the default framebuffer
    // Top row first, 4 bytes per pixel.
    std::vector<std::uint8_t> read_rgba() const;

private:
    int width_, height_;
    unsigned fbo_ = 0, color_ = 0;
    bool ok_ = false;
};

// A rectangle of the screen (ImGui coordinates) cleared to a colour before
// ImGui draws: the panels' backgrounds, at memset speed.
struct ClearRect {
    float x, y, w, h;
    std::uint32_t rgb;
};

// Clears the bound framebuffer to the theme's background, then each rect,
// and draws ImGui's current draw data over them.
void render_draw_data(int fb_width, int fb_height, const std::vector<ClearRect>& rects = {});

// Waits until the GL has drawn everything (frame-time diagnostics only).
void gl_finish();
// The largest texture side the current GL context takes (the font atlas must fit).
int gl_max_texture_size();

// Writes top-row-first RGBA pixels as a PNG (stb_image_write, from libstb).
bool write_png(const std::string& path, int width, int height, const std::vector<std::uint8_t>& rgba);

}  // namespace sixstep::ui
