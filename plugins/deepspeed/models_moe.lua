-- plugins/deepspeed/models_moe.lua -- parameter counts of mixture-of-experts
-- models from their Hugging Face config.json: the architectures
-- deepspeed.models hands over (it loads this module only for them, so a
-- dense model never loads it). Parameter shapes as in transformers'
-- modeling files (4.x, one module per expert):
--
--   every architecture: token embedding V*h; per layer q_proj h*(a*d),
--     k_proj and v_proj h*(kv*d), o_proj (a*d)*h, two RMSNorms h; final
--     norm h; lm_head V*h unless tie_word_embeddings (default false).
--     d = head_dim or h/a. A SwiGLU MLP of width I is gate/up h*I, down I*h
--     (3*h*I, no biases).
--   mixtral (MixtralSparseMoeBlock): every layer is MoE: router gate h*E,
--     E = num_local_experts experts of width intermediate_size, top
--     k = num_experts_per_tok.
--   qwen2_moe (Qwen2MoeSparseMoeBlock): q/k/v biases; a layer is MoE unless
--     listed in mlp_only_layers and when (i+1) % decoder_sparse_step == 0,
--     else a dense MLP of width intermediate_size. MoE: gate h*E with
--     E = num_experts, experts of width moe_intermediate_size, one shared
--     expert of width shared_expert_intermediate_size and its gate h*1.
--   qwen3_moe (Qwen3MoeSparseMoeBlock): as qwen2_moe without biases (unless
--     attention_bias) and without a shared expert; q_norm and k_norm d each.
--   deepseek (DeepSeek-MoE, modeling_deepseek.py of deepseek-ai/
--     deepseek-moe-16b-base): layer i is MoE when i >= first_k_dense_replace
--     and i % moe_layer_freq == 0, else a dense MLP of width
--     intermediate_size. MoE: gate weight E*h (E = n_routed_experts), routed
--     experts of width moe_intermediate_size, and the n_shared_experts shared
--     experts as one MLP of width moe_intermediate_size * n_shared_experts.
--
-- Extra entry fields (deepspeed.models documents the others):
--   experts             routed experts per MoE layer (E)
--   experts_per_token   routed experts each token goes through (k)
--   shared_experts      always-active experts (DeepSeek's n_shared_experts,
--                       1 for a Qwen2-MoE shared expert, else 0)
--   moe_layers          layers with experts
--   moe_intermediate_size  width of one routed expert
--   active_intermediate the MLP width a token goes through in an MoE layer:
--                       k * moe_intermediate_size + the shared experts' width
--   expert_params       parameters of all routed experts of all layers (the
--                       part DeepSpeed's expert parallelism divides)
--   active_params       params minus the routed experts a token skips:
--                       params - moe_layers * (E - k) * 3*h*moe_intermediate_size

local M = {}

-- r: the config readers of deepspeed.models { req, opt, opt_bool, field, largest,
-- head_dim }.
function M.count(cfg, arch, r)
  local req, opt, opt_bool = r.req, r.opt, r.opt_bool
  local h = req(cfg, "hidden_size", arch)
  local L = req(cfg, "num_hidden_layers", arch)
  local a = req(cfg, "num_attention_heads", arch)
  local V = req(cfg, "vocab_size", arch)
  local kv = opt(cfg, "num_key_value_heads", arch, a)
  local k = req(cfg, "num_experts_per_tok", arch)
  local d = r.head_dim(cfg, arch, h, a)
  local tie = opt_bool(cfg, "tie_word_embeddings", arch, false)

  local E, I_moe, I_dense, shared_I, shared_n, shared_gate
  local is_moe -- layer index (0-based) -> boolean
  if arch == "mixtral" then
    E = req(cfg, "num_local_experts", arch)
    I_moe = req(cfg, "intermediate_size", arch)
    shared_I, shared_n, shared_gate = 0, 0, 0
    is_moe = function() return true end
  elseif arch == "deepseek" then
    E = req(cfg, "n_routed_experts", arch)
    I_moe = req(cfg, "moe_intermediate_size", arch)
    I_dense = req(cfg, "intermediate_size", arch)
    shared_n = opt(cfg, "n_shared_experts", arch, nil) or 0
    shared_I, shared_gate = I_moe * shared_n, 0
    local first = r.field(cfg, "first_k_dense_replace") or 0
    local freq = opt(cfg, "moe_layer_freq", arch, 1)
    first = type(first) == "number" and math.tointeger(first) or nil
    if first == nil or first < 0 then
      error("config.json (deepseek): 'first_k_dense_replace' must be a whole number", 2)
    end
    is_moe = function(i) return i >= first and i % freq == 0 end
  else -- qwen2_moe, qwen3_moe
    E = req(cfg, "num_experts", arch)
    I_moe = req(cfg, "moe_intermediate_size", arch)
    I_dense = opt(cfg, "intermediate_size", arch, nil)
    if arch == "qwen2_moe" then
      shared_I = opt(cfg, "shared_expert_intermediate_size", arch, nil) or 0
    else
      shared_I = 0
    end
    shared_n = shared_I > 0 and 1 or 0
    shared_gate = shared_I > 0 and h or 0
    local step = opt(cfg, "decoder_sparse_step", arch, 1)
    local only = {}
    local mol = r.field(cfg, "mlp_only_layers")
    if mol ~= nil then
      if type(mol) ~= "table" then
        error("config.json (" .. arch .. "): 'mlp_only_layers' must be a list of layer indexes", 2)
      end
      for _, i in ipairs(mol) do only[type(i) == "number" and math.tointeger(i) or i] = true end
    end
    is_moe = function(i) return not only[i] and (i + 1) % step == 0 end
  end
  if k > E then
    error(("config.json (%s): num_experts_per_tok %d exceeds the %d experts"):format(arch, k, E), 2)
  end

  local qkv_bias = arch == "qwen2_moe" or opt_bool(cfg, "attention_bias", arch, false)
  local o_bias = arch ~= "qwen2_moe" and qkv_bias
  local q = h * a * d + (qkv_bias and a * d or 0)
  local kp = h * kv * d + (qkv_bias and kv * d or 0)
  local o = a * d * h + (o_bias and h or 0)
  local qk_norm = arch == "qwen3_moe" and 2 * d or 0
  local attn = q + 2 * kp + o + qk_norm + 2 * h

  local expert = 3 * h * I_moe
  local moe_mlp = h * E + E * expert + 3 * h * shared_I + shared_gate
  local moe_layers, dense_layers = 0, 0
  for i = 0, L - 1 do
    if is_moe(i) then moe_layers = moe_layers + 1 else dense_layers = dense_layers + 1 end
  end
  if dense_layers > 0 and I_dense == nil then
    error(("config.json (%s) is missing the required field 'intermediate_size' " ..
      "(%d layers have a dense MLP)"):format(arch, dense_layers), 2)
  end
  local dense_mlp = dense_layers > 0 and 3 * h * I_dense or 0
  local embed = V * h
  local params = embed + L * attn + moe_layers * moe_mlp + dense_layers * dense_mlp + h +
    (tie and 0 or V * h)
  local expert_params = moe_layers * E * expert
  local mods = {
    { "model.embed_tokens", embed }, { "lm_head", V * h },
    { "self_attn.q_proj", q }, { "self_attn.k_proj", kp }, { "self_attn.o_proj", o },
    { "mlp.gate", h * E }, { "experts.gate_proj", h * I_moe },
  }
  if shared_I > 0 then mods[#mods + 1] = { "shared_expert.gate_proj", h * shared_I } end
  if dense_layers > 0 then mods[#mods + 1] = { "mlp.gate_proj", h * I_dense } end
  local big, big_name = r.largest(mods)
  return {
    arch = arch, params = params, largest_layer = big, largest_layer_name = big_name,
    hidden_size = h, layers = L, heads = a, kv_heads = kv, head_dim = d,
    intermediate_size = I_dense or I_moe, vocab = V,
    context = opt(cfg, "max_position_embeddings", arch, nil),
    tie_word_embeddings = tie,
    experts = E, experts_per_token = k, shared_experts = shared_n,
    moe_layers = moe_layers, moe_intermediate_size = I_moe,
    active_intermediate = k * I_moe + shared_I,
    expert_params = expert_params,
    active_params = params - moe_layers * (E - k) * expert,
  }
end

return M
