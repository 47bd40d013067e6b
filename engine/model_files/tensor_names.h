#pragma once

// The names llama.cpp uses in GGUF files for the two architectures this engine runs.
// Sources (ggml-org/llama.cpp, read through the code search in this session):
//  - architecture strings: src/llama-arch.cpp LLM_ARCH_NAMES ("qwen3moe", "qwen35moe")
//  - metadata keys: src/llama-arch.cpp LLM_KV_NAMES ("%s.block_count", ...; "%s" is the
//    architecture) and the tokenizer keys in the same table
//  - tensor names: src/llama-arch.cpp LLM_TENSOR_NAMES ("blk.%d.attn_q", ...), with the
//    ".weight"/".bias" suffix llama-model.cpp adds (ssm_a has none: LLM_TENSOR_SSM_A_NOSCAN is
//    created without a suffix)
//  - which tensors each architecture has and their shapes: src/models/qwen35moe.cpp
//    load_arch_tensors (attention / gated delta net / MoE / shared expert / MTP "nextn" block)
//    and the qwen3moe case of llama-model.cpp (ffn_norm instead of post_attention_norm, no
//    shared expert)
//  - layer kinds: qwen35moe.cpp load_arch_hparams: "%s.attention.recurrent_layers" when present,
//    else "%s.full_attention_interval" (default 4): layer i is recurrent unless (i+1) % interval
//    == 0; the MTP blocks after n_layer are attention blocks.

#include <string>
#include <string_view>

