#include "pipeline/serving/workload.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/serving/trace_file.h"

namespace sixstep::serving {

const std::vector<std::string>& story_openings() {
    static const std::vector<std::string> openings = {
        "Once upon a time, there was a little girl named Lily.",
        "The cat sat on the",
        "Tom had a red ball. He liked to",
        "One day, a big dog found a stick in the park.",
        "Sara and Ben went to the beach with their mom.",
        "There was a small bird who could not fly.",
        "The sun was hot, so Max wanted to",
        "Anna loved her teddy bear very much. Every night she",
        "A little boy named Tim saw a shiny rock.",
        "The farmer had many cows and one old horse.",
        "Mia wanted to bake a cake for her friend.",
        "In the forest, a tiny mouse looked for food.",
        "It was raining, and Jack could not go outside.",
        "The frog jumped into the pond and said,",
        "Lucy found a box under her bed. Inside the box was",
        "Grandpa told the kids a story about a brave knight.",
    };
    return openings;
}

const std::string& builtin_system_prompt() {
    static const std::string text =
        "You are a kind storyteller for young children. Your stories are short and happy. "
        "They use simple words that a child of four can understand. Every story has a name, "
        "a place and a small problem that the friends solve together. Nobody gets hurt, and "
        "the story ends with a warm feeling. When a child asks for a story, you begin at once "
        "and you never stop in the middle. You like cats, dogs, birds, trees, the sun, the sea "
        "and big red balls. You often tell about a girl named Lily, a boy named Tom, their mom "
        "and their dad, and a little dog who loves to run in the park. ";
    return text;
}

namespace {

// Tokens of text without the leading BOS, to append after a prefix.
std::vector<int> tail_tokens(const llm::TextCodec& codec, const std::string& text, int bos) {
    std::vector<int> t = codec.encode(text);
    if (bos >= 0 && !t.empty() && t.front() == bos) t.erase(t.begin());
    return t;
}

std::vector<int> prefix_tokens(const WorkloadParams& p, const llm::TextCodec& codec, int bos) {
    if (!p.system_prompt.empty()) {
        if (p.shared_prefix > 0) throw Error("give either a system prompt or a shared prefix length, not both");
        return codec.encode(p.system_prompt);
    }
    if (p.shared_prefix <= 0) return {};
    // The built-in text, repeated as often as needed, cut at N tokens.
    std::vector<int> t = codec.encode(builtin_system_prompt());
    const std::vector<int> more = tail_tokens(codec, builtin_system_prompt(), bos);
    if (more.empty()) throw Error("shared prefix: the built-in system prompt tokenizes to nothing");
    while (static_cast<int>(t.size()) < p.shared_prefix) t.insert(t.end(), more.begin(), more.end());
    t.resize(static_cast<std::size_t>(p.shared_prefix));
    return t;
}

}  // namespace

std::vector<RequestSpec> make_workload(const WorkloadParams& p, const llm::TextCodec& codec, int bos) {
    check_arrival_params(p.arrivals);
    if (p.max_tokens < 1) throw Error(fmt::format("max tokens {}: ask for at least one token", p.max_tokens));
    if (p.min_tokens < 0 || p.min_tokens > p.max_tokens)
        throw Error(fmt::format("min tokens {}: must be in 1 .. max tokens ({})", p.min_tokens, p.max_tokens));
    if (p.shared_prefix < 0) throw Error(fmt::format("shared prefix {}: a number of tokens >= 0", p.shared_prefix));
    if (p.n_ctx > 0 && p.shared_prefix >= p.n_ctx)
        throw Error(fmt::format("shared prefix {}: the context holds {} tokens, prefix and prompt together",
                                p.shared_prefix, p.n_ctx));
    if (!(p.shared_fraction >= 0 && p.shared_fraction <= 1))
        throw Error(fmt::format("shared fraction {}: must be in [0, 1]", p.shared_fraction));
    const int min_tokens = p.min_tokens > 0 ? p.min_tokens : std::max(1, p.max_tokens / 4);
    const std::vector<int> prefix = prefix_tokens(p, codec, bos);

    std::mt19937_64 rng(p.arrivals.seed ^ 0x5eedf00dULL);  // apart from the arrival draw
    std::uniform_int_distribution<int> pick(0, static_cast<int>(story_openings().size()) - 1);
    std::uniform_int_distribution<int> length(min_tokens, p.max_tokens);
    std::bernoulli_distribution shares(p.shared_fraction);

    // Times, texts and lengths: from the trace, or drawn.
    std::vector<double> times;
    std::vector<std::string> texts;
    std::vector<int> lengths;
    std::vector<std::string> origins;
    if (p.arrivals.kind == ArrivalKind::trace) {
        if (p.trace_file.empty()) throw Error("trace arrivals need a trace file");
        for (TraceEntry& e : load_trace(p.trace_file)) {
            times.push_back(e.arrival_ms);
            texts.push_back(std::move(e.prompt));
            lengths.push_back(e.max_tokens);
            origins.push_back(fmt::format("{}:{}", p.trace_file, e.line));
        }
    } else {
        times = arrival_times_ms(p.arrivals);
        for (std::size_t i = 0; i < times.size(); ++i) {
            texts.push_back(story_openings()[static_cast<std::size_t>(pick(rng))]);
            lengths.push_back(length(rng));
            origins.emplace_back();
        }
    }

    std::vector<RequestSpec> reqs(times.size());
    for (std::size_t i = 0; i < times.size(); ++i) {
        RequestSpec& r = reqs[i];
        r.id = static_cast<int>(i);
        r.arrival_ms = times[i];
        r.max_tokens = lengths[i];
        r.origin = origins[i];
        r.shares_prefix = !prefix.empty() && shares(rng);
        if (r.shares_prefix) {
            r.prompt = prefix;
            const std::vector<int> own = tail_tokens(codec, texts[i], bos);
            r.prompt.insert(r.prompt.end(), own.begin(), own.end());
        } else {
            r.prompt = codec.encode(texts[i]);
        }
        if (r.prompt.empty() || (r.prompt.size() == 1 && r.prompt[0] == bos))
            throw Error(fmt::format("{}request {}: the prompt is empty after tokenization",
                                    r.origin.empty() ? "" : r.origin + ": ", r.id));
    }
    return reqs;
}

}  // namespace sixstep::serving
