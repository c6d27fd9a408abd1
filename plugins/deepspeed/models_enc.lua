-- plugins/deepspeed/models_enc.lua -- parameter counts of the GPT-2 and T5
-- architectures from their config.json, for deepspeed.models (loaded only
-- for them: the catalog's llama-like models and most configs do not need
-- it). count(cfg, arch, helpers) returns the entry fields from_hf_config
-- documents; helpers are models.lua's config.json readers.

local M = {}

local req, opt, opt_bool, field, largest

local function gpt2(cfg)
  local arch = "gpt2"
  local h = req(cfg, "n_embd", arch, "hidden_size")
  local L = req(cfg, "n_layer", arch, "num_hidden_layers")
  local a = req(cfg, "n_head", arch, "num_attention_heads")
  local P = req(cfg, "n_positions", arch, "max_position_embeddings")
  local V = req(cfg, "vocab_size", arch)
  local I = opt(cfg, "n_inner", arch, 4 * h)
  local tie = opt_bool(cfg, "tie_word_embeddings", arch, true)
  if opt_bool(cfg, "add_cross_attention", arch, false) then
    error("config.json (gpt2): add_cross_attention = true is not supported", 2)
  end
  if h % a ~= 0 then
    error(("config.json (gpt2): n_embd %d is not a multiple of n_head %d"):format(h, a), 2)
  end
  local c_attn = h * 3 * h + 3 * h
  local attn_proj = h * h + h
  local c_fc = h * I + I
  local mlp_proj = I * h + h
  local layer = 2 * h + c_attn + attn_proj + 2 * h + c_fc + mlp_proj
  local wte, wpe = V * h, P * h
  local params = wte + wpe + L * layer + 2 * h + (tie and 0 or V * h)
  local big, big_name = largest({
    { "transformer.wte", wte }, { "lm_head", V * h }, { "transformer.wpe", wpe },
    { "attn.c_attn", c_attn }, { "attn.c_proj", attn_proj }, { "mlp.c_fc", c_fc },
    { "mlp.c_proj", mlp_proj }, { "ln_f", 2 * h },
  })
  return {
    arch = arch, params = params, largest_layer = big, largest_layer_name = big_name,
    hidden_size = h, layers = L, heads = a, kv_heads = a, head_dim = h // a,
    intermediate_size = I, vocab = V, context = P, tie_word_embeddings = tie,
  }
end

local function t5(cfg)
  local arch = "t5"
  local dm = req(cfg, "d_model", arch)
  local F = req(cfg, "d_ff", arch)
  local dk = req(cfg, "d_kv", arch)
  local H = req(cfg, "num_heads", arch)
  local Le = req(cfg, "num_layers", arch)
  local Ld = opt(cfg, "num_decoder_layers", arch, Le)
  local V = req(cfg, "vocab_size", arch)
  local B = opt(cfg, "relative_attention_num_buckets", arch, 32)
  local ffp = field(cfg, "feed_forward_proj") or "relu"
  if type(ffp) ~= "string" then
    error("config.json (t5): 'feed_forward_proj' must be a string, got " .. tostring(ffp), 2)
  end
  local gated = ffp:sub(1, 6) == "gated-"
  local tie = opt_bool(cfg, "tie_word_embeddings", arch, true)
  local inner = H * dk
  local attn = 3 * dm * inner + inner * dm
  local wi = dm * F
  local ff = (gated and 2 or 1) * wi + F * dm
  local rel = B * H
  local enc_layer = attn + ff + 2 * dm
  local dec_layer = 2 * attn + ff + 3 * dm
  local shared = V * dm
  local params = shared + Le * enc_layer + rel + dm + Ld * dec_layer + rel + dm +
    (tie and 0 or V * dm)
  local big, big_name = largest({
    { "shared", shared }, { "lm_head", V * dm },
    { "SelfAttention.q", dm * inner }, { "SelfAttention.o", inner * dm },
    { gated and "DenseReluDense.wi_0" or "DenseReluDense.wi", wi },
    { "DenseReluDense.wo", F * dm }, { "relative_attention_bias", rel },
    { "layer_norm", dm },
  })
  return {
    arch = arch, params = params, largest_layer = big, largest_layer_name = big_name,
    hidden_size = dm, layers = Le + Ld, encoder_layers = Le, decoder_layers = Ld,
    heads = H, kv_heads = H, head_dim = dk, intermediate_size = F, vocab = V,
    context = opt(cfg, "n_positions", arch, 512), tie_word_embeddings = tie,
  }
end

function M.count(cfg, arch, helpers)
  req, opt, opt_bool = helpers.req, helpers.opt, helpers.opt_bool
  field, largest = helpers.field, helpers.largest
  if arch == "gpt2" then return gpt2(cfg) end
  return t5(cfg)
end

return M
