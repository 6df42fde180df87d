// The projector theme: dark text on a light background, saturated accents,
// thick borders. Every colour the panels use has a name here, so a test can
// look for "the active stage's highlight" by its exact RGB.
#pragma once
#include <cstdint>

#include <imgui.h>

namespace sixstep::ui::theme {

// Colours as 0xRRGGBB; col() turns one into ImGui's packed ABGR.
inline constexpr std::uint32_t background_rgb = 0xF4F4EF;    // off-white: no glare, high contrast
inline constexpr std::uint32_t panel_rgb = 0xFFFFFF;
inline constexpr std::uint32_t text_rgb = 0x111418;
inline constexpr std::uint32_t muted_rgb = 0x4B5563;          // captions, units
inline constexpr std::uint32_t border_rgb = 0x374151;
inline constexpr std::uint32_t active_rgb = 0xFFC400;         // the active stage's fill (tests look for it)
inline constexpr std::uint32_t active_border_rgb = 0xB45309;
inline constexpr std::uint32_t done_rgb = 0xD9F99D;           // a finished stage's fill
inline constexpr std::uint32_t done_border_rgb = 0x3F6212;
inline constexpr std::uint32_t pending_rgb = 0xFFFFFF;
inline constexpr std::uint32_t pending_border_rgb = 0x9CA3AF;
inline constexpr std::uint32_t packet_rgb = 0x1D4ED8;         // the request travelling between boxes
inline constexpr std::uint32_t accent_rgb = 0x1D4ED8;         // headings, links
inline constexpr std::uint32_t good_rgb = 0x15803D;           // the right number, passed checks
inline constexpr std::uint32_t bad_rgb = 0xB91C1C;            // the absurd number, errors
inline constexpr std::uint32_t error_fill_rgb = 0xFEE2E2;     // the stage whose error stopped the request (tests look for it)
inline constexpr std::uint32_t warn_rgb = 0xB45309;           // warnings
inline constexpr std::uint32_t header_rgb = 0x1F2937;         // the title bar
inline constexpr std::uint32_t header_text_rgb = 0xFFFFFF;

// The transformer panels (tests count these exact colours in screenshots).
inline constexpr std::uint32_t token_prompt_rgb = 0xDBEAFE;     // a prompt token's chip
inline constexpr std::uint32_t token_generated_rgb = 0xDCFCE7;  // a generated token's chip
inline constexpr std::uint32_t token_byte_rgb = 0xE5E7EB;       // a byte-fallback token's chip
inline constexpr std::uint32_t kv_prefill_rgb = 0x2563EB;       // KV positions written by the prefill
inline constexpr std::uint32_t kv_decode_rgb = 0x16A34A;        // KV positions written by decode steps
inline constexpr std::uint32_t kv_empty_rgb = 0xE5E7EB;         // reserved, not yet written
inline constexpr std::uint32_t prefill_bar_rgb = 0x2563EB;      // the timeline's prefill bar
inline constexpr std::uint32_t decode_bar_rgb = 0x16A34A;       // its decode bars
inline constexpr std::uint32_t sample_bar_rgb = 0x86EFAC;       // sampling, stacked on a bar
inline constexpr std::uint32_t mask_rgb = 0xC8CCD2;             // attention to the future: masked
inline constexpr std::uint32_t cached_rgb = 0x1D4ED8;           // with the KV cache
inline constexpr std::uint32_t uncached_rgb = 0xDC2626;         // without it
inline constexpr std::uint32_t canary_rgb = 0xC026D3;           // the canary version (v2) in the deployment chart
inline constexpr std::uint32_t rollback_rgb = 0xBE123C;         // the rollback marker (tests look for it)
inline constexpr std::uint32_t lab_a_rgb = 0x1D4ED8;            // the serving lab's first series (measured)
inline constexpr std::uint32_t lab_b_rgb = 0xB45309;            // its second (predicted, warm, the reader)
inline constexpr std::uint32_t lab_c_rgb = 0x15803D;            // its third

inline ImU32 col(std::uint32_t rgb, int alpha = 255) {
    return IM_COL32((rgb >> 16) & 0xFF, (rgb >> 8) & 0xFF, rgb & 0xFF, alpha);
}
inline ImVec4 vec(std::uint32_t rgb, float alpha = 1.0f) {
    return ImVec4(((rgb >> 16) & 0xFF) / 255.0f, ((rgb >> 8) & 0xFF) / 255.0f, (rgb & 0xFF) / 255.0f, alpha);
}
inline ImVec4 background() { return vec(background_rgb); }

// Applies colours, rounding and spacing to ImGui's style, scaled for a font
// of `font_px` pixels (spacing grows with the font).
void apply(float font_px);

}  // namespace sixstep::ui::theme
