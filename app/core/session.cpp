#include "app/core/session.h"

#include <algorithm>
#include <exception>
#include <set>
#include <variant>

#include <fmt/format.h>

#include "pipeline/core/progress.h"
#include "pipeline/core/trace_keys.h"

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace sixstep::app {

namespace {

// Every word of the lesson, and the texts its checks expect: what the screen
// will show, so the window builds its font glyphs once (a Chinese answer
// included) instead of again when the answer first appears.
std::string all_text(const Lesson& l) {
    std::string t = l.title + "\n" + l.description + "\n";
    for (const auto& s : l.steps) {
        t += s.title + "\n" + s.say + "\n";
        if (s.request)
            for (const auto& [k, v] : *s.request) t += k + " " + v + "\n";
        for (const auto& e : s.expect)
            for (const auto& c : e.conditions)
                if (const auto* text = std::get_if<std::string>(&c.operand.literal)) t += *text + "\n";
    }
    return t;
}

AnswerRecord make_answer(const LessonState& st, int step, const std::vector<ServedRequest>& served = {}) {
    AnswerRecord a;
    a.step = step;
    if (!served.empty()) {
        std::set<std::string> distinct;
        for (const ServedRequest& r : served) distinct.insert(r.text);
        // Short enough for three cards beside their heading.
        a.how = distinct.size() == 1 ? fmt::format("{} served", served.size())
                                     : fmt::format("{} answers of {}", distinct.size(), served.size());
    } else if (const TraceEvent* load = st.trace.last(Stage::load)) {
        if (const Field* cold = load->find(sixstep::keys::cold))
            if (const auto* v = std::get_if<std::string>(&cold->value)) a.how = *v == "yes" ? "cold load" : "reused";
    }
    a.request = st.request;
    if (const TraceEvent* ev = st.trace.last(Stage::respond)) a.answer = ev->outputs;
    // The settings the model's kind marks as risky, as they stood for this answer.
    if (st.description)
        for (const Knob& k : st.description->knobs) {
            if (!k.caution || k.target != KnobTarget::setting) continue;
            if (st.setting(k.name) == k.caution->value) a.cautions.push_back(k.caution->warning);
            else if (a.checked.empty()) a.checked = k.caution->ok;
        }
    for (const auto& ev : st.trace.events())
        for (const auto& w : ev.warnings) a.warnings.push_back(w);
    return a;
}

}  // namespace

Session::Session() : start_(std::chrono::steady_clock::now()) {
    published_ = std::make_shared<const Snapshot>();
    previous_sink_ = set_progress_sink(&board_);
    thread_ = std::thread([this] { worker(); });
}

Session::~Session() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        queue_.clear();
        // Closing the window must not wait for a sweep to finish.
        if (running_command_) request_cancel();
    }
    cv_.notify_all();
    thread_.join();
    // Put the previous sink back, unless another session has replaced ours since.
    if (ProgressSink* now = set_progress_sink(previous_sink_); now != &board_) set_progress_sink(now);
}

void Session::post(Command c, bool kept) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back({std::move(c), kept});
    }
    cv_.notify_one();
}

void Session::worker() {
#ifdef __linux__
    // Engine work yields to the thread that draws: on a two-core laptop
    // driving a projector, a long step must not stall the frames.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 5);
#endif
    for (;;) {
        Command c;
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
            if (stop_) return;
            c = std::move(queue_.front().run);
            queue_.pop_front();
            running_command_ = true;
            command_start_ = std::chrono::steady_clock::now();
        }
        board_.clear();  // the last command's report is not this one's
        try {
            c();
        } catch (const Cancelled&) {
            add_log(LogEntry::Level::warning, interrupted_message());
        } catch (const std::exception& e) {
            // Nothing a lesson or a knob does may take the app down.
            add_log(LogEntry::Level::error, e.what());
        }
        step_running_ = 0;
        board_.clear();
        publish();
        {
            // Under the lock that interrupt() takes: a request that came too
            // late to stop this command must not stop the next one.
            std::lock_guard lock(mutex_);
            running_command_ = false;
            stopping_ = false;
            clear_cancel();
        }
        idle_cv_.notify_all();
        if (on_publish_) on_publish_();
    }
}

std::shared_ptr<const Snapshot> Session::snapshot() const {
    std::lock_guard lock(mutex_);
    return published_;
}

void Session::wait_idle() {
    std::unique_lock lock(mutex_);
    idle_cv_.wait(lock, [&] { return stop_ || (queue_.empty() && !running_command_); });
}

void Session::interrupt() {
    std::size_t dropped = 0;
    {
        std::lock_guard lock(mutex_);
        if (!running_command_) return;
        stopping_ = true;
        request_cancel();
        const auto before = queue_.size();
        queue_.erase(std::remove_if(queue_.begin(), queue_.end(), [](const Queued& q) { return !q.kept; }), queue_.end());
        dropped = before - queue_.size();
    }
    if (dropped > 0)
        post([this, dropped] { add_log(LogEntry::Level::info, fmt::format("Esc: {} waiting command{} dropped", dropped,
                                                                         dropped == 1 ? "" : "s")); },
             true);
}

