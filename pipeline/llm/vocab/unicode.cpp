// UTF-8, categories and the GPT-2 byte mapping (see unicode.h).
#include "pipeline/llm/vocab/unicode.h"

#include <algorithm>
#include <array>

namespace sixstep::llm {

UnicodeCategory unicode_category(uint32_t cp) {
    using unicode_detail::kCategoryRanges;
    if (cp < 0x80) {  // fast path for ASCII
        if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return UnicodeCategory::Letter;
        if (cp >= '0' && cp <= '9') return UnicodeCategory::Number;
    }
    const auto* end = kCategoryRanges + unicode_detail::kCategoryRangeCount;
    // first range whose last >= cp
    const auto* it = std::lower_bound(kCategoryRanges, end, cp,
                                      [](const unicode_detail::CategoryRange& r, uint32_t c) { return r.last < c; });
    if (it == end || it->first > cp) return UnicodeCategory::Other;
    return static_cast<UnicodeCategory>(it->category);
}

bool unicode_is_whitespace(uint32_t cp) {
    // The Unicode White_Space property (PropList.txt): a short, stable list.
    switch (cp) {
        case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0:
        case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
            return true;
        default:
            return cp >= 0x2000 && cp <= 0x200A;
    }
}

size_t utf8_valid_length(std::string_view s, size_t i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) return 1;
    const size_t n = utf8_sequence_length(c);
    if (n == 1 || i + n > s.size()) return 0;  // stray continuation / invalid lead, or cut short
    for (size_t k = 1; k < n; ++k)
        if ((b(i + k) & 0xc0) != 0x80) return 0;
    uint32_t cp = 0;
    if (n == 2) cp = ((c & 0x1fu) << 6) | (b(i + 1) & 0x3fu);
    if (n == 3) cp = ((c & 0x0fu) << 12) | ((b(i + 1) & 0x3fu) << 6) | (b(i + 2) & 0x3fu);
    if (n == 4) cp = ((c & 0x07u) << 18) | ((b(i + 1) & 0x3fu) << 12) | ((b(i + 2) & 0x3fu) << 6) | (b(i + 3) & 0x3fu);
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong, too big, surrogate
    return n;
}

std::vector<Utf8Char> utf8_decode(std::string_view s) {
    std::vector<Utf8Char> out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8_valid_length(s, i);
        if (n == 0) {
            out.push_back({kInvalidCodepoint, static_cast<uint32_t>(i), 1});
            ++i;
            continue;
        }
        const auto c = static_cast<unsigned char>(s[i]);
        uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1fu) : n == 3 ? (c & 0x0fu) : (c & 0x07u);
        for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3fu);
        out.push_back({cp, static_cast<uint32_t>(i), static_cast<uint32_t>(n)});
        i += n;
    }
    return out;
}

void utf8_append(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

size_t utf8_incomplete_tail(std::string_view s) {
    // Find the last lead byte within the last 3 bytes; the tail is incomplete
    // when that lead needs more bytes than are present and every byte present
    // so far could still be part of a valid sequence.
    const size_t n = s.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        const auto c = static_cast<unsigned char>(s[n - back]);
        if ((c & 0xc0) == 0x80) continue;  // continuation byte: look further back
        if (c < 0xc2 || c > 0xf4) return 0;  // ASCII, or a lead byte no valid sequence uses
        const size_t need = utf8_sequence_length(c);
        if (need <= back) return 0;  // the sequence is complete (valid or not)
        if (back >= 2) {
            // the second byte's allowed range depends on the lead (no overlongs,
            // surrogates or code points past U+10FFFF)
            const auto c1 = static_cast<unsigned char>(s[n - back + 1]);
            const unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
            const unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
            if (c1 < lo || c1 > hi) return 0;
        }
        return back;
    }
    return 0;
}

namespace {

struct Gpt2Tables {
    std::array<uint32_t, 256> byte_to_cp{};
    std::array<std::string, 256> byte_to_utf8;
    std::array<int16_t, 256 + 68> cp_to_byte{};  // the 256 code points used are all below U+0144
    Gpt2Tables() {
        cp_to_byte.fill(-1);
        uint32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
            byte_to_cp[b] = printable ? static_cast<uint32_t>(b) : next++;
            utf8_append(byte_to_utf8[b], byte_to_cp[b]);
            cp_to_byte[byte_to_cp[b]] = static_cast<int16_t>(b);
        }
    }
};

const Gpt2Tables& gpt2_tables() {
    static const Gpt2Tables t;
    return t;
}

}  // namespace

uint32_t gpt2_byte_to_codepoint(uint8_t b) { return gpt2_tables().byte_to_cp[b]; }
const std::string& gpt2_byte_to_utf8(uint8_t b) { return gpt2_tables().byte_to_utf8[b]; }

int gpt2_codepoint_to_byte(uint32_t cp) {
    const auto& t = gpt2_tables();
    return cp < t.cp_to_byte.size() ? t.cp_to_byte[cp] : -1;
}

}  // namespace sixstep::llm
