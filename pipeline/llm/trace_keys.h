// The language model's trace keys and request fields, named once for the
// six-stage adapter that emits them (llm_model.cpp), its description
// (llm_description.cpp) and the front ends that read them. Meanings and
// units are in the description.
#pragma once

namespace sixstep::llm::keys {

// request fields (and the request stage's inputs)
inline constexpr char prompt[] = "prompt";
inline constexpr char max_tokens[] = "max_tokens";
inline constexpr char temperature[] = "temperature";
inline constexpr char top_k[] = "top_k";
inline constexpr char top_p[] = "top_p";
inline constexpr char min_p[] = "min_p";
inline constexpr char seed[] = "seed";
inline constexpr char stop[] = "stop";  // also postprocess: "yes" when generation stops
inline constexpr char force[] = "force";  // tokens chosen by a person: "0:412, 3:99"

// request
inline constexpr char n_tokens[] = "n_tokens";  // also forward: tokens in this pass
inline constexpr char token_ids[] = "token_ids";
inline constexpr char token_pieces[] = "token_pieces";

// load
inline constexpr char status[] = "status";
inline constexpr char load_ms[] = "load_ms";
inline constexpr char file[] = "file";
inline constexpr char n_params[] = "n_params";
inline constexpr char type[] = "type";
inline constexpr char n_vocab[] = "n_vocab";  // also output
inline constexpr char n_ctx[] = "n_ctx";
inline constexpr char n_embd[] = "n_embd";
inline constexpr char n_layer[] = "n_layer";
inline constexpr char n_head[] = "n_head";
inline constexpr char n_head_kv[] = "n_head_kv";
inline constexpr char n_ff[] = "n_ff";
inline constexpr char backend[] = "backend";
inline constexpr char kv_bytes_per_token[] = "kv_bytes_per_token";
inline constexpr char cpu_weights_mib[] = "cpu_weights_mib";
inline constexpr char huge_pages_mib[] = "huge_pages_mib";

// forward
inline constexpr char phase[] = "phase";
inline constexpr char tokens[] = "tokens";
inline constexpr char positions[] = "positions";
inline constexpr char kv_used_tokens[] = "kv_used_tokens";
inline constexpr char kv_ctx_tokens[] = "kv_ctx_tokens";
inline constexpr char kv_blocks_used[] = "kv_blocks_used";
inline constexpr char kv_bytes_used[] = "kv_bytes_used";
inline constexpr char kv_bytes_allocated[] = "kv_bytes_allocated";
inline constexpr char forward_ms[] = "forward_ms";
inline constexpr char tokens_per_s[] = "tokens_per_s";

// output
inline constexpr char top1_id[] = "top1_id";
inline constexpr char top1_piece[] = "top1_piece";
inline constexpr char top1_prob[] = "top1_prob";
inline constexpr char top1_logit[] = "top1_logit";
inline constexpr char top_ids[] = "top_ids";
inline constexpr char top_pieces[] = "top_pieces";
inline constexpr char top_probs[] = "top_probs";

// postprocess
inline constexpr char token_id[] = "token_id";
inline constexpr char token_piece[] = "token_piece";
inline constexpr char token_prob[] = "token_prob";
inline constexpr char text_so_far[] = "text_so_far";
inline constexpr char n_generated[] = "n_generated";  // also respond
inline constexpr char sampler[] = "sampler";
inline constexpr char sampler_chain[] = "sampler_chain";
inline constexpr char stop_reason[] = "stop_reason";  // also respond
inline constexpr char token_ms[] = "token_ms";
inline constexpr char forced[] = "forced";
inline constexpr char final_top1_prob[] = "final_top1_prob";

// respond ("text" is sixstep::keys::text, here and in postprocess)
inline constexpr char n_prompt[] = "n_prompt";
inline constexpr char ttft_ms[] = "ttft_ms";
inline constexpr char tpot_ms[] = "tpot_ms";
inline constexpr char tpot_p50_ms[] = "tpot_p50_ms";
inline constexpr char total_ms[] = "total_ms";
inline constexpr char prefill_tok_s[] = "prefill_tok_s";
inline constexpr char decode_tok_s[] = "decode_tok_s";

}  // namespace sixstep::llm::keys
