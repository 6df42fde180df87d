#include "app/ui/platform.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <stb_image_write.h>

#include "app/ui/gui.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace {
// GLSL for a 3.3 core context; Mesa llvmpipe accepts it (PLATFORM-NOTES).
constexpr const char* glsl_version = "#version 330 core";

std::string glfw_error;  // last message from GLFW's error callback
void on_glfw_error(int code, const char* description) {
    glfw_error = std::string(description ? description : "unknown GLFW error") + " (" + std::to_string(code) + ")";
}
}  // namespace

bool display_available() {
    const char* x = std::getenv("DISPLAY");
    const char* wl = std::getenv("WAYLAND_DISPLAY");
    if ((!x || !*x) && (!wl || !*wl)) return false;
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) return false;
    glfwTerminate();
    return true;
}

// ---- Window (GLFW) ----------------------------------------------------------

std::unique_ptr<Window> Window::open(int width, int height, const std::string& title, bool visible,
                                     std::string* error) {
    glfwSetErrorCallback(on_glfw_error);
    glfw_error.clear();
    if (!glfwInit()) {
        if (error) *error = "cannot initialise GLFW: " + glfw_error;
        return nullptr;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
    GLFWwindow* w = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
    if (!w) {
        if (error) *error = "cannot open a window: " + glfw_error;
        glfwTerminate();
        return nullptr;
    }
    std::unique_ptr<Window> win(new Window());
    win->window_ = w;
    win->windowed_[2] = width;
    win->windowed_[3] = height;
    glfwSetWindowUserPointer(w, win.get());
    glfwMakeContextCurrent(w);
    glfwSwapInterval(1);
    // Our callback first: ImGui's GLFW backend chains to callbacks installed
    // before it, so both see every key.
    glfwSetKeyCallback(w, key_callback);
    ImGui_ImplGlfw_InitForOpenGL(w, true);
    ImGui_ImplOpenGL3_Init(glsl_version);
    return win;
}

Window::~Window() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    glfwDestroyWindow(window_);
    glfwTerminate();
}

void Window::key_callback(GLFWwindow* w, int key, int, int action, int mods) {
    auto* self = static_cast<Window*>(glfwGetWindowUserPointer(w));
    if (self && (action == GLFW_PRESS || action == GLFW_REPEAT)) self->keys_.push_back({key, mods});
}

bool Window::should_close() const { return glfwWindowShouldClose(window_); }
void Window::request_close() { glfwSetWindowShouldClose(window_, GLFW_TRUE); }
void Window::poll_events() { glfwPollEvents(); }
void Window::wait_events(double timeout_s) { glfwWaitEventsTimeout(timeout_s); }
void Window::wake() { glfwPostEmptyEvent(); }
void Window::swap_buffers() { glfwSwapBuffers(window_); }
void Window::framebuffer_size(int* w, int* h) const { glfwGetFramebufferSize(window_, w, h); }
void Window::set_vsync(bool on) { glfwSwapInterval(on ? 1 : 0); }
void Window::set_title(const std::string& title) { glfwSetWindowTitle(window_, title.c_str()); }

std::vector<KeyPress> Window::take_key_presses() {
    std::vector<KeyPress> out;
    out.swap(keys_);
    return out;
}

void Window::press_key(int key, int mods) { ImGui_ImplGlfw_KeyCallback(window_, key, 0, GLFW_PRESS, mods); }
void Window::release_key(int key, int mods) { ImGui_ImplGlfw_KeyCallback(window_, key, 0, GLFW_RELEASE, mods); }

