#include "app/core/report.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "pipeline/core/text.h"

namespace sixstep::app {

namespace {

// Paths inside the working folder are shown relative to it: shorter on a projector.
std::string display_path(const std::string& path) {
    std::error_code ec;
    const auto rel = std::filesystem::path(path).lexically_relative(std::filesystem::current_path(ec));
    if (ec || rel.empty() || rel.native().rfind("..", 0) == 0) return path;
    return rel.string();
}

// Text values may hold newlines or edge spaces (a token " mat", "\n"): those
// are shown quoted with visible escapes so one field stays on one line.
std::string printable(const std::string& s) {
    const bool plain = !s.empty() && s.front() != ' ' && s.back() != ' ' &&
                       s.find_first_of("\n\t\r") == std::string::npos;
    return plain ? s : quote_text(s);
}

std::string field_line(const Field& f) {
    const std::string& name = f.label.empty() ? f.key : f.label;
    const auto* text = std::get_if<std::string>(&f.value);
    const std::string v = text ? printable(*text) : format_value(f.value);
    return fmt::format("{} = {}{}", name, v, f.unit.empty() ? "" : " " + f.unit);
}

std::string indent(const std::string& text, const std::string& pad) {
    std::string out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) out += pad + text.substr(start, end - start) + "\n";
        else if (end < text.size()) out += "\n";
        start = end + 1;
    }
    return out;
}

// "normalize OFF, range check on, mode eval, dropout 0, seed 42, lang en":
// every setting of the model, a switch as on/OFF, an unset optional one left out.
std::string settings_line(const LessonState& s) {
    std::string out;
    for (const auto& v : s.settings) {
        const Knob* k = s.description ? s.description->find_knob(v.name) : nullptr;
        if (v.value.empty() && k && k->optional) continue;
        std::string value = v.value;
        if (k && k->type == KnobType::boolean) value = v.value == k->spelled(true) ? "on" : "OFF";
        std::string name = v.name;
        std::replace(name.begin(), name.end(), '_', ' ');
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, value);
    }
    return out;
}

}  // namespace

std::string format_event(const TraceEvent& ev) {
    std::string out = fmt::format("  ▸ {}{}   ({:.3f} ms)\n", stage_title(ev.stage),
                                  ev.iteration > 0 ? fmt::format(" [token {}]", ev.iteration) : "", ev.elapsed_ms);
    if (!ev.summary.empty()) out += "      " + ev.summary + "\n";
    for (const auto& line : ev.arithmetic) out += "      " + line + "\n";
    std::string ins, outs;
    for (const auto& f : ev.inputs) ins += (ins.empty() ? "" : "; ") + field_line(f);
    for (const auto& f : ev.outputs) outs += (outs.empty() ? "" : "; ") + field_line(f);
    if (!ins.empty()) out += "      in:  " + ins + "\n";
    if (!outs.empty()) out += "      out: " + outs + "\n";
    for (const auto& w : ev.warnings) out += "      ⚠ " + w + "\n";
    return out;
}

std::string format_check(const CheckResult& c) {
    const Expectation& e = c.expectation;
    if (c.passed) return fmt::format("  ✓ {} {}", e.path, c.expected_text());
    return fmt::format("  ✗ {}: {}: expected {}, got {}", e.where.str(), e.path, c.expected_text(), c.got);
}

