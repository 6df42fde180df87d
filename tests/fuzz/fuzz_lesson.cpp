// libFuzzer target: parse arbitrary bytes as a lesson. Every input must
// either load or throw sixstep::Error with a position in the file — never
// another exception (yaml-cpp's own included), a crash or a hang. What loads
// must keep within its work budget.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/core/lesson.h"
#include "pipeline/core/error.h"

using namespace sixstep;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const app::Lesson l = app::parse_lesson(text, "fuzz.yaml");
        if (l.steps.empty()) std::abort();  // "steps" must be a non-empty list
        long long train = 0, served = 0;
        for (const auto& s : l.steps) {
            if (s.train) train += s.train->steps;
            if (s.serve) served += s.serve->requests;
            for (const auto& e : s.expect)
                for (const auto& c : e.conditions)
                    if (c.op == app::Condition::Op::near && !(c.tolerance >= 0)) std::abort();
        }
        if (train > l.budget.train_steps || served > l.budget.served_requests) std::abort();
    } catch (const Error& e) {
        if (e.where().file != "fuzz.yaml") std::abort();  // every lesson error names the file
    }
    return 0;
}
