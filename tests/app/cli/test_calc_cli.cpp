// `sixstep kv-calc`, `bill`, `quantize` and `perplexity` as a user runs them:
// the article's figures, JSON, and one clear error with exit code 2 for each
// bad input.
#include <doctest/doctest.h>

#include "app/cli/cli_checks.h"
#include "run_command.h"
#include "temp_dir.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

using sixstep::test::bad_input;
using sixstep::test::has;
using sixstep::test::run_command;
using sixstep::test::sixstep_cmd;
namespace fs = std::filesystem;

namespace {

const std::string bundled = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";

}  // namespace

TEST_CASE("cli: kv-calc prints the article's figures with the formula") {
    const auto r = run_command(sixstep_cmd("kv-calc --layers 36 --kv-heads 8 --head-dim 128 --dtype f16 --tokens 128000 "
                                           "--sessions 8"));
    CHECK(r.exit_code == 0);
    CHECK(has(r.output, "2 × 36 × 8 × 128 × 2 B = 147,456 B (147 kB = 144 KiB)"));
    CHECK(has(r.output, "per token 144 KiB · per session ≈ 18.9 GB (17.6 GiB) · 8 sessions ≈ 151 GB (141 GiB)"));
    CHECK(has(r.output, "Where the formula does not hold:"));

    const auto j = run_command(sixstep_cmd("kv-calc --preset article-36l --sessions 8 --json"));
    REQUIRE(j.exit_code == 0);
    const auto doc = nlohmann::json::parse(j.output);
    CHECK(doc["bytes_per_token"] == 147456);
    CHECK(doc["bytes_per_session"] == 18874368000ull);
    CHECK(doc["bytes_total"] == 150994944000ull);
    CHECK(doc["dtype"] == "f16");
}

TEST_CASE("cli: kv-calc reads the shape from a GGUF file, with the engine's dtype unless told otherwise") {
    auto j = run_command(sixstep_cmd("kv-calc --model '" + bundled + "' --tokens 100 --json"));
    REQUIRE(j.exit_code == 0);
    auto doc = nlohmann::json::parse(j.output);
    CHECK(doc["n_layer"] == 4);
    CHECK(doc["dtype"] == "f32");
    CHECK(doc["bytes_per_token"] == 2 * 4 * 2 * 32 * 4);
    CHECK(doc["bytes_per_session"] == 2 * 4 * 2 * 32 * 4 * 100);
    j = run_command(sixstep_cmd("kv-calc --model '" + bundled + "' --dtype q8_0 --json"));
    REQUIRE(j.exit_code == 0);
    doc = nlohmann::json::parse(j.output);
    CHECK(doc["n_tokens"] == 512);  // the model's context
    CHECK(doc["bytes_per_token"] == 2 * 4 * 2 * 34);
}

TEST_CASE("cli: kv-calc's bad input is one clear error, exit 2") {
    const std::string shape = "--kv-heads 8 --head-dim 128 --tokens 1000";
    bad_input("kv-calc --layers 0 " + shape, "layers: must be at least 1, got 0");
    bad_input("kv-calc --layers -3 " + shape, "layers: must be at least 1, got -3");
    bad_input("kv-calc --layers inf " + shape, "layers: inf is not a finite number");
    bad_input("kv-calc --layers nan " + shape, "layers: nan is not a finite number");
    bad_input("kv-calc --layers 1e30 " + shape, "is absurdly large");
    bad_input("kv-calc --layers 36 --kv-heads 8 --head-dim 128 --tokens 1e12 --sessions 1e9", "beyond 2^64 bytes");
    bad_input("kv-calc --layers 36 " + shape + " --dtype bogus", "unknown dtype \"bogus\" (supported: f32, f16, bf16, fp8");
    bad_input("kv-calc --layers 36 " + shape + " --dtype fp16", "unknown dtype \"fp16\" \u2014 did you mean \"f16\"?");
    bad_input("kv-calc --layers 36 --kv-heads 8 --tokens 5", "--head-dim is missing");
    bad_input("kv-calc --model '" + std::string(SIXSTEP_SOURCE_DIR) + "/README.md'", "not a GGUF file");
    bad_input("kv-calc --preset nope", "unknown preset \"nope\"");
}

