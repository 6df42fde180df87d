#include "app/core/interpreter.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <unistd.h>

#include "app/core/catalogue.h"
#include "app/core/lesson_paths.h"
#include "app/server/endpoint_model.h"
#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/progress.h"
#include "pipeline/core/text.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/delivery/dataset.h"
#include "pipeline/delivery/delivery_model.h"
#include "pipeline/delivery/trace_keys.h"
#include "pipeline/delivery/trainer.h"
#include "pipeline/delivery/weights_file.h"
#include "pipeline/models.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/llm/trace_keys.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/tools/random_model.h"

namespace sixstep::app {

namespace fs = std::filesystem;

const std::string& LessonState::setting(std::string_view name) const {
    static const std::string none;
    for (const auto& s : settings)
        if (s.name == name) return s.value;
    return none;
}

namespace {

constexpr std::size_t max_check_text_bytes = 1000;  // CheckResult's texts

// The article's model, with a lesson's inline weights over it.
delivery::Params inline_weights(const ModelSpec& spec) {
    delivery::Params p;
    for (const auto& [name, value] : spec.weights) {
        if (name == delivery::keys::bias) p.bias = value;
        else if (const int i = delivery::feature_index(name); i >= 0) p.w[static_cast<size_t>(i)] = value;
    }
    return p;
}

std::vector<double> as_vector(const delivery::Params& p) {
    const auto a = p.as_array();
    return {a.begin(), a.end()};
}

TrainRecord record(const delivery::TrainStep& s) {
    return {s.step, s.loss, {s.grad.begin(), s.grad.end()}, as_vector(s.after), s.predictions, s.labels};
}

}  // namespace

namespace {
// sixstep's own sentences in a check's text are said in the lesson's
// language; a value, a path or a token is shown as it is.
std::string say(std::string_view lang, const std::string& en) {
    const std::optional<std::string> t = translate(lang, en);
    return t ? *t : en;
}
// What below, above and tol cannot compare: the value got, or the one it is
// compared with (a remembered text: "got 3 (not a finite number)" blamed 3).
constexpr std::string_view incomparable_got = " (not a finite number: cannot compare)";
constexpr std::string_view incomparable_wanted = " (what it is compared with is not a finite number: cannot compare)";
std::string say_value(std::string_view lang, const std::string& v) {
    if (v.rfind("(nothing", 0) == 0) return say(lang, v);
    for (const std::string_view incomparable : {incomparable_got, incomparable_wanted})
        if (v.size() > incomparable.size() && std::string_view(v).substr(v.size() - incomparable.size()) == incomparable)
            return v.substr(0, v.size() - incomparable.size()) + " " + say(lang, std::string(incomparable.substr(1)));
    return v;
}
}  // namespace

std::string CheckResult::expected_text(std::string_view lang) const {
    const std::string e = expectation.describe(say(lang, "and"));
    std::string values;
    for (const auto& [name, value] : named) values += (values.empty() ? "" : "; ") + name + " = " + say_value(lang, value);
    return elide(values.empty() ? e : e + " (" + values + ")", max_check_text_bytes);
}

std::string CheckResult::got_text(std::string_view lang) const { return say_value(lang, got); }

bool StepReport::passed() const {
    for (const auto& c : checks)
        if (!c.passed) return false;
    return true;
}

Interpreter::Interpreter(Lesson lesson) : lesson_(std::move(lesson)) { restart(); }

Interpreter::~Interpreter() { remove_saved_weights(); }

// Weights saved by `freeze` live in a folder of this interpreter's own, gone
// when the lesson restarts or ends.
void Interpreter::remove_saved_weights() {
    if (saved_dir_.empty()) return;
    std::error_code ec;
    fs::remove_all(saved_dir_, ec);
    saved_dir_.clear();
}

void Interpreter::reset_engine() {
    remove_saved_weights();
    pipeline_.reset();
    trainer_.reset();
    panels_.reset();  // before the model it listens to
    stages_run_ = 0;
    delivery_ = nullptr;
    llm_ = nullptr;
    if (lesson_.model.kind == endpoint_kind) {
        // A real server: the lesson's own (file or random, served on
        // loopback) or the one `url` names. It draws its panel from its exhibit.
        const ModelSpec& m = lesson_.model;
        server::EndpointModelParams p;
        if (m.url.empty())
            p.file = m.random.empty() ? std::filesystem::path(resolve_lesson_path(lesson_, m.file))
                                      : llm::cached_random_model(m.random);
        p.url = m.url;
        p.n_threads = m.threads;
        model_ = std::make_unique<server::EndpointModel>(p);
        return;
    }
    if (reads_gguf(lesson_.model.kind)) {
        const ModelSpec& m = lesson_.model;
        model_ = make_gguf_model(m.kind, {m.file.empty() ? "" : resolve_lesson_path(lesson_, m.file), m.random,
                                          m.threads, m.top_n, m.backend});
        // The transformer's panels listen to an llm model; the serving kind
        // draws its charts from its own exhibit.
        llm_ = dynamic_cast<llm::LlmModel*>(model_.get());
        if (llm_) {
            panels_ = std::make_unique<LlmPanels>(*llm_);
            panels_->listen(lesson_panels_, window_panels_);
        }
        return;
    }
    auto m = std::make_unique<delivery::DeliveryModel>(inline_weights(lesson_.model));
    m->settings().lang = lesson_.language;
    if (lesson_.model.weights_file) m->use_weights_file(resolve_lesson_path(lesson_, *lesson_.model.weights_file));
    delivery_ = m.get();
    model_ = std::move(m);
}

delivery::DeliveryModel& Interpreter::delivery(const char* what) {
    if (!delivery_) throw Error(fmt::format("{} needs the delivery model (this lesson's model is {})", what, model_->name()));
    return *delivery_;
}

llm::LlmModel& Interpreter::llm(const char* what) {
    if (!llm_) throw Error(fmt::format("{} needs the llm model (this lesson's model is {})", what, model_->name()));
    return *llm_;
}

void Interpreter::restart() {
    lesson_panels_.clear();
    lesson_inspect_.reset();
    remembered_.clear();
    forgotten_.clear();
    panel_message_.reset();
    answered_ = Trace{};
    answered_response_.reset();
    reset_engine();
    state_ = LessonState{};
    state_.title = lesson_.title;
    state_.language = lesson_.language;
    state_.path = lesson_.path;
    state_.step_count = static_cast<int>(lesson_.steps.size());
    for (const LessonStep& st : lesson_.steps)
        if (st.show)
            for (const std::string& p : *st.show)
                if (std::find(state_.panels_used.begin(), state_.panels_used.end(), p) == state_.panels_used.end())
                    state_.panels_used.push_back(p);
    preview_training_data();
    refresh_state();
}

// The data the lesson's first training step will read, so that a step
// before it ("200 past deliveries") can show them; read again only when the
// file has changed. A file that no longer reads is left to that step's own
// error.
void Interpreter::preview_training_data() {
    if (!delivery_) return;
    for (const LessonStep& st : lesson_.steps) {
        if (!st.train) continue;
        const std::string path = st.train->data ? resolve_lesson_path(lesson_, *st.train->data) : default_training_data();
        try {
            std::error_code ec;
            const auto modified = std::filesystem::last_write_time(path, ec);
            const std::uintmax_t size = ec ? 0 : std::filesystem::file_size(path, ec);
            if (ec || !previewed_.examples || previewed_.path != path || previewed_.modified != modified ||
                previewed_.size != size)
                previewed_ = {path, modified, size,
                              std::make_shared<const std::vector<delivery::Example>>(delivery::load_deliveries_csv(path))};
            state_.training.data = previewed_.examples;
            state_.training.data_path = path;
            state_.training.examples = static_cast<int>(state_.training.data->size());
        } catch (const Error&) {
        }
        return;
    }
}

void Interpreter::go_to(int position) {
    restart();
    while (state_.position < position && !finished()) step();
}

void Interpreter::apply_settings(const std::vector<SettingChange>& changes) {
    if (changes.empty()) return;
    for (const auto& c : changes) model_->apply_setting(c.name, c.value);  // checked when the lesson loaded
    drop_pipeline();  // the next run starts a fresh request under the new settings
}

void Interpreter::run_request(const RunSpec& spec, std::vector<TraceEvent>* events) {
    auto one = [&] {
        const TraceEvent& ev = pipeline_->step();
        ++stages_run_;
        if (events) events->push_back(ev);
        return ev.stage;
    };
    // Only respond left: the answer is finished (a stop, or max_tokens). A
    // run for a token or an earlier stage writes the response, then starts
    // the request afresh — it ran respond alone before, and the step's
    // expectations read the last token's forward and postprocess again.
    if (pipeline_ && !pipeline_->done() && !pipeline_->failed() && pipeline_->next_stage() == Stage::respond &&
        (spec.kind == RunSpec::Kind::token || (spec.kind == RunSpec::Kind::through && spec.through != Stage::respond))) {
        one();
        // The step printed that answer: its checks read it (respond.text),
        // though the request it checks next has none yet.
        if (const TraceEvent* ev = pipeline_->trace().last(Stage::respond)) answered_.add(*ev);
        answered_response_ = pipeline_->response();
    }
    if (!pipeline_ || pipeline_->done() || pipeline_->failed()) {
        pipeline_ = std::make_unique<Pipeline>(*model_, state_.request);
        stages_run_ = 0;
    }
    switch (spec.kind) {
        case RunSpec::Kind::stage: one(); break;
        case RunSpec::Kind::through:
            while (!pipeline_->done())
                if (one() == spec.through) break;
            break;
        case RunSpec::Kind::token:  // through the next postprocess: one token chosen
            while (!pipeline_->done())
                if (one() == Stage::postprocess) break;
            break;
        case RunSpec::Kind::all:
            while (!pipeline_->done()) one();
            break;
    }
}

void Interpreter::train(const TrainSpec& spec, StepReport& report) {
    // An interrupted step is left undone, its training too: running the step
    // again must not train more steps than the lesson says. The copy is
    // cheap next to the training (the data once, the history once).
    std::unique_ptr<delivery::Trainer> trainer_before =
        trainer_ ? std::make_unique<delivery::Trainer>(*trainer_) : nullptr;
    TrainingState state_before = state_.training;
    try {
        train_steps(spec, report);
    } catch (const Cancelled&) {
        trainer_ = std::move(trainer_before);
        state_.training = std::move(state_before);
        throw;
    }
}

void Interpreter::train_steps(const TrainSpec& spec, StepReport& report) {
    delivery::DeliveryModel& model = delivery("\"train\"");
    // Frozen is for good: with data: it built a new trainer and trained on.
    if (trainer_ && trainer_->frozen())
        throw Error("the weights are frozen: training is over, the model only serves now");
    // The data the window plots, from the trainer's own copy.
    const auto show_data = [&](const std::string& data) {
        state_.training.data_path = data;
        state_.training.examples = static_cast<int>(trainer_->data().size());
        state_.training.data = std::make_shared<const std::vector<delivery::Example>>(trainer_->data());
    };
    if (trainer_ && spec.data && !spec.from_zero) {
        // from: current on other data: the weights, rate and step count go on.
        const std::string data = resolve_lesson_path(lesson_, *spec.data);
        trainer_->switch_data(delivery::load_deliveries_csv(data));
        show_data(data);
    } else if (!trainer_ || spec.data || spec.from_zero) {
        const std::string data = spec.data ? resolve_lesson_path(lesson_, *spec.data) : default_training_data();
        const delivery::Params start = spec.from_zero                ? delivery::Params{0, {0, 0, 0}}
                                       : model.weights_file().empty() ? inline_weights(lesson_.model)
                                                                      : delivery::load_weights(model.weights_file());
        // A rate once given holds for the lesson's later training, from: zero
        // included (lessons/README.md); 0.005 until one is given.
        const double rate = spec.learning_rate ? *spec.learning_rate : trainer_ ? trainer_->learning_rate() : 0.005;
        trainer_ = std::make_unique<delivery::Trainer>(delivery::load_deliveries_csv(data), start, rate);
        state_.training = TrainingState{};
        state_.training.active = true;
        show_data(data);
        namespace k = delivery::keys;
        state_.training.param_labels = {delivery::param_labels.begin(), delivery::param_labels.end()};
        state_.training.param_keys = {k::bias, k::w_distance, k::w_congestion, k::w_express_lane};
        state_.training.grad_keys = {k::grad_bias, k::grad_distance, k::grad_congestion, k::grad_express_lane};
        state_.training.target = as_vector(delivery::Params{});  // the bundled data follows the article's model
    }
    if (spec.learning_rate) trainer_->set_learning_rate(*spec.learning_rate);
    state_.training.learning_rate = trainer_->learning_rate();
    // A short call shows every step; a long one steps 1–3, then 10, 100,
    // 1000, …, and the last one of this call (the narration names them).
    const bool show_all = spec.steps <= show_every_train_step_up_to;
    for (int i = 0; i < spec.steps; ++i) {
        TrainRecord s = record(trainer_->step());
        state_.training.loss.push_back(s.loss);
        state_.training.params.insert(state_.training.params.end(), s.params.begin(), s.params.end());
        int p = s.step;
        while (p >= 10 && p % 10 == 0) p /= 10;
        const bool power_of_ten = s.step >= 10 && p == 1;
        const bool milestone = show_all || s.step <= 3 || power_of_ten || i + 1 == spec.steps;
        if (milestone) report.train_shown.push_back(s);
        state_.training.last = std::move(s);
        ++report.train_steps;
    }
    // The model serves what training has reached so far (next load is cold).
    model.use_params(trainer_->params());
    drop_pipeline();
}

void Interpreter::freeze() {
    delivery::DeliveryModel& model = delivery("\"freeze\"");
    if (!trainer_) throw Error("nothing to freeze: train first");
    trainer_->freeze();
    state_.training.frozen = true;
    // Save the weights once, then serve them from the file: load once, serve many.
    static std::atomic<int> counter{0};
    if (saved_dir_.empty())
        saved_dir_ = (fs::temp_directory_path() / fmt::format("sixstep-{}-{}", ::getpid(), ++counter)).string();
    const fs::path dir = saved_dir_;
    fs::create_directories(dir);
    const std::string file = (dir / "delivery-weights.json").string();
    delivery::save_weights(file, trainer_->params(),
                           {trainer_->steps_done(), trainer_->loss()});
    state_.training.weights_file = file;
    model.use_weights_file(file);
    drop_pipeline();
}

void Interpreter::serve(const ServeSpec& spec, StepReport& report) {
    state_.served.clear();
    // What each answer is, for the report: the respond stage's first headline field.
    const Headline* headline = model_->description().headline(Stage::respond);
    const std::string answer_key = headline && !headline->fields.empty() ? headline->fields.front().key : keys::text;
    for (int i = 0; i < spec.requests; ++i) {
        const bool cold = !model_->loaded();
        const auto t0 = std::chrono::steady_clock::now();
        Pipeline p(*model_, state_.request);
        const Response& r = p.run();
        ServedRequest s;
        s.total_ms = ms_since(t0);
        s.cold = cold;
        s.text = r.text;
        s.fields = r.fields;
        s.answer_key = answer_key;
        s.answer = r.text;
        for (const auto& f : r.fields)
            if (f.key == answer_key) s.answer = f.value;
        state_.served.push_back(std::move(s));
        if (i == spec.requests - 1) {  // keep the last request's trace on screen
            pipeline_ = std::make_unique<Pipeline>(std::move(p));
            stages_run_ = static_cast<int>(pipeline_->trace().events().size());
        }
    }
    report.served = state_.served;
}

StepReport Interpreter::step() {
    StepReport report;
    if (finished()) throw Error("the lesson is over");
    const int index = state_.position;
    const LessonStep& st = lesson_.steps[static_cast<size_t>(index)];
    report.index = index;
    report.step = &st;
    state_.error.reset();
    panel_message_.reset();
    answered_ = Trace{};
    answered_response_.reset();
    try {
        apply_settings(st.set);
        if (st.request) {
            state_.request = Request{*st.request};
            drop_pipeline();
        }
        if (st.force) force(*st.force, false);
        // A panel that needs what the last run did not capture (attention
        // weights, the logit lens) runs the request again: its timings are
        // new measurements, often faster (warm caches), so say so.
        const int stages_before = pipeline_ ? stages_run_ : 0;
        bool ran_again = false;
        if (st.show) ran_again = show(*st.show);
        if (st.inspect) lesson_inspect_ = st.inspect;
        if (st.attention) {
            llm("\"attention\"");
            if (panels_->choose_attention(st.attention->layer, st.attention->head)) {
                rerun(stages_run_, pipeline_ && pipeline_->done());
                ran_again = true;
            }
        }
        if (ran_again && stages_before > 0)
            report.notes.push_back("the request ran again from the start to capture what the panels show; its times "
                                   "are measured anew");
        if (st.train) train(*st.train, report);
        if (st.freeze) freeze();
        if (st.run) run_request(*st.run, &report.events);
        if (st.serve) serve(*st.serve, report);
        if (st.kv_experiment) kv_experiment(*st.kv_experiment);
        if (st.kv_calc) {
            llm("\"kv_calc\"");
            panels_->kv_calc(*st.kv_calc);
        }
    } catch (const Error& e) {
        report.error = e.what();
        state_.error = e.what();
    } catch (const Cancelled&) {
        // Interrupted (Ctrl+C, the window's Esc): the step stays undone and
        // the position where it was, so the next step() runs it again. What
        // it changed on the way is redone the same way then: settings and the
        // request are set again, a half-run request was marked failed and is
        // started afresh, training was rolled back (train()).
        refresh_state();
        throw;
    }
    state_.position = index + 1;
    state_.step_title = st.title;
    state_.narration = st.say;
    state_.knobs = st.knobs;
    refresh_state();
    for (const auto& [name, path] : st.remember) {
        if (const std::optional<Value> v = lookup(path)) {
            remembered_[name] = *v;
            forgotten_.erase(name);
        } else {
            // Nothing to remember: later comparisons with it fail, and say
            // where the name lost its value (not a bare "(nothing)" steps on).
            remembered_.erase(name);
            const std::string why = why_nothing(path);
            forgotten_[name] = fmt::format("(nothing: step {} remembered {} when it had no value{})", index + 1, path,
                                           why.empty() ? "" : " — " + why);
        }
    }
    // An engine error nobody expected is a failed check, not a crash. A
    // negated `error` expectation ({not: {contains: "km"}}) holds with no
    // error at all, so it does not expect one: it hid any error that did
    // not match.
    bool error_expected = false;
    for (const auto& e : st.expect) {
        report.checks.push_back(check(e));
        error_expected |= e.path == "error" && !e.negated;
    }
    if (report.error && !error_expected) {
        Expectation none;
        none.path = "error";
        Condition no_error;
        no_error.operand.literal = std::string("(no error)");
        none.conditions.push_back(no_error);
        none.where = st.where;
        // First: it explains the checks after it that got "(nothing)".
        report.checks.insert(report.checks.begin(), {none, false, *report.error, "", {}, std::nullopt});
    }
    state_.checks = report.checks;
    return report;
}

void Interpreter::turn_knob(const std::string& name, const std::string& value) {
    const Knob& knob = model_->description().knob(name);
    const std::string v = knob.check(value);
    if (knob.target == KnobTarget::request) state_.request.set(knob.name, v);
    else model_->apply_setting(knob.name, v);
    // Tokens forced by hand followed the old request's choices: a new one starts free.
    if (knob.name != llm::keys::force) state_.request.erase(llm::keys::force);
    // Recompute the current request as far as it had gone. The step's checks
    // held (or not) for the lesson's request, not the class's: they go.
    state_.error.reset();
    state_.checks.clear();
    try {
        rerun(pipeline_ ? stages_run_ : 0, pipeline_ && pipeline_->done());
    } catch (const Error& e) {
        state_.error = e.what();
    }
    refresh_state();
}

// The pipeline and its count of stages go together: a count left from the
// last request made a panel shown with a new one run that request silently
// as far as the old had gone, so `run: all` narrated its respond stage alone.
void Interpreter::drop_pipeline() {
    pipeline_.reset();
    stages_run_ = 0;
}

void Interpreter::rerun(int stages, bool was_done) {
    drop_pipeline();
    if (stages <= 0) return;
    if (was_done) {
        run_request({RunSpec::Kind::all, Stage::respond}, nullptr);
    } else {
        for (int i = 0; i < stages; ++i) run_request({RunSpec::Kind::stage, Stage::request}, nullptr);
    }
}

namespace {
int count_events(const Pipeline* p, Stage s) {
    if (!p) return 0;
    const auto& ev = p->trace().events();
    return static_cast<int>(std::count_if(ev.begin(), ev.end(), [&](const TraceEvent& e) { return e.stage == s; }));
}
}  // namespace

void Interpreter::force(const Value& token, bool continue_to_output) {
    llm::LlmModel& m = llm("\"force\"");
    const double* number = std::get_if<double>(&token);
    const int id = number ? static_cast<int>(*number) : m.token_of_piece(std::get<std::string>(token));
    // Which generated token: the one whose logits wait to be sampled, else the latest taken.
    const int outputs = count_events(pipeline_.get(), Stage::output);
    const int taken = count_events(pipeline_.get(), Stage::postprocess);
    const int index = outputs > taken ? taken : std::max(0, taken - 1);
    const int n_vocab = static_cast<int>(m.vocab().n_tokens());
    const std::string* field = state_.request.get(llm::keys::force);
    std::map<int, int> forced = field && !field->empty() ? llm::parse_forced(*field, n_vocab) : std::map<int, int>{};
    forced.erase(forced.upper_bound(index), forced.end());  // later choices followed another token
    forced[index] = id;
    const Request before = state_.request;
    const int stages = pipeline_ ? stages_run_ : 0;
    const bool was_done = pipeline_ && pipeline_->done();
    state_.request.set(llm::keys::force, llm::format_forced(forced));
    try {
        rerun(stages, was_done);
        if (continue_to_output) {
            // Take the token, then on to the distribution after it (or the end).
            auto running = [&] { return !(pipeline_ && (pipeline_->done() || pipeline_->failed())); };
            const RunSpec one{RunSpec::Kind::stage, Stage::request};
            while (running() && count_events(pipeline_.get(), Stage::postprocess) <= index) run_request(one, nullptr);
            while (running() && count_events(pipeline_.get(), Stage::output) <= index + 1) run_request(one, nullptr);
        }
    } catch (const Error&) {
        state_.request = before;  // the request as it was, computed as far as it had run
        try {
            rerun(stages, was_done);
        } catch (const Error&) {
        }
        throw;
    }
}

bool Interpreter::show(const std::vector<std::string>& panels) {
    lesson_panels_ = panels;
    if (!panels_ || !panels_->listen(lesson_panels_, window_panels_)) return false;
    rerun(stages_run_, pipeline_ && pipeline_->done());
    return true;
}

void Interpreter::kv_experiment(int n_tokens) {
    llm::LlmModel& m = llm("\"kv_experiment\"");
    const std::string* prompt = state_.request.get(llm::keys::prompt);
    if (!prompt || prompt->empty()) throw Error("the KV cache experiment needs a request with a prompt");
    if (!m.loaded()) {
        TraceEvent ev;
        m.load(ev);
    }
    panels_->run_kv_experiment(*prompt, n_tokens);
}

template <typename F>
void Interpreter::panel_command(const char* panel, F&& f) {
    try {
        f();
        panel_message_.reset();
    } catch (const Error& e) {
        panel_message_ = PanelMessage{panel, e.what()};
        refresh_state();
        throw;
    }
    refresh_state();
}

void Interpreter::force_token(int id) {
    panel_command("next_token", [&] { force(Value{static_cast<double>(id)}, true); });
}

void Interpreter::choose_attention(int layer, int head) {
    panel_command("attention", [&] {
        llm("the attention panel");
        if (panels_->choose_attention(layer, head)) rerun(stages_run_, pipeline_ && pipeline_->done());
    });
}

void Interpreter::show_in_window(const std::vector<std::string>& panels) {
    window_panels_ = panels;
    panel_command("", [&] {
        if (panels_ && panels_->listen(lesson_panels_, window_panels_)) rerun(stages_run_, pipeline_ && pipeline_->done());
    });
}

void Interpreter::run_kv_experiment(int n_tokens) {
    panel_command("kv_experiment", [&] { kv_experiment(n_tokens); });
}

void Interpreter::kv_calc(const KvCalcSpec& spec) {
    panel_command("kv_calc", [&] {
        llm("the KV memory calculator");
        panels_->kv_calc(spec);
    });
}

void Interpreter::refresh_state() {
    const ModelDescription& d = model_->description();
    state_.model_kind = d.kind;
    state_.description = &d;
    state_.model_name = model_->name();
    state_.loaded = model_->loaded();
    state_.checksum.clear();
    if (model_->loaded() && model_->has_weights()) state_.checksum = checksum_hex(model_->checksum_as_loaded());
    state_.settings.clear();
    for (const auto& name : d.setting_names()) state_.settings.push_back({name, model_->setting(name)});
    const std::optional<Value> cold_ms = model_->property(keys::cold_load_ms);
    state_.cold_load_ms = cold_ms && std::holds_alternative<double>(*cold_ms) ? std::get<double>(*cold_ms) : 0.0;
    state_.weights_file = delivery_ ? delivery_->weights_file() : lesson_.model.file;
    state_.exhibit = model_->exhibit();
    state_.trace = pipeline_ ? pipeline_->trace() : Trace{};
    state_.response = pipeline_ ? pipeline_->response() : std::nullopt;
    state_.last_stage.reset();
    state_.next_stage.reset();
    state_.failed_stage.reset();
    if (pipeline_) {
        if (!state_.trace.empty()) state_.last_stage = state_.trace.events().back().stage;
        if (!pipeline_->done() && !pipeline_->failed()) state_.next_stage = pipeline_->next_stage();
        if (pipeline_->failed()) state_.failed_stage = pipeline_->next_stage();  // it never moved past it
    }
    state_.panels = PanelsState{};
    if (panels_) panels_->fill(state_.panels);
    state_.panels.shown = lesson_panels_;
    state_.inspect = lesson_inspect_;
    state_.panels.message = panel_message_;
}

std::optional<Value> Interpreter::lookup(const std::string& path) const {
    if (path == "error") return Value{state_.error.value_or("")};  // "" when the step had no error
    const auto dot = path.find('.');
    if (dot == std::string::npos) return std::nullopt;
    const std::string head = path.substr(0, dot), key = path.substr(dot + 1);
    if (const std::optional<Stage> stage = parse_stage(head)) {
        // The answer this step wrote, while the fresh request has none.
        if (*stage == Stage::respond && !state_.trace.last(Stage::respond)) return answered_.lookup(path);
        return state_.trace.lookup(path);
    }
    if (head == "response") {
        const std::optional<Response>& response = state_.response ? state_.response : answered_response_;
        if (!response) return std::nullopt;
        if (key == keys::text) return response->text;
        for (const auto& f : response->fields)
            if (f.key == key) return f.value;
        return std::nullopt;
    }
    if (head == "model") {
        if (key == keys::loaded) return std::string(state_.loaded ? "yes" : "no");
        if (key == keys::checksum) return state_.checksum.empty() ? std::nullopt : std::optional<Value>(state_.checksum);
        if (key == delivery::keys::frozen) return std::string(state_.training.frozen ? "yes" : "no");
        return model_->property(key);
    }
    if (head == "train") {
        const auto& t = state_.training;
        if (!t.last) return std::nullopt;
        const TrainRecord& s = *t.last;
        namespace k = delivery::keys;
        if (key == k::loss) return s.loss;
        if (key == k::final_loss) return trainer_ ? std::optional<Value>(trainer_->loss()) : std::nullopt;
        if (key == k::step) return static_cast<double>(s.step);
        if (key == k::examples) return static_cast<double>(t.examples);
        if (key == k::first_loss) return t.loss.empty() ? std::nullopt : std::optional<Value>(t.loss.front());
        if (key == k::frozen) return std::string(t.frozen ? "yes" : "no");
        for (size_t i = 0; i < t.param_keys.size() && i < s.params.size(); ++i)
            if (key == t.param_keys[i]) return s.params[i];
        for (size_t i = 0; i < t.grad_keys.size() && i < s.grad.size(); ++i)
            if (key == t.grad_keys[i]) return s.grad[i];
        return std::nullopt;
    }
    if (head == "kv_experiment" || head == "kv_calc" || head == "logit_lens") return panel_lookup(state_.panels, head, key);
    if (head == "served") {
        const auto& sv = state_.served;
        if (sv.empty()) return std::nullopt;
        if (key == "count") return static_cast<double>(sv.size());
        std::set<std::string> distinct;
        double warm_ms = 0;
        int warm = 0;
        for (const auto& s : sv) {
            distinct.insert(s.text);
            if (!s.cold) warm_ms += s.total_ms, ++warm;
        }
        if (key == "distinct") return static_cast<double>(distinct.size());
        if (key == "cold") return static_cast<double>(std::count_if(sv.begin(), sv.end(), [](auto& s) { return s.cold; }));
        if (key == "mean_warm_ms") return warm ? std::optional<Value>(warm_ms / warm) : std::nullopt;
        // Any numeric response field, one value per served request: "served.minutes".
        std::vector<double> values;
        for (const auto& s : sv)
            for (const auto& f : s.fields)
                if (f.key == key && std::holds_alternative<double>(f.value)) values.push_back(std::get<double>(f.value));
        if (values.size() == sv.size()) return values;
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<Value> Interpreter::operand(const Operand& o) const {
    std::optional<Value> v;
    switch (o.kind) {
        case Operand::Kind::literal: return o.literal;
        case Operand::Kind::path: v = lookup(o.name); break;
        case Operand::Kind::remembered:
            if (const auto it = remembered_.find(o.name); it != remembered_.end()) v = it->second;
            break;
    }
    if (v && (o.times != 1 || o.plus != 0))
        if (const double* x = std::get_if<double>(&*v)) v = *x * o.times + o.plus;
    return v;
}

namespace {

// Text as a lesson author types it: the engine writes minus signs as "−"
// (U+2212), a keyboard as "-"; both read as "-".
std::string typed(const Value& v) {
    std::string t = format_value(v);
    for (std::size_t at = t.find("\u2212"); at != std::string::npos; at = t.find("\u2212", at)) t.replace(at, 3, "-");
    return t;
}

// Equal as a lesson means it: numbers to 9 significant digits, so that
// 0.1 + 0.2 style rounding never fails a lesson (within 10⁻¹² of zero,
// where digits run out: 1e-17 is 0); anything else as written. Below 1 it
// was an absolute 1e-9, which took 4e-10 for 1.2e-9.
// A yes/no answer as a lesson may write it: the engine's "yes" and "no",
// YAML's true and false, a Chinese lesson's 是 and 否.
std::optional<bool> yes_no(const std::string& t) {
    if (t == "yes" || t == "true" || t == "是") return true;
    if (t == "no" || t == "false" || t == "否") return false;
    return std::nullopt;
}

bool same(const Value& got, const Value& want) {
    const double* g = std::get_if<double>(&got);
    const double* w = std::get_if<double>(&want);
    if (g && w) return std::fabs(*g - *w) <= std::max(1e-9 * std::max(std::fabs(*g), std::fabs(*w)), 1e-12);
    const std::string gt = typed(got), wt = typed(want);
    // A yes/no path ("yes" or "no", as the engine writes it) against any
    // way of writing yes or no: respond.weights_unchanged: 是 holds.
    if (gt == "yes" || gt == "no")
        if (const std::optional<bool> wb = yes_no(wt)) return *wb == (gt == "yes");
    return gt == wt;
}

// The numbers a `contains` looks for in a list: 5, "5", "5, -2" or "[5, −2]".
std::optional<std::vector<double>> number_run(const Value& want) {
    if (const double* w = std::get_if<double>(&want)) return std::vector<double>{*w};
    if (const auto* t = std::get_if<std::string>(&want)) return number_list_text(*t);
    return std::get<std::vector<double>>(want);  // a remembered list: its elements, in a row
}

// A list of numbers contains a number when one of its elements equals it
// (as `=` means equal), and "5, -2" when two neighbours are 5 and −2: as
// text, "[13, 13]" contained "3" and "[15, 5]" contained "5, 1".
bool list_contains(const std::vector<double>& list, const Value& want) {
    const std::optional<std::vector<double>> run = number_run(want);
    if (!run) return typed(list).find(typed(want)) != std::string::npos;
    return std::search(list.begin(), list.end(), run->begin(), run->end(),
                       [](double g, double w) { return same(g, w); }) != list.end();
}

bool holds(const Condition& c, const Value& got, const Value& want) {
    const double* g = std::get_if<double>(&got);
    const double* w = std::get_if<double>(&want);
    switch (c.op) {
        case Condition::Op::equals: return same(got, want);
        // tol: 0 is plain equality, not stricter than it.
        case Condition::Op::near: return g && w && (std::fabs(*g - *w) <= c.tolerance || same(got, want));
        case Condition::Op::contains:
            if (const auto* list = std::get_if<std::vector<double>>(&got)) return list_contains(*list, want);
            return typed(got).find(typed(want)) != std::string::npos;
        case Condition::Op::below: return g && w && *g < *w;
        case Condition::Op::above: return g && w && *g > *w;
    }
    return false;
}

}  // namespace

namespace {
// A value as a check reports it: text quoted, as the expectation writes it
// ("got \" mat\"", not "got  mat"; a sentence stays one unit beside "got").
std::string check_text(const Value& v) {
    if (const auto* t = std::get_if<std::string>(&v)) return quote_text(*t);
    return format_value(v);
}

// Whether a failed check's number prints as one it was compared with:
// "expected = output.top1_prob (output.top1_prob = 0.0494275), got
// 0.0494275" (a float's probability beside a double's) says nothing of why
// it failed. Then both are shown with every digit that tells them apart.
bool prints_alike(const Value& got, const std::vector<std::optional<Value>>& wants) {
    const auto* g = std::get_if<double>(&got);
    if (!g) return false;
    return std::any_of(wants.begin(), wants.end(), [&](const std::optional<Value>& w) {
        const auto* x = w ? std::get_if<double>(&*w) : nullptr;
        return x && *x != *g && format_value(*w) == format_value(got);
    });
}
std::string exact_text(const Value& v) {
    if (const auto* x = std::get_if<double>(&v)) return fmt::format("{}", *x);  // the shortest that reads back exactly
    return check_text(v);
}
}  // namespace

std::string Interpreter::why_nothing(const std::string& path) const {
    // Tensors from inside the forward pass are captured only while their panel is shown.
    if (path.rfind("logit_lens.", 0) == 0) return "show the logit_lens panel before the forward pass";
    const std::string head = path.substr(0, path.find('.'));
    // The answer's fields: was the request answered?
    if (head == "response" && state_.error && !(pipeline_ && pipeline_->done()))
        return "the step's error stopped the request before its answer";
    if (head == "response" && !(pipeline_ && pipeline_->done()))
        return "the request has not been answered yet; run: all walks it to the respond stage";
    if (head == "served" && state_.served.empty())
        return "no step has served requests yet; serve: N sends N requests through the six steps";
    if (head == "served" && path == "served.mean_warm_ms")
        return "every request served paid the cold load: none was warm";
    // A stage's path: had its stage run for this request?
    if (const std::optional<Stage> stage = parse_stage(head)) {
        // The answer this step wrote before it started afresh counts (lookup).
        const bool ran = state_.trace.last(*stage) || (*stage == Stage::respond && answered_.last(Stage::respond));
        // The step's error stopped the request short of it: that is
        // why, not a missing run (the error itself is reported above).
        if (!ran && state_.error)
            return fmt::format("the step's error stopped the request before the {} stage", head);
        if (!ran)
            return fmt::format("the request has not reached the {} stage; run: all, or run: {}, walks it "
                               "there",
                               head, head);
        // Its meaning often says when it is there: "(only when this request paid it)".
        std::string meaning;
        for (const PathInfo& p : lesson_paths(model_->description()))
            if (p.path == path) meaning = p.meaning;
        // A meaning is a noun ("time of the cold load"), a clause ("which
        // inputs dropout kept (1) …") or a participle ("rounded, after …"):
        // "it is the" before every one read "it is the which inputs …".
        return fmt::format("the {} stage gave no {} this time{}", head, path.substr(path.find('.') + 1),
                           meaning.empty() ? "" : "; what it holds: " + meaning);
    }
    return "";
}

CheckResult Interpreter::check(const Expectation& e) const {
    CheckResult r{e, false, "(nothing)", "", {}, std::nullopt};
    // What it is compared with, read now.
    std::vector<std::optional<Value>> wants;
    std::vector<std::pair<std::string, std::optional<Value>>> named;  // the paths and names it reads, as they are
    bool missing = false;
    for (const Condition& c : e.conditions) {
        wants.push_back(operand(c.operand));
        if (c.operand.kind == Operand::Kind::literal) continue;
        const std::string& name = c.operand.name;
        std::optional<Value> raw = c.operand.kind == Operand::Kind::path ? lookup(name) : std::nullopt;
        if (c.operand.kind == Operand::Kind::remembered)
            if (const auto it = remembered_.find(name); it != remembered_.end()) raw = it->second;
        named.emplace_back(name, raw);
        missing |= !wants.back().has_value();
    }
    const auto name_them = [&](bool exact) {
        r.against.clear();
        r.named.clear();
        for (const auto& [name, raw] : named) {
            const auto lost = forgotten_.find(name);
            r.named.emplace_back(name, raw ? (exact ? exact_text(*raw) : check_text(*raw))
                                           : lost != forgotten_.end() ? lost->second : "(nothing)");
            r.against += (r.against.empty() ? "" : "; ") + name + " = " + r.named.back().second;
        }
    };
    name_them(false);
    const std::optional<Value> got = lookup(e.path);
    if (!got) {
        const std::string why = why_nothing(e.path);
        r.got = why.empty() ? "(nothing)" : "(nothing: " + why + ")";
        return r;
    }
    r.got = elide(check_text(*got), max_check_text_bytes);
    if (const double* g = std::get_if<double>(&*got)) r.got_number = *g;
    if (missing) return r;  // nothing to compare with: neither true nor, under not, false
    // below, above and tol need two finite numbers: a text, a list or a NaN
    // (a diverged training's loss) is neither true nor, under not, false —
    // NaN passed {not: {below: x}} and {not: {above: x}} alike.
    for (size_t i = 0; i < e.conditions.size(); ++i) {
        const Condition::Op op = e.conditions[i].op;
        if (op != Condition::Op::below && op != Condition::Op::above && op != Condition::Op::near) continue;
        const double* g = std::get_if<double>(&*got);
        const double* w = std::get_if<double>(&*wants[i]);
        if (!g || !std::isfinite(*g) || !w || !std::isfinite(*w)) {
            r.got += g && std::isfinite(*g) ? incomparable_wanted : incomparable_got;
            return r;
        }
    }
    bool all = true;
    for (size_t i = 0; i < e.conditions.size(); ++i) all = all && holds(e.conditions[i], *got, *wants[i]);
    r.passed = e.negated ? !all : all;
    if (!r.passed && prints_alike(*got, wants)) {
        r.got = exact_text(*got);
        name_them(true);
    }
    return r;
}

}  // namespace sixstep::app