WorkStatus Session::work() const {
    WorkStatus w;
    {
        std::lock_guard lock(mutex_);
        w.running = running_command_;
        w.stopping = stopping_;
        if (w.running) w.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - command_start_).count();
    }
    if (w.running) w.progress = board_.latest();
    return w;
}

void Session::publish() {
    auto snap = std::make_shared<Snapshot>(work_);
    snap->has_lesson = interpreter_ != nullptr;
    if (interpreter_) snap->state = interpreter_->state();
    std::lock_guard lock(mutex_);
    snap->version = published_->version + 1;
    snap->busy = !queue_.empty();
    published_ = std::move(snap);
}

void Session::add_log(LogEntry::Level level, std::string text) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    work_.log.push_back({level, t, std::move(text)});
    if (work_.log.size() > log_limit) work_.log.erase(work_.log.begin());
}

// ---- commands -------------------------------------------------------------------

void Session::open(const std::string& lesson_path) {
    post([this, lesson_path] { load_file(lesson_path, std::nullopt); });
}

void Session::next() {
    post([this] {
        if (interpreter_ && !interpreter_->finished() && run_step()) log_step_done();
    });
}

void Session::previous() {
    post([this] {
        if (interpreter_ && interpreter_->position() > 1 && replay_to(interpreter_->position() - 1)) log_step_done();
    });
}

void Session::restart() {
    post([this] {
        if (interpreter_ && replay_to(1)) log_step_done();
    });
}

void Session::go_to(int position) {
    post([this, position] {
        if (interpreter_ && replay_to(position)) log_step_done();
    });
}

void Session::reload() {
    post([this] {
        if (path_.empty()) return;
        load_file(path_, interpreter_ ? std::optional<int>(interpreter_->position()) : std::nullopt);
    });
}

void Session::turn_knob(const std::string& name, const std::string& value) {
    post([this, name, value] {
        if (!interpreter_) return;
        try {
            interpreter_->turn_knob(name, value);
            work_.served_this_step = 0;
            add_log(LogEntry::Level::info, fmt::format("{} = {}", name, value));
            const LessonState& st = interpreter_->state();
            if (st.error) add_log(LogEntry::Level::error, *st.error);
            if (st.response && st.trace.last(Stage::forward)) work_.answers.push_back(make_answer(st, st.position));
        } catch (const Error& e) {
            add_log(LogEntry::Level::error, fmt::format("{}: {}", name, e.what()));
        }
    });
}

// A panel's command: the interpreter keeps the failure for the panel to show;
// the log says it too.
void Session::panel_command(std::string what, std::function<void(Interpreter&)> f) {
    post([this, what = std::move(what), f = std::move(f)] {
        if (!interpreter_) return;
        try {
            f(*interpreter_);
            if (!what.empty()) add_log(LogEntry::Level::info, what);
        } catch (const Error& e) {
            add_log(LogEntry::Level::error, e.what());
        }
    });
}

void Session::force_token(int id) {
    panel_command(fmt::format("token {} forced", id), [id](Interpreter& it) { it.force_token(id); });
}

void Session::choose_attention(int layer, int head) {
    panel_command(fmt::format("attention: layer {}, head {}", layer, head),
                  [layer, head](Interpreter& it) { it.choose_attention(layer, head); });
}

void Session::show_in_window(const std::vector<std::string>& panels) {
    post(
        [this, panels] {
            window_panels_ = panels;  // also for the next lesson opened
            if (interpreter_) interpreter_->show_in_window(panels);
        },
        true);
}

void Session::run_kv_experiment(int n_tokens) {
    panel_command(fmt::format("KV cache experiment: {} tokens with and without the cache", n_tokens),
                  [n_tokens](Interpreter& it) { it.run_kv_experiment(n_tokens); });
}

void Session::kv_calc(const KvCalcSpec& spec) {
    panel_command("", [spec](Interpreter& it) { it.kv_calc(spec); });
}

void Session::scan(const std::string& folder) {
    post([this, folder] {
        work_.catalog.clear();
        for (const auto& path : find_lessons(folder)) {
            CatalogEntry c;
            c.path = path;
            try {
                const Lesson l = load_lesson(path);
                c.title = l.title;
                c.language = l.language;
                c.steps = static_cast<int>(l.steps.size());
            } catch (const std::exception& e) {
                c.error = e.what();
            }
            work_.catalog.push_back(std::move(c));
        }
    }, true);
}

void Session::log(LogEntry::Level level, const std::string& text) {
    post([this, level, text] { add_log(level, text); }, true);
}

