// Workload: the requests of one serving run — when each arrives, its prompt
// as tokens, how many tokens it may generate — built from an arrival process
// (arrivals.h) and a pool of prompts, or from a trace file (trace_file.h).
//
// Prompts come from a small pool of story openings (the bundled model writes
// children's stories) drawn with the seed. A shared prefix — a system prompt
// in front of every prompt, as a chat service has — is what prefix caching
// saves: with --system-prompt TEXT it is that text, with --shared-prefix N
// the first N tokens of a built-in one. The prefix and each request's own
// text are tokenized apart and joined as tokens, so every request that
// shares the prefix starts with exactly the same token ids (a text join could
// merge differently at the seam).
//
// Output lengths vary, as real answers do: each request's max_tokens is drawn
// uniformly from [min_tokens, max_tokens] (min_tokens 0 → max_tokens / 4).
// That spread is what makes static batching wait for the longest request.
//
//     WorkloadParams w;  w.arrivals = {.rate = 4, .count = 100};  w.shared_prefix = 200;
//     std::vector<RequestSpec> reqs = make_workload(w, codec, vocab.add_bos() ? vocab.bos() : -1);
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "pipeline/llm/sampler.h"
#include "pipeline/llm/text_codec.h"
#include "pipeline/serving/arrivals.h"

namespace sixstep::serving {

struct RequestSpec {
    int id = 0;                  // 0, 1, … in arrival order
    double arrival_ms = 0;       // on the virtual clock
    std::vector<int> prompt;     // token ids, BOS included when the model wants one
    int max_tokens = 16;         // most tokens to generate, >= 1
    bool shares_prefix = false;  // the prompt starts with the workload's shared prefix
    std::string origin;          // where it came from, for errors ("trace.txt:12"); may be empty
    std::optional<llm::SamplerParams> sampling;  // its own sampler (a server's per-request fields); none → the scheduler's
    std::vector<std::string> stop;  // texts that end it (not included in its text); empty → none
};

struct WorkloadParams {
    ArrivalParams arrivals;      // process, rate, count, seed (kind trace: read trace_file)
    std::string trace_file;      // kind trace: the file (its lines give times, prompts, max tokens)
    int max_tokens = 64;         // most tokens a request may generate, >= 1 (a trace line's own wins)
    int min_tokens = 0;          // fewest drawn, 1 .. max_tokens; 0 → max_tokens / 4 (at least 1)
    std::string system_prompt;   // text put in front of the prompts sharing a prefix ("" → none)
    int shared_prefix = 0;       // or that many tokens of a built-in system prompt, >= 0 (0 → none)
    double shared_fraction = 1;  // share of requests carrying the prefix, in [0, 1]
    // The context the requests will run in (0: not known): a shared prefix
    // longer than it is refused before every request's copy is built.
    int n_ctx = 0;
};

// Builds the requests. bos is the token the codec puts first (-1: none); the
// joined prompts keep exactly one. Throws sixstep::Error for bad parameters
// (with check_arrival_params' messages) and trace errors (file:line:column).
std::vector<RequestSpec> make_workload(const WorkloadParams& params, const llm::TextCodec& codec, int bos);

// The built-in prompt pool and system prompt (English, in the bundled
// model's world), for tests and lessons.
const std::vector<std::string>& story_openings();
const std::string& builtin_system_prompt();

}  // namespace sixstep::serving