TEST_CASE("cli: bill on typed inputs, and its bad input") {
    const auto j = run_command(sixstep_cmd("bill --params 1e9 --train-tokens 2e10 --decode-tok-s 50 --requests-per-day 1e5 "
                                           "--tokens-per-request 500 --days 365 --load-s 30 --json"));
    REQUIRE(j.exit_code == 0);
    const auto doc = nlohmann::json::parse(j.output);
    CHECK(doc["train_flops"] == 1.2e20);
    CHECK(doc["crossover_day"] == 1200.0);
    CHECK(doc["crossover_within_life"] == false);
    CHECK(doc["load_once"][0]["seconds_per_request"] == 40.0);
    CHECK(doc["sources"]["decode_tok_s"] == "typed");

    const auto t = run_command(sixstep_cmd("bill --params 3844352 --train-tokens 819200 --decode-tok-s 1000"));
    CHECK(t.exit_code == 0);
    CHECK(has(t.output, "6 × N × D = 6 × 3,844,352 × 819,200 = 18.9 TFLOP"));
    CHECK(has(t.output, "← crossover"));

    const std::string rest = " --train-tokens 2e10 --decode-tok-s 50";
    bad_input("bill --params 0" + rest, "parameters (N): must be greater than 0, got 0");
    bad_input("bill --params -5" + rest, "parameters (N): must be greater than 0, got -5");
    bad_input("bill --params inf" + rest, "parameters (N): inf is not a finite number");
    bad_input("bill --params 1e9 --train-tokens 2e10 --decode-tok-s nan", "decode rate (tokens/s): nan is not a finite number");
    bad_input("bill --params 1e9" + rest + " --days 0", "days: must be from 1 to 1e+06, got 0");
    bad_input("bill --params 1e9 --train-tokens 2e10", "bill needs a decode rate");
    // The measurement's options where nothing is measured changed nothing, silently.
    bad_input("bill --params 1e9" + rest + " -n 5",
              "--n-gen belongs to measuring the decode rate, and nothing is measured here: measure on --model F.gguf "
              "or --preset stories-3m");
    bad_input("bill --params 1e9" + rest + " -t 3", "--threads belongs to measuring the decode rate");
    bad_input("bill --preset stories-3m --decode-tok-s 50 -n 5",
              "--n-gen belongs to measuring the decode rate, and nothing is measured here: --decode-tok-s gives the rate");
}

// A typed figure replaces the preset's, and the bill says which it replaced:
// "N = 5 parameters (typed)" under "The bill for stories-3m-f16.gguf" read as that file's count.
TEST_CASE("cli: bill with a preset and a typed figure names the figure it replaced") {
    const auto j = run_command(sixstep_cmd("bill --preset stories-3m --params 5 --train-tokens 1000 --decode-tok-s 5 --json"));
    REQUIRE(j.exit_code == 0);
    const auto doc = nlohmann::json::parse(j.output);
    CHECK(doc["inputs"]["n_params"] == 5.0);
    CHECK(doc["sources"]["n_params"] == "typed, in place of the 3,844,352 counted from stories-3m-f16.gguf");
    CHECK(doc["sources"]["n_train_tokens"] ==
          "typed, in place of 819,200 from the recipe: 640 steps × 8 windows × 160 tokens");
    const auto t = run_command(sixstep_cmd("bill --preset stories-3m --params 5 --decode-tok-s 5"));
    CHECK(t.exit_code == 0);
    CHECK(has(t.output, "N = 5 parameters (typed, in place of the 3,844,352 counted from stories-3m-f16.gguf)"));
}

TEST_CASE("cli: bill --preset stories-3m measures the bundled model") {
    const auto j = run_command(sixstep_cmd("bill --preset stories-3m -t 1 -n 8 --json"));
    REQUIRE(j.exit_code == 0);
    const auto doc = nlohmann::json::parse(j.output);
    CHECK(doc["inputs"]["n_params"] == 3844352.0);
    CHECK(doc["inputs"]["n_train_tokens"] == 819200.0);
    CHECK(doc["inputs"]["decode_tok_s"].get<double>() > 0);
    CHECK(has(doc["sources"]["decode_tok_s"].get<std::string>(), "measured"));
}

TEST_CASE("cli: quantize writes a loadable file, and refuses its own input without leaving anything") {
    const fs::path dir = sixstep::test::process_temp_dir("calc-cli");
    const fs::path out = dir / "q4_0.gguf";
    const auto r = run_command(sixstep_cmd("quantize '" + bundled + "' '" + out.string() + "' --type q4_0"));
    CHECK(r.exit_code == 0);
    CHECK(has(r.output, "30 tensors quantized to q4_0, 9 kept"));
    const auto g = run_command(sixstep_cmd("generate -m '" + out.string() + "' --prompt 'The cat sat on the' -n 1 --temp 0"));
    CHECK(g.exit_code == 0);
    CHECK(has(g.output, "The cat sat on the mat"));

    fs::create_symlink(out, dir / "link.gguf");
    bad_input("quantize '" + out.string() + "' '" + (dir / "link.gguf").string() + "' --type q8_0",
              "will not write here: it is a symbolic link, not a regular file");
    bad_input("quantize '" + out.string() + "' '" + out.string() + "' --type q8_0", "the file exists; add --force to overwrite it");
    bad_input("quantize '" + out.string() + "' '" + out.string() + "' --type q8_0 --force", "is the input file");
    const auto again = run_command(sixstep_cmd("quantize '" + bundled + "' '" + out.string() + "' --type q8_0 --force"));
    CHECK(again.exit_code == 0);
    CHECK(has(again.output, "tensors quantized to q8_0"));
    bad_input("quantize '" + bundled + "' '" + (dir / "x.gguf").string() + "' --type q5_1",
              "--type q5_1 is not supported (supported: q8_0, q4_0)");
    bad_input("quantize '" + std::string(SIXSTEP_SOURCE_DIR) + "/README.md' '" + (dir / "x.gguf").string() + "' --type q8_0",
              "not a GGUF file");
    CHECK_FALSE(fs::exists(dir / "x.gguf"));
    int n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
    CHECK(n == 2);  // q4_0.gguf and link.gguf: no temporaries
}

