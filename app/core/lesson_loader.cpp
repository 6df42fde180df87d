// Lesson loading: YAML → Lesson, with strict checking.
//
// yaml-cpp marks are 0-based; we report 1-based line:column. A missing key has
// no mark of its own, so errors about it point at the parent mapping.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "app/core/lesson.h"
#include "app/core/kv_calc_spec.h"
#include "app/core/lesson_paths.h"
#include "app/server/load_generator.h"
#include "pipeline/core/data_dir.h"
#include "pipeline/core/file.h"
#include "pipeline/core/suggest.h"
#include "pipeline/core/text.h"
#include "pipeline/delivery/dataset.h"
#include "pipeline/delivery/weights_file.h"
#include "pipeline/llm/backend_kind.h"
#include "pipeline/llm/generation.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/llm/text_codec.h"
#include "pipeline/llm/trace_keys.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/models.h"
#include "pipeline/tools/random_model.h"
#include "pipeline/serving/kv_calc.h"
#include "pipeline/serving/serving_keys.h"
#include "pipeline/serving/serving_lab.h"

namespace sixstep::app {

namespace fs = std::filesystem;

namespace {

class Reader {
public:
    // text: the lesson as read, for columns counted in characters.
    Reader(std::string path, std::string_view text) : path_(std::move(path)), text_(text) {
        for (std::size_t at = text_.find('\n'); at != std::string_view::npos; at = text_.find('\n', at + 1))
            line_starts_.push_back(at + 1);
    }

