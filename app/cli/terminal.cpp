#include "app/cli/terminal.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <unistd.h>

#include "pipeline/core/progress.h"
#include "pipeline/core/text.h"

namespace sixstep::cli {

namespace {

bool g_progress_forced = false;

class TerminalProgress : public ProgressSink {
public:
    explicit TerminalProgress(bool tty) : tty_(tty) {}

    void progress(std::string_view task, std::uint64_t done, std::uint64_t total) override {
        using namespace std::chrono_literals;
        std::lock_guard<std::mutex> lock(mutex_);
        const auto now = Clock::now();
        // The half-second grace before the first line counts from the start
        // of the work (the first report since a clear), not from each change
        // of its words: a sweep whose words change with every short run
        // ("round 1 of 3, batch 8") drew nothing at all.
        if (task_.empty()) {
            started_ = now;
            last_draw_ = {};
        }
        task_ = task;
        if (now - started_ < 500ms || now - last_draw_ < (tty_ ? 100ms : 1000ms)) return;
        last_draw_ = now;
        const std::string line =
            total ? fmt::format("{}: {} of {} ({:.0f}%)", printable(task), done, total, 100.0 * done / total)
                  : fmt::format("{}: {}", printable(task), done);
        if (tty_) {
            std::fprintf(stderr, "\r\x1b[K%s%s", line.c_str(), total && done >= total ? "" : " … (Ctrl+C stops)");
        } else {
            std::fprintf(stderr, "sixstep: %s\n", line.c_str());
        }
        std::fflush(stderr);
        drawn_ = true;
    }

    void clear() override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (drawn_ && tty_) {
            std::fputs("\r\x1b[K", stderr);
            std::fflush(stderr);
        }
        drawn_ = false;
        task_.clear();
    }

private:
    using Clock = std::chrono::steady_clock;
    const bool tty_;
    std::mutex mutex_;
    std::string task_;
    Clock::time_point started_, last_draw_;
    bool drawn_ = false;
};

extern "C" void on_interrupt(int) { request_cancel(); }

}  // namespace

void add_progress_option(CLI::App* command) {
    command->add_flag("--progress", g_progress_forced,
                      "Show progress of long work on stderr even when it is not a terminal");
}

void start_terminal_front_end() {
    // SA_RESETHAND: the first Ctrl+C asks politely; the second one kills.
    // A process started with SIGINT ignored (a background job, nohup) keeps
    // ignoring it, as the shell meant.
    struct sigaction old {};
    if (sigaction(SIGINT, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) {
        struct sigaction sa {};
        sa.sa_handler = on_interrupt;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        sigaction(SIGINT, &sa, nullptr);
    }

    const bool tty = ::isatty(STDERR_FILENO) == 1;
    // A terminal that cannot erase a line (TERM=dumb: Emacs' shell, some CI
    // logs) gets the plain lines a log file gets, not escape codes.
    const char* term = std::getenv("TERM");
    const bool can_redraw = tty && !(term && std::string_view(term) == "dumb");
    if (tty || g_progress_forced) {
        static TerminalProgress sink(can_redraw);
        set_progress_sink(&sink);
    }
}

}  // namespace sixstep::cli
