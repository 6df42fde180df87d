#include "gpu/device_weights.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/gguf/ggml_type.h"

namespace sixstep::gpu {

using llm::GGMLType;

namespace {

DeviceType device_type(GGMLType t, const std::string& name) {
    switch (t) {
        case GGMLType::F32: return DeviceType::f32;
        case GGMLType::F16: return DeviceType::f16;
        case GGMLType::Q8_0: return DeviceType::q8_0;
        case GGMLType::Q4_0: return DeviceType::q4_0;
        default:
            throw Error(fmt::format("cuda backend: tensor {} has type {}; the GPU kernels read f32, f16, q8_0 and q4_0",
                                    name, llm::ggml_type_name(t)));
    }
}

template <typename T>
void upload(DeviceBuffer<T>& dst, const void* src, std::size_t n) {
    dst.ensure(n);
    CUDA_CHECK(cudaMemcpy(dst.data(), src, n * sizeof(T), cudaMemcpyHostToDevice));
}

// ggml's blocks {fp16 d; packed values} (Q8_0: 32 int8; Q4_0: 16 bytes of
// nibbles) split into the values of every row back to back and the scales;
// the packed bytes keep their order.
template <typename Block>
void split_blocks(const llm::WeightMatrix& w, DeviceBuffer<std::uint8_t>& values, DeviceBuffer<unsigned short>& scales) {
    constexpr std::size_t value_bytes = sizeof(Block::qs);
    const std::size_t rows = static_cast<std::size_t>(w.n_rows), n_blocks = static_cast<std::size_t>(w.n_cols) / 32;
    std::vector<std::uint8_t> qs(rows * n_blocks * value_bytes);
    std::vector<unsigned short> d(rows * n_blocks);
    for (std::size_t r = 0; r < rows; ++r) {
        const std::uint8_t* row = w.row(static_cast<int>(r));
        for (std::size_t b = 0; b < n_blocks; ++b) {
            Block blk;
            std::memcpy(&blk, row + b * sizeof(Block), sizeof blk);
            d[r * n_blocks + b] = blk.d;
            std::memcpy(&qs[(r * n_blocks + b) * value_bytes], blk.qs, value_bytes);
        }
    }
    upload(values, qs.data(), qs.size());
    upload(scales, d.data(), d.size());
}

}  // namespace

DeviceMatrixBuffer::DeviceMatrixBuffer(const llm::WeightMatrix& w, const std::string& name) {
    const DeviceType type = device_type(w.type, name);
    if (w.n_cols % 32 != 0 || w.n_rows <= 0)
        throw Error(fmt::format("cuda backend: tensor {} is [{}, {}]; the GPU kernels need rows of a multiple of 32 "
                                "values",
                                name, w.n_rows, w.n_cols));
    switch (type) {
        case DeviceType::f32:
        case DeviceType::f16:
            // The file's rows as they are (row_bytes has no padding for these types).
            upload(values_, w.data, w.bytes());
            break;
        case DeviceType::q8_0: split_blocks<llm::block_q8_0>(w, values_, scales_); break;
        case DeviceType::q4_0: split_blocks<llm::block_q4_0>(w, values_, scales_); break;
    }
    view_ = DeviceMatrix{type, w.n_rows, w.n_cols, values_.data(), scales_.size() ? scales_.data() : nullptr};
}

DeviceWeights::DeviceWeights(const llm::LlamaModel& model, int device) : device_(device) {
    const llm::LlamaWeights& w = model.weights();
    token_embd = add_matrix(w.token_embd, "token_embd.weight");
    for (std::size_t l = 0; l < w.layers.size(); ++l) {
        const llm::LlamaLayer& L = w.layers[l];
        const std::string p = fmt::format("blk.{}.", l);
        DeviceLayer d;
        d.attn_norm = add_vector(L.attn_norm);
        d.wq = add_matrix(L.wq, p + "attn_q.weight");
        d.wk = add_matrix(L.wk, p + "attn_k.weight");
        d.wv = add_matrix(L.wv, p + "attn_v.weight");
        d.wo = add_matrix(L.wo, p + "attn_output.weight");
        d.ffn_norm = add_vector(L.ffn_norm);
        d.ffn_gate = add_matrix(L.ffn_gate, p + "ffn_gate.weight");
        d.ffn_up = add_matrix(L.ffn_up, p + "ffn_up.weight");
        d.ffn_down = add_matrix(L.ffn_down, p + "ffn_down.weight");
        layers.push_back(d);
    }
    output_norm = add_vector(w.output_norm);
    output = w.tied_output ? token_embd : add_matrix(w.output, "output.weight");
    // cudaMemcpy from pageable memory may return before the DMA lands; the
    // backend's stream is ordered after it, but a caller on another stream is
    // not — make the upload complete here.
    CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceWeights::~DeviceWeights() {
    // The buffers free themselves; they must do it on their own device.
    static_cast<void>(cudaSetDevice(device_));
    matrices_.clear();
    vectors_.clear();
}

DeviceMatrix DeviceWeights::add_matrix(const llm::WeightMatrix& w, const std::string& name) {
    matrices_.push_back(std::make_unique<DeviceMatrixBuffer>(w, name));
    const DeviceMatrix& m = matrices_.back()->view();
    if (m.type != DeviceType::f32)
        largest_quantized_floats_ =
            std::max(largest_quantized_floats_, static_cast<std::size_t>(m.n_rows) * static_cast<std::size_t>(m.n_cols));
    widest_row_ = std::max(widest_row_, m.n_cols);
    return m;
}

const float* DeviceWeights::add_vector(const std::vector<float>& v) {
    vectors_.emplace_back();
    upload(vectors_.back(), v.data(), v.size());
    return vectors_.back().data();
}

std::size_t DeviceWeights::bytes() const {
    std::size_t n = 0;
    for (const auto& m : matrices_) n += m->bytes();
    for (const auto& v : vectors_) n += v.bytes();
    return n;
}

std::shared_ptr<const DeviceWeights> DeviceWeights::get(const llm::LlamaModel& model, const CudaDevice& device) {
    // Keyed by the model's address: every backend holding these weights also
    // holds the model, so the address cannot be reused while an entry lives.
    static std::mutex mutex;
    static std::map<std::pair<const llm::LlamaModel*, int>, std::weak_ptr<const DeviceWeights>> uploaded;
    const std::lock_guard<std::mutex> lock(mutex);
    std::erase_if(uploaded, [](const auto& e) { return e.second.expired(); });
    const auto key = std::make_pair(&model, device.index());
    if (auto it = uploaded.find(key); it != uploaded.end())
        if (auto w = it->second.lock()) return w;
    device.make_current();
    auto w = std::make_shared<const DeviceWeights>(model, device.index());
    uploaded[key] = w;
    return w;
}

}  // namespace sixstep::gpu