    SourceLocation at(const YAML::Node& n) const { return at(n.Mark()); }
    // yaml-cpp counts columns in bytes: "中文" is six of them, and an error
    // after Chinese text pointed past it. An editor counts characters.
    SourceLocation at(const YAML::Mark& m) const {
        if (m.line < 0) return SourceLocation{path_};
        const auto line = static_cast<std::size_t>(m.line);
        std::size_t start = line < line_starts_.size() ? line_starts_[line] : std::string_view::npos;
        // yaml-cpp counts the first line's columns after a byte order mark, and so does an editor.
        if (line == 0) start = bom_bytes();
        int column = m.column;
        if (start != std::string_view::npos && start + static_cast<std::size_t>(m.column) <= text_.size()) {
            column = 0;
            for (char c : text_.substr(start, static_cast<std::size_t>(m.column)))
                column += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // UTF-8 continuation bytes are not characters
        }
        return SourceLocation{path_, m.line + 1, column + 1};
    }
    std::string_view text() const { return text_; }
    // A UTF-8 byte order mark's 3 bytes, or 0: yaml-cpp's positions and
    // columns start after it, and so does what an editor shows.
    std::size_t bom_bytes() const { return text_.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0; }
    // The place of a byte of the text, as an editor shows it.
    SourceLocation at_offset(std::size_t offset) const {
        const auto next = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
        const auto line = static_cast<std::size_t>(next - line_starts_.begin()) - 1;
        YAML::Mark m;
        m.pos = static_cast<int>(offset);
        m.line = static_cast<int>(line);
        m.column = static_cast<int>(offset - line_starts_[line]);
        if (line == 0) m.column = std::max(0, m.column - static_cast<int>(bom_bytes()));  // as yaml-cpp counts
        return at(m);
    }
    [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const { throw Error(at(n), msg); }

    static std::string kind_of(const YAML::Node& n) {
        switch (n.Type()) {
            case YAML::NodeType::Map: return "a mapping";
            case YAML::NodeType::Sequence: return "a list";
            case YAML::NodeType::Scalar:
                // "［distance］": a list typed by an input method in Chinese mode, text to YAML.
                if (n.Tag() == "?" && (n.Scalar().starts_with("\uff3b") || n.Scalar().starts_with("\uff5b")))
                    return "\"" + n.Scalar() + "\", text: its full-width brackets are not YAML's ASCII [\u2026] or {\u2026}";
                return "\"" + n.Scalar() + "\"";
            case YAML::NodeType::Null: return "nothing";
            default: return "an undefined value";
        }
    }

    // Every key of a mapping must be one of `allowed`.
    void check_keys(const YAML::Node& map, const char* what, std::initializer_list<const char*> allowed) const {
        check_keys(map, what, std::vector<std::string>(allowed.begin(), allowed.end()));
    }
    void check_keys(const YAML::Node& map, const char* what, const std::vector<std::string>& names) const {
        for (const auto& kv : map) {
            const std::string key = kv.first.as<std::string>();
            if (std::find(names.begin(), names.end(), key) != names.end()) continue;
            // Full-width spaces (U+3000, a Chinese input method's) before a
            // key are text to YAML, so the key is "　　run" at the top level.
            if (key.rfind("\u3000", 0) == 0)
                fail(kv.first, "a full-width space (U+3000) before the key: YAML indents with ASCII spaces only (an "
                               "input method in Chinese mode types this one)");
            refuse_wide_colon(kv.first);
            // A path (stage.key) among a step's keys: an expectation that lost
            // its indentation under expect: (or remember:).
            const bool path_here = key.find('.') != std::string::npos &&
                                   std::find(names.begin(), names.end(), std::string("expect")) != names.end();
            const std::string slip = key_slip(key, names);
            fail(kv.first, fmt::format("unknown key \"{}\" in {}{} (expected one of: {}){}", key, what,
                                       slip.empty() ? did_you_mean(key, names) : slip, join_names(names),
                                       path_here ? "; a path to check goes under expect:, indented further than it"
                                                 : ""));
        }
    }

    // "run： all" as one text (a key whose colon is full-width, last in its
    // mapping or alone under one): the colon named where it is, as the
    // parser's errors name it elsewhere.
    void refuse_wide_colon(const YAML::Node& n) const {
        constexpr std::string_view wide_colon = "\uff1a";
        if (!n.IsScalar() || n.Tag() != "?") return;
        const std::string& t = n.Scalar();
        const std::size_t wide = t.find(wide_colon);
        if (wide == std::string::npos || wide == 0 || t.find(' ') < wide) return;
        std::string_view value = std::string_view(t).substr(wide + wide_colon.size());
        while (!value.empty() && (value.front() == ' ' || value.rfind("\u3000", 0) == 0))
            value.remove_prefix(value.front() == ' ' ? 1 : 3);
        throw Error(at_offset(static_cast<std::size_t>(std::max(0, n.Mark().pos)) + bom_bytes() + wide),
                    fmt::format("a full-width colon \"\uff1a\" after a key: YAML's keys end with an ASCII \":\" and a "
                                "space (an input method in Chinese mode types this one): write \"{}: {}\"",
                                t.substr(0, wide), value));
    }

    // Runs a check of the model's description; its Error gets n's position.
    template <typename F>
    auto checked(const YAML::Node& n, F&& check) const -> decltype(check()) {
        try {
            return check();
        } catch (const Error& e) {
            fail(n, e.message());
        }
    }

    void expect_map(const YAML::Node& n, const std::string& what) const {
        refuse_wide_colon(n);
        if (!n.IsMap())
            fail(n, fmt::format("{} must be a mapping, got {}{}", what, kind_of(n), n.IsScalar() ? key_slip(n.Scalar()) : ""));
    }

    // A key and its value that YAML read as one text, because the colon
    // between them is full-width ("kind：delivery"), lacks its space
    // ("run:all") or is missing ("run all"): what to write instead, or "".
    static std::string key_slip(std::string_view text, const std::vector<std::string>& keys = {}) {
        constexpr std::string_view wide_colon = "\uff1a";
        const std::size_t wide = text.find(wide_colon);
        const std::size_t colon = text.find(':'), space = text.find(' ');
        std::string key, value;
        if (wide != std::string_view::npos && wide < space)
            key = text.substr(0, wide), value = text.substr(wide + wide_colon.size());
        else if (colon != std::string_view::npos && colon < space && colon + 1 < text.size() && text[colon + 1] != ' ')
            key = text.substr(0, colon), value = text.substr(colon + 1);
        else if (space != std::string_view::npos && !keys.empty() &&
                 std::find(keys.begin(), keys.end(), text.substr(0, space)) != keys.end())
            key = text.substr(0, space), value = text.substr(space + 1);
        else
            return "";
        while (!value.empty() && (value.front() == ' ' || value.rfind("\u3000", 0) == 0))
            value.erase(0, value.front() == ' ' ? 1 : 3);
        if (key.empty()) return "";
        return fmt::format(" — a key and its value are written with an ASCII colon and a space: \"{}: {}\"", key, value);
    }

    std::string text(const YAML::Node& n, const std::string& what) const {
        if (!n.IsScalar()) fail(n, fmt::format("\"{}\" must be text, got {}", what, kind_of(n)));
        return n.Scalar();
    }

    double number(const YAML::Node& n, const std::string& what) const {
        if (!n.IsScalar()) fail(n, fmt::format("\"{}\" must be a number, got {}", what, kind_of(n)));
        try {
            const double v = n.as<double>();
            if (!std::isfinite(v)) throw YAML::Exception(n.Mark(), "");
            return v;
        } catch (const YAML::Exception&) {
            // "1 min": the number with a unit the value compared has already.
            const auto lead = leading_number(n.Scalar());
            const bool unit_after = lead && !lead->rest.empty() && lead->rest.front() == ' ';
            fail(n, fmt::format("\"{}\" must be a number, got {}{}", what, kind_of(n),
                                unit_after ? fmt::format(" — write {}", lead->number) : std::string()));
        }
    }

    int integer(const YAML::Node& n, const std::string& what, int lo, int hi) const {
        return static_cast<int>(whole(n, what, lo, hi));
    }
    // The same beyond int (exact up to 2^53, as doubles are).
    long long whole(const YAML::Node& n, const std::string& what, long long lo, long long hi) const {
        const double v = number(n, what);
        if (v != std::floor(v) || v < static_cast<double>(lo) || v > static_cast<double>(hi))
            fail(n, fmt::format("\"{}\" must be a whole number from {} to {}, got {}", what, lo, hi, n.Scalar()));
        return static_cast<long long>(v);
    }

    bool boolean(const YAML::Node& n, const std::string& what) const {
        if (n.IsScalar()) {
            try {
                return n.as<bool>();
            } catch (const YAML::Exception&) {
            }
        }
        fail(n, fmt::format("\"{}\" must be true or false, got {}", what, kind_of(n)));
    }

    // A plain scalar that reads as a number is a number; anything quoted is text.
    Value value(const YAML::Node& n, const std::string& what) const {
        if (!n.IsScalar()) fail(n, fmt::format("\"{}\" must be a number or a text, got {}", what, kind_of(n)));
        if (n.Tag() != "!") {
            try {
                const double v = n.as<double>();
                if (std::isfinite(v)) return v;
            } catch (const YAML::Exception&) {
            }
        }
        return n.Scalar();
    }

    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::string_view text_;
    std::vector<std::size_t> line_starts_{0};  // where each line begins in text_, found once
};

// "a", "a and b", "a, b and c" (`last` " and ", or " or ").
std::string listed(const std::vector<std::string>& names, const char* last) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
    return out;
}

ModelSpec read_model(const Reader& r, const YAML::Node& n) {
    r.expect_map(n, "\"model\"");
    r.check_keys(n, "model",
                 {"kind", "weights", "weights_file", "file", "random", "threads", "top_n", "backend", "url"});
    ModelSpec m;
    if (n["kind"]) {
        m.kind = r.text(n["kind"], "kind");
        r.checked(n["kind"], [&] { return &model_description(m.kind); });
    }
    const bool endpoint = m.kind == endpoint_kind;
    if (n["url"] && !endpoint)
        r.fail(n["url"], fmt::format("\"url\" is for kind {}: an OpenAI-compatible server to measure", endpoint_kind));
    if (endpoint && n["url"]) {
        // Another server: the lesson measures it and starts none of its own.
        m.url = r.text(n["url"], "url");
        m.url_at = r.at(n["url"]);
        r.checked(n["url"], [&] { return server::parse_server_url(m.url, server::UrlGiven::lesson_key); });
        for (const char* k : {"file", "random", "threads", "top_n", "backend", "weights", "weights_file"})
            if (n[k])
                r.fail(n[k], fmt::format("\"{}\" is for the lesson's own server; with \"url\" the lesson measures "
                                         "that server instead",
                                         k));
        return m;
    }
    if (reads_gguf(m.kind) || endpoint) {
        // A serving lesson whose experiments bring their own models (the
        // canary's delivery versions) loads none: no file is no weights.
        const bool optional = m.kind == "serving" && !n["file"] && !n["random"];
        // Both: which one would load was a guess, and the message said one was missing.
        if (n["file"] && n["random"])
            r.fail(n["random"], "give \"file\" or \"random\", not both: the model loads the GGUF file, or random "
                                "weights of a preset's shape");
        if (!n["file"] == !n["random"] && !optional)
            r.fail(n, fmt::format("kind {} needs \"file\": the GGUF file, relative to the lesson (or \"random\": a "
                                  "preset, for random weights; not both){}",
                                  m.kind, endpoint ? "; or \"url\": another server to measure" : ""));
        if (optional)
            for (const char* k : {"threads", "backend"})
                if (n[k])
                    r.fail(n[k], fmt::format("\"{}\" is for the model in \"file\" (or \"random\"), and this "
                                             "serving model has none",
                                             k));
        if (n["weights"] || n["weights_file"])
            r.fail(n["weights"] ? n["weights"] : n["weights_file"],
                   fmt::format("kind {} takes its weights from \"file\"", m.kind));
        if (n["file"]) {
            m.file = r.text(n["file"], "file");
            m.file_at = r.at(n["file"]);
        }
        if (const auto rnd = n["random"]) {
            m.random = r.text(rnd, "random");
            r.checked(rnd, [&] { return llm::random_model_preset(m.random); });
        }
        if (n["threads"]) m.threads = r.integer(n["threads"], "threads", 0, 256);
        // Only a language model's steps show a next-token table; elsewhere
        // top_n loaded and changed nothing.
        if (n["top_n"] && m.kind != "llm")
            r.fail(n["top_n"], fmt::format("\"top_n\" is for kind llm: the rows of its next-token probability table, "
                                           "which a {} lesson does not show",
                                           m.kind));
        if (n["top_n"]) m.top_n = r.integer(n["top_n"], "top_n", 1, 50);
        if (const auto b = n["backend"]) {
            if (endpoint) r.fail(b, "\"backend\" is for kinds llm and serving (the lesson's own server runs on the CPU)");
            const std::string name = r.text(b, "backend");
            const auto kind = llm::parse_backend_kind(name);
            if (!kind)
                r.fail(b, fmt::format("\"backend\" must be cpu, cuda or auto, got \"{}\"{}", printable_cut(name, 40),
                                      did_you_mean(name, {"cpu", "cuda", "auto"})));
            m.backend = *kind;
            // Like a missing file: found before step 1, where the lesson says it.
            if (const auto why = llm::backend_unavailable(m.backend))
                r.fail(b, fmt::format("backend cuda: {} (backend: auto runs on the CPU when there is no GPU)", *why));
        }
        return m;
    }
    for (const char* k : {"file", "random", "threads", "top_n", "backend"})
        if (n[k]) r.fail(n[k], fmt::format("\"{}\" is for models read from GGUF files (kind: llm or serving)", k));
    if (const auto w = n["weights"]) {
        r.expect_map(w, "\"weights\"");
        r.check_keys(w, "weights", {"bias", "distance", "congestion", "express_lane"});
        for (const auto& kv : w) m.weights.emplace_back(kv.first.Scalar(), r.number(kv.second, kv.first.Scalar()));
    }
    if (n["weights_file"]) {
        // Both: the file won and the inline weights were ignored without a word.
        if (n["weights"])
            r.fail(n["weights_file"], "give \"weights\" or \"weights_file\", not both: the model loads one of them");
        m.weights_file = r.text(n["weights_file"], "weights_file");
        m.file_at = r.at(n["weights_file"]);
    }
    if (const auto w = n["weights"]) {
        // Some of them: the others were the article's, without a word,
        // where a weights file without one is refused. All four, as there.
        std::vector<std::string> missing;
        for (const char* k : {"bias", "distance", "congestion", "express_lane"})
            if (!w[k]) missing.push_back(fmt::format("\"{}\"", k));
        if (!missing.empty())
            r.fail(w, fmt::format("\"weights\" gives {} of the 4: {} {} missing — a whole mapping reads {{bias: 5, "
                                  "distance: 2, congestion: 10, express_lane: -2}} (minutes, minutes per km, per "
                                  "unit of congestion, for the express lane)",
                                  4 - missing.size(), listed(missing, " and "),
                                  missing.size() == 1 ? "is" : "are"));
    }
    return m;
}

// "; it is a knob of the llm model": a name from another kind's lessons,
// said when the name is none of this kind's. "" when no kind has it.
std::string knob_elsewhere(std::string_view name, const ModelDescription& model, std::string_view noun = "knob") {
    std::vector<std::string> kinds;
    for (const std::string& kind : model_kinds())
        if (kind != model.kind && model_description(kind).find_knob(name)) kinds.push_back(kind);
    return kinds.empty() ? "" : fmt::format("; it is a {} of the {} model", noun, fmt::join(kinds, " and "));
}

// A request field must be one of the kind's request knobs.
void check_request_field(const Reader& r, const YAML::Node& key, const ModelDescription& model) {
    const std::string name = r.text(key, "request");
    const Knob* k = model.find_knob(name);
    if (k && k->target == KnobTarget::request) return;
    if (k)
        r.fail(key, fmt::format("\"{}\" is a setting of the {} model, not a request field: give it under set:", name,
                                model.kind));
    // {congestion: 0,3}: the comma ended the entry, and "3" became a field.
    const auto digits = [](std::string_view w) {
        return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (digits(name)) {
        // The whole part, before the comma: "0" of "0,3".
        const std::string_view text = r.text();
        std::size_t c = std::min(text.size(), static_cast<std::size_t>(std::max(0, key.Mark().pos)) + r.bom_bytes());
        while (c > 0 && text[c - 1] == ' ') --c;
        std::string_view whole;
        if (c > 0 && text[c - 1] == ',') {
            const std::size_t end = --c;
            while (c > 0 && text[c - 1] >= '0' && text[c - 1] <= '9') --c;
            whole = text.substr(c, end - c);
        }
        if (digits(whole))
            r.fail(key, fmt::format("\"{}\" is read as a request field: in a {{…}} a comma separates the entries, so "
                                    "the decimal comma of {},{} ended one: write {}.{}",
                                    printable_cut(name, 20), printable_cut(whole, 20), printable_cut(name, 20),
                                    printable_cut(whole, 20), printable_cut(name, 20)));
    }
    std::vector<std::string> fields;
    for (const auto& knob : model.knobs)
        if (knob.target == KnobTarget::request) fields.push_back(knob.name);
    const std::string slip = Reader::key_slip(name, fields);
    const std::string hint = slip.empty() ? did_you_mean(name, fields) : slip;
    r.fail(key, fmt::format("unknown request field \"{}\" for the {} model{} (known: {}){}", name, model.kind, hint,
                            join_names(fields), hint.empty() ? knob_elsewhere(name, model, "request field") : ""));
}

// Whether a step expects an error (an `error:` expectation, not negated,
// and not `error: ""`, which expects none): a lesson shows a refusal that
// way, so what would be refused is let through.
bool step_expects_error(const YAML::Node& step) {
    if (const YAML::Node expect = step["expect"]; expect && expect.IsMap())
        if (const YAML::Node error = expect["error"])
            return error.IsMap() ? !error["not"] : !(error.IsScalar() && error.Scalar().empty());
    return false;
}

// Whether the request that step i writes is expected to fail: at that step
// or at a later one that runs it before the next request (a missing field
// and a bad value alike: request_expects_error, read from the YAML before
// the later steps are read).
bool step_request_expects_error(const YAML::Node& steps, std::size_t i) {
    for (std::size_t j = i; j < steps.size(); ++j) {
        const YAML::Node st = steps[j];
        if (!st.IsMap() || (j > i && st["request"])) break;
        if (step_expects_error(st)) return true;
    }
    return false;
}

// `train:` and `freeze:` need a kind that trains.
void check_trains(const Reader& r, const YAML::Node& key, const ModelDescription& model) {
    if (model.trains) return;
    std::vector<std::string> kinds;
    for (const std::string& kind : model_kinds())
        if (model_description(kind).trains) kinds.push_back(kind);
    r.fail(key, fmt::format("\"{}\" needs a model that trains: the {} model is only served (kind: {} trains)",
                            key.Scalar(), model.kind, join_names(kinds, " or ")));
}

// `set:` — each name must be a setting of the lesson's model kind, each value
// a scalar its knob accepts.
std::vector<SettingChange> read_settings(const Reader& r, const YAML::Node& n, const ModelDescription& model) {
    r.expect_map(n, "\"set\"");
    std::vector<SettingChange> out;
    for (const auto& kv : n) {
        const std::string name = r.text(kv.first, "set");
        const Knob& knob = r.checked(kv.first, [&]() -> const Knob& { return model.setting(name); });
        const YAML::Node& v = kv.second;
        if (v.IsNull() && !knob.optional)
            r.fail(kv.first, fmt::format("\"{}\" needs a value ({})", name, knob.range_text()));
        if (!v.IsNull() && !v.IsScalar())
            r.fail(v, fmt::format("\"{}\" must be a single value ({}), got {}", name, knob.range_text(), Reader::kind_of(v)));
        const std::string value = r.checked(v, [&] { return knob.check(v.IsNull() ? "" : v.Scalar()); });
        out.push_back({name, value, r.at(kv.first)});
    }
    return out;
}

// `inspect:` — the stage the inspector opens on.
Stage read_inspect(const Reader& r, const YAML::Node& n) {
    const std::string v = r.text(n, "inspect");
    if (auto s = parse_stage(v)) return *s;
    std::vector<std::string> choices;
    for (Stage st : all_stages) choices.push_back(std::string(stage_name(st)));
    r.fail(n, fmt::format("\"inspect\" names a stage ({}), got \"{}\"{}", join_names(choices), v,
                          did_you_mean(v, choices)));
}

RunSpec read_run(const Reader& r, const YAML::Node& n) {
    const std::string v = r.text(n, "run");
    if (v == "stage") return {RunSpec::Kind::stage, Stage::request};
    if (v == "all") return {RunSpec::Kind::all, Stage::respond};
    if (v == "token") return {RunSpec::Kind::token, Stage::postprocess};
    if (auto s = parse_stage(v)) return {RunSpec::Kind::through, *s};
    std::vector<std::string> choices = {"stage", "token", "all"};
    for (Stage st : all_stages) choices.push_back(std::string(stage_name(st)));
    r.fail(n, fmt::format("\"run\" must be stage, token, all or a stage name (request, load, forward, output, "
                          "postprocess, respond), got \"{}\"{}",
                          v, did_you_mean(v, choices)));
}

TrainSpec read_train(const Reader& r, const YAML::Node& n) {
    TrainSpec t;
    t.where = r.at(n);
    if (n.IsScalar()) {
        t.steps = r.integer(n, "train", 1, 1000000);
        return t;
    }
    r.expect_map(n, "\"train\"");
    r.check_keys(n, "train", {"steps", "learning_rate", "data", "from"});
    if (n["steps"]) t.steps = r.integer(n["steps"], "steps", 1, 1000000);
    if (const auto lr = n["learning_rate"]) {
        t.learning_rate = r.number(lr, "learning_rate");
        if (*t.learning_rate <= 0) r.fail(lr, "\"learning_rate\" must be greater than 0");
    }
    if (n["data"]) {
        t.data = r.text(n["data"], "data");
        t.data_at = r.at(n["data"]);
    }
    if (const auto f = n["from"]) {
        const std::string v = r.text(f, "from");
        if (v == "zero") t.from_zero = true;
        else if (v != "current") r.fail(f, fmt::format("\"from\" must be zero or current, got \"{}\"", v));
    }
    return t;
}

// An operand of equals, below or above: a number, a quoted text (equals
// only), or a reference — a path the model answers (it has a dot, or is
// "error") or a name an earlier step remembered.
//
// "inf", "nan", "1e999", YAML's ".inf" as a bound: one every value meets (or
// none), so a check that could never fail (or never pass). As the value
// itself (`response.minutes: 1e400`) it was compared as the text "1e400".
void refuse_non_finite(const Reader& r, const YAML::Node& v, bool bound) {
    if (!v.IsScalar() || v.Tag() == "!") return;
    const std::string& word = v.Scalar();
    static const std::set<std::string_view> yaml_non_finite = {".inf", "+.inf", "-.inf", ".nan", ".Inf", "-.Inf", ".NaN"};
    char* end = nullptr;
    const double n = std::strtod(word.c_str(), &end);
    // A value may be the word "inf" or "nan" (text to compare); a bound may not.
    const bool digits = std::any_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
    if ((end != word.c_str() && !std::isfinite(n) && (*end == '\0' || (bound && *end == ' ')) && (bound || digits)) ||
        yaml_non_finite.count(word))
        r.fail(v, fmt::format("\"{}\" is not a finite number: a check compares with a finite number, a path or a "
                              "remembered name{}",
                              word, bound ? "" : " (quote it to compare with the text)"));
}

// "30%", "3000 m", "1 s" expected of `path`, which is compared in its own
// unit: what to write instead, the number in that unit where it is known —
// the model's own conversion (delivery's "30%" is 0.3 of request.congestion),
// the path's unit written out, a time in another time unit, a percentage of
// a path without a unit — and otherwise no number: the number as written
// ("30" for 0.3) made a check that could never pass.
// `text_ok`: a text may be compared too, so quoting is the other way out.
std::string unit_slip(const ModelDescription& model, const std::string& path, std::string_view written,
                      bool text_ok = false) {
    const std::optional<LeadingNumber> lead = leading_number(written);
    if (!lead)
        return fmt::format("\"{}\" is not a number: write the value in the unit `sixstep paths` lists beside {}",
                           written, path);
    std::string_view rest = lead->rest;
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
    std::string unit(rest);
    for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const double n = std::strtod(std::string(lead->number).c_str(), nullptr);
    std::optional<PathInfo> declared;
    for (const PathInfo& p : lesson_paths(model))
        if (p.path == path) declared = p;
    const std::string or_quote = text_ok ? "; or quote it to compare with the text" : "";
    if (declared && declared->type == ValueType::text && text_ok)
        return fmt::format("\"{0}\" is read as a number with a unit, and {1} is a text: quote it (\"{0}\") to "
                           "compare with the text",
                           written, path);
    std::optional<UnitReading> own;
    if (model.in_path_unit) own = model.in_path_unit(path, written);
    if (!own && declared) {
        own = UnitReading{declared->unit, std::nullopt};
        // Seconds in each time unit a path or a lesson writes.
        const auto seconds = [](std::string_view u) -> std::optional<double> {
            static const std::pair<std::string_view, double> times[] = {
                {"us", 1e-6}, {"µs", 1e-6}, {"ms", 1e-3}, {"s", 1},  {"sec", 1}, {"second", 1}, {"seconds", 1},
                {"min", 60},  {"mins", 60}, {"minute", 60}, {"minutes", 60}, {"h", 3600}, {"hour", 3600}, {"hours", 3600}};
            for (const auto& [name, f] : times)
                if (name == u) return f;
            return std::nullopt;
        };
        const bool percent = unit == "%" || unit == "\uff05";
        if (unit == declared->unit || (percent && declared->unit == "%"))
            own->value = n;
        else if (percent && declared->unit.empty())
            own->value = n / 100;
        else if (const auto from = seconds(unit), to = seconds(declared->unit); from && to)
            own->value = n * *from / *to;
        else if (declared->unit.empty())
            return fmt::format("\"{}\" is a number with a unit: write {} — {} is a number without a unit{}", written,
                               lead->number, path, or_quote);
    }
    if (!own)
        return fmt::format("\"{}\" is a number with a unit: write the value in the unit `sixstep paths` lists beside "
                           "{}{}",
                           written, path, or_quote);
    if (!own->value)
        return fmt::format("\"{}\" does not convert to the unit {} is compared in ({}): write the value in that "
                           "unit{}",
                           written, path, own->unit, or_quote);
    return fmt::format("\"{}\" is a number with a unit: write {:.9g} — {} is compared in its own unit{}{}", written,
                       *own->value, path, own->unit.empty() ? "" : " (" + own->unit + ")", or_quote);
}

// `checked`: the path the expectation compares, whose unit a number written
// with a unit is to be in.
Operand read_operand(const Reader& r, const YAML::Node& v, const char* key, bool text_ok, const ModelDescription& model,
                     const std::vector<std::string>& remembered, const std::string& checked) {
    if (!v.IsScalar())
        r.fail(v, fmt::format("\"{}\" must be a number{}, a path or a remembered name, got {}", key,
                              text_ok ? ", a quoted text" : "", Reader::kind_of(v)));
    Operand o;
    const Value x = r.value(v, key);
    if (std::holds_alternative<double>(x) || v.Tag() == "!") {
        if (!std::holds_alternative<double>(x) && !text_ok)
            r.fail(v, fmt::format("\"{}\" compares numbers: give a number, a path or a remembered name", key));
        o.literal = x;
        return o;
    }
    const std::string& word = v.Scalar();
    // "5 ms", "30%": a number with its unit, where the value compared has one already.
    char* end = nullptr;
    const double n = std::strtod(word.c_str(), &end);
    if (end != word.c_str() && *end != '\0' && std::isfinite(n))
        r.fail(v, unit_slip(model, checked, word, text_ok));
    refuse_non_finite(r, v, true);
    if (word.find('.') != std::string::npos || word == "error") {
        r.checked(v, [&] { check_lesson_path(model, word); });
        o.kind = Operand::Kind::path;
    } else if (std::find(remembered.begin(), remembered.end(), word) != remembered.end()) {
        o.kind = Operand::Kind::remembered;
    } else {
        std::vector<std::string> names = remembered;
        for (const PathInfo& p : lesson_paths(model)) names.push_back(p.path);
        r.fail(v, fmt::format("\"{}\" is neither a path nor a name an earlier step remembers{}{}", word,
                              did_you_mean(word, names),
                              text_ok ? " (quote it to compare with the text)"
                                      : " (a remembered name comes from an earlier step's remember:)"));
    }
    o.name = word;
    return o;
}

// A literal (`value:`, `contains:`, the short form) written as a bare word
// that names a path or a remembered name: the author meant the value behind
// it, and reading it as text compared with the word itself — under `not`
// such a check always held. Refused; quoted, the word stays text.
void refuse_reference_as_text(const Reader& r, const YAML::Node& v, const char* key, const ModelDescription& model,
                              const std::vector<std::string>& remembered) {
    if (!v.IsScalar() || v.Tag() == "!" || std::holds_alternative<double>(r.value(v, key))) return;
    const std::string& word = v.Scalar();
    bool path = word == "error";
    if (!path && word.find('.') != std::string::npos) {
        try {
            check_lesson_path(model, word);
            path = true;
        } catch (const Error&) {
        }
    }
    const bool name = std::find(remembered.begin(), remembered.end(), word) != remembered.end();
    if (!path && !name) return;
    const std::string what = path ? "a path" : "a name an earlier step remembers";
    if (std::string_view(key) == "contains")
        r.fail(v, fmt::format("\"{}\" is {}, and \"contains\" looks for text: quote it to look for the word itself",
                              word, what));
    r.fail(v, fmt::format("\"{0}\" is {1}: write {{equals: {0}}} to compare with its value, or quote it to compare "
                          "with the text",
                          word, what));
}

// The conditions of one expectation written as a mapping (`not:` aside).
std::vector<Condition> read_conditions(const Reader& r, const YAML::Node& v, const ModelDescription& model,
                                       const std::vector<std::string>& remembered, const std::string& checked) {
    r.check_keys(v, "expectation", {"value", "equals", "tol", "contains", "below", "above", "times", "plus", "not"});
    if (v["not"]) r.fail(v["not"], "\"not\" goes alone: {not: {above: 3}}; \"not\" inside \"not\" cancels out");
    const int n_equal = !!v["value"] + !!v["equals"] + !!v["contains"];
    if (n_equal > 1 || (n_equal == 1 && (v["below"] || v["above"])))
        r.fail(v, "an expectation takes one of value, equals or contains, or below and/or above");
    std::vector<Condition> out;
    if (v["value"] || v["equals"]) {
        Condition c;
        if (v["value"]) {
            refuse_reference_as_text(r, v["value"], "value", model, remembered);
            refuse_non_finite(r, v["value"], false);
            c.operand.literal = r.value(v["value"], "value");
        } else {
            c.operand = read_operand(r, v["equals"], "equals", true, model, remembered, checked);
        }
        const bool text = c.operand.kind == Operand::Kind::literal && !std::holds_alternative<double>(c.operand.literal);
        if (v["tol"]) {
            if (text) r.fail(v["value"] ? v["value"] : v["equals"], "\"tol\" needs a numeric \"value\"");
            c.op = Condition::Op::near;
            c.tolerance = r.number(v["tol"], "tol");
            if (c.tolerance < 0) r.fail(v["tol"], fmt::format("\"tol\" must be 0 or more, got {}", v["tol"].Scalar()));
        }
        out.push_back(std::move(c));
    } else if (v["tol"]) {
        r.fail(v["tol"], "\"tol\" goes with value or equals");
    }
    if (v["contains"]) {
        Condition c;
        c.op = Condition::Op::contains;
        refuse_reference_as_text(r, v["contains"], "contains", model, remembered);
        c.operand.literal = r.text(v["contains"], "contains");
        if (std::get<std::string>(c.operand.literal).empty())
            r.fail(v["contains"], "\"contains\" needs some text: every value contains \"\"");
        out.push_back(std::move(c));
    }
    std::optional<double> above, below;  // literal bounds, to catch a range no number is in
    for (const char* key : {"above", "below"}) {
        if (!v[key]) continue;
        Condition c;
        c.op = key[0] == 'a' ? Condition::Op::above : Condition::Op::below;
        c.operand = read_operand(r, v[key], key, false, model, remembered, checked);
        if (const double* x = std::get_if<double>(&c.operand.literal); x && c.operand.kind == Operand::Kind::literal)
            (key[0] == 'a' ? above : below) = *x;
        out.push_back(std::move(c));
    }
    // It failed on every run whatever the value (exit 1 at the step), or
    // under not held on every one.
    if (above && below && *above == *below)
        r.fail(v, fmt::format("no number is above {0} and below {0}: the range is empty (for exactly {0}, write "
                              "{{value: {0}}})",
                              format_value(Value{*above})));
    if (above && below && *above > *below)
        r.fail(v, fmt::format("no number is above {} and below {}: the range is empty (swapped? {{above: {}, below: "
                              "{}}})",
                              format_value(Value{*above}), format_value(Value{*below}), format_value(Value{*below}),
                              format_value(Value{*above})));
    if (out.empty())
        r.fail(v, "an expectation needs value (with optional tol), equals, contains, below, above or not");
    // times and plus change the one referenced value: x × times + plus.
    for (const char* key : {"times", "plus"}) {
        const auto t = v[key];
        if (!t) continue;
        const double x = r.number(t, key);
        if (key[0] == 't' && x <= 0) r.fail(t, "\"times\" must be greater than 0");
        Operand* ref = nullptr;
        int refs = 0;
        for (auto& c : out)
            if (c.operand.kind != Operand::Kind::literal) ref = &c.operand, ++refs;
        if (refs != 1)
            r.fail(t, refs == 0 ? fmt::format("\"{}\" changes a path's or a remembered value: compare with one", key)
                                : fmt::format("\"{}\" would apply to two compared values: write two expectations", key));
        (key[0] == 't' ? ref->times : ref->plus) = x;
    }
    return out;
}

// The declaration of a path, when the kind declares exactly this one.
std::optional<PathInfo> declared_path(const ModelDescription& model, const std::string& path) {
    for (const PathInfo& p : lesson_paths(model))
        if (p.path == path) return p;
    return std::nullopt;
}

std::optional<ValueType> declared_type(const ModelDescription& model, const std::string& path) {
    const std::optional<PathInfo> p = declared_path(model, path);
    return p ? std::optional<ValueType>(p->type) : std::nullopt;
}

// below, above and tol compare numbers: on a text or a list they could never
// hold, so under not they always did.
void refuse_numbers_on(const Reader& r, const YAML::Node& key, const Expectation& e, const ModelDescription& model) {
    const std::optional<ValueType> t = declared_type(model, e.path);
    if (!t || *t == ValueType::number) return;
    // For a list: what it lists (its meaning), and the numbers made from it
    // ("output.tokens_per_pass" → postprocess.tokens_per_pass_max).
    std::string meaning, numbers;
    if (*t != ValueType::text) {
        const std::string leaf = e.path.substr(e.path.find('.') + 1);
        for (const PathInfo& p : lesson_paths(model)) {
            if (p.path == e.path) meaning = p.meaning;
            if (p.type == ValueType::number && p.path.substr(p.path.find('.') + 1).rfind(leaf, 0) == 0)
                numbers += (numbers.empty() ? "" : ", ") + p.path;
        }
    }
    for (const Condition& c : e.conditions)
        if (c.op == Condition::Op::above || c.op == Condition::Op::below || c.op == Condition::Op::near)
            r.fail(key, fmt::format("\"{}\" is {}: below, above and tol compare numbers ({})", e.path,
                                    *t == ValueType::text ? "a text" : "a list of numbers (" + meaning + ")",
                                    *t == ValueType::text   ? "compare text with a quoted value or contains"
                                    : !numbers.empty() ? "compare a number made from it: " + numbers
                                                       : "compare one of the paths that holds a single number"));
}

// A text that a path declared as a number is to equal: it never can.
// "13 min" is the number with its unit; "thirteen", a word.
void refuse_text_for_number(const Reader& r, const YAML::Node& v, const Expectation& e, const ModelDescription& model) {
    const std::optional<PathInfo> p = declared_path(model, e.path);
    if (!p || p->type != ValueType::number) return;
    for (const Condition& c : e.conditions) {
        const auto* text = std::get_if<std::string>(&c.operand.literal);
        if (c.op == Condition::Op::contains || c.operand.kind != Operand::Kind::literal || !text) continue;
        const YAML::Node at = !v.IsMap() ? v : v["value"] ? v["value"] : v["equals"];
        if (const auto lead = leading_number(*text); lead && lead->rest.empty())
            r.fail(at, fmt::format("\"{}\" is quoted, so it is text, and {} is a number: write it without quotes",
                                   *text, e.path));
        else if (lead)
            r.fail(at, unit_slip(model, e.path, *text));
        r.fail(at, fmt::format("{} is a number, and \"{}\" is text: a number never equals a text", e.path, *text));
    }
}

// What a list of numbers can never be: equal to one number (served.minutes:
// 11 against [11, 11, 11]), or contain a text that is no numbers
// ({contains: "min"} on forward.terms); under not, either would always hold.
void refuse_mismatch_on_numbers(const Reader& r, const YAML::Node& v, const Expectation& e, const ModelDescription& model) {
    const std::optional<PathInfo> p = declared_path(model, e.path);
    if (!p || p->type != ValueType::numbers) return;
    for (const Condition& c : e.conditions) {
        if (c.operand.kind != Operand::Kind::literal) continue;
        if (const auto* x = std::get_if<double>(&c.operand.literal); x && c.op == Condition::Op::equals) {
            const YAML::Node at = !v.IsMap() ? v : v["value"] ? v["value"] : v["equals"];
            r.fail(at, fmt::format("{} is a list of numbers, which never equals one number: {{contains: {}}} holds "
                                   "when one of them is {}",
                                   e.path, at.Scalar(), at.Scalar()));
        }
        const auto* text = std::get_if<std::string>(&c.operand.literal);
        if (c.op != Condition::Op::contains || !text || number_list_text(*text)) continue;
        r.fail(v["contains"], fmt::format("{} is a list of numbers, and \"{}\" is not a number or numbers: write "
                                          "{{contains: 5}} for an element, {{contains: \"5, -2\"}} for neighbours",
                                          e.path, *text));
    }
}

// A number that a path declared as a text is to equal: `response.text: 11`
// held only for the text "11", and read as a slip (the minutes are
// response.minutes). Quoted, it is the text.
void refuse_number_for_text(const Reader& r, const YAML::Node& v, const Expectation& e, const ModelDescription& model) {
    const std::optional<PathInfo> p = declared_path(model, e.path);
    if (!p || p->type != ValueType::text) return;
    for (const Condition& c : e.conditions) {
        if (c.op != Condition::Op::equals || c.operand.kind != Operand::Kind::literal) continue;
        if (!std::holds_alternative<double>(c.operand.literal)) continue;
        const YAML::Node at = !v.IsMap() ? v : v["value"] ? v["value"] : v["equals"];
        r.fail(at, fmt::format("{} is a text, and {} is a number: quote it (\"{}\") to compare with the text, or "
                               "check a path that holds the number",
                               e.path, at.Scalar(), at.Scalar()));
    }
}

std::vector<Expectation> read_expect(const Reader& r, const YAML::Node& n, const ModelDescription& model,
                                     const std::vector<std::string>& remembered) {
    r.expect_map(n, "\"expect\"");
    std::vector<Expectation> out;
    for (const auto& kv : n) {
        Expectation e;
        e.path = r.text(kv.first, "expect");
        e.where = r.at(kv.first);
        if (e.path != "error" && e.path.find('.') == std::string::npos)
            r.fail(kv.first, fmt::format("expectation \"{}\" must be a path like forward.raw_output, "
                                         "train.loss or served.count",
                                         e.path));
        r.checked(kv.first, [&] { check_lesson_path(model, e.path); });
        YAML::Node v = kv.second;
        if (v.IsMap() && v["not"]) {
            if (v.size() != 1) r.fail(v, "\"not\" goes alone: {not: {above: 3}}, {not: \"dog\"}");
            e.negated = true;
            v = v["not"];
        }
        if (v.IsMap()) {
            e.conditions = read_conditions(r, v, model, remembered, e.path);
            refuse_numbers_on(r, kv.first, e, model);
        } else {
            Condition c;
            refuse_reference_as_text(r, v, e.path.c_str(), model, remembered);
            // A list path is checked element by element: say how, not only that a list is not a value.
            if (v.IsSequence()) {
                const std::vector<PathInfo> paths = lesson_paths(model);
                const auto info = std::find_if(paths.begin(), paths.end(), [&](const PathInfo& p) { return p.path == e.path; });
                if (info != paths.end() && info->type == ValueType::numbers)
                    r.fail(v, fmt::format("\"{}\" is a list: check one of its numbers with {{contains: 5}}, or "
                                          "neighbours with {{contains: \"5, -2\"}}, not the whole list",
                                          e.path));
            }
            refuse_non_finite(r, v, false);
            c.operand.literal = r.value(v, e.path);
            e.conditions.push_back(std::move(c));
        }
        refuse_text_for_number(r, v, e, model);  // under not too: it would always hold
        refuse_number_for_text(r, v, e, model);
        refuse_mismatch_on_numbers(r, v, e, model);
        out.push_back(std::move(e));
    }
    return out;
}

// What the steps before the current one did, for checks of order.
using SettingsSoFar = std::map<std::string, std::string, std::less<>>;  // `set:` so far, the last value of each

// Each setting's value as the steps so far left it, else its knob's default:
// what a request's values are read under.
FieldLookup settings_in_force(const SettingsSoFar& settings, const ModelDescription& model) {
    return [&settings, &model](std::string_view name) {
        const auto it = settings.find(name);
        return it != settings.end() ? it->second : model.knob(name).default_value;
    };
}

struct StepsSoFar {
    bool trained = false;      // some step trains
    int frozen_at = 0;         // the step (1-based) that froze the weights; 0: none
    SettingsSoFar settings;
};

// The key node of `name` in a mapping (its position), or a null node.
YAML::Node key_of(const YAML::Node& map, const char* name) {
    for (const auto& kv : map)
        if (kv.first.IsScalar() && kv.first.Scalar() == name) return kv.first;
    return YAML::Node();
}

// `remember: {name: path, …}` — names for later expectations to compare with.
std::vector<std::pair<std::string, std::string>> read_remember(const Reader& r, const YAML::Node& n,
                                                               const ModelDescription& model) {
    r.expect_map(n, "\"remember\"");
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& kv : n) {
        const std::string name = r.text(kv.first, "remember");
        const bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                        std::all_of(name.begin(), name.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                        });
        if (name == "error")
            r.fail(kv.first, "\"error\" cannot name a remembered value: it is a path, the step's error message; "
                             "give the value another name");
        if (!ok)
            r.fail(kv.first, fmt::format("\"{}\" cannot name a remembered value: use letters, digits and _ (no dot: "
                                         "names are not paths)",
                                         name));
        const std::string path = r.text(kv.second, name);
        r.checked(kv.second, [&] { check_lesson_path(model, path); });
        out.emplace_back(name, path);
    }
    return out;
}

// `show:` — one panel name or a list of at most two.
std::vector<std::string> read_show(const Reader& r, const YAML::Node& n, const ModelDescription& model) {
    std::vector<std::string> known = {"inspector"};
    for (const PanelInfo& p : model.panels) known.push_back(p.name);
    std::vector<YAML::Node> items;
    if (n.IsSequence()) {
        for (const auto& item : n) items.push_back(item);
    } else {
        items.push_back(n);
    }
    if (items.empty() || items.size() > 2)
        r.fail(n, fmt::format("\"show\" names one panel or two (one above the other), got {}", items.size()));
    std::vector<std::string> out;
    for (const auto& item : items) {
        const std::string name = r.text(item, "show");
        if (std::find(known.begin(), known.end(), name) == known.end()) {
            // Another kind's panel (real_server in an llm lesson): say whose.
            std::vector<std::string> kinds;
            for (const std::string& kind : model_kinds())
                if (kind != model.kind && model_description(kind).find_panel(name)) kinds.push_back(kind);
            const std::string hint = did_you_mean(name, known);
            r.fail(item, fmt::format("unknown panel \"{}\" for the {} model{} (known: {}){}", name, model.kind, hint,
                                     join_names(known),
                                     hint.empty() && !kinds.empty()
                                         ? fmt::format("; it is a panel of the {} model (kind: {})",
                                                       fmt::join(kinds, " and "), join_names(kinds, " or "))
                                         : ""));
        }
        // The same panel twice would be drawn twice, one above the other.
        if (std::find(out.begin(), out.end(), name) != out.end())
            r.fail(item, fmt::format("\"show\" names the panel \"{}\" twice; name it once, or two different panels",
                                     name));
        out.push_back(name);
    }
    return out;
}

KvCalcSpec read_kv_calc(const Reader& r, const YAML::Node& n) {
    r.expect_map(n, "\"kv_calc\"");
    r.check_keys(n, "kv_calc", {"preset", "layers", "kv_heads", "head_dim", "dtype", "tokens", "sessions"});
    KvCalcSpec k;
    if (const auto p = n["preset"]) {
        k.preset = r.text(p, "preset");
        const std::vector<std::string> names = serving::kv_preset_names();
        if (std::find(names.begin(), names.end(), k.preset) == names.end())
            r.fail(p, fmt::format("unknown preset \"{}\"{} (known: {})", k.preset, did_you_mean(k.preset, names),
                                  join_names(names)));
    } else if (!n["layers"] || !n["kv_heads"] || !n["head_dim"]) {
        r.fail(n, "\"kv_calc\" needs a preset, or layers, kv_heads and head_dim");
    }
    auto positive = [&](const char* key) {
        const double v = r.number(n[key], key);
        if (v <= 0) r.fail(n[key], fmt::format("\"{}\" must be greater than 0", key));
        return v;
    };
    if (n["layers"]) k.n_layer = positive("layers");
    if (n["kv_heads"]) k.n_head_kv = positive("kv_heads");
    if (n["head_dim"]) k.head_dim = positive("head_dim");
    if (const auto d = n["dtype"]) {
        k.dtype = r.text(d, "dtype");
        if (!serving::kv_dtype_from_name(k.dtype)) {
            r.fail(d, fmt::format("unknown dtype \"{}\"{} (known: {})", k.dtype,
                                  did_you_mean(k.dtype, serving::kv_dtype_name_list()), serving::kv_dtype_names()));
        }
    }
    if (!n["tokens"]) r.fail(n, "\"kv_calc\" needs tokens: the tokens each session holds");
    k.n_tokens = positive("tokens");
    if (n["sessions"]) k.n_sessions = positive("sessions");
    return k;
}

// A serving model without a file runs only the experiments that bring their
// own models (the canary): any other fails here, where the request names it,
// not when the step runs.
void check_serving_needs_file(const Reader& r, const ModelSpec& m, const YAML::Node& step,
                              const ModelDescription& model) {
    const YAML::Node req = step["request"];
    if (m.kind != "serving" || !m.file.empty() || !m.random.empty() || !req || step_expects_error(step)) return;
    const YAML::Node named = req[serving::keys::experiment];
    const std::string experiment = named ? named.Scalar() : model.knob(serving::keys::experiment).default_value;
    const serving::LabEntry* e = serving::find_lab_experiment(experiment);
    if (!e || !e->runs_on_model) return;  // an unknown one: its knob says so
    r.fail(named ? named : req,
           fmt::format("experiment {} runs on a language model, and this lesson's model has none: give the model a "
                       "GGUF \"file\" (or \"random\"); only canary runs without one",
                       experiment));
}

// A serving lesson's check on a path only other experiments answer
// ("postprocess.q4_0_file_ratio" in a batch sweep's step): it would find
// nothing when the step runs. Likewise a figure of traffic's baseline run
// (postprocess.ttft_p50_ratio) in a traffic step without that `compare`.
// `experiment` and `compare` are the step's current request's.
void check_serving_paths(const LessonStep& s, const std::string& experiment, const std::string& compare) {
    const auto check = [&](const std::string& path, const SourceLocation& where) {
        const std::vector<std::string> by = serving::lab_experiments_emitting(path);
        if (by.empty()) return;
        if (std::find(by.begin(), by.end(), experiment) == by.end())
            throw Error(where, fmt::format("{} is answered by the {} experiment{}, and this step's request runs {}",
                                           path, fmt::join(by, ", "), by.size() > 1 ? "s" : "", experiment));
        if (experiment != "traffic") return;
        const std::vector<std::string> with = serving::traffic_compares_answering(path);
        if (with.empty() || std::find(with.begin(), with.end(), compare) != with.end()) return;
        throw Error(where, fmt::format("{} is a figure of the baseline run, which traffic runs only with compare: {}; "
                                       "this step's request has {} — add compare: {} to the request",
                                       path, listed(with, " or "),
                                       compare == "none" ? "no compare" : "compare: " + compare, with.front()));
    };
    for (const Expectation& e : s.expect) {
        check(e.path, e.where);
        for (const Condition& c : e.conditions)
            if (c.operand.kind == Operand::Kind::path) check(c.operand.name, e.where);
    }
}

// A serving request's setting that the experiment it runs does not read
// (batch_sizes in a traffic request) was ignored without a word: the
// lesson showed the default experiment's figures and passed. `experiment`
// is the request's, `named` whether the request names it.
void check_serving_fields(const LessonStep& s, const std::string& experiment, bool named) {
    if (!s.request || !serving::find_lab_experiment(experiment)) return;  // an unknown one: its knob says so
    for (const auto& [name, value] : *s.request) {
        const std::vector<std::string> by = serving::lab_experiments_reading(name);
        if (by.empty() || std::find(by.begin(), by.end(), experiment) != by.end()) continue;
        const std::string one_of = listed(by, " or ");
        throw Error(s.request_at.at(name),
                    fmt::format("{} is a setting of the {} experiment{}; this request runs {}{} — {}", name,
                                listed(by, " and "), by.size() > 1 ? "s" : "", experiment, named ? "" : " (the default)",
                                named ? fmt::format("leave it out, or run experiment: {}", one_of)
                                      : fmt::format("add experiment: {}", one_of)));
    }
}

// A step key that only some model kinds support.
void require(const Reader& r, const YAML::Node& n, bool supported, const char* key, const ModelDescription& model) {
    if (!supported) r.fail(n, fmt::format("\"{}\" is not available for the {} model", key, model.kind));
}

// What a step may hold.
const std::vector<std::string>& step_keys() {
    static const std::vector<std::string> keys = {"title", "say",   "request",       "set",     "train",    "freeze",
                                                  "force", "show",  "inspect",       "attention", "run",    "serve",
                                                  "kv_experiment", "kv_calc", "remember", "knobs", "expect"};
    return keys;
}

// `request_error_expected`: a step that runs this step's request expects
// the error it gives (step_request_expects_error).
LessonStep read_step(const Reader& r, const YAML::Node& n, size_t index, const ModelDescription& model,
                     StepsSoFar& so_far, std::vector<std::string>& remembered, bool request_error_expected) {
    const std::string what = fmt::format("step {}", index + 1);
    r.expect_map(n, what);
    r.check_keys(n, what.c_str(), step_keys());
    LessonStep s;
    s.where = r.at(n);
    if (n["title"]) s.title = r.text(n["title"], "title");
    if (n["say"]) s.say = r.text(n["say"], "say");
    // Settings first: a step's `set:` is in force when its request runs.
    if (n["set"]) s.set = read_settings(r, n["set"], model);
    for (const SettingChange& c : s.set) so_far.settings[c.name] = c.value;
    if (const auto req = n["request"]) {
        r.expect_map(req, "\"request\"");
        s.request_where = r.at(key_of(n, "request"));
        std::vector<std::pair<std::string, std::string>> fields;
        // Each value, here at its position (temperature: -1 failed at run
        // time, at the step), unless a step that runs the request expects
        // the error the value gives: by the kind's own reader where it has
        // one (delivery's "30%"), else by the field's knob.
        const bool check_values = !request_error_expected;
        const FieldLookup setting = settings_in_force(so_far.settings, model);
        for (const auto& kv : req) {
            check_request_field(r, kv.first, model);
            fields.emplace_back(kv.first.Scalar(), r.text(kv.second, kv.first.Scalar()));
            // Not a structured binding: clang 14 cannot capture one in a lambda.
            const std::string& name = fields.back().first;
            const std::string& value = fields.back().second;
            s.request_at[name] = r.at(kv.second);
            if (!check_values) continue;
            if (model.check_request_value)
                r.checked(kv.second, [&] { model.check_request_value(name, value, setting); });
            else if (const Knob* k = model.find_knob(name))
                r.checked(kv.second, [&] { (void)k->check(value); });
        }
        s.request = std::move(fields);
    }
    if (n["train"]) {
        check_trains(r, key_of(n, "train"), model);
        // Frozen means training is over: with data it trained on anyway (and
        // unfroze), without it failed at run time.
        // A step that expects the error shows it (lesson 03 does).
        if (so_far.frozen_at > 0 && !step_expects_error(n))
            r.fail(key_of(n, "train"), fmt::format("step {} froze the weights: training is over, the model only serves "
                                                   "from there (train before freeze, or expect the error: error: "
                                                   "{{contains: \"frozen\"}})",
                                                   so_far.frozen_at));
        s.train = read_train(r, n["train"]);
        so_far.trained = true;
    }
    if (n["freeze"]) {
        s.freeze = r.boolean(n["freeze"], "freeze");
        // Nothing unfreezes a model: false changed nothing and read as if it did.
        if (!s.freeze)
            r.fail(n["freeze"], fmt::format("\"freeze: {}\" does nothing: a model is trainable until a step freezes "
                                            "it, and frozen for good after; leave the key out",
                                            n["freeze"].Scalar()));
        if (s.freeze) check_trains(r, key_of(n, "freeze"), model);
        if (s.freeze && !so_far.trained)
            r.fail(key_of(n, "freeze"), "nothing to freeze: no step before this one trains (give train: first)");
        if (s.freeze && so_far.frozen_at == 0) so_far.frozen_at = static_cast<int>(index) + 1;
    }
    if (const auto f = n["force"]) {
        require(r, f, model.find_knob("force") != nullptr, "force", model);
        s.force = r.value(f, "force");
        s.force_at = r.at(f);
        if (const double* id = std::get_if<double>(&*s.force); id && (*id < 0 || *id != std::floor(*id)))
            r.fail(f, fmt::format("\"force\" takes a token id (a whole number from 0) or a piece in quotes, got {}",
                                  f.Scalar()));
    }
    if (const auto sh = n["show"]) s.show = read_show(r, sh, model);
    if (const auto i = n["inspect"]) s.inspect = read_inspect(r, i);
    if (const auto a = n["attention"]) {
        require(r, a, model.find_panel("attention") != nullptr, "attention", model);
        r.expect_map(a, "\"attention\" ({layer: L, head: H})");
        r.check_keys(a, "attention", {"layer", "head"});
        AttentionSpec spec;
        spec.where = r.at(a);
        if (a["layer"]) spec.layer = r.integer(a["layer"], "layer", 0, 1000000);
        if (a["head"]) spec.head = r.integer(a["head"], "head", 0, 1000000);
        s.attention = spec;
    }
    if (n["run"]) {
        s.run = read_run(r, n["run"]);
        s.run_where = r.at(key_of(n, "run"));
        // One generated token: only a model that generates has one (the
        // delivery model ran to postprocess, without a word).
        if (s.run->kind == RunSpec::Kind::token && model.kind != "llm")
            r.fail(n["run"], fmt::format("\"run: token\" runs to the next generated token, and the {} model generates "
                                         "none: run to a stage (postprocess) or all",
                                         model.kind));
    }
    if (const auto sv = n["serve"]) {
        ServeSpec spec;
        if (sv.IsMap()) {
            r.check_keys(sv, "serve", {"requests"});
            if (sv["requests"]) spec.requests = r.integer(sv["requests"], "requests", 1, 100000);
        } else {
            spec.requests = r.integer(sv, "serve", 1, 100000);
        }
        s.serve = spec;
        s.serve_where = r.at(key_of(n, "serve"));
    }
    if (const auto x = n["kv_experiment"]) {
        require(r, x, model.answers("kv_experiment"), "kv_experiment", model);
        if (x.IsMap()) {
            r.check_keys(x, "kv_experiment", {"tokens"});
            if (!x["tokens"]) r.fail(x, "\"kv_experiment\" needs tokens: how many to generate both ways");
            s.kv_experiment = r.integer(x["tokens"], "tokens", 1, 4096);
        } else {
            s.kv_experiment = r.integer(x, "kv_experiment", 1, 4096);
        }
    }
    if (const auto c = n["kv_calc"]) {
        require(r, c, model.answers("kv_calc"), "kv_calc", model);
        s.kv_calc = read_kv_calc(r, c);
        // The sizes here, at the step's key: a fractional token count or a
        // head_dim q8_0 cannot hold failed only when the step ran.
        if (!step_expects_error(n)) r.checked(c, [&] { (void)serving::kv_calc(kv_calc_params(*s.kv_calc)); });
    }
    if (const auto m = n["remember"]) {
        s.remember = read_remember(r, m, model);
        for (const auto& [name, path] : s.remember)
            if (std::find(remembered.begin(), remembered.end(), name) == remembered.end()) remembered.push_back(name);
    }
    if (const auto k = n["knobs"]) {
        if (!k.IsSequence()) r.fail(k, fmt::format("\"knobs\" must be a list, got {}", Reader::kind_of(k)));
        for (const auto& item : k) {
            const std::string name = r.text(item, "knobs");
            if (!model.find_knob(name) && did_you_mean(name, model.knob_names()).empty())
                r.fail(item, fmt::format("unknown knob \"{}\" for the {} model (known: {}){}", name, model.kind,
                                         join_names(model.knob_names()), knob_elsewhere(name, model)));
            r.checked(item, [&] { return &model.knob(name); });
            if (std::find(s.knobs.begin(), s.knobs.end(), name) != s.knobs.end())
                r.fail(item, fmt::format("\"{}\" is listed twice in knobs: the window shows each knob once", name));
            s.knobs.push_back(name);
        }
    }
    if (n["expect"]) s.expect = read_expect(r, n["expect"], model, remembered);
    if (s.say.empty() && !s.request && s.set.empty() && !s.train && !s.freeze && !s.force && !s.show &&
        !s.inspect && !s.attention && !s.run && !s.serve && !s.kv_experiment && !s.kv_calc && s.remember.empty() && s.expect.empty())
        r.fail(n, fmt::format("{} does nothing: give it at least one of say, request, set, train, freeze, run, "
                              "serve, expect, show, inspect, force, remember, attention, kv_experiment or kv_calc",
                              what));
    return s;
}

// Where the quote opened at text[open] (" or ') closes, or npos: a
// backslash escapes in "…", '' is a quote inside '…'.
std::size_t quote_close(std::string_view text, std::size_t open) {
    const char q = text[open];
    for (std::size_t c = open + 1; c < text.size(); ++c) {
        if (q == '"' && text[c] == '\\') {
            ++c;
        } else if (text[c] == q) {
            if (q == '\'' && c + 1 < text.size() && text[c + 1] == '\'') ++c;
            else return c;
        }
    }
    return std::string_view::npos;
}

// A key whose value is free text, the author's own words (a title, a
// narration, a prompt): marks that would be slips elsewhere (" // ", “…”)
// may be the text's.
bool free_text_key(std::string_view key) {
    return key == "title" || key == "say" || key == "description" || key == "prompt";
}

// Every mapping's keys must be plain text and appear once: YAML itself allows
// a list as a key and repeated keys (of which a reader silently takes one),
// and both are lesson typos. Walks the whole document once before anything is
// read; aliased nodes (*name) are checked once, however often they are used.
void check_structure(const Reader& r, const YAML::Node& root) {
    std::set<std::pair<int, int>> seen;  // (line, column) of every collection checked
    struct Todo {
        YAML::Node node;
        bool list_item;    // an item of a list (a step)
        std::string key;   // the key it is the value of (a list's items: the list's)
    };
    std::vector<Todo> todo{{root, false, ""}};
    // The walk goes deep first and from the back; of the slips it finds, the
    // first in the file is reported (a duplicate at line 6, not one at 10).
    std::optional<Error> first;
    const auto keep = [&](Error e) {
        const auto at = [](const Error& x) { return std::pair{x.where().line, x.where().column}; };
        if (!first || at(e) < at(*first)) first = std::move(e);
    };
    // A quoted text whose quote is never closed: yaml-cpp takes the rest of
    // the file as its text, and the steps and checks written there were
    // gone without a word (the lesson passed).
    const auto closed = [&](const YAML::Node& n) {
        const std::string_view text = r.text();
        const auto at = static_cast<std::size_t>(std::max(0, n.Mark().pos)) + r.bom_bytes();
        if (!n.IsScalar() || at >= text.size() || (text[at] != '"' && text[at] != '\'')) return;
        if (quote_close(text, at) == std::string_view::npos)
            keep(Error(r.at(n), "the quote opened here is never closed: the rest of the file became its text, and "
                                "what is written there (steps, checks) is not read"));
    };
    // "11 // eleven", "all  // go": another language's comment, which YAML
    // reads as part of a plain value. In text (a title, a narration, a
    // prompt) " // " may be the text's own, so there only one set off by two
    // spaces, as a comment after code is.
    const auto slashes = [&](const YAML::Node& n, std::string_view key) {
        if (!n.IsScalar() || n.Tag() != "?") return;  // quoted or a block: the text's own
        const bool text = free_text_key(key);
        const std::string_view mark = text ? "  //" : " //";
        if (n.Scalar().find(mark) == std::string::npos) return;
        const std::size_t at = r.text().find(mark, static_cast<std::size_t>(std::max(0, n.Mark().pos)) + r.bom_bytes());
        if (at == std::string_view::npos) return;
        const std::size_t slash = r.text().find("//", at);
        std::string_view after = r.text().substr(slash + 2, r.text().find('\n', slash) - slash - 2);
        while (!after.empty() && (after.back() == '\r' || after.back() == ' ')) after.remove_suffix(1);
        keep(Error(r.at_offset(slash),
                   fmt::format("a comment in YAML starts with \"#\", not \"//\": here \"//\" and what follows are "
                                "part of the value \"{}\" (write \"#{}\", or quote the value if the \"//\" is its own)",
                               printable_cut(n.Scalar(), 60), printable_cut(std::string(after), 40))));
    };
    // "title: Step #1 of the pipeline": " #" starts a YAML comment, so the
    // class saw "Step" without a word. In a text shown to the class (a
    // title, a narration, a prompt) written on one line, a "#" right after a
    // space and right before a word ("#1", "#wip") is the text's own; a
    // comment reads "  # a note", which passes.
    const auto hash = [&](const YAML::Node& n, std::string_view key) {
        if (!n.IsScalar() || n.Tag() != "?" || !free_text_key(key) || n.Mark().pos < 0) return;
        const std::string_view text = r.text();
        const std::size_t start = static_cast<std::size_t>(n.Mark().pos) + r.bom_bytes();
        if (start >= text.size()) return;
        const std::size_t eol = std::min(text.find('\n', start), text.size());
        const std::string_view line = text.substr(start, eol - start);
        const std::size_t at = line.find(" #");
        if (at == std::string_view::npos || at + 2 >= line.size() || line[at + 2] == ' ' || line[at + 2] == '\r')
            return;
        // The value ends at that comment on this line (not a value that
        // runs on over lines, whose comment is elsewhere).
        std::string_view before = line.substr(0, at);
        while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
        if (before != n.Scalar()) return;
        std::string_view cut = line.substr(at + 1);
        while (!cut.empty() && (cut.back() == '\r' || cut.back() == ' ')) cut.remove_suffix(1);
        keep(Error(r.at_offset(start + at + 1),
                   fmt::format("\" #\" starts a comment in YAML, so the {} reads \"{}\" and \"{}\" is left out: "
                               "quote the whole text (\"\u2026\"), or write a comment as \"  # \" with a space after "
                               "the \"#\"",
                               key == "say" ? "narration" : key, printable_cut(n.Scalar(), 60), printable_cut(cut, 40))));
    };
    // “11” or ‘yes’: typographic quotes (a Chinese input method's, a word
    // processor's) are text to YAML, not quotes, so a check's value kept
    // them and could never hold (response.text: {contains: “11”}). In text
    // (a title, a narration, a prompt) they may be the text's own.
    const auto curly = [&](const YAML::Node& n, std::string_view key) {
        if (!n.IsScalar() || n.Tag() != "?") return;
        if (free_text_key(key)) return;
        const std::string& v = n.Scalar();
        const bool doubled = v.starts_with("\u201c") && v.ends_with("\u201d") && v.size() > 6;
        const bool single = v.starts_with("\u2018") && v.ends_with("\u2019") && v.size() > 6;
        if (!doubled && !single) return;
        const char ascii = doubled ? '"' : '\'';
        keep(Error(r.at(n), fmt::format("{} are typographic quotes, which YAML reads as part of the value, not as "
                                        "quotes: write {}{}{} with ASCII quotes (an input method in Chinese mode, "
                                        "or a word processor, types these)",
                                        doubled ? "\u201c \u201d" : "\u2018 \u2019", ascii,
                                        printable_cut(std::string_view(v).substr(3, v.size() - 6), 60), ascii)));
    };
    while (!todo.empty()) {
        const auto [n, list_item, key] = todo.back();
        todo.pop_back();
        closed(n);
        slashes(n, key);
        hash(n, key);
        curly(n, key);
        if (!n.IsMap() && !n.IsSequence()) continue;
        if (!seen.insert({n.Mark().line, n.Mark().column}).second) continue;
        if (n.IsSequence()) {
            for (const auto& item : n) todo.push_back({item, true, key});
            continue;
        }
        std::map<std::string, YAML::Mark> keys;
        for (const auto& kv : n) {
            if (!kv.first.IsScalar())
                r.fail(kv.first, fmt::format("a key must be plain text, got {}", Reader::kind_of(kv.first)));
            closed(kv.first);
            const auto [it, fresh] = keys.emplace(kv.first.Scalar(), kv.first.Mark());
            // The item's first key again, in a list: a new item (a step)
            // written without its "- " joined the one above it.
            const bool new_item = list_item && it->second.pos == n.begin()->first.Mark().pos;
            if (!fresh)
                keep(Error(r.at(kv.first),
                           fmt::format("duplicate key \"{}\" (first at line {}); YAML keeps only one of them{}",
                                       kv.first.Scalar(), it->second.line + 1,
                                       new_item ? fmt::format(" — if a new item of the list starts here, begin it "
                                                              "with \"- \" as the one at line {} does",
                                                              it->second.line + 1)
                                                : "")));
            todo.push_back({kv.second, false, kv.first.Scalar()});
        }
    }
    if (first) throw *first;
}

// Where a second YAML document starts, if the text holds one. Not
// YAML::LoadAll: on some malformed input (a lone ",") it never returns,
// adding empty documents until memory runs out. The parser is asked for at
// most two documents, and only where each begins.
// Whether the line of `at` is "  key: …" with `at` on that first ": ": a key
// indented deeper than its siblings, read as the previous value's next line.
bool line_starts_with_key_at(std::string_view text, const YAML::Mark& at) {
    std::size_t start = 0;
    for (int line = 0; line < at.line; ++line) {
        start = text.find('\n', start);
        if (start == std::string_view::npos) return false;
        ++start;
    }
    std::string_view line = text.substr(start, text.find('\n', start) - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    const std::size_t key = line.find_first_not_of(' ');
    // "key: value", or "key:" with its value on the lines below ("expect:"
    // indented deeper than the keys beside it).
    std::size_t colon = line.find(": ");
    if (colon == std::string_view::npos && !line.empty() && line.back() == ':') colon = line.size() - 1;
    return key != std::string_view::npos && colon != std::string_view::npos && key < colon &&
           line.substr(key, colon - key).find(' ') == std::string_view::npos && static_cast<int>(colon) == at.column;
}

// One line of a lesson's source: where it starts (a byte offset) and its
// text, without the line break ("\n" or "\r\n").
struct SourceLine {
    std::size_t start;
    std::string_view text;
};

// The lines of `text` from the first to the one the parser stopped at.
std::vector<SourceLine> lines_up_to(std::string_view text, const YAML::Mark& at) {
    std::vector<SourceLine> lines;
    for (std::size_t i = 0; i <= text.size() && static_cast<int>(lines.size()) <= at.line;) {
        std::size_t end = text.find('\n', i);
        if (end == std::string_view::npos) end = text.size();
        std::string_view l = text.substr(i, end - i);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        lines.push_back({i, l});
        i = end + 1;
    }
    return lines;
}

// Walks line `l` of `text` from byte `from`, stepping over quoted text and
// stopping at a comment or at a quote not closed on the line: `stop(c)` is
// asked of every other byte, and the first it says yes to is returned (npos
// when none). A slip finder looks only at what YAML reads as syntax.
template <typename F>
std::size_t find_outside_quotes(std::string_view text, const SourceLine& l, std::size_t from, F&& stop) {
    for (std::size_t c = from; c < l.text.size(); ++c) {
        const char ch = l.text[c];
        if (ch == '"' || ch == '\'') {
            const std::size_t close = quote_close(text, l.start + c);
            if (close == std::string_view::npos || close >= l.start + l.text.size()) return std::string_view::npos;
            c = close - l.start;
        } else if (ch == '#' && (c == 0 || l.text[c - 1] == ' ')) {
            return std::string_view::npos;
        } else if (stop(c)) {
            return c;
        }
    }
    return std::string_view::npos;
}

// Whether a value begins at byte o of line l: first on the line, or after
// "key: " or "- " (a "{" there opens a flow; elsewhere it is text).
bool value_starts_at(std::string_view l, std::size_t o) {
    const std::size_t before = o == 0 ? std::string_view::npos : l.find_last_not_of(' ', o - 1);
    return before == std::string_view::npos || l[before] == ':' || (l[before] == '-' && before + 1 < o);
}

// Slips that a YAML parser reports a line or more later, where it gave up,
// in words about its own state ("illegal map value"): the byte offset of the
// slip itself and what it is, or nothing. Looked for from the start of the
// file to the line the parser stopped at (`at`):
//  - a full-width space (U+3000, what a Chinese input method types) in the
//    indentation of a key;
//  - a full-width colon "：" after a key, on that line or the one above;
//  - a quoted value not closed on its line, in the lines above (a quoted
//    scalar may run on over lines, so the parser reads the next keys as text);
//  - on that line or the one above, a colon without its space ("run:all") or
//    a quoted value its own quote ended early ('It's 11 minutes');
//  - a key without its colon on the line above ("say hello"), or a lone word
//    above keys indented under it ("expect").
std::optional<std::pair<std::size_t, std::string>> slip_before(std::string_view text, const YAML::Mark& at) {
    constexpr std::string_view wide_space = "\u3000", wide_colon = "\uff1a";
    const std::vector<SourceLine> lines = lines_up_to(text, at);
    // Where a line's key starts: past its indentation and a list's "- ".
    const auto key_start = [](std::string_view l) {
        std::size_t k = l.find_first_not_of(' ');
        while (k != std::string_view::npos && l.compare(k, 2, "- ") == 0) k = l.find_first_not_of(' ', k + 2);
        return k;
    };
    const auto blank = [](std::string_view l) {
        const std::size_t k = l.find_first_not_of(' ');
        return k == std::string_view::npos || l[k] == '#';
    };
    // Before a key ("key:", "key：", "- "): inside a block's Chinese text
    // ("say: |", then a paragraph indented with "　　") it is the text's own.
    const auto key_follows = [&](std::string_view rest) {
        if (rest.substr(0, 2) == "- ") return true;
        const std::size_t end = std::min({rest.find(':'), rest.find(wide_colon), rest.find(' ')});
        return end != std::string_view::npos && end > 0 && rest[end] != ' ';
    };
    for (const SourceLine& l : lines) {
        std::size_t i = 0, wide = std::string_view::npos;
        while (i < l.text.size() && (l.text[i] == ' ' || l.text.compare(i, wide_space.size(), wide_space) == 0)) {
            if (l.text[i] != ' ' && wide == std::string_view::npos) wide = i;
            i += l.text[i] == ' ' ? 1 : wide_space.size();
        }
        if (wide != std::string_view::npos && key_follows(l.text.substr(i)))
            return std::pair{l.start + wide, std::string("a full-width space (U+3000) in the indentation: YAML indents "
                                                         "with ASCII spaces only (an input method in Chinese mode types "
                                                         "this one)")};
    }
    // The line the parser stopped at and the nearest written line above it.
    std::vector<const SourceLine*> near;
    if (!lines.empty()) near.push_back(&lines.back());
    for (int j = static_cast<int>(lines.size()) - 2; j >= 0; --j)
        if (!blank(lines[static_cast<std::size_t>(j)].text)) {
            near.push_back(&lines[static_cast<std::size_t>(j)]);
            break;
        }
    for (const SourceLine* l : near) {
        const std::size_t k = key_start(l->text);
        if (k == std::string_view::npos) continue;
        // The line above only where a key of its own could be: deeper, it is
        // text of the value above (say: |, then "注意：…"), where "：" is Chinese.
        if (l != near.front() && k > key_start(near.front()->text)) continue;
        const std::size_t wide = l->text.find(wide_colon, k), colon = l->text.find(':', k);
        if (wide != std::string_view::npos && wide < colon && l->text.substr(k, wide - k).find(' ') == std::string_view::npos)
            return std::pair{l->start + wide, std::string("a full-width colon \"\uff1a\" after a key: YAML's keys end "
                                                          "with an ASCII \":\" and a space (an input method in "
                                                          "Chinese mode types this one)")};
    }
    // A quote opened as a value and not closed on its line, within the 30
    // lines above the one the parser stopped at.
    for (int j = static_cast<int>(lines.size()) - 2; j >= 0 && j >= static_cast<int>(lines.size()) - 31; --j) {
        const SourceLine& l = lines[static_cast<std::size_t>(j)];
        const std::size_t k = key_start(l.text);
        if (k == std::string_view::npos || l.text[k] == '#') continue;
        const std::size_t colon = l.text.find(": ", k);
        if (colon == std::string_view::npos) continue;
        const std::size_t open = l.text.find_first_not_of(' ', colon + 2);
        if (open == std::string_view::npos || (l.text[open] != '"' && l.text[open] != '\'')) continue;
        const char q = l.text[open];
        // Where it closes, in the whole text: on its line, or on a later one
        // before the line the parser stopped at (a quoted text may run on
        // over lines), it is not the slip.
        const std::size_t close = quote_close(text, l.start + open);
        if (close >= lines.back().start)
            return std::pair{l.start + open,
                             fmt::format("the quote opened here is not closed on its line, so YAML reads the lines below "
                                         "as part of the value up to the next {}: close it on this line, or write a "
                                         "long text as a block (say: |, then the text on the lines below)",
                                         q)};
    }
    for (const SourceLine* l : near) {
        const std::size_t k = key_start(l->text);
        if (k == std::string_view::npos) continue;
        const std::string_view rest = l->text.substr(k);
        // "// a note": another language's comment (C's, SQL's "--", an INI
        // file's ";"), read as a key without its colon.
        for (const std::string_view opener : {"//", "/*", "--", ";"})
            if (rest.starts_with(opener) && !rest.starts_with("---") &&
                (l == near.front() || k <= key_start(near.front()->text)))
                return std::pair{l->start + k,
                                 fmt::format("a comment in YAML starts with \"#\", not \"{}\"", opener)};
        // The same after a value that ends with "}", "]" or a quote
        // ({contains: "11"}  // eleven): nothing may follow it on its line.
        const std::size_t slashes = find_outside_quotes(text, *l, k, [&](std::size_t c) {
            if (c == 0 || l->text.compare(c, 2, "//") != 0 || l->text[c - 1] != ' ') return false;
            const std::size_t before = l->text.find_last_not_of(' ', c - 1);
            return before != std::string_view::npos && std::string_view("}]\"'").find(l->text[before]) != std::string_view::npos;
        });
        if (slashes != std::string_view::npos)
            return std::pair{l->start + slashes, std::string("a comment in YAML starts with \"#\", not \"//\"")};
        // "run:all": a colon with no space after it is part of a plain text.
        const std::size_t colon = rest.find(':'), space = rest.find(' ');
        const auto key_like = [](std::string_view w) {  // "run", "response.minutes"; not "12" of "12:30"
            return !w.empty() && std::isalpha(static_cast<unsigned char>(w[0])) &&
                   std::all_of(w.begin(), w.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
        };
        // "response.text {contains: 11}": the key's colon left out before a
        // {…} or […] value (the parser blames the flow's own colon).
        if (space != std::string_view::npos && key_like(rest.substr(0, space))) {
            const std::size_t value = rest.find_first_not_of(' ', space);
            if (value != std::string_view::npos && (rest[value] == '{' || rest[value] == '['))
                return std::pair{l->start + k + space,
                                 fmt::format("no \":\" between the key and its {0}…{1}: write \"{2}: {0}…{1}\"",
                                             rest[value], rest[value] == '{' ? '}' : ']', rest.substr(0, space))};
        }
        if (colon != std::string_view::npos && colon < space && colon + 1 < rest.size() && rest[colon + 1] != ' ' &&
            rest.find(": ") == std::string_view::npos && key_like(rest.substr(0, colon)))
            return std::pair{l->start + k + colon, std::string("no space after this colon, so YAML reads the key and "
                                                               "its value as one text: write \"key: value\"")};
        // A quoted value that ends before its line does ('It's 11 minutes'):
        // the quote inside closed it.
        const std::size_t value_colon = rest.find(": ");
        if (value_colon == std::string_view::npos) continue;
        const std::size_t open = l->text.find_first_not_of(' ', k + value_colon + 2);
        if (open == std::string_view::npos || (l->text[open] != '"' && l->text[open] != '\'')) continue;
        const std::size_t close = quote_close(text, l->start + open);
        if (close == std::string_view::npos || close >= l->start + l->text.size()) continue;
        const std::size_t after = l->text.find_first_not_of(' ', close - l->start + 1);
        if (after == std::string_view::npos || l->text[after] == '#') continue;
        return std::pair{close, fmt::format("this quote ends the quoted value before its text does: inside {0}…{0} write "
                                            "{1} for a {0}{2}",
                                            l->text[open], l->text[open] == '"' ? "\\\"" : "''",
                                            l->text[open] == '"' ? "" : ", or quote the text with \"…\"")};
    }
    // A key without its colon, on the line above a key at its column; or a
    // lone word ("expect") above keys indented under it.
    if (near.size() == 2) {
        const std::string_view l = near[1]->text, here = near[0]->text;
        const std::size_t k = key_start(l), hk = key_start(here);
        const bool lone_word = k != std::string_view::npos && l.find(' ', k) == std::string_view::npos;
        if (k != std::string_view::npos && (k == hk || (lone_word && hk != std::string_view::npos && hk > k)) &&
            l.find(':', k) == std::string_view::npos && l.find_first_of("\"'{[|>", k) == std::string_view::npos)
            return std::pair{near[1]->start + k, std::string("this line has no \":\": a key is written \"key: value\" "
                                                             "(a colon and a space after the key); text that goes on "
                                                             "from the line above is indented further than the keys")};
    }
    return std::nullopt;
}

// Full-width punctuation where YAML needs its ASCII twin, on the line the
// parser stopped at (what an input method in Chinese mode types): a "，"
// between the entries of a {…} or […] ("end of map flow not found"), or a
// value that opens with "｛" or "［" (read as text: "illegal map value").
// Outside quotes and comments only: a quoted "3 公里，快" keeps its comma.
std::optional<std::pair<std::size_t, std::string>> wide_flow_punctuation(std::string_view text, const YAML::Mark& at) {
    const std::vector<SourceLine> lines = lines_up_to(text, at);
    if (lines.empty() || static_cast<int>(lines.size()) <= at.line) return std::nullopt;
    const SourceLine& l = lines.back();
    bool in_flow = false;
    const std::size_t c = find_outside_quotes(text, l, 0, [&](std::size_t i) {
        in_flow = in_flow || l.text[i] == '{' || l.text[i] == '[';
        const std::string_view rest = l.text.substr(i);
        return (in_flow && rest.starts_with("\uff0c")) ||
               ((rest.starts_with("\uff5b") || rest.starts_with("\uff3b")) && value_starts_at(l.text, i));
    });
    if (c == std::string_view::npos) return std::nullopt;
    const std::string_view rest = l.text.substr(c);
    if (rest.starts_with("\uff0c"))
        return std::pair{l.start + c, std::string("a full-width comma \"\uff0c\" between the entries of a {\u2026} "
                                                  "or [\u2026]: YAML separates them with an ASCII \",\" (an input "
                                                  "method in Chinese mode types this one)")};
    const bool brace = rest.starts_with("\uff5b");
    return std::pair{l.start + c, fmt::format("a full-width \"{}\" opens this value: YAML's {}\u2026{} are ASCII "
                                              "\"{}\" and \"{}\" (an input method in Chinese mode types these)",
                                              brace ? "\uff5b" : "\uff3b", brace ? "{" : "[", brace ? "}" : "]",
                                              brace ? "{" : "[", brace ? "}" : "]")};
}

// A list whose earlier item lost its "- " ("steps:", "  title: one", "  say:
// hi", "  - title: two": "end of map not found" at the dash): the first key
// of the item written without it, and what to write.
std::optional<std::pair<std::size_t, std::string>> dashless_item(std::string_view text, const YAML::Mark& at) {
    const std::vector<SourceLine> lines = lines_up_to(text, at);
    if (static_cast<int>(lines.size()) <= at.line) return std::nullopt;
    const auto indent = [](std::string_view l) { return l.find_first_not_of(' '); };
    const std::string_view here = lines.back().text;
    const std::size_t dash = indent(here);
    if (dash == std::string_view::npos || here.compare(dash, 2, "- ") != 0) return std::nullopt;
    // A list of mappings: the item at the dash opens with a key ("- title: two").
    const std::size_t item = here.find_first_not_of(' ', dash + 2), item_colon = here.find(": ", dash);
    if (item == std::string_view::npos || item_colon == std::string_view::npos ||
        here.substr(item, item_colon - item).find(' ') != std::string_view::npos)
        return std::nullopt;
    // Up from the dash: the keys at its column, without "- ", down to the
    // line that holds the list.
    std::optional<std::size_t> first;
    for (int j = static_cast<int>(lines.size()) - 2; j >= 0; --j) {
        const std::string_view l = lines[static_cast<std::size_t>(j)].text;
        const std::size_t k = indent(l);
        if (k == std::string_view::npos || l[k] == '#' || k > dash) continue;  // blank, a comment, deeper
        if (k < dash || l.compare(k, 1, "-") == 0) break;
        const std::size_t colon = l.find(':', k);
        if (colon == std::string_view::npos || l.substr(k, colon - k).find(' ') != std::string_view::npos) break;
        first = static_cast<std::size_t>(j);
    }
    if (!first) return std::nullopt;
    const SourceLine& l = lines[*first];
    const std::size_t k = indent(l.text);
    const std::string_view key = l.text.substr(k, l.text.find(':', k) - k);
    return std::pair{l.start + k, fmt::format("this item of the list has no \"- \", as the one at line {} has: "
                                              "write \"- {}:\" and indent its other keys under it",
                                              at.line + 1, printable_cut(key, 40))};
}

// A "{" or "[" that opens a value and is not closed on its line, in the 30
// lines up to `at` (where the parser said "end of map flow not found"): the
// byte offset of the nearest one and what it is. A flow may run on over
// lines, so only the parser's giving up makes an open one a slip.
std::optional<std::pair<std::size_t, std::string>> unclosed_flow(std::string_view text, const YAML::Mark& at) {
    const std::vector<SourceLine> lines = lines_up_to(text, at);
    for (int j = static_cast<int>(lines.size()) - 1; j >= 0 && j >= static_cast<int>(lines.size()) - 31; --j) {
        const SourceLine& line = lines[static_cast<std::size_t>(j)];
        const std::size_t start = line.start;
        const std::string_view l = line.text;  // not a structured binding: clang 14 cannot capture one
        std::vector<std::size_t> open;  // the line's unmatched openers
        find_outside_quotes(text, line, 0, [&](std::size_t c) {
            if (l[c] == '{' || l[c] == '[') open.push_back(c);
            else if ((l[c] == '}' || l[c] == ']') && !open.empty()) open.pop_back();
            return false;
        });
        // Only an opener where a value begins.
        if (open.empty() || !value_starts_at(l, open.front())) continue;
        const std::size_t o = open.front();
        return std::pair{start + o, l[o] == '{' ? std::string("this \"{\" is never closed: a {…} mapping ends with "
                                                              "\"}\" (or write its keys on the lines below, indented)")
                                                : std::string("this \"[\" is never closed: a […] list ends with "
                                                              "\"]\" (or write its items on the lines below, each "
                                                              "after \"- \")")};
    }
    return std::nullopt;
}

// The first line whose indentation holds a tab, as a mark (0-based, like
// yaml-cpp's), or nothing.
std::optional<YAML::Mark> first_indenting_tab(std::string_view text) {
    YAML::Mark m;
    m.line = 0;
    for (std::size_t i = 0; i < text.size();) {
        std::size_t j = i, tab = std::string_view::npos;
        while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) {
            if (text[j] == '\t' && tab == std::string_view::npos) tab = j;
            ++j;
        }
        // Only where text follows: a blank line's whitespace indents nothing.
        if (tab != std::string_view::npos && j < text.size() && text[j] != '\n' && text[j] != '\r') {
            m.column = static_cast<int>(tab - i);
            m.pos = static_cast<int>(tab);
            return m;
        }
        const std::size_t nl = text.find('\n', i);
        if (nl == std::string_view::npos) break;
        i = nl + 1;
        ++m.line;
    }
    return std::nullopt;
}

std::optional<YAML::Mark> second_document(const std::string& text) {
    struct Starts : YAML::EventHandler {
        std::vector<YAML::Mark> marks;
        void OnDocumentStart(const YAML::Mark& m) override { marks.push_back(m); }
        void OnDocumentEnd() override {}
        void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
        void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
        void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
        void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
        void OnSequenceEnd() override {}
        void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
        void OnMapEnd() override {}
    } starts;
    std::istringstream in(text);
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(starts) || !parser.HandleNextDocument(starts)) return std::nullopt;
    return starts.marks.size() > 1 ? starts.marks[1] : YAML::Mark();
}

Budget read_budget(const Reader& r, const YAML::Node& n) {
    r.expect_map(n, "\"budget\"");
    r.check_keys(n, "budget",
                 {"train_steps", "served_requests", "generated_tokens", "forward_tokens", "simulations",
                  "simulated_requests", "model_bytes"});
    constexpr int most = 1000000000;
    Budget b;
    if (n["train_steps"]) b.train_steps = r.integer(n["train_steps"], "train_steps", 1, most);
    if (n["served_requests"]) b.served_requests = r.integer(n["served_requests"], "served_requests", 1, most);
    if (n["generated_tokens"]) b.generated_tokens = r.integer(n["generated_tokens"], "generated_tokens", 1, most);
    if (n["forward_tokens"]) b.forward_tokens = r.integer(n["forward_tokens"], "forward_tokens", 1, most);
    if (n["simulations"]) b.simulations = r.integer(n["simulations"], "simulations", 1, most);
    if (n["simulated_requests"])
        b.simulated_requests = r.whole(n["simulated_requests"], "simulated_requests", 1, 1'000'000'000'000LL);
    constexpr long long most_bytes = 1LL << 50;  // a petabyte
    if (n["model_bytes"]) b.model_bytes = r.whole(n["model_bytes"], "model_bytes", 1, most_bytes);
    return b;
}

// Adds up the work a lesson asks for, step by step, and stops at the first
// step that goes over the lesson's budget. A request's work is what its
// model kind declares (ModelDescription::work), at its most, since a lesson
// is checked before it runs: the loader knows no kind.
class WorkTally {
public:
    WorkTally(const Reader& r, const Budget& b, const ModelDescription& model, std::vector<ModelFileWork>& file_work)
        : r_(r), budget_(b), model_(model), declared_(model.work), file_work_(file_work) {}

