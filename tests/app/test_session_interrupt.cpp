// Long work in the window: the session publishes the worker's progress while
// a command runs, and interrupt() (the window's Esc) stops it, leaves the
// step undone, and the next command works.
#include <doctest/doctest.h>

#include "long_work.h"
#include "temp_dir.h"

#include <chrono>
#include <fstream>
#include <functional>
#include <filesystem>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "app/core/session.h"
#include "pipeline/core/progress.h"

using namespace sixstep;

namespace {

std::string write_lesson(const std::string& name, const std::string& yaml) {
    const auto path = sixstep::test::process_temp_dir("session-interrupt") / name;
    std::ofstream(path) << yaml;
    return path.string();
}

// Polls the session's work status until `until` holds while the command that
// was posted last still runs. Not a timed check: a command that ends first
// (the work was not long after all) fails the test, however slow the machine.
app::WorkStatus wait_for_work(app::Session& s, std::uint64_t version_before,
                              const std::function<bool(const app::WorkStatus&)>& until) {
    for (;;) {
        const app::WorkStatus w = s.work();
        if (w.running && until(w)) return w;
        if (s.snapshot()->version > version_before) return s.work();  // the command finished: running is false
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

bool logged(const app::Snapshot& snap, const std::string& text) {
    for (const auto& e : snap.log)
        if (e.text.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("session: a long training step shows its progress, Esc stops it, the step stays undone") {
    const std::string lesson = sixstep::test::long_training_lesson("session-interrupt");
    app::Session s;
    s.open(lesson);
    s.wait_idle();
    INFO(s.snapshot()->load_error);
    REQUIRE(s.snapshot()->state.position == 1);
    REQUIRE(s.snapshot()->state.training.steps() == 2);

    const std::uint64_t before = s.snapshot()->version;
    s.next();
    // The trainer reports the steps done so far, with no total.
    const app::WorkStatus w = wait_for_work(s, before, [](const app::WorkStatus& now) {
        return now.progress.task == "training (steps)" && now.progress.done > 2;
    });
    REQUIRE(w.running);
    CHECK(w.progress.total == 0);
    CHECK_FALSE(w.stopping);

    std::thread([&] { s.interrupt(); }).join();  // as the UI thread would
    s.wait_idle();
    const auto snap = s.snapshot();
    CHECK(snap->state.position == 1);             // step 2 left undone
    CHECK(snap->state.training.steps() == 2);     // its training rolled back with it
    REQUIRE_FALSE(snap->log.empty());
    CHECK(snap->log.back().text == "interrupted: step 2 is not done (\u2192 runs it again)");
    CHECK(snap->log.back().level == app::LogEntry::Level::warning);
    const app::WorkStatus after = s.work();
    CHECK_FALSE(after.running);
    CHECK_FALSE(after.stopping);
    CHECK(after.progress.task.empty());
    CHECK_FALSE(cancel_requested());  // the next command must not stop at once

    s.restart();
    s.wait_idle();
    CHECK(s.snapshot()->state.position == 1);
    CHECK(s.snapshot()->log.back().text == "step 1: done");
}

// Three → pressed during a long step, then Esc: the presenter wants the
// window back, not the next steps run one after another.
TEST_CASE("session: Esc drops the steps queued behind the one it stops, and keeps the window's own commands") {
    const std::string lesson = sixstep::test::long_training_lesson("session-interrupt-queued");
    app::Session s;
    s.open(lesson);
    s.wait_idle();
    REQUIRE(s.snapshot()->state.position == 1);
    const std::uint64_t before = s.snapshot()->version;
    s.next();
    const app::WorkStatus w = wait_for_work(
        s, before, [](const app::WorkStatus& now) { return now.progress.task == "training (steps)"; });
    REQUIRE(w.running);
    s.next();
    s.restart();
    s.turn_knob("distance", "5 km");
    s.log(app::LogEntry::Level::info, "the window's own line");
    std::thread([&] { s.interrupt(); }).join();
    s.wait_idle();
    const auto snap = s.snapshot();
    CHECK(snap->state.position == 1);  // nothing queued ran
    CHECK(logged(*snap, "interrupted: step 2 is not done"));
    CHECK(logged(*snap, "Esc: 3 waiting commands dropped"));
    CHECK(logged(*snap, "the window's own line"));
    CHECK_FALSE(logged(*snap, "distance = 5 km"));
}

// Ctrl+R (or ←) replays the lesson up to where it is; Esc during the replay
// must leave the class where it was, not at the step before the long one.
TEST_CASE("session: Esc during a reload's replay keeps the lesson as it was, at its step") {
    const std::string long_lesson = sixstep::test::long_training_lesson("session-interrupt-replay");
    const std::string lesson = write_lesson("replayed.yaml", "title: Quick\nsteps:\n  - title: One\n    train: 2\n"
                                                             "  - title: Two\n    say: the second step\n");
    app::Session s;
    s.open(lesson);
    s.next();
    s.wait_idle();
    REQUIRE(s.snapshot()->state.position == 2);
    // The file now trains for minutes in step 1 (the long lesson's data, copied).
    std::ifstream in(long_lesson);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto two = text.find("  - title: A million more");
    REQUIRE(two != std::string::npos);
    text = text.substr(0, text.find("  - title: Two steps")) + "  - title: A million first\n    train: {steps: 1000000, "
           "from: zero, data: \"" + (std::filesystem::path(long_lesson).parent_path() / "long-training.csv").string() +
           "\"}\n  - title: Then\n    say: more\n";
    std::ofstream(lesson) << text;
    const std::uint64_t before = s.snapshot()->version;
    s.reload();
    const app::WorkStatus w = wait_for_work(
        s, before, [](const app::WorkStatus& now) { return now.progress.task == "training (steps)"; });
    REQUIRE(w.running);
    std::thread([&] { s.interrupt(); }).join();
    s.wait_idle();
    const auto snap = s.snapshot();
    CHECK(snap->state.position == 2);                     // where the class was
    CHECK(snap->state.title == "Quick");                  // the lesson as it was
    CHECK(snap->step_titles == std::vector<std::string>{"One", "Two"});
    CHECK(snap->log.back().text == "interrupted: the lesson stays at step 2");
}

TEST_CASE("session: a serving lab's batch sweep reports per batch size, and the lesson goes on after an interrupt") {
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    // 7 batch sizes × 100 runs × 500 decode steps: many minutes on any machine.
    const std::string lesson = write_lesson("long-sweep.yaml", R"(title: Long sweep
budget: {forward_tokens: 1000000000}
model: {kind: serving, file: ")" + model + R"(", threads: 1}
steps:
  - title: The sweep
    request: {experiment: batch_sweep, batch_sizes: "1,2,4,8,16,32,64", context: 8, steps: 500, repetitions: 100}
  - title: Measure
    run: forward
)");
    app::Session s;
    s.open(lesson);
    s.wait_idle();
    REQUIRE(s.snapshot()->state.position == 1);
    REQUIRE_FALSE(s.snapshot()->state.error);

    s.interrupt();  // idle: nothing to stop, and nothing left armed for the next command
    CHECK_FALSE(cancel_requested());
    CHECK_FALSE(s.work().running);

    const std::uint64_t before = s.snapshot()->version;
    s.next();
    const app::WorkStatus w = wait_for_work(
        s, before, [](const app::WorkStatus& now) { return now.progress.task.rfind("batch sweep: round ", 0) == 0; });
    REQUIRE(w.running);
    CHECK(w.progress.total == 700);  // runs: 100 rounds of 7 batch sizes
    CHECK(w.progress.done <= w.progress.total);

    std::thread([&] { s.interrupt(); }).join();
    s.wait_idle();
    auto snap = s.snapshot();
    CHECK(snap->state.position == 1);
    CHECK(logged(*snap, "interrupted: step 2 is not done"));
    CHECK_FALSE(s.work().running);

    // A short sweep instead: the same step now runs to the end.
    s.turn_knob("steps", "2");
    s.turn_knob("repetitions", "1");
    s.turn_knob("batch_sizes", "1,2");
    s.next();
    s.wait_idle();
    snap = s.snapshot();
    CHECK(snap->state.position == 2);
    CHECK_FALSE(snap->state.error);
    CHECK(snap->log.back().text == "step 2: done");
}
