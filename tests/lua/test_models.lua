-- Tests for plugins/deepspeed/models.lua.
--
-- Published totals checked exactly: Llama-2-7B 6,738,415,616, Mistral-7B
-- 7,241,732,096, GPT-2 124,439,808, Llama-3-8B 8,030,261,248, T5-3B
-- 2,851,598,336 (DeepSpeed memory.rst: 2851M params, 32M largest layer),
-- T5-large 737.67M / 32.90M (memory.rst). Small configs are hand-computed in
-- the comments next to them.

local function models() return require("deepspeed.models") end

local REQUIRED = {
  "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b",
  "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b",
  "mistral-7b", "qwen2.5-7b", "qwen2.5-72b", "gpt2", "gpt2-medium", "gpt2-large",
  "gpt2-xl", "t5-large", "t5-3b",
}

local FIELDS = {
  "params", "largest_layer", "hidden_size", "layers", "heads", "kv_heads",
  "intermediate_size", "vocab", "context", "tie_word_embeddings", "arch",
  "published_params", "source", "hf_config", "name", "hf_id",
}

-- config.json of meta-llama/Llama-3.2-1B as decoded by dsforge (floats,
-- nested objects, arrays and nulls included).
local function llama32_1b_config()
  return {
    architectures = { "LlamaForCausalLM" }, attention_bias = false, attention_dropout = 0.0,
    bos_token_id = 128000, eos_token_id = 128001, head_dim = 64, hidden_act = "silu",
    hidden_size = 2048, initializer_range = 0.02, intermediate_size = 8192,
    max_position_embeddings = 131072, mlp_bias = false, model_type = "llama",
    num_attention_heads = 32, num_hidden_layers = 16, num_key_value_heads = 8,
    pretraining_tp = 1, rms_norm_eps = 1e-05,
    rope_scaling = { factor = 32.0, high_freq_factor = 4.0, low_freq_factor = 1.0,
      original_max_position_embeddings = 8192, rope_type = "llama3" },
    rope_theta = 500000.0, tie_word_embeddings = true, torch_dtype = "bfloat16",
    transformers_version = "4.45.0.dev0", use_cache = true, vocab_size = 128256,
  }
end

