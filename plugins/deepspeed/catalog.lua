-- plugins/deepspeed/catalog.lua -- the model catalog deepspeed.models
-- reads: per model, the config.json fields that determine its parameter
-- count (copied from the model's config.json on the Hugging Face Hub), the
-- total its authors / the Hub publish and where that figure comes from;
-- the sorted names and the names by lower-case Hub id. A data module
-- (built-in data, listed in builtin-data.txt): its top level only
-- builds tables, so the executable embeds the value it returns
-- (src/tools/snapshot.lua) and loading it runs none of the code below.

local META_SRC = "Hugging Face Hub parameter count of %s (safetensors metadata); " ..
  "Meta's model card rounds to %s"
local QWEN_SRC = "Hugging Face Hub parameter count of Qwen/%s (safetensors " ..
  "metadata); the model card says \"Number of Parameters: %s\"; the Hub shows %s"
local CATALOG = {
  ["llama-2-7b"] = {
    hf_id = "meta-llama/Llama-2-7b-hf",
    published_params = 6738415616,
    source = META_SRC:format("meta-llama/Llama-2-7b-hf", "7B"),
    config = { model_type = "llama", hidden_size = 4096, intermediate_size = 11008,
      num_hidden_layers = 32, num_attention_heads = 32, num_key_value_heads = 32,
      vocab_size = 32000, max_position_embeddings = 4096, tie_word_embeddings = false },
  },
  ["llama-2-13b"] = {
    hf_id = "meta-llama/Llama-2-13b-hf",
    published_params = 13015864320,
    source = META_SRC:format("meta-llama/Llama-2-13b-hf", "13B"),
    config = { model_type = "llama", hidden_size = 5120, intermediate_size = 13824,
      num_hidden_layers = 40, num_attention_heads = 40, num_key_value_heads = 40,
      vocab_size = 32000, max_position_embeddings = 4096, tie_word_embeddings = false },
  },
  ["llama-2-70b"] = {
    hf_id = "meta-llama/Llama-2-70b-hf",
    published_params = 68976648192,
    source = META_SRC:format("meta-llama/Llama-2-70b-hf", "70B"),
    config = { model_type = "llama", hidden_size = 8192, intermediate_size = 28672,
      num_hidden_layers = 80, num_attention_heads = 64, num_key_value_heads = 8,
      vocab_size = 32000, max_position_embeddings = 4096, tie_word_embeddings = false },
  },
  ["llama-3-8b"] = {
    hf_id = "meta-llama/Meta-Llama-3-8B",
    published_params = 8030261248,
    source = META_SRC:format("meta-llama/Meta-Llama-3-8B", "8B"),
    config = { model_type = "llama", hidden_size = 4096, intermediate_size = 14336,
      num_hidden_layers = 32, num_attention_heads = 32, num_key_value_heads = 8,
      vocab_size = 128256, max_position_embeddings = 8192, tie_word_embeddings = false },
  },
  ["llama-3-70b"] = {
    hf_id = "meta-llama/Meta-Llama-3-70B",
    published_params = 70553706496,
    source = META_SRC:format("meta-llama/Meta-Llama-3-70B", "70B"),
    config = { model_type = "llama", hidden_size = 8192, intermediate_size = 28672,
      num_hidden_layers = 80, num_attention_heads = 64, num_key_value_heads = 8,
      vocab_size = 128256, max_position_embeddings = 8192, tie_word_embeddings = false },
  },
  ["llama-3.1-8b"] = {
    hf_id = "meta-llama/Llama-3.1-8B",
    published_params = 8030261248,
    source = META_SRC:format("meta-llama/Llama-3.1-8B", "8B"),
    config = { model_type = "llama", hidden_size = 4096, intermediate_size = 14336,
      num_hidden_layers = 32, num_attention_heads = 32, num_key_value_heads = 8,
      vocab_size = 128256, max_position_embeddings = 131072, tie_word_embeddings = false },
  },
  ["llama-3.1-70b"] = {
    hf_id = "meta-llama/Llama-3.1-70B",
    published_params = 70553706496,
    source = META_SRC:format("meta-llama/Llama-3.1-70B", "70B"),
    config = { model_type = "llama", hidden_size = 8192, intermediate_size = 28672,
      num_hidden_layers = 80, num_attention_heads = 64, num_key_value_heads = 8,
      vocab_size = 128256, max_position_embeddings = 131072, tie_word_embeddings = false },
  },
  ["llama-3.1-405b"] = {
    hf_id = "meta-llama/Llama-3.1-405B",
    published_params = 405853388800,
    source = META_SRC:format("meta-llama/Llama-3.1-405B", "405B"),
    config = { model_type = "llama", hidden_size = 16384, intermediate_size = 53248,
      num_hidden_layers = 126, num_attention_heads = 128, num_key_value_heads = 8,
      vocab_size = 128256, max_position_embeddings = 131072, tie_word_embeddings = false },
  },
  ["llama-3.2-1b"] = {
    hf_id = "meta-llama/Llama-3.2-1B",
    published_params = 1235814400,
    source = META_SRC:format("meta-llama/Llama-3.2-1B", "1.23B"),
    config = { model_type = "llama", hidden_size = 2048, intermediate_size = 8192,
      num_hidden_layers = 16, num_attention_heads = 32, num_key_value_heads = 8,
      head_dim = 64, vocab_size = 128256, max_position_embeddings = 131072,
      tie_word_embeddings = true },
  },
  ["llama-3.2-3b"] = {
    hf_id = "meta-llama/Llama-3.2-3B",
    published_params = 3212749824,
    source = META_SRC:format("meta-llama/Llama-3.2-3B", "3.21B"),
    config = { model_type = "llama", hidden_size = 3072, intermediate_size = 8192,
      num_hidden_layers = 28, num_attention_heads = 24, num_key_value_heads = 8,
      head_dim = 128, vocab_size = 128256, max_position_embeddings = 131072,
      tie_word_embeddings = true },
  },
  ["mistral-7b"] = {
    hf_id = "mistralai/Mistral-7B-v0.1",
    published_params = 7241732096,
    source = "Hugging Face Hub parameter count of mistralai/Mistral-7B-v0.1 " ..
      "(safetensors metadata); Mistral AI's announcement rounds to 7.3B",
    config = { model_type = "mistral", hidden_size = 4096, intermediate_size = 14336,
      num_hidden_layers = 32, num_attention_heads = 32, num_key_value_heads = 8,
      vocab_size = 32000, max_position_embeddings = 32768, tie_word_embeddings = false },
  },
  ["mistral-7b-v0.3"] = {
    hf_id = "mistralai/Mistral-7B-v0.3",
    published_params = 7248023552,
    source = "Hugging Face Hub parameter count of mistralai/Mistral-7B-v0.3 " ..
      "(safetensors metadata; vocabulary extended to 32768)",
    config = { model_type = "mistral", hidden_size = 4096, intermediate_size = 14336,
      num_hidden_layers = 32, num_attention_heads = 32, num_key_value_heads = 8,
      vocab_size = 32768, max_position_embeddings = 32768, tie_word_embeddings = false },
  },
  ["qwen2.5-0.5b"] = {
    hf_id = "Qwen/Qwen2.5-0.5B",
    published_params = 494032768,
    source = QWEN_SRC:format("Qwen2.5-0.5B", "0.49B",
      "494M"),
    config = { model_type = "qwen2", hidden_size = 896, intermediate_size = 4864,
      num_hidden_layers = 24, num_attention_heads = 14, num_key_value_heads = 2,
      vocab_size = 151936, max_position_embeddings = 32768, tie_word_embeddings = true },
  },
  ["qwen2.5-1.5b"] = {
    hf_id = "Qwen/Qwen2.5-1.5B",
    published_params = 1543714304,
    source = QWEN_SRC:format("Qwen2.5-1.5B", "1.54B",
      "1.54B"),
    config = { model_type = "qwen2", hidden_size = 1536, intermediate_size = 8960,
      num_hidden_layers = 28, num_attention_heads = 12, num_key_value_heads = 2,
      vocab_size = 151936, max_position_embeddings = 131072, tie_word_embeddings = true },
  },
  ["qwen2.5-3b"] = {
    hf_id = "Qwen/Qwen2.5-3B",
    published_params = 3085938688,
    source = QWEN_SRC:format("Qwen2.5-3B", "3.09B",
      "3.09B"),
    config = { model_type = "qwen2", hidden_size = 2048, intermediate_size = 11008,
      num_hidden_layers = 36, num_attention_heads = 16, num_key_value_heads = 2,
      vocab_size = 151936, max_position_embeddings = 32768, tie_word_embeddings = true },
  },
  ["qwen2.5-7b"] = {
    hf_id = "Qwen/Qwen2.5-7B",
    published_params = 7615616512,
    source = QWEN_SRC:format("Qwen2.5-7B", "7.61B",
      "7.62B; Open LLM Leaderboard request files: 7.616B"),
    config = { model_type = "qwen2", hidden_size = 3584, intermediate_size = 18944,
      num_hidden_layers = 28, num_attention_heads = 28, num_key_value_heads = 4,
      vocab_size = 152064, max_position_embeddings = 131072, tie_word_embeddings = false },
  },
  ["qwen2.5-14b"] = {
    hf_id = "Qwen/Qwen2.5-14B",
    published_params = 14770033664,
    source = QWEN_SRC:format("Qwen2.5-14B", "14.7B",
      "14.8B"),
    config = { model_type = "qwen2", hidden_size = 5120, intermediate_size = 13824,
      num_hidden_layers = 48, num_attention_heads = 40, num_key_value_heads = 8,
      vocab_size = 152064, max_position_embeddings = 131072, tie_word_embeddings = false },
  },
  ["qwen2.5-32b"] = {
    hf_id = "Qwen/Qwen2.5-32B",
    published_params = 32763876352,
    source = QWEN_SRC:format("Qwen2.5-32B", "32.5B",
      "32.8B; leaderboard request files: 32.764B"),
    config = { model_type = "qwen2", hidden_size = 5120, intermediate_size = 27648,
      num_hidden_layers = 64, num_attention_heads = 40, num_key_value_heads = 8,
      vocab_size = 152064, max_position_embeddings = 131072, tie_word_embeddings = false },
  },
  ["qwen2.5-72b"] = {
    hf_id = "Qwen/Qwen2.5-72B",
    published_params = 72706203648,
    source = QWEN_SRC:format("Qwen2.5-72B", "72.7B",
      "72.7B; leaderboard request files for Qwen2-72B, same shapes: 72.706B"),
    config = { model_type = "qwen2", hidden_size = 8192, intermediate_size = 29568,
      num_hidden_layers = 80, num_attention_heads = 64, num_key_value_heads = 8,
      vocab_size = 152064, max_position_embeddings = 131072, tie_word_embeddings = false },
  },
  -- Mixture-of-experts models: config.json fields as on the Hub; the total
  -- and where it comes from, then the active count the authors publish
  -- (dsforge computes the active count, deepspeed.models_moe).
  ["mixtral-8x7b"] = {
    hf_id = "mistralai/Mixtral-8x7B-v0.1",
    published_params = 46702792704,
    source = "Hugging Face Hub parameter count of mistralai/Mixtral-8x7B-v0.1 " ..
      "(safetensors metadata); Mistral AI's announcement and the Mixtral paper " ..
      "(arXiv:2401.04088): 46.7B total, 12.9B active per token",
    config = { model_type = "mixtral", hidden_size = 4096, intermediate_size = 14336,
      num_hidden_layers = 32, num_attention_heads = 32, num_key_value_heads = 8,
      num_local_experts = 8, num_experts_per_tok = 2,
      vocab_size = 32000, max_position_embeddings = 32768, tie_word_embeddings = false },
  },
  ["mixtral-8x22b"] = {
    hf_id = "mistralai/Mixtral-8x22B-v0.1",
    published_params = 140630071296,
    source = "Hugging Face Hub parameter count of mistralai/Mixtral-8x22B-v0.1 " ..
      "(safetensors metadata); Mistral AI's announcement: 141B total, 39B active",
    config = { model_type = "mixtral", hidden_size = 6144, intermediate_size = 16384,
      num_hidden_layers = 56, num_attention_heads = 48, num_key_value_heads = 8,
      num_local_experts = 8, num_experts_per_tok = 2,
      vocab_size = 32768, max_position_embeddings = 65536, tie_word_embeddings = false },
  },
  ["deepseek-moe-16b"] = {
    hf_id = "deepseek-ai/deepseek-moe-16b-base",
    published_params = 16375728128,
    source = "Hugging Face Hub parameter count of deepseek-ai/deepseek-moe-16b-base " ..
      "(safetensors metadata); the DeepSeekMoE paper (arXiv:2401.06066): 16.4B total, " ..
      "2.8B activated",
    config = { model_type = "deepseek", hidden_size = 2048, intermediate_size = 10944,
      moe_intermediate_size = 1408, num_hidden_layers = 28, num_attention_heads = 16,
      num_key_value_heads = 16, n_routed_experts = 64, n_shared_experts = 2,
      num_experts_per_tok = 6, first_k_dense_replace = 1, moe_layer_freq = 1,
      vocab_size = 102400, max_position_embeddings = 4096, tie_word_embeddings = false },
  },
  ["qwen1.5-moe-a2.7b"] = {
    hf_id = "Qwen/Qwen1.5-MoE-A2.7B",
    published_params = 14315784192,
    source = "Hugging Face Hub parameter count of Qwen/Qwen1.5-MoE-A2.7B (safetensors " ..
      "metadata); the model card: \"14.3B parameters in total and 2.7B activated\"",
    config = { model_type = "qwen2_moe", hidden_size = 2048, intermediate_size = 5632,
      moe_intermediate_size = 1408, shared_expert_intermediate_size = 5632,
      num_hidden_layers = 24, num_attention_heads = 16, num_key_value_heads = 16,
      num_experts = 60, num_experts_per_tok = 4, decoder_sparse_step = 1,
      vocab_size = 151936, max_position_embeddings = 8192, tie_word_embeddings = false },
  },
  ["qwen3-30b-a3b"] = {
    hf_id = "Qwen/Qwen3-30B-A3B",
    published_params = 30532122624,
    source = "Hugging Face Hub parameter count of Qwen/Qwen3-30B-A3B (safetensors " ..
      "metadata); the model card: \"Number of Parameters: 30.5B in total and 3.3B activated\"",
    config = { model_type = "qwen3_moe", hidden_size = 2048, intermediate_size = 6144,
      moe_intermediate_size = 768, num_hidden_layers = 48, num_attention_heads = 32,
      num_key_value_heads = 4, head_dim = 128, num_experts = 128, num_experts_per_tok = 8,
      decoder_sparse_step = 1, vocab_size = 151936, max_position_embeddings = 40960,
      tie_word_embeddings = false },
  },
  ["gpt2"] = {
    hf_id = "openai-community/gpt2",
    published_params = 124439808,
    source = "transformers GPT2LMHeadModel(openai-community/gpt2).num_parameters(); " ..
      "the GPT-2 paper's table says 117M",
    config = { model_type = "gpt2", n_embd = 768, n_layer = 12, n_head = 12,
      n_positions = 1024, vocab_size = 50257 },
  },
  ["gpt2-medium"] = {
    hf_id = "openai-community/gpt2-medium",
    published_params = 354823168,
    source = "transformers GPT2LMHeadModel(openai-community/gpt2-medium).num_parameters(); " ..
      "the GPT-2 paper's table says 345M",
    config = { model_type = "gpt2", n_embd = 1024, n_layer = 24, n_head = 16,
      n_positions = 1024, vocab_size = 50257 },
  },
  ["gpt2-large"] = {
    hf_id = "openai-community/gpt2-large",
    published_params = 774030080,
    source = "transformers GPT2LMHeadModel(openai-community/gpt2-large).num_parameters(); " ..
      "the GPT-2 paper's table says 762M",
    config = { model_type = "gpt2", n_embd = 1280, n_layer = 36, n_head = 20,
      n_positions = 1024, vocab_size = 50257 },
  },
  ["gpt2-xl"] = {
    hf_id = "openai-community/gpt2-xl",
    published_params = 1557611200,
    source = "transformers GPT2LMHeadModel(openai-community/gpt2-xl).num_parameters(); " ..
      "the GPT-2 paper's table says 1542M",
    config = { model_type = "gpt2", n_embd = 1600, n_layer = 48, n_head = 25,
      n_positions = 1024, vocab_size = 50257 },
  },
  ["t5-large"] = {
    hf_id = "google-t5/t5-large",
    published_params = 737668096,
    source = "DeepSpeed docs/code-docs/source/memory.rst, live t5-large: " ..
      "\"total params: 737.67M, largest layer params: 32.90M\" (T5 paper: ~770M)",
    config = { model_type = "t5", d_model = 1024, d_ff = 4096, d_kv = 64, num_heads = 16,
      num_layers = 24, vocab_size = 32128, n_positions = 512,
      relative_attention_num_buckets = 32, feed_forward_proj = "relu" },
  },
  ["t5-3b"] = {
    hf_id = "google-t5/t5-3b",
    published_params = 2851598336,
    source = "DeepSpeed docs/code-docs/source/memory.rst, live t5-3b: \"2851M total " ..
      "params, 32M largest layer params\"; exact count of T5ForConditionalGeneration",
    config = { model_type = "t5", d_model = 1024, d_ff = 16384, d_kv = 128, num_heads = 32,
      num_layers = 24, vocab_size = 32128, n_positions = 512,
      relative_attention_num_buckets = 32, feed_forward_proj = "relu" },
  },
}

local names, by_hf_id = {}, {}
for name, e in next, CATALOG do
  names[#names + 1] = name
  by_hf_id[e.hf_id:lower()] = name
end
table.sort(names)

return { models = CATALOG, names = names, by_hf_id = by_hf_id }