void Window::toggle_fullscreen() {
    if (!fullscreen_) {
        GLFWmonitor* monitor = glfwGetPrimaryMonitor();
        const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
        if (!mode) return;  // e.g. a headless X server without RandR
        glfwGetWindowPos(window_, &windowed_[0], &windowed_[1]);
        glfwGetWindowSize(window_, &windowed_[2], &windowed_[3]);
        glfwSetWindowMonitor(window_, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
        fullscreen_ = true;
    } else {
        glfwSetWindowMonitor(window_, nullptr, windowed_[0], windowed_[1], windowed_[2], windowed_[3], 0);
        fullscreen_ = false;
    }
}

// ---- Offscreen (EGL surfaceless) -------------------------------------------

std::unique_ptr<Offscreen> Offscreen::create(std::string* error) {
    auto fail = [&](const std::string& what) -> std::unique_ptr<Offscreen> {
        if (error) *error = what + " (EGL error 0x" + [] {
            char buf[16];
            std::snprintf(buf, sizeof buf, "%x", eglGetError());
            return std::string(buf);
        }() + ")";
        return nullptr;
    };
    auto get_platform_display =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!get_platform_display) return fail("EGL has no eglGetPlatformDisplayEXT");
    EGLDisplay dpy = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (dpy == EGL_NO_DISPLAY) return fail("no EGL surfaceless display (Mesa's libegl-mesa0 missing?)");
    // The display is initialised once and kept for the process (the same
    // handle comes back every time): a test renders every lesson, each with
    // a context of its own, and tearing the driver down and up again per
    // lesson gave its worker threads that many chances to race the teardown.
    static bool initialised = false;
    EGLint major = 0, minor = 0;
    if (!initialised && !eglInitialize(dpy, &major, &minor)) return fail("cannot initialise the EGL surfaceless display");
    initialised = true;
    if (!eglBindAPI(EGL_OPENGL_API)) return fail("EGL cannot bind the OpenGL API");
    const EGLint config_attribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config = nullptr;
    EGLint n = 0;
    // Surfaceless contexts may also be created with no config at all
    // (EGL_KHR_no_config_context); try a real config first.
    eglChooseConfig(dpy, config_attribs, &config, 1, &n);
    const EGLint ctx_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                  EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, n > 0 ? config : EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, ctx_attribs);
    if (ctx == EGL_NO_CONTEXT) return fail("cannot create an OpenGL 3.3 core context on EGL");
    if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
        eglDestroyContext(dpy, ctx);
        return fail("cannot make the surfaceless context current");
    }
    std::unique_ptr<Offscreen> off(new Offscreen());
    off->display_ = dpy;
    off->context_ = ctx;
    if (!ImGui_ImplOpenGL3_Init(glsl_version)) return fail("ImGui's OpenGL3 backend failed to initialise");
    return off;
}

Offscreen::~Offscreen() {
    ImGui_ImplOpenGL3_Shutdown();
    glFinish();  // the rasterizer's threads idle before their context goes
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(display_, context_);
}

// ---- Canvas (FBO) -----------------------------------------------------------

Canvas::Canvas(int width, int height) : width_(width), height_(height) {
    glGenFramebuffers(1, &fbo_);
    glGenRenderbuffers(1, &color_);
    glBindRenderbuffer(GL_RENDERBUFFER, color_);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_);
    ok_ = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

Canvas::~Canvas() {
    glDeleteFramebuffers(1, &fbo_);
    glDeleteRenderbuffers(1, &color_);
}

void Canvas::bind() {
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glViewport(0, 0, width_, height_);
}

void Canvas::unbind() { glBindFramebuffer(GL_FRAMEBUFFER, 0); }

std::vector<std::uint8_t> Canvas::read_rgba() const {
    const size_t row = static_cast<size_t>(width_) * 4;
    std::vector<std::uint8_t> pixels(row * height_), flipped(row * height_);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    // GL's rows run bottom-up; PNG's top-down.
    for (int y = 0; y < height_; ++y)
        std::memcpy(&flipped[y * row], &pixels[(height_ - 1 - y) * row], row);
    return flipped;
}

void render_draw_data(int fb_width, int fb_height, const std::vector<ClearRect>& rects) {
    const ImVec4 bg = theme::background();
    glViewport(0, 0, fb_width, fb_height);
    glDisable(GL_SCISSOR_TEST);
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
    glEnable(GL_SCISSOR_TEST);
    for (const ClearRect& r : rects) {
        const ImVec4 c = theme::vec(r.rgb);
        const int x0 = static_cast<int>(std::lround(r.x * scale.x)), x1 = static_cast<int>(std::lround((r.x + r.w) * scale.x));
        const int y0 = static_cast<int>(std::lround(r.y * scale.y)), y1 = static_cast<int>(std::lround((r.y + r.h) * scale.y));
        glScissor(x0, fb_height - y1, x1 - x0, y1 - y0);  // GL counts rows from the bottom
        glClearColor(c.x, c.y, c.z, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
    }
    glDisable(GL_SCISSOR_TEST);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void gl_finish() { glFinish(); }

int gl_max_texture_size() {
    GLint n = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &n);
    return n > 0 ? n : 4096;  // no answer: what every GL 3 context must take
}

bool write_png(const std::string& path, int width, int height, const std::vector<std::uint8_t>& rgba) {
    return stbi_write_png(path.c_str(), width, height, 4, rgba.data(), width * 4) != 0;
}

}  // namespace sixstep::ui
