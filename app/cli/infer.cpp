// sixstep infer delivery --distance "3 km" --congestion 0 --express-lane 0
// One request through the six steps; prints the trace, and the response last.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/error.h"
#include "pipeline/core/pipeline.h"
#include "pipeline/core/suggest.h"
#include "pipeline/core/text.h"
#include "pipeline/delivery/delivery_model.h"
#include "pipeline/delivery/weights_file.h"

namespace sixstep::cli {

namespace {
struct InferOptions {
    std::optional<std::string> distance, congestion, express_lane, weights;
    bool no_normalize = false, train_mode = false, json = false;
    double dropout = 0.5;
    std::optional<double> minimum;
    std::string lang = "en";
};

int run_infer_delivery(const InferOptions& o) {
    delivery::DeliveryModel model;
    if (o.weights) model.use_weights_file(*o.weights);
    auto& s = model.settings();
    s.normalize = !o.no_normalize;
    s.lang = o.lang;
    s.minimum_minutes = o.minimum;
    if (o.train_mode) {
        s.mode = delivery::Mode::train;
        s.dropout = o.dropout;
    }
    Request req;
    if (o.distance) req.set("distance", *o.distance);
    if (o.congestion) req.set("congestion", *o.congestion);
    if (o.express_lane) req.set("express_lane", *o.express_lane);

    Pipeline p(model, req, [&](const TraceEvent& ev) {
        if (!o.json) std::printf("%s", app::format_event(ev).c_str());
    });
    const Response& r = p.run();
    if (o.json) {
        nlohmann::ordered_json j;
        j["model"] = model.name();
        nlohmann::ordered_json fields = nlohmann::ordered_json::object();
        for (const auto& [k, v] : req.fields) fields[k] = v;
        j["request"] = fields;
        j["events"] = nlohmann::ordered_json::array();
        for (const auto& ev : p.trace().events()) j["events"].push_back(app::to_json(ev));
        j["response"] = {{"text", r.text}};
        for (const auto& f : r.fields) j["response"][f.key] = app::to_json(f.value);
        std::printf("%s\n", app::dump_json(j).c_str());
    } else {
        std::printf("%s\n", sixstep::printable(r.text, true).c_str());
    }
    return exit_ok;
}
}  // namespace

void add_infer(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("infer", "Send one request through the six steps and print the trace");
    // At most one model; a word that names none is caught by this
    // positional, so that the message can name it ("A subcommand is
    // required" did not say that `infer llm` was the mistake).
    sub->require_subcommand(0, 1);
    auto unknown = std::make_shared<std::string>();
    sub->add_option("model", *unknown, "The model: delivery");
    auto o = std::make_shared<InferOptions>();
    auto* d = sub->add_subcommand("delivery", "The delivery-time model: 5 + 2·km + 10·congestion − 2·express lane");
    d->add_option("--distance", o->distance, "Distance with a unit: \"3 km\", \"3000 m\", \"1.9 mi\"");
    d->add_option("--congestion", o->congestion, "Congestion 0..1 (or a percentage: \"50%\")");
    d->add_option("--express-lane", o->express_lane, "Express lane: 0 or 1");
    d->add_flag("--no-normalize", o->no_normalize, "Skip unit normalization (shows training/serving skew)");
    d->add_flag("--train-mode", o->train_mode, "Forget model.eval(): dropout stays active");
    auto* dropout =
        d->add_option("--dropout", o->dropout, "Dropout probability in train mode")->check(finite_number(0.0, 0.99));
    d->add_option("--minimum", o->minimum, "Business rule: never promise fewer minutes than this")
        ->check(finite_number(0.0, 1e6));
    d->add_option("--lang", o->lang, "Response language")->check(CLI::IsMember({"en", "zh"}));
    d->add_option("--weights", o->weights, "A weights file written by training (default: 5, 2, 10, -2)");
    d->add_flag("--json", o->json, "Print machine-readable JSON instead");
    add_examples(d, {"sixstep infer delivery --distance \"3 km\" --congestion 0 --express-lane 0",
                      "sixstep infer delivery --distance \"3000 m\" --congestion 50% --express-lane 1 --lang zh",
                      "sixstep infer delivery --distance \"3000 m\" --congestion 0 --express-lane 0 --no-normalize"});
    commands.push_back({d, [o, dropout, unknown] {
                            if (!unknown->empty())
                                throw Error(fmt::format("infer: \"{}\" before delivery is not expected",
                                                        printable_cut(*unknown, 200)));
                            // Eval mode turns dropout off: a rate there would change nothing.
                            if (dropout->count() > 0 && !o->train_mode)
                                throw Error("--dropout acts only in train mode (eval mode turns dropout off): add "
                                            "--train-mode, or leave --dropout out");
                            return run_infer_delivery(*o);
                        }});
    // After delivery's entry: `infer delivery` has both parsed, and runs delivery.
    commands.push_back({sub, [unknown]() -> int {
                            const std::vector<std::string> models = {"delivery"};
                            if (unknown->empty())
                                throw Error("infer needs a model: sixstep infer delivery --distance \"3 km\" ...");
                            const std::string near = closest_name(*unknown, models);
                            throw Error(fmt::format("infer: no model \"{}\" (infer runs: {}){}{}",
                                                    printable_cut(*unknown, 200), join_names(models),
                                                    near.empty() ? "" : fmt::format(" — did you mean {}?", near),
                                                    *unknown == "llm" ? "; a language model runs with `sixstep generate`"
                                                                      : ""));
                        }});
    add_examples(sub, {"sixstep infer delivery --distance \"3 km\" --congestion 0 --express-lane 0"});
}

}  // namespace sixstep::cli
