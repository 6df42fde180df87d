#include "app/core/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "app/core/catalogue.h"
#include "app/core/line_breaks.h"
#include "app/core/llm_panels.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/kv_calc.h"
#include "pipeline/serving/quantity.h"

namespace sixstep::app {

namespace {

// The narration's words in the lesson's language (catalogue.h); what the
// catalogue lacks (a prompt, a token, a path) stays as it is.
std::string say(std::string_view lang, const std::string& en) {
    std::optional<std::string> t = translate(lang, en);
    return t ? *t : en;
}

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

// A number as the terminal prints it: shown_number's four significant
// digits (trace.h), or the digits the field asks for (the delivery model's
// six, as its working prints them). A time below a thousandth of its unit
// is "< 0.001 ms": the stages' own times print to the microsecond, and
// 2×10⁻⁵ ms would claim a clock that fine.
bool is_short_time_unit(std::string_view unit) { return unit == "ms" || unit == "\u00b5s"; }

std::string terminal_number(double x, const Field& f) {
    if (is_short_time_unit(f.unit) && x > 0 && x < 1e-3) return "< 0.001";
    return shown_number(x, f.digits > 0 ? f.digits : 4);
}

std::string terminal_value(const Field& f) {
    if (const auto* x = std::get_if<double>(&f.value)) return terminal_number(*x, f);
    if (const auto* xs = std::get_if<std::vector<double>>(&f.value))
        return list_text(*xs, [&](double x) { return terminal_number(x, f); });
    return format_value(f.value);
}

std::string field_line(const Field& f, std::string_view lang) {
    // (A Chinese narration keeps a key the catalogue keeps — n_layer, top_k — as the identifier it is.)
    const std::string key = say(lang, f.key);
    std::string name = !f.label.empty() ? say(lang, f.label) : key == f.key && lang == "zh" ? key : key_as_words(key);
    // "ttft p50 ms = 3.9 ms": a key that ends in its unit says it once, after the value.
    if (const std::string tail = " " + f.unit; f.label.empty() && !f.unit.empty() && name.size() > tail.size() &&
                                               name.compare(name.size() - tail.size(), tail.size(), tail) == 0)
        name.erase(name.size() - tail.size());
    const auto* text = std::get_if<std::string>(&f.value);
    const std::string v = text ? printable(say(lang, *text)) : terminal_value(f);
    const auto* x = std::get_if<double>(&f.value);
    // Chinese does not inflect: its "tokens" carries the measure word (个词元).
    const std::string unit(x && lang != "zh" ? unit_for_count(*x, f.unit) : std::string_view(f.unit));
    return fmt::format("{} = {}{}", name, v, unit.empty() ? "" : (unit == "%" ? "" : " ") + say(lang, unit));
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

// "normalize OFF, range check on, mode eval, dropout 0.5 (off in eval), seed 42,
// lang en": every setting of the model, a switch as on/OFF, an unset optional
// one left out, one in effect only under another's value said to be off.
std::string settings_line(const LessonState& s, std::string_view lang) {
    std::string out;
    for (const auto& v : s.settings) {
        const Knob* k = s.description ? s.description->find_knob(v.name) : nullptr;
        if (v.value.empty() && k && k->optional) continue;
        std::string value = v.value;
        if (k && k->type == KnobType::boolean) value = v.value == k->spelled(true) ? "on" : "OFF";
        // Looked up as the knob is named (every knob has its translation:
        // test_catalogue), then "range_check" read as "range check".
        std::string name = say(lang, v.name);
        std::replace(name.begin(), name.end(), '_', ' ');
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, say(lang, value));
        // "dropout 0.5" in eval mode would read as if dropout were applied.
        if (k && !k->only_while_setting.empty()) {
            const std::string& other = s.setting(k->only_while_setting);
            if (!other.empty() && other != k->only_while_value)
                out += " (" + say(lang, fmt::format("off in {}", other)) + ")";
        }
    }
    return out;
}

// What a step's transformer panels hold, as text: the window draws them, and
// a terminal would otherwise show only the checks made on them (lesson 06's
// calculator, lesson 05's cache switched off, lesson 04's attention and lens).
std::string panels_text(const LessonStep& st, const LessonState& s, std::string_view lang) {
    const PanelsState& pn = s.panels;
    std::string out;
    const auto line = [&](const std::string& en) { out += "    " + say(lang, en) + "\n"; };
    if (st.kv_calc && pn.kv_calc) {
        const serving::KvCalcResult& r = *pn.kv_calc;
        out += "  ▦ " + say(lang, fmt::format("KV memory: {} layers × {} KV heads × head_dim {}, {}", r.n_layer,
                                              r.n_head_kv, r.head_dim, serving::kv_dtype_info(r.params.dtype).name)) + "\n";
        for (const std::string& f : r.formula) line(f);
        line(fmt::format("per token {} · per session {} ({}) · for all sessions {} ({})",
                         serving::bytes_binary(static_cast<double>(r.bytes_per_token)),
                         serving::bytes_decimal(static_cast<double>(r.bytes_per_session)),
                         serving::bytes_binary(static_cast<double>(r.bytes_per_session)),
                         serving::bytes_decimal(static_cast<double>(r.bytes_total)),
                         serving::bytes_binary(static_cast<double>(r.bytes_total))));
        // The shape's own notes whole; the general caveats by name, as the
        // window's folded line gives them (five calculations, five times).
        const std::size_t own = std::min(r.params.shape_notes.size(), r.notes.size());
        for (std::size_t i = 0; i < own; ++i) line("- " + r.notes[i]);
        if (r.notes.size() > own) line("Where the formula does not hold: MLA, sliding windows, recurrent layers");
    }
    if (st.kv_experiment && pn.kv_experiment) {
        const llm::KvExperiment& e = pn.kv_experiment->result;
        out += "  ▦ " + say(lang, fmt::format("the KV cache on and off, {} tokens", e.steps.size())) + "\n";
        line(fmt::format("with the cache: {:.3g} ms, forward passes reading {} tokens", e.cached_total_ms,
                         e.forward_tokens_cached));
        line(fmt::format("without it: {:.3g} ms, reading {} tokens ({:.3g}× the time)", e.uncached_total_ms,
                         e.forward_tokens_uncached, e.cached_total_ms > 0 ? e.uncached_total_ms / e.cached_total_ms : 0.0));
        if (e.cached_early_ms > 0)
            line(fmt::format("a decode step, early → late: {:.3g} → {:.3g} ms with the cache, {:.3g} → {:.3g} ms without",
                             e.cached_early_ms, e.cached_late_ms, e.uncached_early_ms, e.uncached_late_ms));
        line(e.identical_tokens ? "the same tokens both ways" : "the tokens DIFFER between the two runs");
    }
    const auto showing = [&](std::string_view panel) {
        return st.show && std::find(st.show->begin(), st.show->end(), panel) != st.show->end();
    };
    const auto piece_at = [&](int pos) -> std::string {
        if (!pn.view || pos < 0 || pos >= static_cast<int>(pn.view->tokens.size())) return std::to_string(pos);
        return quote_text(pn.view->tokens[static_cast<size_t>(pos)].piece);
    };
    if ((st.attention || showing(attention_panel)) && pn.attention && pn.attention->n_pos > 0) {
        const llm::AttentionMap& a = *pn.attention;
        const int head = std::clamp(pn.attention_head, 0, std::max(0, a.n_head - 1)), q = a.n_pos - 1;
        std::vector<int> keys(static_cast<size_t>(a.n_pos));
        for (int k = 0; k < a.n_pos; ++k) keys[static_cast<size_t>(k)] = k;
        std::stable_sort(keys.begin(), keys.end(),
                         [&](int x, int y) { return a.weight(head, q, x) > a.weight(head, q, y); });
        std::string top;
        for (size_t i = 0; i < keys.size() && i < 4; ++i)
            top += fmt::format("{}{} {:.2f}", i ? ", " : "", piece_at(a.pos0 + keys[i]), a.weight(head, q, keys[i]));
        out += "  ▦ " + say(lang, fmt::format("attention, layer {} head {}: the last token {} looks most at", a.layer,
                                              head, piece_at(a.pos0 + q))) +
               " " + top + "\n";
    }
    if ((showing(logit_lens_panel)) && !pn.lens.empty()) {
        out += "  ▦ " + say(lang, "logit lens: the likeliest next token, read after each layer") + "\n";
        for (const LensRowView& row : pn.lens)
            if (!row.top.empty())
                out += "    " + say(lang, fmt::format("layer {}", row.layer)) + ": " + quote_text(row.top.front().piece) +
                       fmt::format(" {:.2f}", row.top.front().p) + "\n";
    }
    return out;
}

}  // namespace

std::string format_event(const TraceEvent& ev, std::string_view lang) {
    std::string out = fmt::format("  ▸ {}{}   ({:.3f} ms)\n", say(lang, std::string(stage_title(ev.stage))),
                                  ev.iteration > 0 ? " " + say(lang, fmt::format("[token {}]", ev.iteration)) : "", ev.elapsed_ms);
    if (!ev.summary.empty()) out += "      " + say(lang, ev.summary) + "\n";
    for (const auto& line : ev.arithmetic) out += "      " + say(lang, line) + "\n";
    std::string ins, outs;
    for (const auto& f : ev.inputs) ins += (ins.empty() ? "" : "; ") + field_line(f, lang);
    for (const auto& f : ev.outputs) outs += (outs.empty() ? "" : "; ") + field_line(f, lang);
    if (!ins.empty()) out += "      " + say(lang, "in:") + "  " + ins + "\n";
    if (!outs.empty()) out += "      " + say(lang, "out:") + " " + outs + "\n";
    for (const auto& w : ev.warnings) out += "      ⚠ " + say(lang, w) + "\n";
    return out;
}

namespace {
// The check every step has unless it expects an error (interpreter.cpp):
// `error` equals "(no error)".
bool is_no_error_check(const Expectation& e) {
    const auto* literal = e.conditions.size() == 1 ? std::get_if<std::string>(&e.conditions[0].operand.literal) : nullptr;
    return e.path == "error" && !e.negated && literal && *literal == "(no error)";
}
}  // namespace

std::string format_check(const CheckResult& c, std::string_view lang, std::string_view step_note) {
    const Expectation& e = c.expectation;
    const std::string expected = c.expected_text(lang);
    if (c.passed) return fmt::format("  ✓ {} {}", e.path, expected);
    const std::string where = step_note.empty() ? e.where.str() : fmt::format("{} ({})", e.where.str(), step_note);
    // The step's own check, said as what happened, not as 'error: expected
    // = "(no error)", got …'.
    if (is_no_error_check(e))
        return fmt::format("  ✗ {}: {} {}", where, say(lang, "the step failed:"), say(lang, c.got));
    return fmt::format("  ✗ {}: {}: {} {}, {} {}", where, e.path, say(lang, "expected"), expected, say(lang, "got"),
                       c.got_text(lang));
}

std::string wrap_text(std::string_view text, int columns, const std::string& pad) {
    if (columns <= 0) return indent(std::string(text), pad);
    std::string out;
    for (const std::string& line : break_lines_columns(reflow(text), std::max(20, columns - display_columns(pad))))
        out += line.empty() ? "\n" : pad + line + "\n";
    return out;
}

std::string format_step_heading(const LessonStep& st, int index, int step_count, std::string_view lang, int columns) {
    std::string out = "\n── " + say(lang, fmt::format("Step {}/{}", index + 1, step_count)) +
                      (st.title.empty() ? "" : ": " + st.title) + " ──\n";
    if (!st.say.empty()) out += wrap_text(st.say, columns, "  ") + "\n";
    return out;
}

std::string format_step(const StepReport& r, const LessonState& s) {
    const LessonStep& st = *r.step;
    const std::string& lang = s.language;
    std::string out;
    if (!st.set.empty()) out += "  ⚙ " + say(lang, "settings:") + " " + settings_line(s, lang) + "\n";
    if (st.request) {
        std::string fields;
        // As a lesson would write it: a number bare, text quoted (max_tokens:
        // "3" taught a student to quote numbers).
        const auto written = [](const std::string& v) { return whole_number_text(v) ? v : quote_text(v); };
        for (const auto& [k, v] : *st.request) fields += (fields.empty() ? "" : ", ") + k + ": " + written(v);
        out += "  ✉ " + say(lang, "request:") + " {" + fields + "}\n";
    }
    if (r.train_steps > 0) {
        const auto& t = s.training;
        out += "  ⟳ " + say(lang, fmt::format("training: {} gradient-descent step{} on {} examples ({}), learning rate {}",
                                              r.train_steps, r.train_steps == 1 ? "" : "s", t.examples,
                                              display_path(t.data_path), t.learning_rate)) + "\n";
        // A long run shows a few of its steps: say which, so "9995 steps"
        // above four lines of steps reads as meant.
        if (static_cast<int>(r.train_shown.size()) < r.train_steps) {
            std::string numbers;
            for (const auto& ts : r.train_shown) numbers += fmt::format("{}{}", numbers.empty() ? "" : ", ", ts.step);
            out += "    " + say(lang, r.train_shown.size() == 1 ? fmt::format("one of them shown: step {}", numbers)
                                                                : fmt::format("{} of them shown: steps {}",
                                                                              r.train_shown.size(), numbers)) + "\n";
        }
        // Fixed decimals, but a power of ten past 10⁹: data of 10¹⁰⁰ printed a
        // loss of two hundred digits.
        const auto fixed = [](double x, int decimals, bool sign = false) {
            if (std::isfinite(x) && std::fabs(x) >= 1e9) return (sign && x > 0 ? "+" : "") + readable_number(x, 4);
            return sign ? fmt::format("{:+.{}f}", x, decimals) : fmt::format("{:.{}f}", x, decimals);
        };
        for (const auto& ts : r.train_shown) {
            // A linear model's parameters: the bias b, then the weights w.
            std::string grad, w;
            for (size_t i = 0; i < ts.grad.size(); ++i) grad += (i ? ", " : "") + fixed(ts.grad[i], 3, true);
            for (size_t i = 1; i < ts.params.size(); ++i) w += (i > 1 ? ", " : "") + fixed(ts.params[i], 3);
            out += "    " + say(lang, fmt::format("step {:>5}: loss {:>10}  grad [{}]  →  b {}, w [{}]", ts.step,
                                                      fixed(ts.loss, 4), grad,
                                                      fixed(ts.params.empty() ? 0.0 : ts.params[0], 3), w)) + "\n";
            if (ts.step == 1 && !ts.predictions.empty()) {
                std::string preds;
                for (size_t i = 0; i < ts.predictions.size(); ++i)
                    preds += (i ? ", " : "") + fixed(ts.predictions[i], 1) + " vs " + fixed(ts.labels[i], 1);
                out += "               " + say(lang, "predictions vs labels:") + " " + preds + "\n";
            }
        }
    }
    if (st.freeze && s.training.frozen)
        out += "  ❄ " + say(lang, fmt::format("frozen: weights saved to {}; from now on the model only serves",
                                              s.training.weights_file)) + "\n";
    for (const std::string& note : r.notes) out += "  ↻ " + say(lang, note) + "\n";
    for (const auto& ev : r.events) out += format_event(ev, lang);
    out += panels_text(st, s, lang);
    if (!r.served.empty()) {
        double warm = 0;
        int n_warm = 0;
        bool any_cold = false;
        std::string answers;
        for (size_t i = 0; i < r.served.size(); ++i) {
            const auto& sv = r.served[i];
            if (!sv.cold) warm += sv.total_ms, ++n_warm;
            any_cold |= sv.cold;
            // A text answer quoted: " upon a time," listed bare ran into the commas between.
            const auto* text = std::get_if<std::string>(&sv.answer);
            if (i < 12) answers += fmt::format("{}{}", i ? ", " : "", text ? quote_text(*text) : format_value(sv.answer));
        }
        if (r.served.size() > 12) answers += ", …";
        out += "  ⇶ " + say(lang, fmt::format("served {} request{}: answers [{}]", r.served.size(),
                                              r.served.size() == 1 ? "" : "s", answers)) + "\n";
        // Said "cold load … once" of a load an earlier step paid too; and
        // "0.000 ms" for a model that reports none.
        const double mean_warm = n_warm ? warm / n_warm : 0.0;
        // The load as its stage printed it: "< 0.001 ms", not "0.000 ms".
        const std::string load_ms = s.cold_load_ms > 0 && s.cold_load_ms < 1e-3 ? std::string("< 0.001")
                                                                                : fmt::format("{:.3f}", s.cold_load_ms);
        if (any_cold)
            out += "    " + say(lang, fmt::format("cold load {} ms once; each warm request {:.4f} ms on average",
                                              load_ms, mean_warm)) + "\n";
        else if (s.cold_load_ms > 0)
            out += "    " + say(lang, fmt::format("the cold load ({} ms) was paid once, before; each warm request "
                                              "{:.4f} ms on average",
                                              load_ms, mean_warm)) + "\n";
        else
            out += "    " + say(lang, fmt::format("weights already loaded, no cold load; each request {:.4f} ms on average",
                                              mean_warm)) + "\n";
    }
    if (s.response && !r.events.empty() && r.events.back().stage == Stage::respond)
        out += "  ⇒ " + printable(s.response->engine_words ? say(lang, s.response->text) : s.response->text) + "\n";
    if (r.error) {
        // An error the step asks for (a lesson showing a refusal) is not a
        // failure: it reads differently from one, to the eye and to grep.
        const bool expected = std::any_of(r.checks.begin(), r.checks.end(), [](const CheckResult& c) {
            return c.passed && c.expectation.path == "error" && !c.expectation.negated;
        });
        // A failed step's own check below says the error, where the step is:
        // said here too, it was printed twice.
        const bool said_below = std::any_of(r.checks.begin(), r.checks.end(), [](const CheckResult& c) {
            return !c.passed && is_no_error_check(c.expectation);
        });
        if (expected)
            out += "  ⊘ " + say(lang, "refused, as this step expects:") + " " + say(lang, *r.error) + "\n";
        else if (!said_below)
            out += "  ✗ " + say(lang, "error:") + " " + say(lang, *r.error) + "\n";
    }
    for (const auto& c : r.checks) out += format_check(c, lang) + "\n";
    return out;
}

std::string dump_json(const nlohmann::ordered_json& j) {
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string dump_json(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); }

namespace {
// A whole number as a JSON integer (a token id is 388, not 388.0), any other
// as a double.
nlohmann::ordered_json json_number(double x) {
    if (std::isfinite(x) && x == std::round(x) && std::fabs(x) < 9007199254740992.0)  // 2^53: exact in a double
        return static_cast<std::int64_t>(x);
    return x;
}
}  // namespace

nlohmann::ordered_json to_json(const Value& v) {
    if (auto* d = std::get_if<double>(&v)) return json_number(*d);
    if (auto* s = std::get_if<std::string>(&v)) return *s;
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (double x : std::get<std::vector<double>>(v)) a.push_back(json_number(x));
    return a;
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
    // Each field's unit ("ms", "min/km", "tokens"), for the fields that have one.
    nlohmann::ordered_json units = nlohmann::ordered_json::object();
    for (const auto* fs : {&ev.inputs, &ev.outputs})
        for (const auto& f : *fs)
            if (!f.unit.empty()) units[f.key] = f.unit;
    if (!units.empty()) j["units"] = std::move(units);
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
    if (r.step && r.step->request) {
        nlohmann::ordered_json req = nlohmann::ordered_json::object();
        for (const auto& [k, v] : *r.step->request) req[k] = v;  // as the lesson wrote it
        j["request"] = std::move(req);
    }
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
    if (!r.notes.empty()) j["notes"] = r.notes;
    if (r.error) j["error"] = *r.error;
    j["checks"] = nlohmann::ordered_json::array();
    for (const auto& c : r.checks) j["checks"].push_back(to_json(c));
    j["passed"] = r.passed();
    return j;
}

}  // namespace sixstep::app