return {
  catalog_has_the_required_models_with_all_fields = function()
    local m = models()
    for _, name in ipairs(REQUIRED) do
      local e = m.get(name)
      T.truthy(e, "missing catalog entry " .. name)
      for _, f in ipairs(FIELDS) do
        T.truthy(e[f] ~= nil, name .. " lacks field " .. f)
      end
      T.eq(e.name, name)
      T.eq(math.type(e.params), "integer")
      T.eq(math.type(e.largest_layer), "integer")
      T.truthy(e.largest_layer < e.params)
      T.truthy(#e.source > 10, name .. " needs a source text")
    end
  end,

  every_catalog_count_is_within_half_a_percent_of_the_published_figure = function()
    local m = models()
    for _, name in ipairs(m.names()) do
      local e = m.get(name)
      T.near(e.params, e.published_params, 0.005, name)
    end
  end,

  exact_published_totals = function()
    local m = models()
    T.eq(m.get("llama-2-7b").params, 6738415616)
    T.eq(m.get("llama-2-13b").params, 13015864320)
    T.eq(m.get("llama-2-70b").params, 68976648192)
    T.eq(m.get("llama-3-8b").params, 8030261248)
    T.eq(m.get("llama-3.1-8b").params, 8030261248)
    T.eq(m.get("llama-3-70b").params, 70553706496)
    T.eq(m.get("llama-3.1-405b").params, 405853388800)
    T.eq(m.get("llama-3.2-1b").params, 1235814400)
    T.eq(m.get("llama-3.2-3b").params, 3212749824)
    T.eq(m.get("mistral-7b").params, 7241732096)
    T.eq(m.get("gpt2").params, 124439808)
    T.eq(m.get("gpt2-medium").params, 354823168)
    T.eq(m.get("gpt2-large").params, 774030080)
    T.eq(m.get("gpt2-xl").params, 1557611200)
    T.eq(m.get("t5-3b").params, 2851598336)
    T.eq(m.get("t5-large").params, 737668096)
    -- Qwen's model card: 7.61B and 72.7B
    T.near(m.get("qwen2.5-7b").params, 7.61e9, 0.005)
    T.near(m.get("qwen2.5-72b").params, 72.7e9, 0.005)
  end,

  largest_layers_match_deepspeed_all_live = function()
    local m = models()
    -- memory.rst: t5-3b "32M largest layer params"; t5-large "32.90M" (shared embedding)
    T.eq(m.get("t5-3b").largest_layer, 32899072)
    T.eq(m.get("t5-3b").largest_layer_name, "shared")
    T.eq(string.format("%.2fM", m.get("t5-large").largest_layer / 1e6), "32.90M")
    T.eq(m.get("gpt2").largest_layer, 50257 * 768)
    T.eq(m.get("llama-2-7b").largest_layer, 32000 * 4096)
    T.eq(m.get("llama-3.1-405b").largest_layer, 128256 * 16384)
    T.eq(m.get("llama-2-70b").largest_layer, 32000 * 8192) -- > down_proj 28672*8192
  end,

  catalog_agrees_with_from_hf_config_by_construction = function()
    local m = models()
    for _, name in ipairs(m.names()) do
      local e = m.get(name)
      local c = m.from_hf_config(e.hf_config)
      for _, f in ipairs({ "params", "largest_layer", "hidden_size", "layers", "heads",
          "kv_heads", "intermediate_size", "vocab", "context", "tie_word_embeddings", "arch" }) do
        T.eq(c[f], e[f], name .. "." .. f)
      end
    end
  end,

  catalog_shapes = function()
    local m = models()
    local e = m.get("llama-3-70b")
    T.eq({ e.arch, e.hidden_size, e.layers, e.heads, e.kv_heads, e.intermediate_size, e.vocab,
      e.context, e.tie_word_embeddings },
      { "llama", 8192, 80, 64, 8, 28672, 128256, 8192, false })
    local g = m.get("gpt2-xl")
    T.eq({ g.arch, g.hidden_size, g.layers, g.heads, g.kv_heads, g.intermediate_size, g.vocab,
      g.context, g.tie_word_embeddings }, { "gpt2", 1600, 48, 25, 25, 6400, 50257, 1024, true })
    local t = m.get("t5-3b")
    T.eq({ t.arch, t.hidden_size, t.layers, t.encoder_layers, t.decoder_layers, t.heads,
      t.intermediate_size, t.vocab, t.context }, { "t5", 1024, 48, 24, 24, 32, 16384, 32128, 512 })
    T.eq(m.get("qwen2.5-7b").arch, "qwen2")
    T.eq(m.get("mistral-7b").arch, "mistral")
    T.eq(m.get("llama-3.2-1b").tie_word_embeddings, true)
    T.eq(m.get("qwen2.5-72b").kv_heads, 8)
  end,

  get_is_case_insensitive_accepts_hub_ids_and_returns_copies = function()
    local m = models()
    T.eq(m.get("GPT2-XL").name, "gpt2-xl")
    T.eq(m.get("Llama-3.1-8B").name, "llama-3.1-8b")
    T.eq(m.get("meta-llama/Llama-2-7b-hf").name, "llama-2-7b")
    T.eq(m.get("mistralai/mistral-7b-v0.1").name, "mistral-7b")
    T.eq(m.get("no-such-model"), nil)
    T.eq(m.get(nil), nil)
    local a = m.get("gpt2")
    a.params = 1
    a.hf_config.n_embd = 1
    T.eq(m.get("gpt2").params, 124439808)
    T.eq(m.get("gpt2").hf_config.n_embd, 768)
  end,

  names_are_sorted_and_complete = function()
    local m = models()
    local names = m.names()
    for i = 2, #names do T.truthy(names[i - 1] < names[i], "sorted") end
    local set = {}
    for _, n in ipairs(names) do set[n] = true end
    for _, n in ipairs(REQUIRED) do T.truthy(set[n], n) end
    names[1] = "changed"
    T.truthy(m.names()[1] ~= "changed", "names() returns a fresh list")
  end,

  suggest_close_names = function()
    local m = models()
    T.eq(m.suggest("llama2-7b")[1], "llama-2-7b")
    T.eq(m.suggest("gpt-2")[1], "gpt2")
    T.eq(m.suggest("lama-3-8b")[1], "llama-3-8b")
    T.eq(m.suggest("qwen2.5-7B")[1], "qwen2.5-7b")
    T.eq(m.suggest("mistral")[1], "mistral-7b")
    T.eq(m.suggest("meta-llama/Llama-3.1-8b-instruct")[1], "llama-3.1-8b")
    T.eq(m.suggest("t5-3B"), { "t5-3b" })
    T.eq(m.suggest("zzzzzzzzzzzzzzzzzzzz"), {})
    T.eq(#m.suggest("llama"), 3)
    T.truthy(#m.suggest("gpt2-x") <= 3)
    T.eq(m.suggest("gpt2-x")[1], "gpt2-xl")
    T.eq(m.edit_distance("kitten", "sitting"), 3)
    T.eq(m.edit_distance("", "abc"), 3)
  end,

  real_llama_3_2_config_json = function()
    local m = models()
    local e = m.from_hf_config(llama32_1b_config())
    T.eq(e.params, 1235814400)
    T.eq(e.largest_layer, 128256 * 2048)
    T.eq(e.head_dim, 64)
    T.eq(e.context, 131072)
    -- untie: lm_head adds V*h
    local c = llama32_1b_config()
    c.tie_word_embeddings = false
    T.eq(m.from_hf_config(c).params, 1235814400 + 128256 * 2048)
    -- no model_type: architectures[1] decides
    c = llama32_1b_config()
    c.model_type = nil
    T.eq(m.from_hf_config(c).arch, "llama")
  end,

  real_qwen2_5_7b_instruct_config_with_nulls = function()
    local m = models()
    local cfg = {
      architectures = { "Qwen2ForCausalLM" }, attention_dropout = 0.0, bos_token_id = 151643,
      eos_token_id = 151645, hidden_act = "silu", hidden_size = 3584, initializer_range = 0.02,
      intermediate_size = 18944, max_position_embeddings = 32768, max_window_layers = 28,
      model_type = "qwen2", num_attention_heads = 28, num_hidden_layers = 28,
      num_key_value_heads = 4, rms_norm_eps = 1e-06, rope_scaling = dsforge.null,
      rope_theta = 1000000.0, sliding_window = dsforge.null, tie_word_embeddings = false,
      torch_dtype = "bfloat16", transformers_version = "4.43.1", use_cache = true,
      use_sliding_window = false, vocab_size = 152064,
    }
    local e = m.from_hf_config(cfg)
    T.eq(e.params, 7615616512)
    T.eq(e.context, 32768)
    T.eq(e.largest_layer, 152064 * 3584)
    -- a null num_key_value_heads means "same as num_attention_heads"
    cfg.num_key_value_heads = dsforge.null
    T.eq(m.from_hf_config(cfg).kv_heads, 28)
  end,

  real_gpt2_config_json = function()
    local m = models()
    local cfg = {
      activation_function = "gelu_new", architectures = { "GPT2LMHeadModel" }, attn_pdrop = 0.1,
      bos_token_id = 50256, embd_pdrop = 0.1, eos_token_id = 50256, initializer_range = 0.02,
      layer_norm_epsilon = 1e-05, model_type = "gpt2", n_ctx = 1024, n_embd = 768, n_head = 12,
      n_inner = dsforge.null, n_layer = 12, n_positions = 1024, resid_pdrop = 0.1,
      summary_activation = dsforge.null, summary_first_dropout = 0.1,
      summary_proj_to_labels = true, summary_type = "cls_index", summary_use_proj = true,
      task_specific_params = { ["text-generation"] = { do_sample = true, max_length = 50 } },
      vocab_size = 50257,
    }
    local e = m.from_hf_config(cfg)
    T.eq(e.params, 124439808)
    T.eq(e.intermediate_size, 3072)
    T.eq(e.largest_layer_name, "transformer.wte")
  end,

  real_t0_3b_config_gated_and_untied = function()
    -- bigscience/T0_3B (T5 v1.1 LM-adapted XL): gated-gelu, untied lm_head.
    -- shared 32128*2048 = 65,798,144 (+ the same for lm_head); attention
    -- 4*2048*2048 = 16,777,216; gated FF 2*2048*5120 + 5120*2048 = 31,457,280;
    -- encoder 24*(16,777,216 + 31,457,280 + 2*2048) + 32*32 + 2048 = 1,157,729,280;
    -- decoder 24*(2*16,777,216 + 31,457,280 + 3*2048) + 1024 + 2048 = 1,560,431,616;
    -- total 1,157,729,280 + 1,560,431,616 + 2*65,798,144 = 2,849,757,184.
    local m = models()
    local cfg = {
      architectures = { "T5ForConditionalGeneration" }, d_ff = 5120, d_kv = 64, d_model = 2048,
      decoder_start_token_id = 0, dense_act_fn = "gelu_new", dropout_rate = 0.1, eos_token_id = 1,
      feed_forward_proj = "gated-gelu", initializer_factor = 1.0, is_encoder_decoder = true,
      is_gated_act = true, layer_norm_epsilon = 1e-06, model_type = "t5", num_decoder_layers = 24,
      num_heads = 32, num_layers = 24, output_past = true, pad_token_id = 0,
      relative_attention_max_distance = 128, relative_attention_num_buckets = 32,
      tie_word_embeddings = false, torch_dtype = "bfloat16", use_cache = false, vocab_size = 32128,
    }
    local e = m.from_hf_config(cfg)
    T.eq(e.params, 2849757184)
    T.eq(e.largest_layer, 65798144)
    T.eq(e.context, 512) -- no n_positions: T5's default
  end,

  tiny_llama_mistral_qwen2_hand_counts = function()
    local m = models()
    -- h=8, a=2, kv=1 (d=4), I=16, L=2, V=10, untied:
    -- q 64, k 32, v 32, o 64, gate/up/down 128 each, norms 16 -> layer 592
    -- embed 80 + 2*592 + final norm 8 + lm_head 80 = 1352
    local base = { model_type = "llama", hidden_size = 8, num_attention_heads = 2,
      num_key_value_heads = 1, intermediate_size = 16, num_hidden_layers = 2, vocab_size = 10 }
    local e = m.from_hf_config(base)
    T.eq(e.params, 1352)
    T.eq(e.largest_layer, 128)
    T.eq(e.largest_layer_name, "mlp.gate_proj")
    T.eq(e.context, nil)
    base.model_type = "mistral"
    T.eq(m.from_hf_config(base).params, 1352)
    -- qwen2: q/k/v biases 8 + 4 + 4 per layer -> 1352 + 2*16
    base.model_type = "qwen2"
    T.eq(m.from_hf_config(base).params, 1384)
    -- llama with attention_bias (q,k,v,o: 8+4+4+8) and mlp_bias (16+16+8): +64/layer
    base.model_type = "llama"
    base.attention_bias = true
    base.mlp_bias = true
    T.eq(m.from_hf_config(base).params, 1480)
    base.tie_word_embeddings = true
    T.eq(m.from_hf_config(base).params, 1400)
    -- explicit head_dim overrides h/a: d=8 -> q 128, k 64, v 64, o 128 (no biases)
    local hd = { model_type = "llama", hidden_size = 8, num_attention_heads = 2,
      num_key_value_heads = 1, head_dim = 8, intermediate_size = 16, num_hidden_layers = 1,
      vocab_size = 10 }
    T.eq(m.from_hf_config(hd).params, 80 + (128 + 64 + 64 + 128 + 384 + 16) + 8 + 80)
  end,

  tiny_gpt2_hand_counts = function()
    local m = models()
    -- h=4, L=1, a=2, n_positions=6, V=10, n_inner=16:
    -- c_attn 4*12+12=60, attn.c_proj 20, c_fc 64+16=80, mlp.c_proj 64+4=68, ln 16
    -- layer 244; wte 40 + wpe 24 + 244 + ln_f 8 = 316
    local cfg = { model_type = "gpt2", n_embd = 4, n_layer = 1, n_head = 2, n_positions = 6,
      vocab_size = 10, n_inner = 16 }
    local e = m.from_hf_config(cfg)
    T.eq(e.params, 316)
    T.eq(e.largest_layer, 80)
    cfg.tie_word_embeddings = false
    T.eq(m.from_hf_config(cfg).params, 356)
  end,

  tiny_t5_hand_counts = function()
    local m = models()
    -- d=4, F=6, d_kv=2, H=2 (inner 4), enc 1, dec 2, V=10, buckets 3, relu, tied:
    -- attention 3*16+16 = 64; FF 24+24 = 48; encoder layer 64+48+8 = 120;
    -- decoder layer 128+48+12 = 188; rel bias 6 each; final norms 4 each
    -- 40 + 120 + 6 + 4 + 2*188 + 6 + 4 = 556
    local cfg = { model_type = "t5", d_model = 4, d_ff = 6, d_kv = 2, num_heads = 2,
      num_layers = 1, num_decoder_layers = 2, vocab_size = 10,
      relative_attention_num_buckets = 3 }
    local e = m.from_hf_config(cfg)
    T.eq(e.params, 556)
    T.eq(e.layers, 3)
    cfg.feed_forward_proj = "gated-gelu" -- +24 per layer
    T.eq(m.from_hf_config(cfg).params, 628)
    cfg.tie_word_embeddings = false
    T.eq(m.from_hf_config(cfg).params, 668)
  end,

  incomplete_or_unsupported_configs_raise_clear_errors = function()
    local m = models()
    local c = llama32_1b_config()
    c.num_hidden_layers = nil
    T.errors(function() m.from_hf_config(c) end,
      "config.json (llama) is missing the required field 'num_hidden_layers'")
    c = llama32_1b_config()
    c.vocab_size = dsforge.null
    T.errors(function() m.from_hf_config(c) end, "missing the required field 'vocab_size'")
    c = llama32_1b_config()
    c.hidden_size = "2048"
    T.errors(function() m.from_hf_config(c) end, "'hidden_size' must be a positive integer")
    c = llama32_1b_config()
    c.tie_word_embeddings = "yes"
    T.errors(function() m.from_hf_config(c) end, "'tie_word_embeddings' must be true or false")
    T.errors(function() m.from_hf_config({ model_type = "bert", hidden_size = 768 }) end,
      "unsupported model_type 'bert' (supported: gpt2, llama, mistral, qwen2, t5, " ..
      "and with experts mixtral, qwen2_moe, qwen3_moe, deepseek)")
    T.errors(function() m.from_hf_config({ architectures = { "BertModel" } }) end,
      "unsupported architecture 'BertModel'")
    T.errors(function() m.from_hf_config({ hidden_size = 8 }) end,
      "missing the required field 'model_type'")
    T.errors(function() m.from_hf_config({ model_type = "gpt2", n_embd = 8, n_layer = 1,
      n_head = 2, vocab_size = 10 }) end, "config.json (gpt2) is missing the required field 'n_positions'")
    T.errors(function() m.from_hf_config({ model_type = "t5", d_model = 8, d_ff = 8,
      num_heads = 2, num_layers = 1, vocab_size = 10 }) end, "missing the required field 'd_kv'")
    T.errors(function() m.from_hf_config({ model_type = "llama", hidden_size = 10,
      num_attention_heads = 4, intermediate_size = 8, num_hidden_layers = 1, vocab_size = 5 }) end,
      "is not a multiple of num_attention_heads")
    T.errors(function() m.from_hf_config("config.json") end, "expected the decoded config.json table")
  end,

  -- Issue 33: mixture-of-experts models. Tiny configs, hand-computed below
  -- (shapes in models_moe.lua's header); d = head_dim = h / heads.
  moe_mixtral_tiny_config_by_hand = function()
    -- h 8, 2 layers, 2 heads (d 4), 1 KV head, expert width 16, 4 experts, top 2, V 10
    -- attention q 8*8 + k 8*4 + v 8*4 + o 8*8 = 192, norms 2*8 -> 208
    -- experts 4 * 3*8*16 = 1536, router 8*4 = 32 -> 1568; layer 1776, x2 = 3552
    -- embed 80 + lm_head 80 + final norm 8 -> 3720
    -- routed expert params 2 layers * 4 * 384 = 3072; active 3720 - 2*(4-2)*384 = 2184
    local e = models().from_hf_config({ architectures = { "MixtralForCausalLM" },
      hidden_size = 8, num_hidden_layers = 2, num_attention_heads = 2, num_key_value_heads = 1,
      intermediate_size = 16, num_local_experts = 4, num_experts_per_tok = 2, vocab_size = 10,
      rope_scaling = dsforge.null, router_aux_loss_coef = 0.02 })
    T.eq({ e.arch, e.params, e.expert_params, e.active_params, e.experts, e.experts_per_token,
      e.shared_experts, e.moe_layers, e.active_intermediate, e.largest_layer,
      e.largest_layer_name },
      { "mixtral", 3720, 3072, 2184, 4, 2, 0, 2, 32, 128, "experts.gate_proj" })
  end,

  moe_deepseek_tiny_config_by_hand = function()
    -- h 8, 3 layers, 2 heads (d 4, kv 2), dense width 24, expert width 4,
    -- 4 routed + 2 shared experts, top 2, first_k_dense_replace 1, V 10
    -- attention 4*64 + norms 16 = 272 per layer
    -- layer 0 dense MLP 3*8*24 = 576; layers 1, 2 MoE: router 8*4 = 32,
    -- routed 4 * 3*8*4 = 384, shared one MLP of width 4*2: 3*8*8 = 192 -> 608
    -- 3*272 + 576 + 2*608 + 80 + 80 + 8 = 2776; routed 2*4*96 = 768;
    -- active 2776 - 2*(4-2)*96 = 2392; largest the dense gate_proj 8*24 = 192
    local e = models().from_hf_config({ model_type = "deepseek", hidden_size = 8,
      num_hidden_layers = 3, num_attention_heads = 2, intermediate_size = 24,
      moe_intermediate_size = 4, n_routed_experts = 4, n_shared_experts = 2,
      num_experts_per_tok = 2, first_k_dense_replace = 1, moe_layer_freq = 1, vocab_size = 10 })
    T.eq({ e.params, e.expert_params, e.active_params, e.experts, e.shared_experts, e.moe_layers,
      e.active_intermediate, e.largest_layer, e.largest_layer_name },
      { 2776, 768, 2392, 4, 2, 2, 2 * 4 + 8, 192, "mlp.gate_proj" })
  end,

  moe_qwen2_moe_tiny_config_by_hand = function()
    -- h 8, 2 layers, 2 heads (d 4), 1 KV head, q/k/v biases: q 64+8, k 32+4,
    -- v 32+4, o 64, norms 16 -> 224 per layer. mlp_only_layers [1]: layer 0
    -- MoE (router 32, routed 4*96 = 384, shared expert 3*8*8 = 192, its gate
    -- 8 -> 616), layer 1 dense 3*8*24 = 576. 448 + 616 + 576 + 168 = 1808;
    -- routed 384; active 1808 - 1*(4-2)*96 = 1616
    local e = models().from_hf_config({ model_type = "qwen2_moe", hidden_size = 8,
      num_hidden_layers = 2, num_attention_heads = 2, num_key_value_heads = 1,
      intermediate_size = 24, moe_intermediate_size = 4, shared_expert_intermediate_size = 8,
      num_experts = 4, num_experts_per_tok = 2, decoder_sparse_step = 1,
      mlp_only_layers = { 1 }, vocab_size = 10 })
    T.eq({ e.params, e.expert_params, e.active_params, e.shared_experts, e.moe_layers },
      { 1808, 384, 1616, 1, 1 })
  end,

  moe_qwen3_moe_tiny_config_by_hand = function()
    -- h 8, 1 layer, 2 heads, head_dim 4, 1 KV head, tied embeddings:
    -- q 64 + k 32 + v 32 + o 64 + q_norm/k_norm 4+4 + norms 16 = 216;
    -- router 32 + 4 experts * 96 = 416; embed 80 + final norm 8 -> 720
    local e = models().from_hf_config({ model_type = "qwen3_moe", hidden_size = 8,
      num_hidden_layers = 1, num_attention_heads = 2, num_key_value_heads = 1, head_dim = 4,
      moe_intermediate_size = 4, num_experts = 4, num_experts_per_tok = 2, vocab_size = 10,
      tie_word_embeddings = true })
    T.eq({ e.params, e.expert_params, e.active_params, e.shared_experts },
      { 720, 384, 720 - 2 * 96, 0 })
  end,

  moe_catalog_totals_and_active_counts = function()
    local m = models()
    -- exact Hub totals (catalog.lua sources) ...
    T.eq(m.get("mixtral-8x7b").params, 46702792704)
    T.eq(m.get("mixtral-8x22b").params, 140630071296)
    T.eq(m.get("deepseek-moe-16b").params, 16375728128)
    T.eq(m.get("qwen1.5-moe-a2.7b").params, 14315784192)
    T.eq(m.get("qwen3-30b-a3b").params, 30532122624)
    -- ... and the active counts their authors round: 12.9B, 39B, 2.8B, 2.7B, 3.3B
    T.near(m.get("mixtral-8x7b").active_params, 12.9e9, 0.01)
    T.near(m.get("mixtral-8x22b").active_params, 39e9, 0.01)
    T.near(m.get("deepseek-moe-16b").active_params, 2.8e9, 0.02)
    T.near(m.get("qwen1.5-moe-a2.7b").active_params, 2.7e9, 0.01)
    T.near(m.get("qwen3-30b-a3b").active_params, 3.3e9, 0.02)
    -- by Hub id and by the "-base" spelling's suggestion
    T.eq(m.get("mistralai/Mixtral-8x7B-v0.1").name, "mixtral-8x7b")
    T.eq(m.suggest("deepseek-moe-16b-base")[1], "deepseek-moe-16b")
    T.eq(m.check_param("mixtral-8x7b"), true)
    -- a dense entry has no expert fields
    T.eq(m.get("mistral-7b").experts, nil)
  end,

  moe_config_errors = function()
    local m = models()
    T.errors(function() m.from_hf_config({ model_type = "mixtral", hidden_size = 8,
      num_hidden_layers = 1, num_attention_heads = 2, intermediate_size = 4,
      num_experts_per_tok = 2, vocab_size = 10 }) end,
      "config.json (mixtral) is missing the required field 'num_local_experts'")
    T.errors(function() m.from_hf_config({ model_type = "qwen3_moe", hidden_size = 8,
      num_hidden_layers = 1, num_attention_heads = 2, moe_intermediate_size = 4,
      num_experts = 2, num_experts_per_tok = 3, vocab_size = 10 }) end,
      "num_experts_per_tok 3 exceeds the 2 experts")
    T.errors(function() m.from_hf_config({ model_type = "deepseek", hidden_size = 8,
      num_hidden_layers = 2, num_attention_heads = 2, moe_intermediate_size = 4,
      n_routed_experts = 2, num_experts_per_tok = 1, first_k_dense_replace = 1,
      vocab_size = 10 }) end,
      "config.json (deepseek) is missing the required field 'intermediate_size'")
  end,
}
