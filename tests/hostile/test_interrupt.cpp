// Long work shows progress and stops cleanly on Ctrl+C: exit code 130, and no
// half-written output file.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "hostile.h"

using namespace sixstep::test;

namespace {

pid_t spawn_sixstep(const std::vector<std::string>& args, const std::string& log) {
    return sixstep::test::spawn_sixstep(args, "", log, log);
}

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Waits until `log` contains `text` (the work is under way), up to 2 minutes
// (a busy machine is slow).
bool wait_for(const std::string& log, const std::string& text) {
    for (int i = 0; i < 2400; ++i) {
        if (contains(slurp(log), text)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

// Ctrl+C, then the exit code (−1 if it did not exit within 30 s).
int interrupt_and_wait(pid_t pid) {
    ::kill(pid, SIGINT);
    for (int i = 0; i < 600; ++i) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return -1;
}

}  // namespace

TEST_CASE("interrupt: a long training lesson shows progress with --progress and stops on Ctrl+C with 130") {
    std::string yaml = "title: Long\nbudget: {train_steps: 1000000000}\nsteps:\n  - &t {train: 1000000}\n";
    for (int i = 0; i < 500; ++i) yaml += "  - *t\n";
    const std::string lesson = write_text("long-training.yaml", yaml);
    const std::string log = (scratch() / "training.log").string();
    const pid_t pid = spawn_sixstep({"--headless", "--progress", lesson}, log);
    REQUIRE(pid > 0);
    REQUIRE(wait_for(log, "sixstep: training (steps): "));
    CHECK(interrupt_and_wait(pid) == 130);
    CHECK(contains(slurp(log), "sixstep: interrupted"));
}

TEST_CASE("interrupt: no progress lines without --progress when stderr is not a terminal") {
    const std::string lesson = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/03-training-vs-inference.yaml";
    const auto r = run_sixstep("--headless '" + lesson + "'", 60);
    CHECK(r.exit_code == 0);
    CHECK_FALSE(contains(r.output, "training (steps)"));
}

TEST_CASE("interrupt: Ctrl+C while writing a random model leaves no file behind") {
    const fs::path dir = scratch() / "interrupted";
    fs::create_directories(dir);
    const std::string out = (dir / "r1b.gguf").string();
    const std::string log = (scratch() / "bench.log").string();
    const pid_t pid = spawn_sixstep({"bench", "--random", "1b", "--type", "q8_0", "--out", out, "--progress"}, log);
    REQUIRE(pid > 0);
    // 1.1 G random weights take seconds to generate, so the progress line
    // shows while the work is surely under way (110M was over before it drew).
    REQUIRE(wait_for(log, "sixstep: generating random weights (matrices): "));
    CHECK(interrupt_and_wait(pid) == 130);
    CHECK(fs::is_empty(dir));
}

TEST_CASE("interrupt: a batch sweep shows progress with --progress and stops on Ctrl+C with 130") {
    // Before: the sweep drew its own line on a terminal only, and nothing in
    // it looked at Ctrl+C, so it ran every batch size to the end.
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    const std::string log = (scratch() / "sweep.log").string();
    const pid_t pid = spawn_sixstep({"bench", "-m", model, "--batch", "1,2,4,8,16,32,64", "--context", "8", "--steps",
                                     "240", "-r", "100", "-t", "1", "--progress"},
                                    log);
    REQUIRE(pid > 0);
    REQUIRE(wait_for(log, "sixstep: batch sweep: round "));
    CHECK(interrupt_and_wait(pid) == 130);
    CHECK(contains(slurp(log), "sixstep: interrupted"));
}

// The serving lab's long runs: each draws a progress line with --progress and
// stops on Ctrl+C. Before, none of these commands took --progress, coldstart
// reported nothing at all, and perplexity counted documents, so one long text
// read "0 of 1" until it was done.
TEST_CASE("interrupt: traffic, perplexity and coldstart show progress with --progress and stop on Ctrl+C with 130") {
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    std::string story;
    while (story.size() < (2u << 20)) story += "Once upon a time there was a little cat who liked to sit on the mat. ";
    const std::string text = write_text("one-long-story.txt", story);
    struct Run {
        std::vector<std::string> args;
        std::string line;
    };
    const Run runs[] = {
        {{"traffic", "-m", model, "--count", "100000", "--max-tokens", "480", "--ignore-eos", "--rate", "1e9", "-t", "1",
          "--progress"},
         "sixstep: serving traffic (requests finished): "},
        {{"perplexity", "-m", model, "--text", text, "-t", "1", "--progress"}, "sixstep: perplexity (tokens scored): "},
        {{"coldstart", "-m", model, "--no-drop", "--requests", "1000", "-n", "500", "-t", "1", "--progress"},
         "sixstep: cold start (requests served): "},
    };
    for (const Run& run : runs) {
        CAPTURE(run.args[0]);
        const std::string log = (scratch() / (run.args[0] + "-progress.log")).string();
        const pid_t pid = spawn_sixstep(run.args, log);
        REQUIRE(pid > 0);
        CHECK(wait_for(log, run.line));
        CHECK(interrupt_and_wait(pid) == 130);
        CHECK(contains(slurp(log), "sixstep: interrupted"));
    }
}