std::string format_step(const StepReport& r, const LessonState& s, int step_count) {
    const LessonStep& st = *r.step;
    std::string out = fmt::format("\n── Step {}/{}{} ──\n", r.index + 1, step_count,
                                  st.title.empty() ? "" : ": " + st.title);
    if (!st.say.empty()) out += indent(st.say, "  ") + "\n";
    if (!st.set.empty()) out += "  ⚙ settings: " + settings_line(s) + "\n";
    if (st.request) {
        std::string fields;
        for (const auto& [k, v] : *st.request) fields += (fields.empty() ? "" : ", ") + k + ": \"" + v + "\"";
        out += "  ✉ request: {" + fields + "}\n";
    }
    if (r.train_steps > 0) {
        const auto& t = s.training;
        out += fmt::format("  ⟳ training: {} gradient-descent step{} on {} examples ({}), learning rate {}\n",
                           r.train_steps, r.train_steps == 1 ? "" : "s", t.examples, display_path(t.data_path), t.learning_rate);
        for (const auto& ts : r.train_shown) {
            // A linear model's parameters: the bias b, then the weights w.
            std::string grad, w;
            for (size_t i = 0; i < ts.grad.size(); ++i) grad += fmt::format("{}{:+.3f}", i ? ", " : "", ts.grad[i]);
            for (size_t i = 1; i < ts.params.size(); ++i) w += fmt::format("{}{:.3f}", i > 1 ? ", " : "", ts.params[i]);
            out += fmt::format("    step {:>5}: loss {:>10.4f}  grad [{}]  →  b {:.3f}, w [{}]\n", ts.step, ts.loss, grad,
                               ts.params.empty() ? 0.0 : ts.params[0], w);
            if (ts.step == 1 && !ts.predictions.empty()) {
                std::string preds;
                for (size_t i = 0; i < ts.predictions.size(); ++i)
                    preds += fmt::format("{}{:.1f} vs {:.1f}", i ? ", " : "", ts.predictions[i], ts.labels[i]);
                out += "               predictions vs labels: " + preds + "\n";
            }
        }
    }
    if (st.freeze && s.training.frozen)
        out += fmt::format("  ❄ frozen: weights saved to {}; from now on the model only serves\n",
                           s.training.weights_file);
    for (const auto& ev : r.events) out += format_event(ev);
    if (!r.served.empty()) {
        double warm = 0;
        int n_warm = 0;
        std::string answers;
        for (size_t i = 0; i < r.served.size(); ++i) {
            const auto& sv = r.served[i];
            if (!sv.cold) warm += sv.total_ms, ++n_warm;
            if (i < 12) answers += fmt::format("{}{}", i ? ", " : "", format_value(sv.answer));
        }
        if (r.served.size() > 12) answers += ", …";
        out += fmt::format("  ⇶ served {} request{}: answers [{}]\n", r.served.size(), r.served.size() == 1 ? "" : "s",
                           answers);
        out += fmt::format("    cold load {:.3f} ms once; each warm request {:.4f} ms on average\n", s.cold_load_ms,
                           n_warm ? warm / n_warm : 0.0);
    }
    if (s.response && !r.events.empty() && r.events.back().stage == Stage::respond)
        out += "  ⇒ " + printable(s.response->text) + "\n";
    if (r.error) out += "  ✗ error: " + *r.error + "\n";
    for (const auto& c : r.checks) out += format_check(c) + "\n";
    return out;
}

std::string dump_json(const nlohmann::ordered_json& j) {
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

nlohmann::ordered_json to_json(const Value& v) {
    if (auto* d = std::get_if<double>(&v)) return *d;
    if (auto* s = std::get_if<std::string>(&v)) return *s;
    return std::get<std::vector<double>>(v);
}

nlohmann::ordered_json to_json(const TraceEvent& ev) {
    nlohmann::ordered_json j;
    j["stage"] = std::string(stage_name(ev.stage));
    j["iteration"] = ev.iteration;
    j["summary"] = ev.summary;
    j["arithmetic"] = ev.arithmetic;
    auto fields = [](const std::vector<Field>& fs) {
        nlohmann::ordered_json o = nlohmann::ordered_json::object();
        for (const auto& f : fs) o[f.key] = to_json(f.value);
        return o;
    };
    j["inputs"] = fields(ev.inputs);
    j["outputs"] = fields(ev.outputs);
    j["warnings"] = ev.warnings;
    j["elapsed_ms"] = ev.elapsed_ms;
    return j;
}

nlohmann::ordered_json to_json(const CheckResult& c) {
    nlohmann::ordered_json j;
    j["path"] = c.expectation.path;
    j["expected"] = c.expectation.describe();
    if (!c.against.empty()) j["against"] = c.against;
    j["got"] = c.got;
    j["passed"] = c.passed;
    j["where"] = c.expectation.where.str();
    return j;
}

nlohmann::ordered_json to_json(const StepReport& r) {
    nlohmann::ordered_json j;
    j["step"] = r.index + 1;
    j["title"] = r.step ? r.step->title : "";
    j["say"] = r.step ? r.step->say : "";
    j["events"] = nlohmann::ordered_json::array();
    for (const auto& ev : r.events) j["events"].push_back(to_json(ev));
    if (r.train_steps) {
        j["train_steps"] = r.train_steps;
        auto& shown = j["train_shown"] = nlohmann::ordered_json::array();
        for (const auto& t : r.train_shown)
            shown.push_back({{"step", t.step},
                             {"loss", t.loss},
                             {"grad", t.grad},
                             {"params", t.params}});
    }
    if (!r.served.empty()) {
        auto& sv = j["served"] = nlohmann::ordered_json::array();
        for (const auto& s : r.served)
            sv.push_back({{s.answer_key, to_json(s.answer)}, {"total_ms", s.total_ms}, {"cold", s.cold}});
    }
    if (r.error) j["error"] = *r.error;
    j["checks"] = nlohmann::ordered_json::array();
    for (const auto& c : r.checks) j["checks"].push_back(to_json(c));
    j["passed"] = r.passed();
    return j;
}

}  // namespace sixstep::app
