#include "app/ui/fonts.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <vector>

#include "pipeline/core/text.h"

// stb_truetype as ImGui's atlas builder compiles it (static, here a copy of
// this file's own), to read a font file before the builder does: the builder
// stops the program on a file it cannot parse.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wshadow"
#define STBTT_STATIC
#define STB_TRUETYPE_IMPLEMENTATION
#include <imstb_truetype.h>
#pragma GCC diagnostic pop

namespace sixstep::ui {

namespace {

Fonts current;
std::set<ImWchar> built_glyphs;  // every codepoint asked for in the last build
// ImGui keeps pointers to glyph ranges until the atlas is rebuilt.
ImVector<ImWchar> latin_ranges, cjk_ranges;

std::string dejavu(const char* file) {
    if (const char* env = std::getenv("SIXSTEP_FONT_DIR")) return std::string(env) + "/" + file;
    return std::string(SIXSTEP_FONT_DIR_DEJAVU) + "/" + file;
}

std::string cjk_path(bool bold) {
    if (const char* env = std::getenv("SIXSTEP_CJK_FONT")) return env;
    std::string p = SIXSTEP_FONT_NOTO_CJK;
    if (bold) {
        const auto at = p.rfind("-Regular");
        if (at != std::string::npos) p.replace(at, 8, "-Bold");
    }
    return p;
}

// Font files are read once, shared by every face and every rebuild (ImGui
// does not own the bytes; the CJK collections are ~20 MiB each).
const std::vector<char>* font_file(const std::string& path) {
    static std::map<std::string, std::vector<char>> cache;
    auto it = cache.find(path);
    if (it != cache.end()) return it->second.empty() ? nullptr : &it->second;
    std::vector<char> bytes;
    std::error_code ec;  // a regular file only: a FIFO named by a variable blocked the read forever
    if (std::filesystem::is_regular_file(path, ec))
        if (std::ifstream in{path, std::ios::binary}) bytes.assign(std::istreambuf_iterator<char>(in), {});
    return (cache[path] = std::move(bytes)).empty() ? nullptr : &cache[path];
}

// The face of a font file ImGui can build from — `face` of a collection
// (.ttc) that has it, else its first; the only one of a .ttf or .otf — or -1
// for bytes the atlas builder would stop the program on (a variable naming
// some other file). Read with the same stb_truetype the builder uses.
int usable_face(const std::vector<char>& data, int face) {
    if (data.size() < 12) return -1;
    const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
    if (stbtt_GetNumberOfFonts(bytes) <= face) face = 0;
    const int offset = stbtt_GetFontOffsetForIndex(bytes, face);
    stbtt_fontinfo info;
    if (offset < 0 || static_cast<size_t>(offset) >= data.size() || !stbtt_InitFont(&info, bytes, offset)) return -1;
    return face;
}

bool exists(const std::string& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec);
}

// Decodes UTF-8; invalid bytes are skipped.
template <class F>
void for_each_codepoint(std::string_view s, F&& f) {
    for (size_t i = 0; i < s.size();) {
        std::uint32_t cp = 0;
        const size_t n = utf8_length(s, i, cp);
        i += std::max<size_t>(n, 1);
        if (n > 0) f(cp);
    }
}

// Characters the app itself draws, beyond ASCII and Latin-1. The lesson's
// and the traces' own characters are added at build time: a small atlas
// (a few hundred glyphs) keeps llvmpipe's texture sampling cheap.
constexpr const char* ui_symbols =
    "\u2212\u00d7\u00b7\u2026\u2014\u2013\u2192\u2190\u2191\u2193\u21bb\u25b2\u25bc\u25cf\u2744\u26a0\u2713\u2717"
    "\u21b5\u03b7\u03b8\u03a3\u2202\u0177\u2248\u2264\u2265\u00b1\u2207\u201c\u201d\u2018\u2019\u2022\u03c1\u2423"
    "\u2070\u2074\u2075\u2076\u2077\u2078\u2079\u207b"  // exponents (sci_text)
    "\u25cb";

// And for a Chinese screen: the UI's own punctuation, and the units of
// counts (count_text: 万, 亿).
constexpr const char* ui_symbols_zh = "，。：；！？（）、“”《》万亿";

}  // namespace

const Fonts& fonts() { return current; }

void forget_fonts() {
    // The faces go; what went wrong building them stays, for the caller that
    // reports it after the run (`sixstep screenshot`).
    std::string problem = std::move(current.problem);
    current = Fonts{};
    current.problem = std::move(problem);
}

float default_font_px(int framebuffer_width, int framebuffer_height) {
    const float w = framebuffer_width > 0 ? static_cast<float>(framebuffer_width) : 1280.0f;
    const float h = framebuffer_height > 0 ? static_cast<float>(framebuffer_height) : 720.0f;
    return 23.0f * std::min(h, w * 9.0f / 16.0f) / 720.0f;
}