    void add(const LessonStep& s, const YAML::Node& n, size_t index) {
        if (s.request) fields_ = *s.request, request_ = n["request"];
        // A new request or new settings: the next run starts a fresh pipeline.
        if (s.request || !s.set.empty()) stages_done_ = 0, ran_ = false;
        // force, show and attention run the request again as far as it had
        // run (the interpreter's rerun): at most the whole answer each.
        if (ran_ && declared_.whole && declared_.charge == WorkDeclaration::Charge::each_run)
            for (const char* key : {"force", "show", "attention"})
                if (n[key]) charge(whole(), n[key], index);
        if (s.train) charge(train_, s.train->steps, budget_.train_steps, "training steps", "train_steps", n["train"], index);
        if (s.serve) {
            charge(served_, s.serve->requests, budget_.served_requests, "served requests", "served_requests", n["serve"],
                   index);
            if (declared_.whole) charge(times(whole(), s.serve->requests), n["serve"], index);
        }
        if (s.run) ran_ = true;
        if (s.run && declared_.whole) {
            if (declared_.charge == WorkDeclaration::Charge::each_run) charge(run_work(*s.run), n["run"], index);
            else if (passes_work_stage(*s.run)) charge(whole(), n["run"], index);
        }
        // serve (after run, in a step's order) answers whole requests: the
        // next run starts a fresh pipeline and does the work again. Not
        // counted so, serve and run: output alternately ran 20 simulations
        // on a budget of 12.
        if (s.serve) stages_done_ = 0;
        // With and without the cache: the tokens twice.
        if (s.kv_experiment)
            charge(tokens_, 2LL * *s.kv_experiment, budget_.generated_tokens, "generated tokens", "generated_tokens",
                   n["kv_experiment"], index);
    }

private:
    // The current request's field, checked by its knob; its default when
    // not given. A value its knob refuses is an error here, at the value:
    // the work it would ask for cannot be counted (spec_tokens: 1e9).
    std::string field(std::string_view name) const {
        const Knob* k = model_.find_knob(name);
        for (const auto& kv : fields_)  // not a structured binding: clang cannot capture one
            if (kv.first == name && k) return r_.checked(request_[kv.first], [&] { return k->check(kv.second); });
        return k ? k->default_value : std::string();
    }
    Work whole() const {
        return declared_.whole([this](std::string_view name) { return field(name); });
    }
    static Work times(Work w, long long n) {
        w.generated_tokens *= n, w.forward_tokens *= n, w.simulations *= n, w.train_steps *= n, w.served_requests *= n;
        w.simulated_requests *= n;
        w.model_file_passes *= n;
        return w;
    }
    // A model charged per run (the llm kind): stages_done_ here is 0 for a
    // fresh request, 1 after its request stage, 2 after load, 3 while it
    // generates. request and load come once, at a request's start, so a run
    // to one the request has passed goes on to the answer (a run: request
    // half-way through 40 tokens generated them all, counted as one).
    Work run_work(const RunSpec& run) {
        bool to_answer =
            run.kind == RunSpec::Kind::all || (run.kind == RunSpec::Kind::through && run.through == Stage::respond);
        bool generates = true;  // request and load on their own generate nothing
        if (run.kind == RunSpec::Kind::through && (run.through == Stage::request || run.through == Stage::load)) {
            const int at = run.through == Stage::request ? 1 : 2;
            if (stages_done_ >= at) to_answer = true;
            else stages_done_ = at, generates = false;
        } else if (run.kind == RunSpec::Kind::stage) {
            generates = stages_done_ >= 2;
            stages_done_ = std::min(3, stages_done_ + 1);
        } else if (!to_answer) {
            stages_done_ = 3;
        }
        if (to_answer) stages_done_ = 0;  // answered: the next run starts afresh
        return to_answer ? whole() : generates ? declared_.one_step : Work{};
    }
    // Walks the stages a run goes through, as the interpreter does, and says
    // whether the stage doing the work is among them.
    bool passes_work_stage(const RunSpec& run) {
        const int last = static_cast<int>(all_stages.size());
        const int at = stage_index(declared_.stage);
        // Only respond left, and a run for a token or an earlier stage: it
        // writes the response, then starts the request again.
        bool finished_answer = false;
        if (stages_done_ == last - 1 &&
            (run.kind == RunSpec::Kind::token || (run.kind == RunSpec::Kind::through && run.through != Stage::respond))) {
            finished_answer = at == last - 1;
            stages_done_ = last;
        }
        if (stages_done_ == last) stages_done_ = 0;  // the request was answered: the run starts it again
        const int from = stages_done_;
        switch (run.kind) {
            case RunSpec::Kind::stage: stages_done_ = from + 1; break;
            case RunSpec::Kind::through:
                stages_done_ = stage_index(run.through) >= from ? stage_index(run.through) + 1 : last;
                break;
            case RunSpec::Kind::token:
                stages_done_ = stage_index(Stage::postprocess) >= from ? stage_index(Stage::postprocess) + 1 : last;
                break;
            case RunSpec::Kind::all: stages_done_ = last; break;
        }
        return finished_answer || (from <= at && at < stages_done_);
    }

