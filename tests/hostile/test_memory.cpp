// Memory that grows with the input only as much as it must: tokenizing a long
// text (and printing it as JSON) in a few bytes per input byte, not hundreds.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "hostile.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/vocab/vocab.h"

// Under AddressSanitizer resident memory says little (its shadow memory and
// quarantine count too; clang's build peaked at 650 MiB here). GCC says so
// with __SANITIZE_ADDRESS__, clang before 16 only through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define SIXSTEP_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIXSTEP_TEST_UNDER_ASAN 1
#endif
#endif

using namespace sixstep;
using namespace sixstep::llm;
using namespace sixstep::test;

namespace memory_test {

namespace {

// Words and punctuation in the style of the bundled stories, some UTF-8.
std::string long_text(size_t bytes, unsigned seed) {
    static const char* words[] = {"the", "cat", "sat", "on", "mat", ".", "Once", "upon", "a", "time", ",",
                                  "Lily", "said", "\"hi!\"", "3.14", "über", "naïve", "猫", "\n", "  ", "it's"};
    std::mt19937 rng(seed);
    std::string s;
    while (s.size() < bytes) {
        s += words[rng() % std::size(words)];
        if (rng() % 4) s += ' ';
    }
    return s;
}

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

}  // namespace

TEST_CASE("tokenize in chunks gives the same ids as in one piece, for both tokenizer kinds") {
    for (const char* file : {"ggml-vocab-gpt-2.gguf", "ggml-vocab-llama-spm.gguf"}) {
        const GGUFFile f = GGUFFile::open(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/" + file);
        const Vocab v = Vocab::from_gguf(f);
        for (unsigned seed = 0; seed < 4; ++seed) {
            const std::string text = long_text(20000, seed);
            CAPTURE(file);
            CAPTURE(seed);
            const auto whole = v.tokenize(text, true, false, SIZE_MAX);
            for (size_t chunk : {1, 7, 100, 1000}) CHECK(v.tokenize(text, true, false, chunk) == whole);
        }
    }
}

TEST_CASE("cli: tokenize --json of 4 MB input stays under 300 MB") {
    // Before: a JSON tree of every token, ~200 bytes per input byte (more for
    // other texts) — 4 MB took most of a GB, and bigger inputs ended in
    // bad_alloc. Now: the text, the ids and one chunk at a time.
    const std::string path = write_text("long.txt", long_text(4u << 20, 9));
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    const std::string out = (scratch() / "long.json").string();
    const pid_t pid = spawn_sixstep({"tokenize", "-m", model, "--json", "-"}, path, out, out);
    REQUIRE(pid > 0);
    const Finished f = wait_for_exit(pid);
    CHECK(f.exit_code == 0);
    MESSAGE("peak resident memory: " << f.max_rss_kb / 1024 << " MiB for 4 MiB of text");
#ifndef SIXSTEP_TEST_UNDER_ASAN  // AddressSanitizer's shadow memory and quarantine count too
    CHECK(f.max_rss_kb < 300 * 1024);
#endif
    const std::string json = slurp(out);
    CHECK(json.size() > (4u << 20));
    CHECK(json.substr(json.size() - 8) == "}\n  ]\n}\n");
}

// A system that refuses a thread (here a 1 GB address-space limit: each
// thread's stack is reserved from it) gets one message and exit 2. The pool
// used to leave its started workers waiting and hang in its constructor.
TEST_CASE("threads the system will not start are one clear error, not a hang") {
#ifdef SIXSTEP_TEST_UNDER_ASAN
    MESSAGE("skipped under AddressSanitizer: its shadow memory needs more address space than the limit");
#else
    const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-q8_0.gguf";
    const auto r = run_command("ulimit -v 1000000; timeout -s KILL 30 " +
                               sixstep_cmd("generate -m '" + model + "' --prompt Once -n 4 -t 1024"));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "cannot start 1024 threads: the system refused thread"));
#endif
}

}  // namespace memory_test
