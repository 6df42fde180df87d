// The session: commands in, snapshots out, engine work on a worker thread.
#include <doctest/doctest.h>

#include "temp_dir.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "app/core/session.h"

namespace fs = std::filesystem;
using namespace sixstep;

namespace session_test {

namespace {
const std::string lesson1 = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/01-six-steps.yaml";
const std::string lesson2 = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/02-training-serving-skew.yaml";
const std::string lesson4 = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/04-one-token-at-a-time.yaml";

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
}  // namespace

TEST_CASE("session: open runs step 1, next, previous, restart and go_to move through the lesson") {
    app::Session s;
    s.open(lesson1);
    s.wait_idle();
    auto snap = s.snapshot();
    REQUIRE(snap->has_lesson);
    CHECK(snap->state.position == 1);
    const int n = snap->state.step_count;
    REQUIRE(n >= 4);
    CHECK(snap->step_titles.size() == static_cast<size_t>(n));
    CHECK_FALSE(snap->lesson_text.empty());

    s.next();
    s.next();
    s.next();
    s.wait_idle();
    CHECK(s.snapshot()->state.position == 4);
    s.previous();
    s.wait_idle();
    CHECK(s.snapshot()->state.position == 3);
    s.restart();
    s.wait_idle();
    CHECK(s.snapshot()->state.position == 1);
    s.previous();  // never before step 1
    s.wait_idle();
    CHECK(s.snapshot()->state.position == 1);
    s.go_to(n);
    s.next();  // no-op at the end
    s.wait_idle();
    snap = s.snapshot();
    CHECK(snap->state.position == n);
    CHECK(snap->state.response.has_value());
    CHECK(snap->version > 1);
}

TEST_CASE("session: snapshots are immutable, a held one never changes under the UI") {
    app::Session s;
    s.open(lesson1);
    s.wait_idle();
    auto held = s.snapshot();
    const int before = held->state.position;
    s.next();
    s.wait_idle();
    CHECK(held->state.position == before);
    CHECK(s.snapshot()->state.position == before + 1);
}

TEST_CASE("session: the language-model lesson runs its thread pool from the worker, snapshots read beside it") {
    // Lesson 4 decodes on two threads (model.threads: 2): the pool's threads
    // start and run inside the session's worker while this thread keeps
    // reading snapshots, as a UI does every frame (the ThreadSanitizer run,
    // preset tsan, watches exactly this).
    app::Session s;
    s.open(lesson4);
    s.wait_idle();
    const int n = s.snapshot()->state.step_count;
    REQUIRE(n >= 3);
    for (int i = 1; i < n; ++i) s.next();
    std::uint64_t last_version = 0;
    bool versions_grow = true;
    for (int frame = 0; frame < 20000; ++frame) {  // at most ~20 s of 1 ms "frames"
        const auto snap = s.snapshot();
        versions_grow = versions_grow && snap->version >= last_version;
        last_version = snap->version;
        if (snap->state.position == n && !snap->busy) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(versions_grow);
    s.wait_idle();
    const auto snap = s.snapshot();
    REQUIRE(snap->has_lesson);
    CHECK(snap->state.position == n);
    CHECK_FALSE(snap->state.error.has_value());
    REQUIRE(snap->state.response.has_value());
    CHECK(snap->state.response->text.find(" mat.") != std::string::npos);
    for (const auto& entry : snap->log) CHECK_MESSAGE(entry.level != app::LogEntry::Level::error, entry.text);
    // Back one step: the lesson replays on the worker, the pool runs again.
    s.previous();
    s.wait_idle();
    CHECK(s.snapshot()->state.position == n - 1);
    CHECK(format_value(*s.snapshot()->state.trace.lookup("postprocess.token_piece")) == ".");
}

TEST_CASE("session: lesson 2 records the right answer and then the absurd one") {
    app::Session s;
    s.open(lesson2);
    s.next();
    s.wait_idle();
    auto snap = s.snapshot();
    REQUIRE(snap->answers.size() >= 2);
    const auto& right = snap->answers[snap->answers.size() - 2];
    const auto& absurd = snap->answers.back();
    // The model's description marks normalization OFF as a caution.
    CHECK(right.cautions.empty());
    CHECK(right.checked == "normalization");
    CHECK(absurd.cautions == std::vector<std::string>{"normalization OFF"});
    auto minutes = [](const app::AnswerRecord& a) {
        for (const auto& f : a.answer)
            if (f.key == "minutes") return std::get<double>(f.value);
        FAIL("no minutes in the answer");
        return 0.0;
    };
    CHECK(minutes(right) == doctest::Approx(11));
    CHECK(minutes(absurd) > 1000);
}

TEST_CASE("session: a knob recomputes the request, a bad value is logged, not thrown") {
    app::Session s;
    s.open(lesson1);
    s.go_to(s.snapshot()->state.step_count > 0 ? 99 : 99);  // clamps to the last step
    s.wait_idle();
    s.turn_knob("distance", "5 km");
    s.wait_idle();
    auto snap = s.snapshot();
    const auto v = snap->state.trace.lookup("forward.raw_output");
    REQUIRE(v.has_value());
    CHECK(std::get<double>(*v) > 11);
    const size_t logged = snap->log.size();
    s.turn_knob("no_such_knob", "1");
    s.wait_idle();
    snap = s.snapshot();
    REQUIRE(snap->log.size() > logged);
    CHECK(snap->log.back().level == app::LogEntry::Level::error);
    CHECK(snap->has_lesson);
}

TEST_CASE("session: a step that succeeds after one that failed says so, so the one-line log drops the old error") {
    const auto dir = sixstep::test::process_temp_dir("session-stale");
    const fs::path path = dir / "stale.yaml";
    // Step 1 asks for more tokens than the context holds: only a run finds it.
    std::ofstream(path) << R"(title: t
model: {kind: llm, random: tiny, threads: 1}
steps:
  - request: {prompt: "Once", max_tokens: 4000}
    run: all
  - request: {prompt: "Once", max_tokens: 2}
    run: all
    expect: {response.n_prompt: {above: 0}}
  - say: nothing to check
)";
    app::Session s;
    s.open(path.string());
    s.wait_idle();
    auto snap = s.snapshot();
    REQUIRE(snap->state.position == 1);
    REQUIRE_FALSE(snap->log.empty());
    // step 1: too many tokens for the context — an error, and the check that no error was expected
    CHECK(snap->log.back().level != app::LogEntry::Level::info);
    CHECK(snap->log.back().text.find("step 1: ") == 0);
    s.next();
    s.wait_idle();
    snap = s.snapshot();
    CHECK(snap->log.back().level == app::LogEntry::Level::info);
    CHECK(snap->log.back().text == "step 2: done, 1 check held");
    s.next();
    s.wait_idle();
    CHECK(s.snapshot()->log.back().text == "step 3: done");
    s.go_to(1);  // back to the failing step: its error again, no "done"
    s.wait_idle();
    CHECK(s.snapshot()->log.back().level != app::LogEntry::Level::info);
    CHECK(s.snapshot()->log.back().text.find("step 1: ") == 0);
    s.go_to(2);
    s.wait_idle();
    CHECK(s.snapshot()->log.back().text == "step 2: done, 1 check held");
}

TEST_CASE("session: reload keeps the step, a broken edit keeps the last good lesson and shows the error") {
    const auto dir = sixstep::test::process_temp_dir("session");
    fs::create_directories(dir);
    const std::string copy = (dir / "lesson.yaml").string();
    const std::string good = read(lesson1);
    { std::ofstream(copy) << good; }

    app::Session s;
    s.open(copy);
    s.next();
    s.next();
    s.wait_idle();
    REQUIRE(s.snapshot()->state.position == 3);

    { std::ofstream(copy) << "title: [broken\n"; }
    s.reload();
    s.wait_idle();
    auto snap = s.snapshot();
    CHECK(snap->has_lesson);                      // the last good lesson stays
    CHECK(snap->state.position == 3);
    CHECK(snap->load_error.find(copy) != std::string::npos);  // file:line:column
    CHECK(snap->log.back().level == app::LogEntry::Level::error);

    // A fixed edit: the lesson's title (its first line) replaced.
    std::string edited = good;
    REQUIRE(edited.rfind("title:", 0) == 0);
    edited.replace(0, edited.find('\n'), "title: \"Edited: one request\"");
    { std::ofstream(copy) << edited; }
    s.reload();
    s.wait_idle();
    snap = s.snapshot();
    CHECK(snap->load_error.empty());
    CHECK(snap->state.position == 3);
    CHECK(snap->state.title.find("Edited:") != std::string::npos);
    std::error_code ec;
    fs::remove_all(dir, ec);
}

TEST_CASE("session: scan lists the bundled lessons with title, language and steps") {
    app::Session s;
    s.scan(std::string(SIXSTEP_SOURCE_DIR) + "/lessons");
    s.wait_idle();
    auto snap = s.snapshot();
    REQUIRE(snap->catalog.size() >= 4);
    bool zh = false;
    for (const auto& c : snap->catalog) {
        CAPTURE(c.path);
        CHECK(c.error.empty());
        CHECK_FALSE(c.title.empty());
        CHECK(c.steps > 0);
        zh = zh || c.language == "zh";
    }
    CHECK(zh);
}

}  // namespace session_test
