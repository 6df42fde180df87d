#include "app/ui/presenter_keys.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include <GLFW/glfw3.h>

#include "app/ui/panels.h"

namespace sixstep::ui {

WindowAction handle_key(const KeyPress& k, bool typing, app::Session& session, ViewState& v, const app::Snapshot& snap) {
    const bool ctrl = (k.mods & GLFW_MOD_CONTROL) != 0;
    if (ctrl) {
        switch (k.key) {
            case GLFW_KEY_EQUAL:
            case GLFW_KEY_KP_ADD: v.font_scale = std::min(max_font_scale, v.font_scale * 1.1f); break;
            case GLFW_KEY_MINUS:
            case GLFW_KEY_KP_SUBTRACT: v.font_scale = std::max(min_font_scale, v.font_scale / 1.1f); break;
            case GLFW_KEY_0: v.font_scale = 1.0f; break;
            case GLFW_KEY_R: session.reload(); break;
            case GLFW_KEY_O:
                v.picker = true;
                session.scan(v.lessons_folder);
                break;
            case GLFW_KEY_Q: return WindowAction::quit;
            default: break;
        }
        return WindowAction::none;
    }
    if (k.key == GLFW_KEY_F11) return WindowAction::toggle_fullscreen;
    if (typing) return WindowAction::none;
    if (v.picker) {
        if (k.key == GLFW_KEY_ESCAPE) {
            if (snap.has_lesson) v.picker = false;
            else return WindowAction::quit;
        }
        return WindowAction::none;
    }
    switch (k.key) {
        case GLFW_KEY_RIGHT:
        case GLFW_KEY_SPACE:
        case GLFW_KEY_PAGE_DOWN: session.next(); break;
        case GLFW_KEY_LEFT:
        case GLFW_KEY_PAGE_UP: session.previous(); break;
        case GLFW_KEY_HOME: session.restart(); break;
        case GLFW_KEY_END: session.go_to(snap.state.step_count); break;
        case GLFW_KEY_L: v.log_open = !v.log_open; break;
        case GLFW_KEY_T: next_right_pane(snap, v); break;  // inspector → training → charts, those the step has
        case GLFW_KEY_ESCAPE: session.interrupt(); break;  // a no-op when nothing runs
        default: break;
    }
    return WindowAction::none;
}

std::optional<KeyPress> parse_key(const std::string& raw) {
    std::string name = raw;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    int mods = 0;
    if (name.rfind("ctrl+", 0) == 0) {
        mods = GLFW_MOD_CONTROL;
        name = name.substr(5);
    }
    static const std::pair<const char*, int> keys[] = {
        {"right", GLFW_KEY_RIGHT}, {"left", GLFW_KEY_LEFT},     {"space", GLFW_KEY_SPACE},
        {"home", GLFW_KEY_HOME},   {"end", GLFW_KEY_END},       {"f11", GLFW_KEY_F11},
        {"=", GLFW_KEY_EQUAL},     {"+", GLFW_KEY_EQUAL},       {"-", GLFW_KEY_MINUS},
        {"0", GLFW_KEY_0},         {"r", GLFW_KEY_R},           {"l", GLFW_KEY_L},
        {"t", GLFW_KEY_T},         {"o", GLFW_KEY_O},           {"q", GLFW_KEY_Q},
        {"escape", GLFW_KEY_ESCAPE}, {"pagedown", GLFW_KEY_PAGE_DOWN}, {"pageup", GLFW_KEY_PAGE_UP},
    };
    for (const auto& [n, key] : keys)
        if (name == n) return KeyPress{key, mods};
    return std::nullopt;
}

std::vector<KeyPress> parse_keys(const std::string& script) {
    std::vector<KeyPress> out;
    std::istringstream in(script);
    std::string word;
    while (in >> word) {
        auto k = parse_key(word);
        if (!k) throw std::invalid_argument("unknown key \"" + word + "\" in the autoplay script");
        out.push_back(*k);
    }
    return out;
}

}  // namespace sixstep::ui