    void charge(const Work& w, const YAML::Node& at, size_t index) {
        charge(train_, w.train_steps, budget_.train_steps, "training steps", "train_steps", at, index);
        charge(served_, w.served_requests, budget_.served_requests, "served requests", "served_requests", at, index);
        charge(tokens_, w.generated_tokens, budget_.generated_tokens, "generated tokens", "generated_tokens", at, index);
        charge(forward_, w.forward_tokens, budget_.forward_tokens, "forward tokens", "forward_tokens", at, index);
        charge(simulations_, w.simulations, budget_.simulations, "queue simulations", "simulations", at, index);
        charge(simulated_, w.simulated_requests, budget_.simulated_requests, "simulated queue requests",
               "simulated_requests", at, index);
        // Their bytes need the model file's size: check_lesson_files charges them.
        if (w.model_file_passes > 0) {
            model_file_passes_ += w.model_file_passes;
            file_work_.push_back(ModelFileWork{index, r_.at(at), model_file_passes_});
        }
    }
    void charge(long long& total, long long more, long long limit, const char* what, const char* key,
                const YAML::Node& at, size_t index) const {
        total += more;
        if (total > limit)
            r_.fail(at, fmt::format("step {} takes the lesson to {} {}, over its budget of {}; if it really needs "
                                    "that many, raise it with budget: {{{}: N}}",
                                    index + 1, total, what, limit, key));
    }

