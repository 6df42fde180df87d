#include "pipeline/tools/perplexity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"
#include "pipeline/llm/sampler.h"

namespace sixstep::llm {

namespace {

// The documents of a text: split at lines that hold only `sep` (the newline
// before such a line belongs to it). One final newline of the text is a file
// convention, not part of the last document.
std::vector<std::string_view> split_documents(std::string_view text, std::string_view sep) {
    std::vector<std::string_view> docs;
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    if (sep.empty()) {
        docs.push_back(text);
        return docs;
    }
    size_t doc_start = 0, line_start = 0;
    while (line_start <= text.size()) {
        size_t line_end = text.find('\n', line_start);
        if (line_end == std::string_view::npos) line_end = text.size();
        std::string_view line = text.substr(line_start, line_end - line_start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line == sep) {
            const size_t end = line_start > doc_start ? line_start - 1 : doc_start;  // drop the newline before
            docs.push_back(text.substr(doc_start, end - doc_start));
            doc_start = line_end + 1;
        }
        line_start = line_end + 1;
    }
    if (doc_start <= text.size()) docs.push_back(text.substr(doc_start));
    return docs;
}

void finish(TextScore& s, std::int64_t n) {
    s.mean_nll = s.nll_sum / static_cast<double>(n);
    s.perplexity = std::exp(s.mean_nll);
}

}  // namespace

PerplexityResult perplexity(Backend& model, const Vocab& vocab, std::string_view text, const PerplexityParams& params,
                            Backend* reference) {
    const auto t0 = std::chrono::steady_clock::now();
    const LlamaHparams& hp = model.model().hparams();
    const int n_vocab = hp.n_vocab;
    const int n_ctx = params.n_ctx > 0 ? params.n_ctx : hp.n_ctx;
    if (n_ctx < 2) throw Error(fmt::format("perplexity: the window must hold at least 2 tokens, got {}", n_ctx));
    if (n_ctx > hp.n_ctx)
        throw Error(fmt::format("perplexity: window of {} tokens is longer than the model's context ({})", n_ctx, hp.n_ctx));
    if (params.n_batch < 1) throw Error(fmt::format("perplexity: batch must be at least 1, got {}", params.n_batch));
    if (params.max_docs < 0) throw Error(fmt::format("perplexity: max_docs must not be negative, got {}", params.max_docs));
    if (reference) {
        const LlamaHparams& rp = reference->model().hparams();
        if (rp.n_vocab != n_vocab)
            throw Error(fmt::format("perplexity: the reference has {} tokens in its vocabulary, the model {}: they "
                                    "cannot be compared", rp.n_vocab, n_vocab));
        if (n_ctx > rp.n_ctx)
            throw Error(fmt::format("perplexity: window of {} tokens is longer than the reference's context ({})",
                                    n_ctx, rp.n_ctx));
    }

    PerplexityResult r;
    r.n_ctx = n_ctx;
    std::vector<std::vector<TokenId>> docs;
    for (std::string_view d : split_documents(text, params.doc_separator)) {
        if (params.max_docs > 0 && static_cast<int>(docs.size()) == params.max_docs) break;
        if (d.empty()) continue;
        std::vector<TokenId> ids = vocab.tokenize(d, /*add_special=*/true);
        if (params.score_eos && vocab.eos() >= 0) ids.push_back(vocab.eos());
        if (ids.size() < 2) continue;
        docs.push_back(std::move(ids));
    }
    if (docs.empty()) throw Error("perplexity: the text has no document of two or more tokens to score");

    // Every token but a document's first is scored once, whatever the windows.
    std::uint64_t n_targets = 0;
    for (const auto& tokens : docs) n_targets += tokens.size() - 1;

    std::unique_ptr<KvCache> kv = model.make_kv_cache(n_ctx, 1);
    std::unique_ptr<KvCache> kv_ref = reference ? reference->make_kv_cache(n_ctx, 1) : nullptr;
    TextScore score, score_ref;
    LogitComparison cmp;
    double sum_max_diff = 0;
    std::vector<float> logits, logits_ref;
    Batch batch;

    // Runs tokens[start, end) as one window; scores the targets in [first_target, end).
    auto run_window = [&](const std::vector<TokenId>& tokens, int start, int end, int first_target) {
        const int seq = kv->add_sequence();
        const int seq_ref = kv_ref ? kv_ref->add_sequence() : -1;
        for (int a = start; a < end; a += params.n_batch) {
            // Counted in tokens, not documents: one long text is one document.
            report_progress(reference ? "perplexity and logits vs the reference (tokens scored)"
                                      : "perplexity (tokens scored)",
                            static_cast<std::uint64_t>(r.n_scored), n_targets);
            const int b = std::min(end, a + params.n_batch);
            batch.clear();
            std::vector<int> targets;
            for (int i = a; i < b; ++i) {
                const bool scored = i + 1 >= first_target && i + 1 < end;
                batch.add(tokens[i], i - start, seq, scored);
                if (scored) targets.push_back(tokens[i + 1]);
            }
            model.forward(*kv, batch, logits);
            if (reference) {
                for (int& s : batch.seq) s = seq_ref;
                reference->forward(*kv_ref, batch, logits_ref);
            }
            for (size_t k = 0; k < targets.size(); ++k) {
                const float* l = logits.data() + k * static_cast<size_t>(n_vocab);
                const double lse = llm::log_sum_exp({l, static_cast<std::size_t>(n_vocab)});
                score.nll_sum += lse - l[targets[k]];
                if (!reference) continue;
                const float* lr = logits_ref.data() + k * static_cast<size_t>(n_vocab);
                const double lse_r = llm::log_sum_exp({lr, static_cast<std::size_t>(n_vocab)});
                score_ref.nll_sum += lse_r - lr[targets[k]];
                double kl = 0, max_diff = 0;
                for (int v = 0; v < n_vocab; ++v) {
                    const double log_pr = lr[v] - lse_r, log_p = l[v] - lse;
                    kl += std::exp(log_pr) * (log_pr - log_p);
                    max_diff = std::max(max_diff, std::fabs(static_cast<double>(lr[v]) - l[v]));
                }
                cmp.kl_mean += kl;
                cmp.kl_max = std::max(cmp.kl_max, kl);
                cmp.max_abs_logit_diff = std::max(cmp.max_abs_logit_diff, max_diff);
                sum_max_diff += max_diff;
                const auto row = [&](const float* x) { return std::span<const float>(x, static_cast<std::size_t>(n_vocab)); };
                cmp.top1_agree += argmax(row(l)) == argmax(row(lr));
            }
            r.n_scored += static_cast<std::int64_t>(targets.size());
        }
        kv->free_sequence(seq);
        if (kv_ref) kv_ref->free_sequence(seq_ref);
        ++r.n_windows;
    };

    for (const auto& tokens : docs) {
        const int n = static_cast<int>(tokens.size());
        int start = 0, first_target = 1;
        while (true) {
            const int end = std::min(n, start + n_ctx);
            run_window(tokens, start, end, first_target);
            if (end == n) break;
            first_target = end;
            start = end - n_ctx / 2;
        }
        ++r.n_docs;
        r.n_tokens += n;
    }

    finish(score, r.n_scored);
    r.model = score;
    r.perplexity = r.model.perplexity;
    if (reference) {
        finish(score_ref, r.n_scored);
        r.reference = score_ref;
        cmp.kl_mean /= static_cast<double>(r.n_scored);
        cmp.mean_max_logit_diff = sum_max_diff / static_cast<double>(r.n_scored);
        cmp.top1_agreement = static_cast<double>(cmp.top1_agree) / static_cast<double>(r.n_scored);
        r.compare = cmp;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace sixstep::llm
