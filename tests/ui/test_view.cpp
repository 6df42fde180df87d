// Pieces of the UI that need no GL context: key names, text reflow, number
// formatting, the layout.
#include <doctest/doctest.h>

#include <stdexcept>

#include "app/ui/format.h"
#include "app/ui/layout.h"
#include "app/ui/presenter_keys.h"

using namespace sixstep;

TEST_CASE("presenter keys: autoplay names parse, an unknown one is an error") {
    const auto keys = ui::parse_keys("right space left home end f11 ctrl+= ctrl+- ctrl+r");
    CHECK(keys.size() == 9);
    CHECK(keys[6].mods != 0);
    CHECK(keys[0].mods == 0);
    CHECK_THROWS_AS(ui::parse_keys("right sideways"), std::invalid_argument);
}

TEST_CASE("reflow: wrapped lines join, blank lines and list items stay, Chinese joins without a space") {
    CHECK(ui::reflow("one\ntwo\n") == "one two");
    CHECK(ui::reflow("one\n\ntwo") == "one\n\ntwo");
    CHECK(ui::reflow("items:\n- a\n- b") == "items:\n- a\n- b");
    CHECK(ui::reflow("第一行\n第二行") == "第一行第二行");
}

TEST_CASE("fields: times with three significant digits, one of a counted thing in the singular") {
    const auto text = [](double v, const char* unit) { return ui::field_text(Field{"k", Value{v}, unit, ""}); };
    CHECK(text(3.91141, "ms") == "3.91 ms");
    CHECK(text(0.0123456, "ms") == "0.0123 ms");
    CHECK(text(412.34, "ms") == "412 ms");
    CHECK(text(1234.5, "ms") == "1235 ms");
    CHECK(text(12, "ms") == "12 ms");
    CHECK(text(3.14159, "km") == "3.14159 km");  // not a time: as precise as before
    CHECK(text(1, "tokens") == "1 token");
    CHECK(text(6, "tokens") == "6 tokens");
    CHECK(text(0, "tokens") == "0 tokens");
    CHECK(text(1, "positions") == "1 position");
    CHECK(text(1, "min") == "1 min");
}

TEST_CASE("pretty numbers use a real minus sign") {
    CHECK(ui::pretty_number(-2) == "\u22122");
    CHECK(ui::pretty_number(11) == "11");
    CHECK(ui::pretty_value(Value{std::vector<double>{5, 2, 10, -2}}) == "[5, 2, 10, \u22122]");
}

TEST_CASE("layout: the six boxes fit the diagram, in order, without overlapping") {
    for (auto [w, h] : {std::pair{1280.0f, 720.0f}, std::pair{1920.0f, 1080.0f}, std::pair{1024.0f, 768.0f}}) {
        const float f = 23.0f * h / 720.0f;
        const ui::Layout l = ui::compute_layout(w, h, f, 3, 1);
        CHECK(l.diagram.bottom() < l.narration.y);
        CHECK(l.narration.right() < l.inspector.x);
        CHECK(l.knobs.bottom() <= l.log.y);
        for (int i = 0; i < 6; ++i) {
            const ui::Rect b = ui::stage_box(l.diagram, i, f);
            CHECK(b.x >= l.diagram.x);
            CHECK(b.right() <= l.diagram.right());
            CHECK(b.bottom() <= l.diagram.bottom());
            if (i > 0) CHECK(b.x > ui::stage_box(l.diagram, i - 1, f).right());
        }
    }
}