    const Reader& r_;
    Budget budget_;
    const ModelDescription& model_;
    const WorkDeclaration& declared_;
    std::vector<ModelFileWork>& file_work_;
    long long model_file_passes_ = 0;
    bool ran_ = false;  // a run since the last request or settings: there is something to run again
    std::vector<std::pair<std::string, std::string>> fields_;  // the current request's, as written
    YAML::Node request_;                                       // and where: its mapping
    int stages_done_ = 0;  // at_stage: stages the current request has run
    long long train_ = 0, served_ = 0, tokens_ = 0, forward_ = 0, simulations_ = 0, simulated_ = 0;
};

Lesson read_lesson(const Reader& r, const YAML::Node& root);

}  // namespace

namespace {
// A number as written in a lesson, with as many digits as tell it from its
// neighbours (at least 9, as far as equality looks): a bound of
// 17.0000000001 was written "17" ("expected > 17 and < 17"), a times of
// 1.0000001 "1 × r".
std::string exact_text(double x) {
    for (int digits = 9; digits < 17; ++digits)
        if (const std::string text = format_value(Value{x}, digits); std::strtod(text.c_str(), nullptr) == x) return text;
    return format_value(Value{x}, 17);
}
}  // namespace

std::string Operand::describe() const {
    if (kind == Kind::literal) {
        const std::string* t = std::get_if<std::string>(&literal);
        return t ? "\"" + *t + "\"" : exact_text(std::get<double>(literal));
    }
    std::string out = times == 1 ? name : exact_text(times) + " × " + name;
    if (plus > 0) out += " + " + exact_text(plus);
    if (plus < 0) out += " − " + exact_text(-plus);
    return out;
}

