// The CLI on GGUF files: `sixstep inspect` and `sixstep tokenize`, run as the
// built binary (SIXSTEP_BINARY), checking exit codes and messages.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "pipeline/llm/gguf/gguf_writer.h"

using namespace sixstep::llm;
namespace fs = std::filesystem;

namespace gguf_cli_test {

namespace {

struct Run {
    int code;
    std::string out, err;
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() / ("sixstep-cli-" + std::to_string(std::random_device{}()));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

// Runs `sixstep ARGS` with stdout and stderr captured to files.
Run run_sixstep(const std::string& args, const TempDir& dir) {
    const fs::path out = dir.path / "stdout.txt", err = dir.path / "stderr.txt";
    const std::string cmd = std::string("'") + SIXSTEP_BINARY + "' " + args + " >'" + out.string() + "' 2>'" +
                            err.string() + "'";
    const int status = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(status));
    return {WEXITSTATUS(status), slurp(out), slurp(err)};
}

fs::path write_small_model(const TempDir& dir) {
    GGUFWriter w;
    w.set("general.architecture", "llama");
    w.set("llama.block_count", uint32_t(1));
    w.set("tokenizer.ggml.tokens", std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g", "h"});
    std::vector<float> x(64 * 8, 0.5f);
    w.add_tensor("token_embd.weight", GGMLType::Q8_0, {64, 8}, x);
    w.add_tensor("output_norm.weight", GGMLType::F32, {64}, std::span<const float>(x).first(64));
    const fs::path p = dir.path / "small.gguf";
    w.write(p);
    return p;
}

}  // namespace

TEST_CASE("cli: sixstep inspect prints metadata, the tensor table and totals") {
    TempDir dir;
    const fs::path model = write_small_model(dir);
    const Run r = run_sixstep("inspect '" + model.string() + "'", dir);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("GGUF v3") != std::string::npos);
    CHECK(r.out.find("llama.block_count") != std::string::npos);
    CHECK(r.out.find("[str × 8: \"a\", \"b\", \"c\", \"d\", \"e\", \"f\", ...]") != std::string::npos);
    CHECK(r.out.find("token_embd.weight") != std::string::npos);
    CHECK(r.out.find("q8_0") != std::string::npos);
    CHECK(r.out.find("[64, 8]") != std::string::npos);
    CHECK(r.out.find("total: 2 tensors, 576 parameters (576)") != std::string::npos);

    const Run j = run_sixstep("inspect --json '" + model.string() + "'", dir);
    CHECK(j.code == 0);
    CHECK(j.out.find("\"n_params\": 576") != std::string::npos);
    CHECK(j.out.find("\"count\": 8") != std::string::npos);
}

TEST_CASE("cli: sixstep inspect on a truncated or missing file exits 2 with one clear message") {
    TempDir dir;
    const fs::path model = write_small_model(dir);
    const std::string bytes = slurp(model);
    const fs::path cut = dir.path / "cut.gguf";
    std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 10));
    const Run r = run_sixstep("inspect '" + cut.string() + "'", dir);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("sixstep: error: " + cut.string() + ": tensor output_norm.weight: data [", 0) == 0);
    CHECK(r.err.find("is beyond the end of the file (size " + std::to_string(bytes.size() - 10) + ")") !=
          std::string::npos);

    const Run m = run_sixstep("inspect '" + (dir.path / "nope.gguf").string() + "'", dir);
    CHECK(m.code == 2);
    // refused as it is read, with the models that can be named alone
    CHECK(m.err.rfind("sixstep: error: file: no such file: \"" + (dir.path / "nope.gguf").string() +
                          "\"; the bundled models, found by name from any folder: ",
                      0) == 0);
}

TEST_CASE("cli: sixstep tokenize prints ids and visible pieces") {
    TempDir dir;
    const std::string vocab = std::string(SIXSTEP_TEST_DATA) + "/tokenizers/ggml-vocab-llama-spm.gguf";
    const Run r = run_sixstep("tokenize --model '" + vocab + "' 'Hello world'", dir);
    CHECK(r.code == 0);
    CHECK(r.out == "    1  <s>               <s>  (control)\n"
                   "15043  ␣Hello            ▁Hello\n"
                   " 3186  ␣world            ▁world\n"
                   "3 tokens\n");
    const Run n = run_sixstep("tokenize --no-bos --json -m '" + vocab + "' 'Hello'", dir);
    CHECK(n.code == 0);
    CHECK(n.out.find("\"ids\": [\n    15043\n  ]") != std::string::npos);

    const Run bad = run_sixstep("tokenize --model '" + std::string(SIXSTEP_TEST_DATA) + "/reference/tiny-a.gguf' x", dir);
    CHECK(bad.code == 2);
    CHECK(bad.err.find("error loading the vocabulary: key tokenizer.ggml.model: missing") != std::string::npos);
}

}  // namespace gguf_cli_test