namespace cw::engine::gguf {

// Architectures (general.architecture).
inline constexpr std::string_view kArchQwen3Moe = "qwen3moe";
inline constexpr std::string_view kArchQwen35Moe = "qwen35moe";

// General keys.
inline constexpr std::string_view kGeneralArchitecture = "general.architecture";
inline constexpr std::string_view kGeneralName = "general.name";
inline constexpr std::string_view kGeneralAlignment = "general.alignment";
inline constexpr std::string_view kGeneralFileType = "general.file_type";
inline constexpr std::string_view kGeneralQuantizationVersion = "general.quantization_version";

// Architecture keys: the full key is "<arch>.<suffix>" (archKey).
inline constexpr std::string_view kVocabSize = "vocab_size";
inline constexpr std::string_view kContextLength = "context_length";
inline constexpr std::string_view kEmbeddingLength = "embedding_length";
inline constexpr std::string_view kBlockCount = "block_count";
inline constexpr std::string_view kFeedForwardLength = "feed_forward_length";
inline constexpr std::string_view kExpertFeedForwardLength = "expert_feed_forward_length";
inline constexpr std::string_view kExpertSharedFeedForwardLength
    = "expert_shared_feed_forward_length";
inline constexpr std::string_view kExpertCount = "expert_count";
inline constexpr std::string_view kExpertUsedCount = "expert_used_count";
inline constexpr std::string_view kExpertWeightsNorm = "expert_weights_norm";
inline constexpr std::string_view kNextnPredictLayers = "nextn_predict_layers";
inline constexpr std::string_view kFullAttentionInterval = "full_attention_interval";
inline constexpr std::string_view kAttentionHeadCount = "attention.head_count";
inline constexpr std::string_view kAttentionHeadCountKv = "attention.head_count_kv";
inline constexpr std::string_view kAttentionKeyLength = "attention.key_length";
inline constexpr std::string_view kAttentionValueLength = "attention.value_length";
inline constexpr std::string_view kAttentionLayerNormRmsEpsilon
    = "attention.layer_norm_rms_epsilon";
inline constexpr std::string_view kAttentionRecurrentLayers = "attention.recurrent_layers";
inline constexpr std::string_view kRopeDimensionCount = "rope.dimension_count";
inline constexpr std::string_view kRopeDimensionSections = "rope.dimension_sections";
inline constexpr std::string_view kRopeFreqBase = "rope.freq_base";
inline constexpr std::string_view kSsmConvKernel = "ssm.conv_kernel";
inline constexpr std::string_view kSsmInnerSize = "ssm.inner_size";
inline constexpr std::string_view kSsmStateSize = "ssm.state_size"; // key/value head dim
inline constexpr std::string_view kSsmTimeStepRank = "ssm.time_step_rank"; // value heads
inline constexpr std::string_view kSsmGroupCount = "ssm.group_count"; // key heads

// Tokenizer keys.
inline constexpr std::string_view kTokenizerModel = "tokenizer.ggml.model"; // "gpt2" for Qwen
inline constexpr std::string_view kTokenizerPre = "tokenizer.ggml.pre"; // "qwen2" for Qwen
inline constexpr std::string_view kTokenizerTokens = "tokenizer.ggml.tokens";
inline constexpr std::string_view kTokenizerTokenType = "tokenizer.ggml.token_type";
inline constexpr std::string_view kTokenizerMerges = "tokenizer.ggml.merges";
inline constexpr std::string_view kTokenizerBosId = "tokenizer.ggml.bos_token_id";
inline constexpr std::string_view kTokenizerEosId = "tokenizer.ggml.eos_token_id";
inline constexpr std::string_view kTokenizerPadId = "tokenizer.ggml.padding_token_id";
inline constexpr std::string_view kTokenizerAddBos = "tokenizer.ggml.add_bos_token";
inline constexpr std::string_view kTokenizerChatTemplate = "tokenizer.chat_template";

// Tensors outside the blocks.
inline constexpr std::string_view kTokenEmbd = "token_embd";
inline constexpr std::string_view kOutputNorm = "output_norm";
inline constexpr std::string_view kOutput = "output";

// Tensors of block N ("blk.N.<name>").
inline constexpr std::string_view kAttnNorm = "attn_norm";
inline constexpr std::string_view kAttnQ = "attn_q";
inline constexpr std::string_view kAttnK = "attn_k";
inline constexpr std::string_view kAttnV = "attn_v";
inline constexpr std::string_view kAttnQkv = "attn_qkv"; // Qwen3.5 DeltaNet in_proj_qkv
inline constexpr std::string_view kAttnGate = "attn_gate"; // Qwen3.5 DeltaNet in_proj_z
inline constexpr std::string_view kAttnOutput = "attn_output";
inline constexpr std::string_view kAttnQNorm = "attn_q_norm";
inline constexpr std::string_view kAttnKNorm = "attn_k_norm";
inline constexpr std::string_view kFfnNorm = "ffn_norm"; // qwen3moe post-attention norm
inline constexpr std::string_view kPostAttentionNorm = "post_attention_norm"; // qwen35moe
inline constexpr std::string_view kFfnGateInp = "ffn_gate_inp"; // router
inline constexpr std::string_view kFfnGateExps = "ffn_gate_exps";
inline constexpr std::string_view kFfnUpExps = "ffn_up_exps";
inline constexpr std::string_view kFfnGateUpExps = "ffn_gate_up_exps"; // fused gate+up, newer files
inline constexpr std::string_view kFfnDownExps = "ffn_down_exps";
inline constexpr std::string_view kFfnGateInpShexp = "ffn_gate_inp_shexp"; // shared expert gate
inline constexpr std::string_view kFfnGateShexp = "ffn_gate_shexp";
inline constexpr std::string_view kFfnUpShexp = "ffn_up_shexp";
inline constexpr std::string_view kFfnDownShexp = "ffn_down_shexp";
inline constexpr std::string_view kSsmConv1d = "ssm_conv1d";
inline constexpr std::string_view kSsmDt = "ssm_dt"; // ".bias"
inline constexpr std::string_view kSsmA = "ssm_a"; // no suffix; -exp(A_log)
inline constexpr std::string_view kSsmAlpha = "ssm_alpha";
inline constexpr std::string_view kSsmBeta = "ssm_beta";
inline constexpr std::string_view kSsmNorm = "ssm_norm";
inline constexpr std::string_view kSsmOut = "ssm_out";
// The MTP ("nextn") block blk.<n_layer>.
inline constexpr std::string_view kNextnEhProj = "nextn.eh_proj";
inline constexpr std::string_view kNextnEmbedTokens = "nextn.embed_tokens";
inline constexpr std::string_view kNextnEnorm = "nextn.enorm";
inline constexpr std::string_view kNextnHnorm = "nextn.hnorm";
inline constexpr std::string_view kNextnSharedHeadHead = "nextn.shared_head_head";
inline constexpr std::string_view kNextnSharedHeadNorm = "nextn.shared_head_norm";

// "<arch>.<suffix>", e.g. archKey("qwen3moe", kBlockCount) == "qwen3moe.block_count".
std::string archKey(std::string_view arch, std::string_view suffix);
// "token_embd.weight"; suffix "" gives the bare name.
std::string tensorName(std::string_view base, std::string_view suffix = "weight");
// "blk.3.attn_q.weight"; suffix "" gives "blk.3.ssm_a".
std::string blockTensorName(
    long long layer, std::string_view base, std::string_view suffix = "weight");

} // namespace cw::engine::gguf
