#include "pipeline/tools/random_model.h"

#include <cmath>
#include <optional>
#include <system_error>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/gguf/gguf_writer.h"

namespace sixstep::llm {

namespace {

// SplitMix64: tiny, fast and the same on every platform (unlike
// std::normal_distribution), so a seed names the same weights everywhere.
struct Rng {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    float uniform() { return static_cast<float>((next() >> 40) * (1.0 / 16777216.0)); }  // [0, 1)
};

std::string utf8(unsigned cp) {
    std::string s;
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else if (cp < 0x800) {
        s += static_cast<char>(0xc0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        s += static_cast<char>(0xe0 | (cp >> 12));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    }
    return s;
}

}  // namespace

std::string byte_level_piece(unsigned char b) {
    // Printable ranges keep their code point: '!'..'~', '¡'..'¬', '®'..'ÿ'.
    const auto printable = [](unsigned c) { return (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174); };
    if (printable(b)) return utf8(b);
    unsigned n = 0;
    for (unsigned c = 0; c < b; ++c)
        if (!printable(c)) ++n;
    return utf8(256 + n);
}

RandomModelParams random_model_preset(const std::string& name) {
    RandomModelParams p;
    p.name = "random-" + name;
    if (name == "tiny") return p;
    if (name == "15m") {
        p.n_vocab = 32000, p.n_ctx = 256, p.n_embd = 288, p.n_layer = 6, p.n_head = 6, p.n_head_kv = 6, p.n_ff = 768;
        p.tied_output = true;  // as llama2.c's stories15M (its classifier shares the embedding)
        return p;
    }
    if (name == "110m") {
        p.n_vocab = 32000, p.n_ctx = 1024, p.n_embd = 768, p.n_layer = 12, p.n_head = 12, p.n_head_kv = 12,
        p.n_ff = 2048;
        p.tied_output = true;
        return p;
    }
    if (name == "1b") {
        // TinyLlama-1.1B's shape: grouped-query attention (32 query heads
        // share 4 K/V heads), an untied output head; 1.1 G parameters.
        p.n_vocab = 32000, p.n_ctx = 2048, p.n_embd = 2048, p.n_layer = 22, p.n_head = 32, p.n_head_kv = 4,
        p.n_ff = 5632;
        return p;
    }
    throw Error(fmt::format("unknown random model preset \"{}\" (known: tiny, 15m, 110m, 1b)", name));
}

namespace {

// This user's folder in the temporary one, made private (0700): a file
// anyone could plant at a predictable name in /tmp was taken as the model,
// and a lesson ran on it without a word.
std::filesystem::path private_cache_dir() {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("sixstep-{}", ::geteuid());
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw Error(fmt::format("cannot make the folder {}: {}", dir.string(), std::strerror(errno)));
    struct stat st{};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
        throw Error(fmt::format("{} is not a private folder of this user (a directory, mode 0700): remove it, and "
                                "sixstep makes it again",
                                dir.string()));
    return dir;
}

// The cached file is the model asked for: its shape and weight type as the
// preset has them. Anything else (an older file, a cut one) is written again.
bool is_model_of(const std::filesystem::path& path, const RandomModelParams& p) {
    try {
        const GGUFFile f = GGUFFile::open(path);
        const GGUFTensorInfo* embd = f.find_tensor("token_embd.weight");
        return embd && embd->type == p.type && f.find_u32("llama.vocab_size") == static_cast<std::uint32_t>(p.n_vocab) &&
               f.find_u32("llama.embedding_length") == static_cast<std::uint32_t>(p.n_embd) &&
               f.find_u32("llama.block_count") == static_cast<std::uint32_t>(p.n_layer) &&
               f.find_u32("llama.feed_forward_length") == static_cast<std::uint32_t>(p.n_ff) &&
               f.find_u32("llama.attention.head_count_kv") == static_cast<std::uint32_t>(p.n_head_kv);
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace

std::filesystem::path cached_random_model(const std::string& preset, GGMLType type) {
    namespace fs = std::filesystem;
    RandomModelParams p = random_model_preset(preset);
    p.type = type;
    const fs::path dir = private_cache_dir();
    const fs::path path = dir / fmt::format("random-{}-{}-seed{}.gguf", preset, ggml_type_name(type), p.seed);
    std::error_code ec;
    if (fs::is_regular_file(fs::symlink_status(path, ec)) && is_model_of(path, p)) return path;
    const fs::path part = dir / fmt::format("{}.{}.part", path.filename().string(), ::getpid());
    write_random_model(part, p);
    fs::rename(part, path, ec);
    if (ec) {
        fs::remove(part, ec);
        throw Error(fmt::format("cannot write {}: {}", path.string(), ec.message()));
    }
    return path;
}

namespace {

// Vocabulary: 256 byte tokens, <|endoftext|>, then unused filler.
void add_byte_vocabulary(GGUFWriter& w, int n_vocab) {
    std::vector<std::string> tokens;
    std::vector<std::int32_t> types;
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(byte_level_piece(static_cast<unsigned char>(b)));
        types.push_back(1);  // normal
    }
    const int eos = 256;
    tokens.push_back("<|endoftext|>");
    types.push_back(3);  // control
    for (int i = static_cast<int>(tokens.size()); i < n_vocab; ++i) {
        tokens.push_back(fmt::format("<unused_{}>", i));
        types.push_back(5);  // unused: never produced by the tokenizer
    }
    w.set("tokenizer.ggml.model", "gpt2");
    w.set("tokenizer.ggml.pre", "default");
    w.set("tokenizer.ggml.tokens", tokens);
    w.set("tokenizer.ggml.token_type", types);
    w.set("tokenizer.ggml.merges", std::vector<std::string>{});
    w.set("tokenizer.ggml.bos_token_id", static_cast<std::uint32_t>(eos));
    w.set("tokenizer.ggml.eos_token_id", static_cast<std::uint32_t>(eos));
    w.set("tokenizer.ggml.add_bos_token", false);
}

GGUFWriter random_model_writer(RandomModelParams p) {
    std::optional<GGUFFile> vocab_file;
    if (!p.vocab_from.empty()) {
        vocab_file = GGUFFile::open(p.vocab_from);
        const GGUFValue* tokens = vocab_file->find("tokenizer.ggml.tokens");
        if (!tokens)
            throw Error(fmt::format("random model: {} has no vocabulary (tokenizer.ggml.tokens)", p.vocab_from.string()));
        p.n_vocab = static_cast<int>(tokens->size());
    }
    if (p.n_vocab < 257) throw Error(fmt::format("random model: n_vocab {} < 257", p.n_vocab));
    if (p.n_head <= 0 || p.n_head_kv <= 0 || p.n_embd % p.n_head != 0 || p.n_head % p.n_head_kv != 0)
        throw Error(fmt::format("random model: n_embd {}, n_head {}, n_head_kv {} do not divide", p.n_embd, p.n_head,
                                p.n_head_kv));
    const int hd = p.n_embd / p.n_head;
    GGUFWriter w;
    w.set("general.architecture", "llama");
    w.set("general.name", p.name);
    w.set("general.file_type", static_cast<std::uint32_t>(p.type == GGMLType::F32    ? 0
                                                          : p.type == GGMLType::F16  ? 1
                                                          : p.type == GGMLType::Q8_0 ? 7
                                                                                     : 2));
    w.set("llama.vocab_size", static_cast<std::uint32_t>(p.n_vocab));
    w.set("llama.context_length", static_cast<std::uint32_t>(p.n_ctx));
    w.set("llama.embedding_length", static_cast<std::uint32_t>(p.n_embd));
    w.set("llama.block_count", static_cast<std::uint32_t>(p.n_layer));
    w.set("llama.feed_forward_length", static_cast<std::uint32_t>(p.n_ff));
    w.set("llama.attention.head_count", static_cast<std::uint32_t>(p.n_head));
    w.set("llama.attention.head_count_kv", static_cast<std::uint32_t>(p.n_head_kv));
    w.set("llama.rope.dimension_count", static_cast<std::uint32_t>(hd));
    w.set("llama.rope.freq_base", p.rope_freq_base);
    w.set("llama.attention.layer_norm_rms_epsilon", p.f_norm_rms_eps);

    if (vocab_file) {
        for (const GGUFKeyValue& kv : vocab_file->metadata())
            if (kv.key.starts_with("tokenizer.")) w.set(kv.key, kv.value);
    } else {
        add_byte_vocabulary(w, p.n_vocab);
    }

    Rng rng{p.seed};
    // Uniform in [-a, a] with standard deviation `std`: a = std·√3.
    const auto random = [&](std::size_t n, float stddev) {
        std::vector<float> v(n);
        const float a = stddev * std::sqrt(3.0f);
        for (auto& x : v) x = (2 * rng.uniform() - 1) * a;
        return v;
    };
    const auto norm = [&](std::size_t n) {
        std::vector<float> v(n);
        for (auto& x : v) x = 1.0f + 0.1f * (2 * rng.uniform() - 1);
        return v;
    };
    const int n_matrices = 7 * p.n_layer + (p.tied_output ? 0 : 1);
    int n_made = 0;
    const auto mat = [&](const std::string& name, int rows, int cols) {
        report_progress("generating random weights (matrices)", static_cast<std::uint64_t>(n_made++), n_matrices);
        const std::vector<float> v = random(static_cast<std::size_t>(rows) * cols, 1.0f / std::sqrt(static_cast<float>(cols)));
        w.add_tensor(name, p.type, {cols, rows}, v);
    };
    const auto vec = [&](const std::string& name, int n) { w.add_tensor(name, GGMLType::F32, {n}, norm(n)); };

    {
        // Embeddings with unit-ish rows, like a trained model's.
        const std::vector<float> e = random(static_cast<std::size_t>(p.n_vocab) * p.n_embd, 1.0f);
        w.add_tensor("token_embd.weight", p.type, {p.n_embd, p.n_vocab}, e);
    }
    for (int l = 0; l < p.n_layer; ++l) {
        const std::string b = fmt::format("blk.{}.", l);
        vec(b + "attn_norm.weight", p.n_embd);
        mat(b + "attn_q.weight", p.n_head * hd, p.n_embd);
        mat(b + "attn_k.weight", p.n_head_kv * hd, p.n_embd);
        mat(b + "attn_v.weight", p.n_head_kv * hd, p.n_embd);
        mat(b + "attn_output.weight", p.n_embd, p.n_head * hd);
        vec(b + "ffn_norm.weight", p.n_embd);
        mat(b + "ffn_gate.weight", p.n_ff, p.n_embd);
        mat(b + "ffn_up.weight", p.n_ff, p.n_embd);
        mat(b + "ffn_down.weight", p.n_embd, p.n_ff);
    }
    vec("output_norm.weight", p.n_embd);
    if (!p.tied_output) mat("output.weight", p.n_vocab, p.n_embd);
    return w;
}

}  // namespace

std::vector<std::uint8_t> random_model_bytes(const RandomModelParams& params) {
    return random_model_writer(params).to_bytes();
}

void write_random_model(const std::filesystem::path& path, const RandomModelParams& params) {
    const GGUFWriter w = random_model_writer(params);
    try {
        w.write(path);
    } catch (const Error& e) {
        throw e.with_context(fmt::format("writing random model {}", path.string()));
    }
}

}  // namespace sixstep::llm