std::string Condition::describe() const {
    switch (op) {
        case Op::equals: return "= " + operand.describe();
        case Op::near: return "≈ " + operand.describe() + " ± " + format_value(Value{tolerance});
        case Op::contains: return "contains " + operand.describe();
        case Op::below: return "< " + operand.describe();
        case Op::above: return "> " + operand.describe();
    }
    return "";
}

std::string Expectation::describe(std::string_view and_word) const {
    std::string out = negated ? "not " : "";
    const std::size_t start = out.size();
    for (const auto& c : conditions) {
        if (out.size() > start) out.append(" ").append(and_word).append(" ");
        out += c.describe();
    }
    return out;
}

Lesson parse_lesson(const std::string& yaml_text, const std::string& path) {
    const Reader r(path, yaml_text);
    // YAML is text: a NUL byte made yaml-cpp report an "unknown escape
    // character" in a file that has none.
    // UTF-16 (a Windows editor's "Unicode"): every other byte a NUL.
    if (yaml_text.size() >= 2 && ((yaml_text[0] == '\xFF' && yaml_text[1] == '\xFE') ||
                                  (yaml_text[0] == '\xFE' && yaml_text[1] == '\xFF')))
        throw Error(SourceLocation{path, 1, 1}, "the lesson is saved as UTF-16: save it as UTF-8 (an editor's "
                                                "\"Unicode\" is often UTF-16)");
    if (const std::size_t nul = yaml_text.find('\0'); nul != std::string::npos)
        throw Error(r.at_offset(nul), "a NUL byte: a lesson is text (YAML), not binary data");
    // A lesson saved in a legacy encoding (Latin-1, GBK) ran, its text shown
    // with bytes no screen can draw.
    if (const std::size_t bad = invalid_utf8_at(yaml_text); bad != std::string::npos)
        throw Error(r.at_offset(bad), fmt::format("the byte 0x{:02X} here is not UTF-8: save the lesson as UTF-8 (an editor "
                                            "may have saved it as Latin-1, Windows-1252 or GBK)",
                                            static_cast<unsigned char>(yaml_text[bad])));
    YAML::Node root;
    try {
        root = YAML::Load(yaml_text);
        if (const auto second = root.IsMap() ? second_document(yaml_text) : std::nullopt)
            throw Error(r.at(*second),
                        "a second YAML document starts here; a lesson is exactly one (a stray \"---\"?)");
        check_structure(r, root);
        return read_lesson(r, root);
    } catch (const YAML::DeepRecursion& e) {
        // yaml-cpp says "bad file" here.
        throw Error(r.at(e.mark),
                    fmt::format("invalid YAML: lists or mappings nested {} levels deep, more than the YAML reader takes",
                                e.depth()));
    } catch (const YAML::ParserException& e) {
        // The parser's words name its state, not the slip; the three common
        // slips get the fix beside them. A tab in an indentation is the
        // likeliest cause of any of them, and invisible in most editors.
        const auto tab = e.msg.find("tab") != std::string::npos ? std::optional<YAML::Mark>(e.mark)
                                                                  : first_indenting_tab(yaml_text);
        if (tab && tab->line <= e.mark.line)
            throw Error(r.at(*tab), "a tab in the indentation: YAML indents with spaces only (the parser said: " +
                                        e.msg + ")");
        const bool flow = e.msg == "end of map flow not found" || e.msg == "end of sequence flow not found";
        std::optional<std::pair<std::size_t, std::string>> slip = wide_flow_punctuation(yaml_text, e.mark);
        if (!slip) slip = flow ? unclosed_flow(yaml_text, e.mark) : slip_before(yaml_text, e.mark);
        if (!slip && e.msg == "end of map not found") slip = dashless_item(yaml_text, e.mark);
        if (slip)
            throw Error(r.at_offset(slip->first), fmt::format("invalid YAML: {} (the parser stopped at line {}: {})",
                                                              slip->second, e.mark.line + 1, e.msg));
        std::string hint;
        if (e.msg == "illegal map value" && line_starts_with_key_at(yaml_text, e.mark))
            hint = " — this line reads as the rest of the value above; if it is a key of its own, indent it as "
                   "the keys above it";
        else if (e.msg == "illegal map value")
            hint = " — a value with \": \" in it must be quoted (\"…\") or written as a block (say: |, then the "
                   "text on the lines below)";
        else if (e.msg == "end of map not found" || e.msg == "end of sequence not found")
            hint = " — check the indentation here and on the line above: keys of one mapping line up, a list's "
                   "\"- \" items too";
        throw Error(r.at(e.mark), "invalid YAML: " + e.msg + hint);
    } catch (const YAML::Exception& e) {
        // Every node is checked before it is converted, so this is a gap in
        // the checks; still one clear message, never an escaped exception.
        throw Error(r.at(e.mark), "unreadable lesson: " + e.msg);
    }
}

