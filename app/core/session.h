// The session: owns the lesson interpreter and runs it on a worker thread, so
// a front end never blocks on engine work. Commands go in (next, back, knob,
// reload…); after each one the worker publishes an immutable Snapshot that
// the front end picks up with one short lock per frame.
//
//     Session s;
//     s.open("lessons/01-six-steps.yaml");   // loads and runs step 1
//     s.next();                              // returns at once
//     auto snap = s.snapshot();              // every frame: draw from *snap
//     s.wait_idle();                         // screenshots and tests only
//
// The UI keeps only view state (selected stage, font size); everything it
// shows comes from the snapshot, and, while a command runs, from work(): the
// latest progress report of its long work (a sweep, training, a model load),
// which a snapshot published only after each command cannot carry.
// interrupt() stops that work (the window's Esc).
//
// Progress and interruption are process-wide (pipeline/core/progress.h): a
// session installs its ProgressBoard as the process's sink for its lifetime,
// so one session at a time shows progress.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/core/interpreter.h"
#include "app/core/lesson.h"
#include "app/core/progress_board.h"

namespace sixstep::app {

struct LogEntry {
    enum class Level { info, warning, error };
    Level level = Level::info;
    double time_s = 0;  // seconds since the session started
    std::string text;
};

// One answered request of this lesson run, so a later step can show its
// answer beside an earlier one (lesson 2's skew: 6005 beside 11).
struct AnswerRecord {
    int step = 0;                       // 1-based lesson step that produced it
    Request request;                    // as asked: distance "3000 m", congestion "0", express_lane "0"
    std::vector<Field> answer;          // the respond stage's outputs (its headline: "minutes" = 11)
    std::vector<std::string> cautions;  // settings that make it untrustworthy: "normalization OFF", "dropout ON"
    std::string checked;                // when there are none, what was checked: "normalization"
    std::vector<std::string> warnings;
    // How it was served, for cards of the same request: "cold load",
    // "reused" (the weights already loaded), "100 served", "2 answers of 20".
    std::string how;
};

// A lesson on disk, for the picker.
struct CatalogEntry {
    std::string path;
    std::string title;
    std::string language;
    int steps = 0;
    std::string error;  // non-empty: the file does not load (shown, not hidden)
};

struct Snapshot {
    std::uint64_t version = 0;      // grows with every publish
    bool has_lesson = false;
    LessonState state;              // the interpreter's picture (valid when has_lesson)
    std::string lesson_text;        // every word of the lesson (for font glyph ranges)
    std::vector<std::string> step_titles;
    std::string load_error;         // the last open/reload failure; the last good lesson stays
    std::vector<AnswerRecord> answers;
    int served_this_step = 0;       // requests the current step served (a `serve:` step)
    std::vector<LogEntry> log;      // newest last, at most log_limit entries
    std::vector<CatalogEntry> catalog;
    bool busy = false;              // the worker is running a command
};

// The command running now, for a status line drawn every frame.
struct WorkStatus {
    bool running = false;     // the worker is running a command
    bool stopping = false;    // interrupt() was asked; the work stops at its next progress check
    double elapsed_s = 0;     // seconds since the running command started
    ProgressReport progress;  // its latest report (task empty: none yet, or a short command)
};

class Session {
public:
    Session();
    ~Session();  // interrupts the running command, drops the rest, joins the worker
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // All commands return at once; the worker runs them in order.
    void open(const std::string& lesson_path);  // load, then run step 1
    void next();                                // run the next step (no-op at the end)
    void previous();                            // back one step (replay; never before step 1)
    void restart();                             // back to step 1
    void go_to(int position);                   // 1..step_count
    void reload();                              // re-read the file, keep the position when possible
    void turn_knob(const std::string& name, const std::string& value);
    // The transformer panels' commands (interpreter.h): a failure is logged
    // and shown in its panel, never thrown.
    void force_token(int id);
    void choose_attention(int layer, int head);
    void show_in_window(const std::vector<std::string>& panels);
    void run_kv_experiment(int n_tokens);
    void kv_calc(const KvCalcSpec& spec);
    void scan(const std::string& folder);       // fill Snapshot::catalog
    void log(LogEntry::Level level, const std::string& text);  // from the front end

    // Asks the running command to stop (the window's Esc); any thread, at
    // once. The engine's loops notice at their next progress check; a step
    // is left undone (the lesson stays where it was, the next command runs
    // it again) and the log says "interrupted". The steps, reloads and knobs
    // queued behind it are dropped too (three → pressed during a long step
    // and then Esc: nothing more runs); the window's own commands (panels
    // shown, the lesson list, log lines) still run. Does nothing while idle.
    void interrupt();
    // The running command and its latest progress: two short locks, any thread.
    WorkStatus work() const;

    // Called on the worker thread after each publish (e.g. to wake a UI that
    // sleeps while idle). Set it before the first command.
    void set_on_publish(std::function<void()> fn) { on_publish_ = std::move(fn); }

    // The latest published picture: one short lock, no copy of its contents.
    std::shared_ptr<const Snapshot> snapshot() const;
    // Blocks until every queued command has run (screenshots, tests).
    void wait_idle();

    static constexpr size_t log_limit = 200;

private:
    using Command = std::function<void()>;
    // kept: a command interrupt() leaves in the queue (the window's own).
    void post(Command c, bool kept = false);
    void panel_command(std::string what, std::function<void(Interpreter&)> f);
    void worker();
    void publish();            // worker thread only
    void add_log(LogEntry::Level level, std::string text);  // worker thread only
    // One interpreter step + records; true when it ran without an error and
    // every check held.
    bool run_step();
    // A successful step says so in the log, so that the one-line log no
    // longer shows an earlier step's error.
    void log_step_done();
    bool replay_to(int position);  // the last step's run_step()
    // Makes `fresh` the lesson, replayed to `position`; on Esc (Cancelled)
    // the lesson before it is put back as it was, and Cancelled goes on.
    bool replay_into(std::unique_ptr<Interpreter> fresh, int position, const std::string& path);
    void load_file(const std::string& path, std::optional<int> keep_position);
    std::string interrupted_message() const;

    mutable std::mutex mutex_;
    std::condition_variable cv_, idle_cv_;
    struct Queued {
        Command run;
        bool kept = false;
    };
    std::deque<Queued> queue_;
    bool running_command_ = false;
    bool stopping_ = false;                               // interrupt() during this command
    std::chrono::steady_clock::time_point command_start_;
    bool stop_ = false;
    std::shared_ptr<const Snapshot> published_;
    std::function<void()> on_publish_;
    ProgressBoard board_;                    // the process's progress sink while this session lives
    ProgressSink* previous_sink_ = nullptr;  // put back when it ends

    // Worker-only state.
    std::unique_ptr<Interpreter> interpreter_;
    Snapshot work_;            // log, answers, catalog, … (state is copied in publish)
    std::string path_;
    int last_step_checks_ = 0;  // checks of the step run last (for log_step_done)
    int step_running_ = 0;      // 1-based step that run_step() is running; 0: none; −1: a replay stopped
                                // and undone (for the interrupted message)
    std::vector<std::string> window_panels_;  // what the window shows beside the inspector
    std::chrono::steady_clock::time_point start_;

    std::thread thread_;       // last: starts after everything above exists
};

}  // namespace sixstep::app
