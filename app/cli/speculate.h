// Speculative decoding on the command line: `generate --draft D.gguf` (one
// request, with its statistics) and `speculate` (the sweep over drafts, k and
// temperature). Both live in speculate.cpp; generate.cpp hands over to
// run_generate_with_draft when a draft is given.
#pragma once
#include <string>

#include "pipeline/llm/sampler.h"

namespace sixstep::cli {

struct DraftGenerateOptions {
    std::string model, draft, prompt, backend = "cpu";
    int n_predict = 64;
    int n_draft = 4;         // --draft-k
    int threads = 0;         // the target's threads (0: the backend's default)
    int draft_threads = 1;   // the draft's threads
    int repetitions = 3;     // timed runs of each for the speedup
    llm::SamplerParams sampling;
    bool json = false;
    bool overlap = false;    // --overlap: the draft on one of the `threads`, lent to the target between its passes
};

// The help text of --overlap, shared by generate and speculate.
inline constexpr const char* overlap_help =
    "The draft runs ahead on a thread of its own while the target verifies, and lends that thread to the target "
    "when it is far enough ahead (CPU; one of the -t threads, which the target alone gets all of)";

// Streams the text, then prints acceptance, tokens per target pass and the
// speedup over the target alone (measured right after, same request).
int run_generate_with_draft(const DraftGenerateOptions& o);

}  // namespace sixstep::cli