TEST_CASE("cli: perplexity on held-out stories, with a reference") {
    const std::string q8 = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-q8_0.gguf";
    const auto j = run_command(sixstep_cmd("perplexity -m '" + q8 + "' --ref '" + bundled + "' --docs 4 -t 1 --json"));
    REQUIRE(j.exit_code == 0);
    const auto doc = nlohmann::json::parse(j.output);
    CHECK(doc["n_docs"] == 4);
    CHECK(doc["perplexity"].get<double>() > 1.0);
    CHECK(doc["compare"]["kl_mean"].get<double>() > 0);
    bad_input("perplexity -m '" + bundled + "' --text /no/such/file.txt", "/no/such/file.txt: cannot open the text file: No such file or directory");
}

// A byte-order mark was scored as text: 13 tokens became 16 and the
// perplexity 46 became 1,497; a file of nothing but one scored 10⁷.
TEST_CASE("cli: perplexity leaves a text file's byte-order mark out") {
    const fs::path dir = sixstep::test::process_temp_dir("calc-cli-bom");
    const std::string story = "The cat sat on the mat. The dog ran.\n";
    std::ofstream(dir / "plain.txt", std::ios::binary) << story;
    std::ofstream(dir / "bom.txt", std::ios::binary) << "\xEF\xBB\xBF" << story;
    std::ofstream(dir / "only.txt", std::ios::binary) << "\xEF\xBB\xBF";
    const auto score = [&](const char* file) {
        const auto r = run_command(sixstep_cmd("perplexity -m '" + bundled + "' --text '" + (dir / file).string() +
                                               "' -t 1 --json"));
        REQUIRE(r.exit_code == 0);
        return nlohmann::json::parse(r.output);
    };
    const auto plain = score("plain.txt"), bom = score("bom.txt");
    CHECK(bom["n_tokens"] == plain["n_tokens"]);
    CHECK(bom["perplexity"] == plain["perplexity"]);
    const auto only = run_command(sixstep_cmd("perplexity -m '" + bundled + "' --text '" + (dir / "only.txt").string() + "' -t 1"));
    CHECK(only.exit_code == 2);
}

// One of a thing is singular in the terminal's headings ("1 layers × 1 KV
// heads", "ran 1 requests in 0.00 s", "1 tokens per request" before).
TEST_CASE("cli: a count of one is singular in kv-calc, traffic and coldstart") {
    const auto kv = run_command(sixstep_cmd("kv-calc --layers 1 --kv-heads 1 --head-dim 64 --tokens 10"));
    CHECK(has(kv.output, "KV cache of the typed shape: 1 layer × 1 KV head × head_dim 64\n"));
    const auto traffic = run_command(sixstep_cmd("traffic -m '" + bundled + "' --count 1 --max-tokens 2 -t 1"));
    CAPTURE(traffic.output);
    CHECK(has(traffic.output, "\nworkload: 1 request, Poisson"));
    CHECK(has(traffic.output, "\nran 1 request in "));
    CHECK_FALSE(has(traffic.output, "in 0.00 s of virtual time"));  // under a millisecond, in µs
    const auto cold = run_command(sixstep_cmd("coldstart -m '" + bundled + "' -n 1 --requests 1 --no-drop --idle 0"));
    CHECK(has(cold.output, "parameters), 1 token per request\n"));
}

// "1 tokens", "1 timed steps", "1 target passes for 1 tokens" in the other commands' lines.
TEST_CASE("cli: a count of one is singular in tokenize, bench --batch, generate --draft, traffic and queue") {
    const auto tok = run_command(sixstep_cmd("tokenize -m '" + bundled + "' ''"));
    CAPTURE(tok.output);
    CHECK(has(tok.output, "\n1 token\n"));  // the BOS token alone
    const auto batch = run_command(sixstep_cmd("bench -m '" + bundled + "' --batch 1 --steps 1 --context 1 -r 1 -t 1"));
    CAPTURE(batch.output);
    CHECK(has(batch.output, "each sequence holds 1 token (prefilled, untimed), then 1 timed step of one token"));
    const auto spec = run_command(sixstep_cmd("generate -m '" + bundled + "' --draft '" + bundled +
                                              "' --prompt Hi -n 1 --temp 0 -t 1"));
    CAPTURE(spec.output);
    CHECK(has(spec.output, "  1 target pass for 1 token: "));
    const auto traffic = run_command(sixstep_cmd("traffic -m '" + bundled + "' --count 1 --max-tokens 2 --step-tokens 1 -t 1"));
    CHECK(has(traffic.output, ", 1 token per step, "));
    const auto queue = run_command(
        sixstep_cmd("queue -m '" + bundled + "' --samples 2 --context 1 --utilization 0.5 --requests 1000 -t 1 --json"));
    REQUIRE(queue.exit_code == 0);
    CHECK(has(queue.output, "at a context of 1 token, "));
}
