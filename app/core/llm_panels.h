// The transformer panels' data in an llm lesson: the engine's LlmView of the
// latest request (tokens, passes, KV cache, next-token tables), the attention
// map and the logit lens from a PanelCapture, and the two experiments a step
// or the class can run (the KV cache switched off, the KV memory calculator).
//
// Capturing tensors costs a copy per tensor in every forward pass, so the
// PanelCapture exists only while a panel that needs it is listening — shown
// by the lesson (`show:`) or visible in the window — and it keeps only what
// the panel draws: one layer's attention over a window of positions, and one
// residual row per layer. With nobody listening the model has no tensor
// observer and its forward pass pays nothing.
//
// The interpreter owns one LlmPanels per llm lesson and copies its state into
// LessonState::panels after every command; the window draws that copy and
// computes nothing.
//
//     LlmPanels p(model);
//     if (p.listen({"attention"}, {})) rerun_current_request();   // fill the new capture
//     PanelsState st;  p.fill(st);     // st.attention, st.lens, st.view, …
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/core/lesson.h"
#include "pipeline/core/trace.h"
#include "pipeline/llm/llm_view.h"
#include "pipeline/llm/panel_capture.h"
#include "pipeline/serving/kv_calc.h"
#include "pipeline/tools/kv_experiment.h"

namespace sixstep::llm {
class LlmModel;
}

namespace sixstep::app {

// One layer of the logit lens, as shown.
struct LensRowView {
    int layer = 0;
    std::vector<llm::ViewCandidate> top;  // most likely first
};

struct KvExperimentView {
    std::string prompt;
    llm::KvExperiment result;
    std::vector<std::string> pieces;  // of the tokens generated (with the cache)
};

// A panel command that failed (a token id that does not exist, a layer the
// model lacks), shown in that panel until a command succeeds.
struct PanelMessage {
    std::string panel;  // "next_token", "attention", "kv_calc", "kv_experiment"
    std::string text;
};

struct PanelsState {
    std::vector<std::string> shown;           // what the lesson shows (`show:`), first on top; empty: the inspector
    std::vector<std::string> listening;       // panels with data being captured now
    std::optional<llm::LlmView> view;         // the latest request (llm lessons)
    int attention_layer = 0;                  // the chosen layer and head
    int attention_head = 0;
    int n_layer = 0;                          // the model's, 0 until known
    int n_head = 0;
    std::optional<llm::AttentionMap> attention;  // the chosen layer, every head; empty when not captured
    int attention_window = 0;                 // positions kept on each side of the map
    std::vector<LensRowView> lens;            // one row per layer, when captured
    std::optional<KvExperimentView> kv_experiment;
    std::optional<serving::KvCalcResult> kv_calc;
    std::vector<std::string> kv_presets;      // presets the calculator knows
    std::vector<std::string> kv_dtypes;       // element types it knows
    std::optional<PanelMessage> message;
};

// Panels that need tensors from inside the forward pass.
inline constexpr std::string_view attention_panel = "attention";
inline constexpr std::string_view logit_lens_panel = "logit_lens";

class LlmPanels {
public:
    explicit LlmPanels(llm::LlmModel& model);
    ~LlmPanels();  // unhooks the view and the capture from the model
    LlmPanels(const LlmPanels&) = delete;
    LlmPanels& operator=(const LlmPanels&) = delete;

    // Which panels want data: the lesson's and the window's. Returns true when
    // a capture was switched on (the current request must run again to fill it).
    bool listen(const std::vector<std::string>& lesson, const std::vector<std::string>& window);
    // The attention panel's layer and head. Throws sixstep::Error for a layer
    // or head the model lacks ("layer 9 does not exist: the model has layers
    // 0..1"), keeping the last good choice. Returns true when the capture
    // changed layer (run the current request again).
    bool choose_attention(int layer, int head);

    // Generates n_tokens greedily from `prompt` with and without the KV cache
    // (pipeline/tools/kv_experiment.h). The model must be loaded.
    void run_kv_experiment(const std::string& prompt, int n_tokens);
    // The KV memory calculator; throws sixstep::Error for a bad preset, dtype or size.
    void kv_calc(const KvCalcSpec& spec);

    void fill(PanelsState& out) const;

private:
    void install_capture();

    llm::LlmModel& model_;
    llm::LlmView view_;
    std::unique_ptr<llm::PanelCapture> capture_;
    std::vector<std::string> listening_;
    int layer_ = 0;
    int head_ = 0;
    std::optional<KvExperimentView> kv_experiment_;
    std::optional<serving::KvCalcResult> kv_calc_;
};

// "kv_experiment.*", "kv_calc.*" and "logit_lens.*" paths from the panels'
// state; nullopt when the path is not one of them or has no value yet.
std::optional<Value> panel_lookup(const PanelsState& panels, std::string_view head, std::string_view key);

}  // namespace sixstep::app
