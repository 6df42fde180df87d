// libFuzzer target: parse arbitrary bytes as a GGUF file. Every input must
// either parse or throw sixstep::Error; on success, everything the reader
// hands out must stay inside the buffer and be usable, and a vocabulary in
// the metadata must load (or be refused) and tokenize without trouble.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "pipeline/core/error.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/gguf/gguf_writer.h"
#include "pipeline/llm/vocab/vocab.h"

using namespace sixstep::llm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const GGUFFile f = GGUFFile::from_buffer(data, size, "fuzz.gguf");
        for (const auto& t : f.tensors()) {
            // tensor bytes lie inside the input
            if (t.data < data || t.data + t.n_bytes > data + size) std::abort();
            if (f.find_tensor(t.name) == nullptr) std::abort();
            // dequantize small supported tensors (touches every byte)
            if (ggml_type_supported(t.type) && t.n_elements() <= 4096) (void)t.to_f32();
        }
        std::string all;
        for (const auto& kv : f.metadata()) {
            all += kv.value.to_display();
            if (f.find(kv.key) != &kv.value) std::abort();
        }
        (void)f.tensor_data_checksum();
        // a vocabulary in the metadata loads or fails cleanly, and then
        // tokenizes and decodes without trouble
        if (f.has("tokenizer.ggml.model")) {
            try {
                const Vocab v = Vocab::from_gguf(f);
                const std::string text = "Hello world! <s> 123 \xF0\x9F\xA6\x99 \xFF";
                const auto ids = v.tokenize(text, true, true);
                for (TokenId id : ids)
                    if (!v.valid(id)) std::abort();
                (void)v.detokenize(ids);
            } catch (const sixstep::Error&) {
            }
        }
        // what was read can be written again, and reads back to the same bytes
        GGUFWriter w;
        for (const auto& kv : f.metadata()) w.set(kv.key, kv.value);
        const auto bytes = w.to_bytes();
        const GGUFFile g = GGUFFile::from_buffer(bytes.data(), bytes.size(), "rewritten.gguf");
        GGUFWriter w2;
        for (const auto& kv : g.metadata()) w2.set(kv.key, kv.value);
        if (w2.to_bytes() != bytes) std::abort();
    } catch (const sixstep::Error&) {
        // a clear error is the expected outcome for most inputs
    }
    return 0;
}
