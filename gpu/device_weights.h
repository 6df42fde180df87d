// DeviceWeights: a model's weights in device memory, uploaded once per model
// and device and shared by every CUDA backend of that model (a lesson that
// restarts makes a new backend, not a new copy of the weights).
//
// Matrices keep the file's type (f32, f16, q8_0, q4_0) and bits, in the
// layout of device_matrix.h; the norm vectors are float32. A tied output
// head is the embedding table, stored once.
//
//     auto w = DeviceWeights::get(model, device);   // uploads on first use
//     matmul(w->layers[0].wq, x, n, q, false, ctx);
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/cuda_device.h"
#include "gpu/device_buffer.h"
#include "gpu/device_matrix.h"
#include "pipeline/llm/gguf/weight_matrix.h"
#include "pipeline/llm/llama_model.h"

namespace sixstep::gpu {

// One matrix's device memory and the view kernels read.
class DeviceMatrixBuffer {
public:
    // Uploads w (synchronously). Throws sixstep::Error naming `name` when its
    // type is not one the kernels read or its width is not a multiple of 32.
    DeviceMatrixBuffer(const llm::WeightMatrix& w, const std::string& name);
    const DeviceMatrix& view() const { return view_; }
    std::size_t bytes() const { return values_.bytes() + scales_.bytes(); }

private:
    DeviceBuffer<std::uint8_t> values_;
    DeviceBuffer<unsigned short> scales_;
    DeviceMatrix view_;
};

struct DeviceLayer {
    DeviceMatrix wq, wk, wv, wo;              // [n_head·hd | n_head_kv·hd | n_embd, …]
    DeviceMatrix ffn_gate, ffn_up, ffn_down;  // [n_ff, n_embd], [n_ff, n_embd], [n_embd, n_ff]
    const float* attn_norm = nullptr;         // [n_embd]
    const float* ffn_norm = nullptr;          // [n_embd]
};

class DeviceWeights {
public:
    // The weights of `model` on `device`: the copy already there when another
    // backend holds one, else a fresh upload. Throws sixstep::Error on a
    // tensor the kernels cannot read or when device memory runs out.
    static std::shared_ptr<const DeviceWeights> get(const llm::LlamaModel& model, const CudaDevice& device);

    DeviceWeights(const llm::LlamaModel& model, int device);
    ~DeviceWeights();
    DeviceWeights(const DeviceWeights&) = delete;
    DeviceWeights& operator=(const DeviceWeights&) = delete;

    DeviceMatrix token_embd;      // [n_vocab, n_embd]
    std::vector<DeviceLayer> layers;
    const float* output_norm = nullptr;  // [n_embd]
    DeviceMatrix output;          // [n_vocab, n_embd]; token_embd's memory when tied

    std::size_t bytes() const;    // device memory held
    // The most floats a GEMM tile of dequantized rows needs: the largest
    // non-f32 matrix (0 when every matrix is f32).
    std::size_t largest_quantized_floats() const { return largest_quantized_floats_; }
    int widest_row() const { return widest_row_; }  // the largest n_cols

private:
    DeviceMatrix add_matrix(const llm::WeightMatrix& w, const std::string& name);
    const float* add_vector(const std::vector<float>& v);

    int device_ = 0;
    std::vector<std::unique_ptr<DeviceMatrixBuffer>> matrices_;
    std::vector<DeviceBuffer<float>> vectors_;
    std::size_t largest_quantized_floats_ = 0;
    int widest_row_ = 0;
};

}  // namespace sixstep::gpu