namespace {

// Whether a step expects an error (an `error:` expectation, not negated,
// and not `error: ""`, which expects none), read from the lesson: a refusal
// it shows is not a problem before step 1.
bool expects_error(const LessonStep& st) {
    return std::any_of(st.expect.begin(), st.expect.end(), [](const Expectation& e) {
        if (e.path != "error" || e.negated) return false;
        const bool none = e.conditions.size() == 1 && e.conditions[0].op == Condition::Op::equals &&
                          e.conditions[0].operand.kind == Operand::Kind::literal &&
                          e.conditions[0].operand.literal == Value{std::string()};
        return !none;
    });
}

// Whether the request step i sets is expected to fail: at that step or at
// a later one that runs it before the next request.
bool request_expects_error(const std::vector<LessonStep>& steps, std::size_t i) {
    for (std::size_t j = i; j < steps.size() && (j == i || !steps[j].request); ++j)
        if (expects_error(steps[j])) return true;
    return false;
}

// The request each running step runs, as the model will read it: a step
// that runs, serves or forces a token with no request before it, a request
// that lacks a field the model needs ("missing feature \"congestion\"" at
// its step, exit 1, before), and a value refused under settings a later
// `set:` changed (normalize: true after a request written under false).
// Each is invalid where it is written, unless a step that runs the request
// expects the error.
// below, above and tol compare numbers, and so do times and plus: a path or
// a remembered name that holds a text or a list, compared so, failed at its
// step ("is not a number"), or under not always held. Refused where the
// expectation is written.
void check_number_operands(const Lesson& lesson, const ModelDescription& model) {
    std::map<std::string, std::string> remembered;  // name → the path it remembers
    for (const LessonStep& st : lesson.steps) {
        for (const auto& [name, path] : st.remember) remembered[name] = path;  // a step may use what it remembers
        for (const Expectation& e : st.expect)
            for (const Condition& c : e.conditions) {
                const Operand& o = c.operand;
                if (o.kind == Operand::Kind::literal || c.op == Condition::Op::contains) continue;
                const auto held = remembered.find(o.name);
                const bool by_name = o.kind == Operand::Kind::remembered;
                if (by_name && held == remembered.end()) continue;
                const std::string& path = by_name ? held->second : o.name;
                const std::optional<ValueType> t = declared_type(model, path);
                if (c.op == Condition::Op::equals && o.times == 1 && o.plus == 0) {
                    // A text equal to a number (response.text: {equals:
                    // response.minutes}) never is; under not, always.
                    const std::optional<ValueType> mine = declared_type(model, e.path);
                    const auto is = [](ValueType v, ValueType a, ValueType b) { return v == a || v == b; };
                    if (!t || !mine || !is(*t, ValueType::text, ValueType::number) ||
                        !is(*mine, ValueType::text, ValueType::number) || *t == *mine)
                        continue;
                    const auto what = [](ValueType v) { return v == ValueType::text ? "a text" : "a number"; };
                    throw Error(e.where,
                                fmt::format("{} is {}, and {}{} is {}: a text never equals a number (compare two "
                                            "texts, or two numbers)",
                                            e.path, what(*mine), o.name,
                                            by_name ? fmt::format(" (remembered from {})", path) : "", what(*t)));
                }
                if (!t || *t == ValueType::number) continue;
                const std::string what = *t == ValueType::text ? "a text" : "a list of numbers";
                const std::string op = c.op == Condition::Op::above   ? "above"
                                       : c.op == Condition::Op::below ? "below"
                                       : c.op == Condition::Op::near  ? "tol"
                                                                      : o.times != 1 ? "times" : "plus";
                throw Error(e.where, by_name ? fmt::format("\"{}\" remembers {}, {}: {} compares numbers (remember "
                                                           "a path that holds one)",
                                                           o.name, path, what, op)
                                             : fmt::format("\"{}\" is {}: {} compares numbers", path, what, op));
            }
    }
}

void check_requests(const Lesson& lesson, const ModelDescription& model) {
    std::vector<std::string> required;
    for (const Knob& k : model.knobs)
        if (k.required && k.target == KnobTarget::request) required.push_back(k.name);
    SettingsSoFar settings;       // set: so far
    SettingsSoFar checked_under;  // what the request was last checked under
    std::optional<std::size_t> request_step;
    for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
        const LessonStep& st = lesson.steps[i];
        for (const SettingChange& c : st.set) settings[c.name] = c.value;
        if (st.request) {
            request_step = i;
            checked_under = settings;  // read_step checked its values under these
            const auto& fields = *st.request;
            if (!request_expects_error(lesson.steps, i))
                for (const std::string& name : required)
                    if (std::none_of(fields.begin(), fields.end(), [&](const auto& f) { return f.first == name; }))
                        throw Error(st.request_where,
                                    fmt::format("the request has no \"{}\": every {} request gives {}", name,
                                                model.kind, join_names(required)));
        }
        if (!(st.run || st.serve || st.force) || expects_error(st)) continue;
        const SourceLocation& at = st.run ? st.run_where : st.serve ? st.serve_where : st.force_at;
        const char* does = st.run ? "runs" : st.serve ? "serves" : "forces a token of";
        if (!request_step) {
            if (required.empty()) continue;  // the model asks with values of its own (serving's defaults)
            throw Error(at, fmt::format("step {} {} the request, and no step up to here gives one: add request: "
                                        "{{…}} to this step or one before it (every {} request gives {})",
                                        i + 1, does, model.kind, join_names(required)));
        }
        if (!model.check_request_value || settings == checked_under) continue;
        const LessonStep& rq = lesson.steps[*request_step];
        const FieldLookup setting = settings_in_force(settings, model);
        for (const auto& [name, value] : *rq.request) {
            try {
                model.check_request_value(name, value, setting);
            } catch (const Error& e) {
                throw Error(rq.request_at.at(name),
                            fmt::format("{} (step {} {} this request under settings changed since step {})", e.message(),
                                        i + 1, does, *request_step + 1));
            }
        }
        checked_under = settings;
    }
}