bool fonts_missing_glyphs(std::string_view text) {
    bool missing = false;
    for_each_codepoint(text, [&](unsigned cp) {
        if (!missing && cp >= 0x100 && cp <= 0xFFFF && !built_glyphs.count(static_cast<ImWchar>(cp))) missing = true;
    });
    return missing;
}

void build_fonts(float body_px, std::string_view text) {
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    current = Fonts{};
    current.body_px = body_px;

    latin_ranges.clear();
    cjk_ranges.clear();
    built_glyphs.clear();
    ImFontGlyphRangesBuilder b;
    b.AddRanges(io.Fonts->GetGlyphRangesDefault());  // ASCII + Latin-1
    b.AddText(ui_symbols);
    bool any_cjk = false;
    for_each_codepoint(text, [&](unsigned cp) {
        if (cp < 0x80 || cp > 0xFFFF) return;
        b.AddChar(static_cast<ImWchar>(cp));
        built_glyphs.insert(static_cast<ImWchar>(cp));
        any_cjk = any_cjk || is_cjk(cp);
    });
    if (any_cjk)
        for_each_codepoint(ui_symbols_zh, [&](unsigned cp) {
            b.AddChar(static_cast<ImWchar>(cp));
            built_glyphs.insert(static_cast<ImWchar>(cp));
        });
    for_each_codepoint(ui_symbols, [&](unsigned cp) { built_glyphs.insert(static_cast<ImWchar>(cp)); });
    b.BuildRanges(&latin_ranges);
    // The same set for the merged CJK face: it only fills what DejaVu lacks.
    cjk_ranges = latin_ranges;

    const std::string sans = dejavu("DejaVuSans.ttf"), sans_bold = dejavu("DejaVuSans-Bold.ttf"),
                      mono = dejavu("DejaVuSansMono.ttf");
    // NotoSansCJK-Regular.ttc: 0 Japanese, 1 Korean, 2 Simplified Chinese.
    constexpr int simplified_chinese = 2;
    const std::vector<char>* noto = any_cjk ? font_file(cjk_path(false)) : nullptr;
    const std::vector<char>* noto_bold = any_cjk ? font_file(cjk_path(true)) : nullptr;
    const bool not_a_font = noto && usable_face(*noto, simplified_chinese) < 0;
    if (not_a_font) noto = nullptr;
    if (!noto_bold || usable_face(*noto_bold, simplified_chinese) < 0) noto_bold = noto;
    const bool have_cjk = noto != nullptr;
    if (any_cjk && !have_cjk)
        current.problem = not_a_font ? "not a font file: " + cjk_path(false) + " (SIXSTEP_CJK_FONT names a .ttf, .otf or .ttc)"
                                     : "Chinese font not found: " + cjk_path(false) + " (apt install fonts-noto-cjk)";

    auto add = [&](const std::string& file, float px, bool bold) -> ImFont* {
        ImFontConfig cfg;
        cfg.OversampleH = 2;
        cfg.OversampleV = 1;
        cfg.PixelSnapH = true;
        cfg.FontDataOwnedByAtlas = false;
        ImFont* f = nullptr;
        const std::vector<char>* data = exists(file) ? font_file(file) : nullptr;
        const bool usable = data && usable_face(*data, 0) == 0;
        if (usable)
            f = io.Fonts->AddFontFromMemoryTTF(const_cast<char*>(data->data()), static_cast<int>(data->size()), px, &cfg,
                                               latin_ranges.Data);
        if (!f) {
            if (current.problem.empty())
                current.problem = data ? "not a font file: " + file + " (SIXSTEP_FONT_DIR names DejaVu's folder)"
                                       : "font not found: " + file + " (apt install fonts-dejavu-core)";
            ImFontConfig def;
            def.SizePixels = px;
            f = io.Fonts->AddFontDefault(&def);
        }
        if (have_cjk) {
            ImFontConfig m;
            m.MergeMode = true;
            const std::vector<char>* cjk = bold ? noto_bold : noto;
            m.FontNo = usable_face(*cjk, simplified_chinese);
            m.OversampleH = 1;
            m.OversampleV = 1;
            m.PixelSnapH = true;
            m.FontDataOwnedByAtlas = false;
            // Noto CJK's ascent + descent span ~1.45 em against DejaVu's ~1.16:
            // at the same pixel size its characters look a size smaller.
            io.Fonts->AddFontFromMemoryTTF(const_cast<char*>(cjk->data()), static_cast<int>(cjk->size()), px * 1.2f, &m,
                                           cjk_ranges.Data);
        }
        return f;
    };
    current.body = add(sans, body_px, false);
    current.narration = add(sans, body_px * 1.2f, false);
    current.bold = add(sans_bold, body_px * 1.1f, true);
    current.big = add(sans_bold, body_px * 1.6f, true);
    current.mono = add(mono, body_px * 1.05f, false);
    current.cjk = have_cjk;
    io.Fonts->Build();
    io.FontDefault = current.body;
}

}  // namespace sixstep::ui
