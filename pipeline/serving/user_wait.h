// What the user waits for: three users of the same engine, each run live,
// each judged by the one number that decides whether they are served well.
//
//   chat    a person reads the answer as it streams. What they feel is the
//           time to the first token (Nielsen: ~0.1 s feels instantaneous,
//           ~1 s keeps the flow of thought) and whether the text keeps ahead
//           of their reading (≈ 238 words/min for adult silent reading of
//           non-fiction, Brysbaert 2019 — about 5–6 tokens/s; above ~20
//           tokens/s output outruns nearly every reader). Headline: TTFT.
//   agent   a program chains N calls, each prompt made from the previous
//           answer; it can do nothing with half an answer, so what counts is
//           the end-to-end time of the chain. Headline: end-to-end. (An
//           answer is passed on cut to agent_reread_bytes_per_token bytes
//           per token it was generated from: English text is about 4, but a
//           random model's pieces can re-read as ten tokens each, and the
//           chain would grow without a bound a lesson's budget can count.)
//   batch   many requests at once, nobody watching any one of them: what
//           counts is how many tokens per second the job gets through —
//           batched through the stepper against one at a time. Headline:
//           throughput.
// Every figure is measured on the backend given; the readers and the "what
// if" lines are arithmetic on those measured timelines.
//
//     UserWaits w = measure_user_waits(backend, codec, {});
//     w.chat.headline.value;   // TTFT, ms
//     w.batch.headline.value;  // batched tokens/s
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/text_codec.h"

namespace sixstep::serving {

// The most bytes of an answer the next agent call reads, per token generated.
inline constexpr int agent_reread_bytes_per_token = 8;

// Readers from a word a minute to the fastest skimmer (a speed reader's
// claimed 10,000): a reader of 1e-300 words a minute printed 300 digits.
inline constexpr double min_reading_wpm = 1, max_reading_wpm = 10000;

struct UserWaitParams {
    // chat
    std::string chat_prompt = "Once upon a time";
    int chat_tokens = 64;                  // tokens streamed, 1..4096
    double reading_words_per_min = 238;    // Brysbaert 2019, adult silent reading of non-fiction; 1 .. max_reading_wpm
    double fast_tok_s = 20;                // above this, output outruns nearly all readers
    double instant_ms = 100;               // Nielsen: feels instantaneous
    double flow_ms = 1000;                 // Nielsen: the flow of thought is kept
    // agent
    std::string agent_prompt = "Once upon a time";
    int agent_calls = 4;                   // chained calls, 1..100
    int agent_tokens = 24;                 // tokens per call, 1..4096
    // batch job
    int batch_requests = 16;               // requests in the job, 1..256
    int batch_tokens = 32;                 // tokens per request, 1..4096
    std::uint64_t seed = 1;                // sampling seed of the batch job's requests (each gets seed + i)
};

// The number that matters for one kind of user, and what it means.
struct Headline {
    std::string metric;   // "TTFT", "end-to-end", "throughput"
    double value = 0;
    std::string unit;     // "ms", "tokens/s"
    std::string verdict;  // what the measured value means for this user
};

struct ChatWait {
    std::string text;               // what was streamed
    double ttft_ms = 0;
    double tpot_ms = 0;
    double decode_tok_s = 0;        // 1000 ÷ TPOT
    int n_tokens = 0;
    int n_words = 0;                // words in the streamed text
    double tokens_per_word = 0;     // measured: n_tokens ÷ n_words (this tokenizer, this text; English prose
                                    // through this tokenizer when the text has no words to speak of)
    std::string tokens_per_word_source;  // what tokens_per_word was measured on
    double reading_tok_s = 0;       // words/min ÷ 60 × tokens per word
    double stream_over_reading = 0; // decode_tok_s ÷ reading_tok_s
    double stream_over_fast = 0;    // decode_tok_s ÷ fast_tok_s
    std::vector<double> arrival_ms; // when each token reached the screen (engine time from the request)
    std::vector<double> read_ms;    // when a reader at reading speed has read it
    double reader_waited_ms = 0;    // time the reader sat waiting for text after the first token
    double reader_done_ms = 0;      // when the reader finishes
    double done_if_decode_2x_ms = 0;  // the same, had decode been twice as fast
    double done_if_ttft_half_ms = 0;  // the same, had TTFT been half
    Headline headline;
    std::vector<std::string> findings;
};

struct AgentCall {
    std::string prompt, output;
    int n_prompt = 0, n_generated = 0;
    double ttft_ms = 0;
    double total_ms = 0;            // the call, tokenize to last token (engine time)
};
struct AgentWait {
    std::vector<AgentCall> calls;
    double end_to_end_ms = 0;       // Σ calls: the agent can only go on once each answer is complete
    double ttft_sum_ms = 0;
    double ttft_share = 0;          // ttft_sum ÷ end-to-end
    double saved_if_ttft_half_ms = 0;
    double saved_if_tpot_half_ms = 0;
    Headline headline;
    std::vector<std::string> findings;
};

struct BatchWait {
    int n_requests = 0;
    int n_tokens = 0;               // generated, all requests
    double sequential_ms = 0;       // one request after another (wall, the fastest of three runs)
    double batched_ms = 0;          // all through the stepper at once (wall, the fastest of three runs)
    double sequential_tok_s = 0;
    double batched_tok_s = 0;
    double gain = 0;                // batched ÷ sequential throughput
    int n_forward_batched = 0;      // forward passes the batched run took
    double sequential_mean_done_ms = 0;  // mean time from the job's start to each request's end
    double batched_mean_done_ms = 0;
    Headline headline;
    std::vector<std::string> findings;
};

struct UserWaits {
    std::string backend;
    UserWaitParams params;
    ChatWait chat;
    AgentWait agent;
    BatchWait batch;
};

// Runs the three live (about a second on the bundled model). Throws
// sixstep::Error for out-of-range parameters.
UserWaits measure_user_waits(llm::Backend& backend, const llm::TextCodec& codec, const UserWaitParams& params);

// The most token positions measure_user_waits computes (for a lesson's work
// budget): a short warm-up, the chat, every agent call three times, and the
// batch job both ways (one request after another, then batched) three times,
// each call its prompt and its tokens. An agent call's prompt is the previous answer, cut to
// agent_reread_bytes_per_token bytes per token it came from (a token holds
// at least a byte).
long long user_waits_positions_at_most(const UserWaitParams& params);

// The chat reader on a given timeline (arrival times in ms, the first being
// TTFT): when each token is read at `tok_s`, and how long the reader waited.
struct ReaderTimeline {
    std::vector<double> read_ms;
    double waited_ms = 0;
    double done_ms = 0;
};
ReaderTimeline read_along(const std::vector<double>& arrival_ms, double tok_s);

nlohmann::ordered_json user_waits_json(const UserWaits& w);

}  // namespace sixstep::serving
