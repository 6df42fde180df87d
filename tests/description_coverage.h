// What runs of a model emitted, checked against its description both ways:
// nothing emitted that the description does not declare (with the declared
// unit and value type), and nothing declared that no run emitted. The lesson
// docs and `sixstep paths` come from the description, so this keeps them
// true to the engine.
#pragma once
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "pipeline/core/model_description.h"
#include "pipeline/core/pipeline.h"

namespace sixstep::test {

inline ValueType type_of(const Value& v) {
    if (std::holds_alternative<double>(v)) return ValueType::number;
    if (std::holds_alternative<std::string>(v)) return ValueType::text;
    return ValueType::numbers;
}

class EmittedPaths {
public:
    // Every field a lookup can reach: outputs, and inputs no output shadows.
    void add(const Pipeline& p) {
        for (const auto& ev : p.trace().events()) {
            const std::string stage(stage_name(ev.stage));
            for (const auto& f : ev.outputs) add(stage + "." + f.key, f);
            for (const auto& f : ev.inputs)
                if (ev.find(f.key) == &f) add(stage + "." + f.key, f);
        }
        if (p.response()) {
            add("response.text", Field{"text", p.response()->text, "", ""});
            for (const auto& f : p.response()->fields) add("response." + f.key, f);
        }
    }

    void check_declared(const ModelDescription& d) const {
        for (const auto& entry : seen_) {
            // Named copies, not a structured binding: CAPTURE's lambda cannot
            // capture a binding before clang 16 (the fuzz preset's compiler).
            const auto& path = entry.first;
            const auto& f = entry.second;
            CAPTURE(path);
            const PathInfo* info = d.find_path(path);
            if (!info) {
                FAIL_CHECK("emitted but not declared");
                continue;
            }
            CHECK(info->unit == f.unit);
            CHECK(info->type == type_of(f.value));
        }
    }

    // Every declared stage and response path was emitted by some run; "ms"
    // and "warnings" every event answers without a field. `absent`: paths
    // these runs must not emit (another run of the model emits them).
    void check_all_emitted(const ModelDescription& d, const std::set<std::string>& absent = {}) const {
        for (const auto& p : d.paths) {
            const std::string head = p.path.substr(0, p.path.find('.'));
            const std::string key = p.path.substr(p.path.find('.') + 1);
            if (!(parse_stage(head) || head == "response") || key == "ms" || key == "warnings") continue;
            CAPTURE(p.path);
            if (absent.count(p.path)) CHECK_MESSAGE(seen_.count(p.path) == 0, "emitted where it cannot hold");
            else CHECK_MESSAGE(seen_.count(p.path) == 1, "declared but never emitted");
        }
    }

    std::size_t size() const { return seen_.size(); }

private:
    void add(const std::string& path, const Field& f) { seen_.emplace(path, f); }
    std::map<std::string, Field> seen_;
};

}  // namespace sixstep::test
