#include "app/core/llm_panels.h"

#include <algorithm>

#include <fmt/format.h>

#include "app/core/kv_calc_spec.h"
#include "pipeline/core/error.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/llm/text_codec.h"

namespace sixstep::app {

namespace {

// Positions kept on each side of the attention map: what a panel can draw
// legibly, and window² × n_head floats of memory at any context length.
constexpr int attention_window = 64;
// Candidates per layer of the logit lens.
constexpr int lens_top = 3;

bool has(const std::vector<std::string>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

}  // namespace

LlmPanels::LlmPanels(llm::LlmModel& model) : model_(model) { model_.set_view(&view_); }

LlmPanels::~LlmPanels() {
    model_.set_view(nullptr);
    if (capture_) model_.set_tensor_observer(nullptr);
}

void LlmPanels::install_capture() {
    llm::PanelCaptureParams p;
    p.attention_layer = has(listening_, attention_panel) ? layer_ : -1;
    p.logit_lens = has(listening_, logit_lens_panel);
    p.window = attention_window;
    model_.set_tensor_observer(nullptr);
    capture_.reset();
    if (p.attention_layer < 0 && !p.logit_lens) return;  // nobody listens: no observer at all
    capture_ = std::make_unique<llm::PanelCapture>(p);
    model_.set_tensor_observer(capture_.get());
}

bool LlmPanels::listen(const std::vector<std::string>& lesson, const std::vector<std::string>& window) {
    std::vector<std::string> now = lesson;
    for (const auto& w : window)
        if (!has(now, w)) now.push_back(w);
    const bool attention_before = has(listening_, attention_panel), lens_before = has(listening_, logit_lens_panel);
    const bool attention_now = has(now, attention_panel), lens_now = has(now, logit_lens_panel);
    listening_ = std::move(now);
    if (attention_before == attention_now && lens_before == lens_now) return false;
    install_capture();
    return (attention_now && !attention_before) || (lens_now && !lens_before);
}

bool LlmPanels::choose_attention(int layer, int head) {
    const llm::LlmModel::AttentionShape shape = model_.attention_shape();
    if (layer < 0 || layer >= shape.n_layer)
        throw Error(fmt::format("attention: layer {} does not exist: the model has layers 0..{}", layer, shape.n_layer - 1));
    if (head < 0 || head >= shape.n_head)
        throw Error(fmt::format("attention: head {} does not exist: the model has heads 0..{} in each layer", head,
                                shape.n_head - 1));
    const bool new_layer = layer != layer_;
    layer_ = layer;
    head_ = head;
    if (!new_layer || !has(listening_, attention_panel)) return false;
    install_capture();
    return true;
}

void LlmPanels::run_kv_experiment(const std::string& prompt, int n_tokens) {
    kv_experiment_.reset();  // as kv_calc: a failed run leaves no figures
    KvExperimentView x;
    x.prompt = prompt;
    x.result = llm::run_kv_experiment(model_.backend(), model_.codec(), prompt, n_tokens);
    for (int t : x.result.tokens_cached) x.pieces.push_back(model_.codec().piece(t));
    kv_experiment_ = std::move(x);
}

void LlmPanels::kv_calc(const KvCalcSpec& spec) {
    // A calculation that fails leaves none: the last one's figures, kept,
    // were read by the step's checks as this one's ("expected f32, got q8_0").
    kv_calc_.reset();
    kv_calc_ = serving::kv_calc(kv_calc_params(spec));
}

void LlmPanels::fill(PanelsState& out) const {
    out.listening = listening_;
    out.view = view_;
    out.attention_layer = layer_;
    out.attention_head = head_;
    try {
        const llm::LlmModel::AttentionShape shape = model_.attention_shape();
        out.n_layer = shape.n_layer;
        out.n_head = shape.n_head;
    } catch (const Error&) {
        out.n_layer = out.n_head = 0;  // the file does not open: the request stage says why
    }
    out.attention.reset();
    out.attention_window = attention_window;
    if (capture_ && capture_->params().attention_layer >= 0 && capture_->attention().n_pos > 0)
        out.attention = capture_->attention();
    out.lens.clear();
    if (capture_ && capture_->params().logit_lens && model_.loaded() && !capture_->residuals().empty()) {
        for (const llm::LensRow& row : llm::logit_lens(model_.llama(), *capture_, lens_top)) {
            LensRowView r;
            r.layer = row.layer;
            for (const llm::LensCandidate& c : row.top) r.top.push_back({c.id, model_.codec().piece(c.id), c.p, 0});
            out.lens.push_back(std::move(r));
        }
    }
    out.kv_experiment = kv_experiment_;
    out.kv_calc = kv_calc_;
    out.kv_presets = serving::kv_preset_names();
    out.kv_dtypes.clear();
    for (serving::KvDtype d : {serving::KvDtype::F32, serving::KvDtype::F16, serving::KvDtype::BF16, serving::KvDtype::FP8,
                               serving::KvDtype::INT8, serving::KvDtype::Q8_0, serving::KvDtype::Q4_0})
        out.kv_dtypes.push_back(serving::kv_dtype_info(d).name);
}

std::optional<Value> panel_lookup(const PanelsState& p, std::string_view head, std::string_view key) {
    if (head == "kv_experiment" && p.kv_experiment) {
        const llm::KvExperiment& e = p.kv_experiment->result;
        std::vector<double> cached, uncached;
        for (const auto& s : e.steps) cached.push_back(s.cached_ms), uncached.push_back(s.uncached_ms);
        if (key == "tokens") return static_cast<double>(e.steps.size());
        if (key == "identical_tokens") return yes_no(e.identical_tokens);
        if (key == "max_logit_diff") return static_cast<double>(e.max_logit_diff);
        if (key == "cached_ms") return cached;
        if (key == "uncached_ms") return uncached;
        if (key == "cached_total_ms") return e.cached_total_ms;
        if (key == "uncached_total_ms") return e.uncached_total_ms;
        if (key == "cached_early_ms") return e.cached_early_ms;
        if (key == "cached_late_ms") return e.cached_late_ms;
        if (key == "uncached_early_ms") return e.uncached_early_ms;
        if (key == "uncached_late_ms") return e.uncached_late_ms;
        if (key == "tokens_read_cached") return static_cast<double>(e.forward_tokens_cached);
        if (key == "tokens_read_uncached") return static_cast<double>(e.forward_tokens_uncached);
        if (key == "text") {
            std::string text;
            for (const auto& piece : p.kv_experiment->pieces) text += piece;
            return text;
        }
        return std::nullopt;
    }
    if (head == "kv_calc" && p.kv_calc) {
        const serving::KvCalcResult& r = *p.kv_calc;
        if (key == "shape") return r.params.shape_name;
        if (key == "n_layer") return static_cast<double>(r.n_layer);
        if (key == "n_head_kv") return static_cast<double>(r.n_head_kv);
        if (key == "head_dim") return static_cast<double>(r.head_dim);
        if (key == "dtype") return std::string(serving::kv_dtype_info(r.params.dtype).name);
        if (key == "bytes_per_element") return r.bytes_per_element;
        if (key == "tokens") return static_cast<double>(r.n_tokens);
        if (key == "sessions") return static_cast<double>(r.n_sessions);
        if (key == "bytes_per_token") return static_cast<double>(r.bytes_per_token);
        if (key == "bytes_per_session") return static_cast<double>(r.bytes_per_session);
        if (key == "bytes_total") return static_cast<double>(r.bytes_total);
        if (key == "formula") {
            std::string f;
            for (const auto& line : r.formula) f += (f.empty() ? "" : "; ") + line;
            return f;
        }
        return std::nullopt;
    }
    if (head == "logit_lens" && !p.lens.empty()) {
        std::string pieces;
        std::vector<double> probs;
        for (const auto& row : p.lens) {
            if (row.top.empty()) continue;
            pieces += (pieces.empty() ? "" : " ") + quote_text(row.top.front().piece);
            probs.push_back(row.top.front().p);
        }
        if (key == "pieces") return pieces;
        if (key == "probs") return probs;
        const LensRowView& last = p.lens.back();
        if (last.top.empty()) return std::nullopt;
        if (key == "last_piece") return last.top.front().piece;
        if (key == "last_prob") return static_cast<double>(last.top.front().p);
        return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace sixstep::app