// ---- worker helpers -------------------------------------------------------------

bool Session::run_step() {
    step_running_ = interpreter_->position() + 1;
    const StepReport r = interpreter_->step();
    step_running_ = 0;
    work_.served_this_step = static_cast<int>(r.served.size());
    for (const std::string& note : r.notes) add_log(LogEntry::Level::info, fmt::format("step {}: {}", r.index + 1, note));
    if (r.error) add_log(LogEntry::Level::error, fmt::format("step {}: {}", r.index + 1, *r.error));
    for (const auto& c : r.checks)
        if (!c.passed)
            add_log(LogEntry::Level::warning, fmt::format("step {}: expected {} {}, got {}", r.index + 1,
                                                         c.expectation.path, c.expected_text(), c.got));
    const bool answered =
        std::any_of(r.events.begin(), r.events.end(), [](const TraceEvent& e) { return e.stage == Stage::respond; });
    const LessonState& st = interpreter_->state();
    if (answered || !r.served.empty()) work_.answers.push_back(make_answer(st, r.index + 1, r.served));
    last_step_checks_ = static_cast<int>(r.checks.size());
    return !r.error && std::all_of(r.checks.begin(), r.checks.end(), [](const auto& c) { return c.passed; });
}

void Session::log_step_done() {
    const int n = last_step_checks_;
    add_log(LogEntry::Level::info, n == 0 ? fmt::format("step {}: done", interpreter_->position())
                                          : fmt::format("step {}: done, {} {} held", interpreter_->position(), n,
                                                        n == 1 ? "check" : "checks"));
}

bool Session::replay_to(int position) {
    return replay_into(std::make_unique<Interpreter>(interpreter_->lesson()), position, path_);
}

bool Session::replay_into(std::unique_ptr<Interpreter> fresh, int position, const std::string& path) {
    // The lesson as it was, for an Esc during the replay: ← or Ctrl+R at a
    // long step, stopped, must leave the class where it was, not at the step
    // before the long one with the answers gone.
    struct Kept {
        std::unique_ptr<Interpreter> interpreter;
        std::vector<AnswerRecord> answers;
        int served_this_step;
        std::string path, lesson_text;
        std::vector<std::string> step_titles;
    } kept{std::move(interpreter_), work_.answers, work_.served_this_step, path_, work_.lesson_text, work_.step_titles};
    interpreter_ = std::move(fresh);
    if (!window_panels_.empty()) interpreter_->show_in_window(window_panels_);
    path_ = path;
    work_.lesson_text = all_text(interpreter_->lesson());
    work_.step_titles.clear();
    for (const auto& s : interpreter_->lesson().steps) work_.step_titles.push_back(s.title);
    work_.answers.clear();
    work_.served_this_step = 0;
    const int n = static_cast<int>(interpreter_->lesson().steps.size());
    position = std::clamp(position, std::min(1, n), n);
    // Step by step rather than Interpreter::go_to, so the answers of every
    // replayed step are recorded again (they feed the comparisons).
    bool clean = true;
    try {
        while (interpreter_->position() < position) clean = run_step();
    } catch (const Cancelled&) {
        if (kept.interpreter) {
            interpreter_ = std::move(kept.interpreter);
            work_.answers = std::move(kept.answers);
            work_.served_this_step = kept.served_this_step;
            path_ = std::move(kept.path);
            work_.lesson_text = std::move(kept.lesson_text);
            work_.step_titles = std::move(kept.step_titles);
            step_running_ = -1;  // the message says where the lesson stayed
        }
        throw;
    }
    return clean;
}

std::string Session::interrupted_message() const {
    if (step_running_ < 0 && interpreter_)
        return fmt::format("interrupted: the lesson stays at step {}", interpreter_->position());
    if (step_running_ == 0) return "interrupted";
    // The step stays undone (Interpreter::step): the lesson is where it was.
    return fmt::format("interrupted: step {} is not done (\u2192 runs it again)", step_running_);
}

void Session::load_file(const std::string& path, std::optional<int> keep_position) {
    Lesson lesson;
    try {
        lesson = load_lesson(path);
    } catch (const std::exception& e) {
        work_.load_error = e.what();
        if (interpreter_) add_log(LogEntry::Level::info, "reload failed: kept the last good version of the lesson");
        add_log(LogEntry::Level::error, e.what());  // last: the one-line log shows it
        return;
    }
    const int n = static_cast<int>(lesson.steps.size());
    work_.load_error.clear();
    const std::string title = lesson.title;
    add_log(LogEntry::Level::info, fmt::format("{} \"{}\" ({} step{})", keep_position ? "reloaded" : "opened", title, n, n == 1 ? "" : "s"));
    replay_into(std::make_unique<Interpreter>(std::move(lesson)), keep_position ? std::min(*keep_position, n) : 1, path);
}

}  // namespace sixstep::app