Lesson read_lesson(const Reader& r, const YAML::Node& root) {
    const std::string& path = r.path();
    if (!root.IsMap())
        throw Error(r.at(root).line ? r.at(root) : SourceLocation{path, 1, 1},
                    "a lesson must be a mapping with title and steps");
    r.check_keys(root, "lesson", {"title", "language", "description", "model", "budget", "steps"});
    Lesson lesson;
    lesson.path = path;
    if (!root["title"]) throw Error(SourceLocation{path, 1, 1}, "the lesson has no \"title\"");
    lesson.title = r.text(root["title"], "title");
    if (const auto l = root["language"]) {
        // Left empty, its value has no place of its own: yaml-cpp marks the next line.
        if (l.IsNull()) r.fail(key_of(root, "language"), "\"language\" needs a value: en or zh");
        lesson.language = r.text(l, "language");
        if (lesson.language != "en" && lesson.language != "zh")
            r.fail(l, fmt::format("\"language\" must be en or zh, got \"{}\"{}", lesson.language,
                                  did_you_mean(lesson.language, {"en", "zh"})));
    }
    // Usually folded (`description: >`): Chinese needs the folds' spaces gone.
    if (root["description"]) lesson.description = join_cjk_folds(r.text(root["description"], "description"));
    if (root["model"]) lesson.model = read_model(r, root["model"]);
    if (root["budget"]) lesson.budget = read_budget(r, root["budget"]);
    const auto steps = root["steps"];
    if (!steps) {
        // "title: \"broken" with no closing quote: the rest of the file is the title's text.
        for (const auto& kv : root)
            if (kv.second.IsScalar() && kv.second.Tag() == "!" && kv.second.Scalar().find("steps:") != std::string::npos)
                r.fail(kv.second, fmt::format("the quote that opens \"{}\" here is never closed: the rest of the file "
                                              "became its text, \"steps:\" included",
                                              kv.first.Scalar()));
        throw Error(SourceLocation{path, 1, 1}, "the lesson has no \"steps\"");
    }
    if (steps.IsSequence() && steps.size() == 0) r.fail(steps, "\"steps\" is an empty list: a lesson needs a step");
    if (!steps.IsSequence()) {
        // "steps:" then "  title: one": a first step written without its "- ".
        const bool a_step = steps.IsMap() && std::all_of(steps.begin(), steps.end(), [](const auto& kv) {
            const auto& keys = step_keys();
            return kv.first.IsScalar() && std::find(keys.begin(), keys.end(), kv.first.Scalar()) != keys.end();
        });
        r.fail(steps, fmt::format("\"steps\" must be a non-empty list, got {}{}", Reader::kind_of(steps),
                                  a_step ? fmt::format(" of a step's keys — a list's items begin with \"- \": write "
                                                       "\"- {}:\" here and indent the step's other keys under it",
                                                       steps.begin()->first.Scalar())
                                         : ""));
    }
    const ModelDescription& model = model_description(lesson.model.kind);
    WorkTally work(r, lesson.budget, model, lesson.model_file_work);
    StepsSoFar so_far;
    std::vector<std::string> remembered;  // names remembered so far, in step order
    std::map<std::pair<int, int>, int> step_at;  // a step's line and column → the first step written there
    std::string serving_experiment = lesson.model.kind == "serving" ? model.knob(serving::keys::experiment).default_value : "";
    std::string serving_compare = lesson.model.kind == "serving" ? model.knob(serving::keys::compare).default_value : "";
    for (size_t i = 0; i < steps.size(); ++i) {
        lesson.steps.push_back(
            read_step(r, steps[i], i, model, so_far, remembered, step_request_expects_error(steps, i)));
        check_serving_needs_file(r, lesson.model, steps[i], model);
        if (lesson.model.kind == "serving") {
            // The experiment a step's checks look at: its request's, else the
            // last request's, else the knob's default.
            if (const auto& req = lesson.steps.back().request) {
                serving_experiment = model.knob(serving::keys::experiment).default_value;
                serving_compare = model.knob(serving::keys::compare).default_value;
                bool named = false;
                for (const auto& [k, v] : *req) {
                    if (k == serving::keys::experiment) serving_experiment = v, named = true;
                    if (k == serving::keys::compare) serving_compare = v;
                }
                check_serving_fields(lesson.steps.back(), serving_experiment, named);
            }
            if (!step_expects_error(steps[i]))
                check_serving_paths(lesson.steps.back(), serving_experiment, serving_compare);
        }
        const YAML::Mark m = steps[i].Mark();
        const auto [first, fresh] = step_at.emplace(std::pair{m.line, m.column}, static_cast<int>(i));
        if (!fresh) lesson.steps.back().copy_of = first->second;
        work.add(lesson.steps.back(), steps[i], i);
    }
    check_number_operands(lesson, model);
    check_requests(lesson, model);
    return lesson;
}

}  // namespace

Lesson load_lesson(const std::string& path) {
    // Lessons are a few KiB; 16 MiB is far beyond any real one.
    Lesson lesson = parse_lesson(read_regular_file(path, "the lesson file", 16u << 20), path);
    check_lesson_files(lesson);
    return lesson;
}

std::string default_training_data() { return data_path("assets/data/deliveries.csv").string(); }

namespace {
// "; the bundled models (found by name from any folder): a.gguf, b.gguf" —
// for a model file that is not there; nothing for other files.
std::string bundled_names(const std::string& what) {
    if (what != "model file") return "";
    return bundled_models_hint();
}

// Each `force:` names a token of the model's vocabulary: a piece one of its
// tokens is exactly, or an id below its size. Found before step 1 rather
// than when the step runs, after the steps before it have taken the class's
// time.
// A request's `force` field ("0:412, 3:99"), unless the step expects the
// error it gives.
const std::string* request_force(const LessonStep& st) {
    if (!st.request || expects_error(st)) return nullptr;
    for (const auto& [name, value] : *st.request)
        if (name == llm::keys::force) return &value;
    return nullptr;
}

// Each llm request's prompt and max_tokens against the model's context,
// counted as the model will count them: its tokenizer's tokens (600 tokens
// on a model of 512 failed only when the step ran).
void check_generations_fit(const Lesson& lesson, const llm::GGUFFile& file, std::uint32_t n_ctx,
                           std::vector<Error>& problems) {
    if (lesson.model.kind != "llm") return;
    const ModelDescription& model = model_description(lesson.model.kind);
    std::unique_ptr<llm::TextCodec> codec;
    for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
        const LessonStep& st = lesson.steps[i];
        if (!st.request || request_expects_error(lesson.steps, i)) continue;
        const std::string* prompt = nullptr;
        std::string max_tokens = model.knob(llm::keys::max_tokens).default_value;
        for (const auto& [name, value] : *st.request) {
            if (name == llm::keys::prompt) prompt = &value;
            if (name == llm::keys::max_tokens) max_tokens = value;
        }
        if (!prompt || prompt->empty()) continue;  // refused where the request is read
        if (!codec) codec = llm::make_vocab_codec(std::make_shared<const llm::Vocab>(llm::Vocab::from_gguf(file)));
        const auto at = st.request_at.find(llm::keys::max_tokens);
        try {
            llm::check_generation_fits(static_cast<int>(codec->encode(*prompt).size()),
                                       static_cast<int>(std::stod(max_tokens)), static_cast<int>(n_ctx),
                                       llm::keys::max_tokens);
        } catch (const Error& e) {
            problems.emplace_back(at != st.request_at.end() ? at->second : st.request_where, e.message());
        } catch (const std::exception&) {
            // A max_tokens that is no number was refused by its knob where it is written.
        }
    }
}

void check_forced_tokens(const Lesson& lesson, const llm::GGUFFile& file, std::vector<Error>& problems) {
    const auto forces = [](const LessonStep& st) { return st.force.has_value() || request_force(st); };
    if (std::none_of(lesson.steps.begin(), lesson.steps.end(), forces)) return;
    const auto vocab = std::make_shared<const llm::Vocab>(llm::Vocab::from_gguf(file));
    const auto codec = llm::make_vocab_codec(vocab);
    const int n_tokens = static_cast<int>(vocab->n_tokens());
    for (const LessonStep& st : lesson.steps) {
        // The ids of a request's force against the vocabulary ("0:99999"
        // failed only when the step ran); its form was checked where read.
        if (const std::string* force = request_force(st)) {
            const auto at = st.request_at.find(llm::keys::force);
            try {
                (void)llm::parse_forced(*force, n_tokens);
            } catch (const Error& e) {
                problems.emplace_back(at != st.request_at.end() ? at->second : st.where, e.message());
            }
        }
        if (!st.force) continue;
        try {
            if (const double* id = std::get_if<double>(&*st.force)) {
                if (*id >= n_tokens)
                    throw Error(fmt::format("token {:.0f} does not exist: the vocabulary has tokens 0..{}", *id,
                                            n_tokens - 1));
            } else {
                (void)llm::token_of_piece(*codec, n_tokens, std::get<std::string>(*st.force));
            }
        } catch (const Error& e) {
            problems.emplace_back(st.force_at, "force: " + e.message());
        }
    }
}
}  // namespace

namespace {

// A serving step's request as its experiment reads it at stage 1 (fields
// each valid alone, not together: max_batch beyond kv_blocks); a
// speculative step's draft, looked up as the experiment will: beside the
// model's file, then among the bundled models; and its spec_overlap, which
// runs the draft on a thread of the target's CPU pool. Each failed at its
// step, after the steps before it had run.
void check_serving_steps(const Lesson& lesson, std::vector<Error>& problems) {
    const ModelSpec& m = lesson.model;
    const Knob& overlap = model_description(m.kind).knob(serving::spec_overlap_field);
    for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
        const LessonStep& st = lesson.steps[i];
        if (!st.request || request_expects_error(lesson.steps, i)) continue;
        try {
            serving::check_lab_request(Request{*st.request});
        } catch (const Error& e) {
            problems.emplace_back(st.where, e.message());
        }
        for (const auto& [name, value] : *st.request) {
            const SourceLocation& at = st.request_at.at(name);
            if (name == serving::draft_field) {
                try {
                    const fs::path file = serving::speculative_draft_file(
                        m.file.empty() ? fs::path() : fs::path(resolve_lesson_path(lesson, m.file)).parent_path(),
                        value);
                    // A file that is there but no model (a folder, a text)
                    // failed only at its step; a model file is opened here too.
                    (void)llm::GGUFFile::open(file);
                } catch (const Error& e) {
                    problems.emplace_back(at, e.message());
                }
            } else if (name == serving::spec_overlap_field && overlap.check(value) == overlap.spelled(true)) {
                // (The value was checked where it was read.)
                if (m.backend == llm::BackendKind::cuda)
                    problems.emplace_back(at, fmt::format("{}: the draft runs on a CPU thread beside the target, and "
                                                          "this model runs on CUDA (backend: cuda)",
                                                          name));
                else if (m.threads == 1)
                    problems.emplace_back(at, fmt::format("{}: needs 2 threads or more (one of them the draft's); "
                                                          "the model has threads: 1",
                                                          name));
            }
        }
    }
}

}  // namespace

void check_lesson_files(const Lesson& lesson) {
    std::vector<Error> problems;
    // Runs `check` on the file `written` in the lesson at `where`; a missing
    // file, or the check's error, becomes one problem.
    auto check_file = [&](const SourceLocation& where, const std::string& what, const std::string& written,
                          const std::string& resolved, auto&& check) {
        std::error_code ec;
        if (!fs::exists(resolved, ec)) {
            // Where it looked, whole: a lesson in the current folder resolves
            // "trained.json" to itself, which said nothing.
            const bool relative = fs::path(written).is_relative();
            const std::string looked = relative ? fs::absolute(resolved, ec).lexically_normal().string() : resolved;
            problems.emplace_back(where, fmt::format("{} \"{}\" not found{}{}", what, written,
                                                     relative ? fmt::format(" (relative to the lesson's folder: {})", looked)
                                                              : std::string(),
                                                     bundled_names(what)));
            return;
        }
        try {
            check(resolved);
        } catch (const Error& e) {
            // e.what() names the resolved file: "…/data.csv: cannot open the training data: it is a FIFO …"
            problems.emplace_back(where, fmt::format("{} \"{}\": {}", what, written, e.what()));
        }
    };
    const ModelSpec& m = lesson.model;
    if (!m.url.empty()) {
        // A server is to a lesson what a file is: it must answer before step 1.
        try {
            (void)server::first_served_model(m.url);
        } catch (const Error& e) {
            problems.emplace_back(m.url_at, fmt::format("model url \"{}\": {}", m.url, e.message()));
        }
    }
    if (!m.file.empty())
        check_file(m.file_at, "model file", m.file, resolve_lesson_path(lesson, m.file), [&](const std::string& p) {
            const llm::GGUFFile file = llm::GGUFFile::open(p);
            // A layer or head the attention panel is to show must exist.
            const std::string arch = file.architecture();
            const auto n_layer = file.find_u32(arch + ".block_count");
            const auto n_head = file.find_u32(arch + ".attention.head_count");
            const auto n_ctx = file.find_u32(arch + ".context_length");
            for (const LessonStep& st : lesson.steps) {
                // The cached and uncached generations must fit the context
                // (600 on a model of 512 failed only when the step ran).
                if (st.kv_experiment && n_ctx && *st.kv_experiment >= static_cast<long long>(*n_ctx))
                    problems.emplace_back(st.where, fmt::format("kv_experiment: {} tokens after the prompt do not fit "
                                                                "the model's context of {} positions (n_ctx)",
                                                                *st.kv_experiment, *n_ctx));
                if (!st.attention) continue;
                if (n_layer && st.attention->layer >= static_cast<int>(*n_layer))
                    problems.emplace_back(st.attention->where,
                                          fmt::format("attention: layer {} does not exist: the model has layers 0..{}",
                                                      st.attention->layer, *n_layer - 1));
                else if (n_head && st.attention->head >= static_cast<int>(*n_head))
                    problems.emplace_back(st.attention->where,
                                          fmt::format("attention: head {} does not exist: the model has heads 0..{}",
                                                      st.attention->head, *n_head - 1));
            }
            check_forced_tokens(lesson, file, problems);
            if (n_ctx) check_generations_fit(lesson, file, *n_ctx, problems);
            // The experiments' passes over model-sized files, now that the size is known.
            std::error_code ec;
            const auto size = static_cast<long long>(fs::file_size(p, ec));
            if (ec || size <= 0) return;
            for (const ModelFileWork& w : lesson.model_file_work) {
                if (w.passes <= lesson.budget.model_bytes / size) continue;  // passes × size fits (no overflow)
                problems.emplace_back(
                    w.at, fmt::format("step {} takes the lesson to {} passes over model-sized files ({} × {} B = {:.3g} "
                                      "GB read or written), over its budget of {} B; if it really needs that much, "
                                      "raise it with budget: {{model_bytes: N}}",
                                      w.step + 1, w.passes, w.passes, size,
                                      static_cast<double>(w.passes) * static_cast<double>(size) / 1e9,
                                      lesson.budget.model_bytes));
                break;
            }
        });
    if (m.kind == "serving") check_serving_steps(lesson, problems);
    if (m.weights_file)
        check_file(m.file_at, "weights file", *m.weights_file, resolve_lesson_path(lesson, *m.weights_file),
                   [](const std::string& p) { (void)delivery::load_weights(p); });
    bool default_data_checked = false;
    for (const LessonStep& st : lesson.steps) {
        if (!st.train) continue;
        const auto read_csv = [](const std::string& p) { (void)delivery::load_deliveries_csv(p); };
        if (st.train->data) {
            check_file(st.train->data_at, "training data", *st.train->data, resolve_lesson_path(lesson, *st.train->data),
                       read_csv);
        } else if (!default_data_checked) {
            default_data_checked = true;
            try {
                const std::string bundled = default_training_data();
                check_file(st.train->where, "the bundled training data", bundled, bundled, read_csv);
            } catch (const Error& e) {
                problems.emplace_back(st.train->where,
                                      "training without data: reads the bundled assets/data/deliveries.csv, but " +
                                          e.message());
            }
        }
    }
    if (problems.empty()) return;
    // One error: the first problem, then each other one on its own line.
    std::string more;
    for (size_t i = 1; i < problems.size(); ++i) more += std::string("\n") + problems[i].what();
    throw Error(problems.front().where(), problems.front().message() + more);
}

std::vector<std::string> find_lessons(const std::string& path) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) throw Error(SourceLocation{path}, "no such lesson file or folder");
    // Anything but a folder is one lesson; loading it says what is wrong
    // with a FIFO or a device.
    if (!fs::is_directory(path, ec)) return {path};
    std::vector<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(path, ec))
        // Not only regular files: a FIFO or device named *.yaml is reported as
        // an invalid lesson rather than silently skipped.
        // .yml as well: both are YAML's, and one left out was never checked.
        if (!entry.is_directory(ec) && (entry.path().extension() == ".yaml" || entry.path().extension() == ".yml"))
            out.push_back(entry.path().string());
    std::sort(out.begin(), out.end());
    if (out.empty()) throw Error(SourceLocation{path}, "no *.yaml or *.yml lessons in this folder");
    return out;
}

std::string default_lessons_folder() {
    if (const char* env = std::getenv("SIXSTEP_LESSONS")) return env;
    std::error_code ec;
    if (fs::is_directory("lessons", ec)) return "lessons";
    try {
        return data_path("lessons").string();
    } catch (const Error&) {
        return "lessons";  // the picker then says that it is empty
    }
}

std::string resolve_lesson_path(const Lesson& lesson, const std::string& relative) {
    const fs::path p(relative);
    if (p.is_absolute()) return relative;
    const fs::path beside = (fs::path(lesson.path).parent_path() / p).lexically_normal();
    std::error_code ec;
    if (fs::exists(beside, ec) || !p.has_filename()) return beside.string();
    // A bundled lesson copied to a folder of its own ("../assets/models/…"),
    // or a lesson that names a bundled model or data file alone: the file of
    // that name in the installed assets.
    const fs::path bundled = bundled_file(p.filename());
    return bundled.empty() ? beside.string() : bundled.string();
}

}  // namespace sixstep::app
