// The paths a lesson may expect on: each kind's own and the interpreter's;
// lessons/README.md names none that no kind declares.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "app/core/lesson_paths.h"
#include "pipeline/core/error.h"
#include "pipeline/models.h"

using namespace sixstep;
using namespace sixstep::app;

namespace {
bool has(const std::vector<PathInfo>& paths, const std::string& p) {
    for (const auto& i : paths)
        if (i.path == p) return true;
    return false;
}
}  // namespace

TEST_CASE("lesson paths: the kind's own, served.* for each numeric response field, error") {
    const auto delivery = lesson_paths(model_description("delivery"));
    CHECK(has(delivery, "forward.raw_output"));
    CHECK(has(delivery, "train.loss"));
    CHECK(has(delivery, "served.minutes"));
    CHECK(has(delivery, "served.count"));
    CHECK(has(delivery, "error"));
    CHECK(!has(delivery, "served.text"));  // text is not a number
    const auto llm = lesson_paths(model_description("llm"));
    CHECK(has(llm, "output.top1_piece"));
    CHECK(has(llm, "served.ttft_ms"));
    CHECK(!has(llm, "train.loss"));
    CHECK(!has(llm, "forward.raw_output"));
}

TEST_CASE("an unknown path names the kind, the nearest path and where to look") {
    CHECK_NOTHROW(check_lesson_path(model_description("llm"), "respond.ttft_ms"));
    CHECK_THROWS_WITH_AS(check_lesson_path(model_description("llm"), "forward.kv_used_token"),
                         "unknown path \"forward.kv_used_token\" for the llm model \u2014 did you mean \"forward.kv_used_tokens\"? "
                         "(`sixstep paths --model llm` lists them)",
                         Error);
}

TEST_CASE("lessons/README.md names only paths some model kind declares") {
    std::ifstream f(std::string(SIXSTEP_SOURCE_DIR) + "/lessons/README.md");
    REQUIRE(f);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    // `forward.raw_output`, `train.grad_bias`, … in backquotes.
    const std::regex path_re(R"(`((request|load|forward|output|postprocess|respond|response|model|train|served)\.[a-z_0-9]+)`)");
    int found = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), path_re); it != std::sregex_iterator(); ++it) {
        const std::string p = (*it)[1];
        CAPTURE(p);
        bool declared = false;
        for (const auto& kind : model_kinds()) declared |= has(lesson_paths(model_description(kind)), p);
        CHECK(declared);
        ++found;
    }
    CHECK(found > 20);
}
