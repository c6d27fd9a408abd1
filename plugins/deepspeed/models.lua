-- deepspeed.models: a catalog of common models and a parameter counter for
-- Hugging Face config.json files.
--
-- The catalog (catalog.lua, built-in data) stores, per model, the
-- config.json fields that determine the parameter count (copied from the
-- model's config.json on the Hugging Face Hub) and the total its authors /
-- the Hub publish. `params` and
-- `largest_layer` of every catalog entry are computed from those stored fields
-- by M.from_hf_config, the same function users call on a downloaded
-- config.json, so the catalog and a config.json always agree.
--
-- What is counted (mirrors DeepSpeed's model_to_params in
-- deepspeed/runtime/zero/stage3.py, applied to the *ForCausalLM /
-- T5ForConditionalGeneration model):
--   params        every trainable parameter once; a tied lm_head shares the
--                 input embedding and is not counted again
--                 (sum(dict((p.data_ptr(), p.numel()) ...))).
--   largest_layer the largest sum(p.numel() for p in m.parameters(recurse=False))
--                 over modules m: the parameters a module owns directly (a
--                 Linear's weight + bias). Usually the token embedding or an
--                 untied lm_head. ZeRO-3 gathers this much at once (4 bytes
--                 per parameter, see deepspeed.memory).
-- Buffers (rotary inv_freq, GPT-2's causal-mask `attn.bias`) are not parameters.
--
-- Architectures (parameter shapes as in transformers' modeling files;
-- gpt2 and t5 are counted in models_enc.lua, loaded only for them):
--   llama / mistral / qwen2  token embedding V*h; per layer q_proj h*(a*d),
--       k_proj and v_proj h*(kv*d) (GQA via num_key_value_heads, default a),
--       o_proj (a*d)*h, gated MLP gate/up h*I and down I*h, two RMSNorms h;
--       final norm h; lm_head V*h unless tie_word_embeddings. d = head_dim or
--       h/a. Biases: qwen2 has q/k/v biases (no o_proj bias); llama has
--       biases on q/k/v/o when attention_bias and on the MLP when mlp_bias;
--       mistral has none. tie_word_embeddings defaults to false.
--   gpt2  wte V*h, wpe n_positions*h; per layer ln_1, ln_2 (weight+bias 2h
--       each), c_attn h*3h+3h, attn c_proj h*h+h, mlp c_fc h*I+I and c_proj
--       I*h+h with I = n_inner or 4h; ln_f 2h; lm_head tied (default).
--   t5  shared embedding V*d_model; attention q,k,v d_model*(num_heads*d_kv),
--       o (num_heads*d_kv)*d_model, no biases; relative_attention_bias
--       (num_buckets*num_heads) in the first layer of encoder and decoder;
--       feed-forward wi d_model*d_ff (wi_0 and wi_1 when feed_forward_proj is
--       "gated-*") and wo d_ff*d_model; LayerNorms weight-only d_model (2 per
--       encoder layer, 3 per decoder layer, 1 final each); lm_head V*d_model
--       unless tied (default tied; T5 v1.1 / T0 are untied).
--       num_decoder_layers defaults to num_layers. `layers` of a t5 entry is
--       encoder + decoder blocks (both hold activations).
--   mixtral / qwen2_moe / qwen3_moe / deepseek  mixture-of-experts models:
--       models_moe.lua (loaded only for them) counts them and adds the
--       fields experts, experts_per_token, shared_experts, moe_layers,
--       moe_intermediate_size, active_intermediate, expert_params and
--       active_params (absent from a dense model's entry).
--
-- Public API
--   M.get(name)            -> entry (a fresh copy) or nil; name is a catalog key
--                             (case-insensitive) or the Hub id, e.g. "gpt2-xl",
--                             "meta-llama/Llama-2-7b-hf"
--   M.suggest(name)        -> up to 3 catalog names closest by edit distance
--                             (models_suggest.lua, loaded then)
--   M.names()              -> sorted list of catalog keys
--   M.from_hf_config(cfg)  -> entry-shaped table from a decoded config.json
--   M.register(name, cfg)  -> entry; M.get(name) then returns it (a config.json
--                             named by a param), or nil, message
--   M.check_param(value, cfg) -> true or { error, hint [, in_file] }: the check
--                             of the base profile's model param
-- Entry fields: name, hf_id, arch, params, largest_layer, largest_layer_name,
--   hidden_size, layers, heads, kv_heads, head_dim, intermediate_size, vocab,
--   context, tie_word_embeddings, published_params, source, hf_config
--   (t5 also encoder_layers, decoder_layers). from_hf_config returns the same
--   without name, hf_id, published_params, source and hf_config.

local M = {}

-- Catalog: data (catalog.lua) -----------------------------------------------

local catalog = require("deepspeed.catalog")
local CATALOG = catalog.models

-- config.json reading helpers ----------------------------------------------

local SUPPORTED = "gpt2, llama, mistral, qwen2, t5, and with experts mixtral, qwen2_moe, " ..
  "qwen3_moe, deepseek"

-- Mixture-of-experts architectures (models_moe.lua, loaded only for them).
local MOE_ARCHS = { mixtral = true, qwen2_moe = true, qwen3_moe = true, deepseek = true }
local MOE_BY_CLASS = {
  MixtralForCausalLM = "mixtral", MixtralModel = "mixtral",
  Qwen2MoeForCausalLM = "qwen2_moe", Qwen2MoeModel = "qwen2_moe",
  Qwen3MoeForCausalLM = "qwen3_moe", Qwen3MoeModel = "qwen3_moe",
  DeepseekForCausalLM = "deepseek", DeepseekModel = "deepseek",
}

local ARCH_BY_CLASS = {
  LlamaForCausalLM = "llama", LlamaModel = "llama",
  MistralForCausalLM = "mistral", MistralModel = "mistral",
  Qwen2ForCausalLM = "qwen2", Qwen2Model = "qwen2",
  GPT2LMHeadModel = "gpt2", GPT2Model = "gpt2",
  T5ForConditionalGeneration = "t5", T5Model = "t5", T5WithLMHeadModel = "t5",
}

local function present(v)
  return v ~= nil and not (dsforge ~= nil and v == dsforge.null)
end

local function field(cfg, key)
  local v = cfg[key]
  if present(v) then return v end
  return nil
end

local function as_count(v, key, arch)
  local i = type(v) == "number" and math.tointeger(v) or nil
  if i == nil or i <= 0 then
    error(("config.json (%s): '%s' must be a positive integer, got %s"):format(
      arch, key, tostring(v)), 4)
  end
  return i
end

-- Required positive integer; `alias` is a second accepted spelling.
local function req(cfg, key, arch, alias)
  local v = field(cfg, key)
  if v == nil and alias then v = field(cfg, alias) end
  if v == nil then
    error(("config.json (%s) is missing the required field '%s'"):format(arch, key), 3)
  end
  return as_count(v, key, arch)
end

local function opt(cfg, key, arch, default)
  local v = field(cfg, key)
  if v == nil then return default end
  return as_count(v, key, arch)
end

local function opt_bool(cfg, key, arch, default)
  local v = field(cfg, key)
  if v == nil then return default end
  if type(v) ~= "boolean" then
    error(("config.json (%s): '%s' must be true or false, got %s"):format(
      arch, key, tostring(v)), 3)
  end
  return v
end

-- The attention head dimension: head_dim, else hidden_size h over the
-- a attention heads (which must divide it).
local function head_dim(cfg, arch, h, a)
  local d = opt(cfg, "head_dim", arch, nil)
  if d == nil then
    if h % a ~= 0 then
      error(("config.json (%s): hidden_size %d is not a multiple of num_attention_heads %d " ..
        "and there is no 'head_dim'"):format(arch, h, a), 3)
    end
    d = h // a
  end
  return d
end

-- Largest of a list of {name, count}; the first wins ties (deterministic).
local function largest(mods)
  local best, name = -1, nil
  for _, m in ipairs(mods) do
    if m[2] > best then best, name = m[2], m[1] end
  end
  return best, name
end

-- Architectures --------------------------------------------------------------

local function llama_like(cfg, arch)
  local h = req(cfg, "hidden_size", arch)
  local L = req(cfg, "num_hidden_layers", arch)
  local a = req(cfg, "num_attention_heads", arch)
  local I = req(cfg, "intermediate_size", arch)
  local V = req(cfg, "vocab_size", arch)
  local kv = opt(cfg, "num_key_value_heads", arch, a)
  local d = head_dim(cfg, arch, h, a)
  local tie = opt_bool(cfg, "tie_word_embeddings", arch, false)
  local qkv_bias, o_bias, mlp_bias = false, false, false
  if arch == "qwen2" then
    qkv_bias = true
  elseif arch == "llama" then
    qkv_bias = opt_bool(cfg, "attention_bias", arch, false)
    o_bias = qkv_bias
    mlp_bias = opt_bool(cfg, "mlp_bias", arch, false)
  end
  local q = h * a * d + (qkv_bias and a * d or 0)
  local k = h * kv * d + (qkv_bias and kv * d or 0)
  local v = k
  local o = a * d * h + (o_bias and h or 0)
  local gate = h * I + (mlp_bias and I or 0)
  local up = gate
  local down = I * h + (mlp_bias and h or 0)
  local layer = q + k + v + o + gate + up + down + 2 * h
  local embed = V * h
  local params = embed + L * layer + h + (tie and 0 or V * h)
  local big, big_name = largest({
    { "model.embed_tokens", embed }, { "lm_head", V * h },
    { "self_attn.q_proj", q }, { "self_attn.k_proj", k }, { "self_attn.v_proj", v },
    { "self_attn.o_proj", o }, { "mlp.gate_proj", gate }, { "mlp.up_proj", up },
    { "mlp.down_proj", down }, { "norm", h },
  })
  return {
    arch = arch, params = params, largest_layer = big, largest_layer_name = big_name,
    hidden_size = h, layers = L, heads = a, kv_heads = kv, head_dim = d,
    intermediate_size = I, vocab = V,
    context = opt(cfg, "max_position_embeddings", arch, nil),
    tie_word_embeddings = tie,
  }
end

local function detect_arch(cfg)
  local mt = field(cfg, "model_type")
  if mt ~= nil then
    if type(mt) ~= "string" then
      error("config.json: 'model_type' must be a string, got " .. tostring(mt), 3)
    end
    if mt == "llama" or mt == "mistral" or mt == "qwen2" or mt == "gpt2" or mt == "t5"
      or MOE_ARCHS[mt] then
      return mt
    end
    error(("config.json: unsupported model_type '%s' (supported: %s)"):format(mt, SUPPORTED), 3)
  end
  local archs = field(cfg, "architectures")
  if type(archs) == "table" and type(archs[1]) == "string" then
    local a = ARCH_BY_CLASS[archs[1]] or MOE_BY_CLASS[archs[1]]
    if a then return a end
    error(("config.json: unsupported architecture '%s' (supported model types: %s)"):format(
      archs[1], SUPPORTED), 3)
  end
  error("config.json is missing the required field 'model_type' " ..
    "(and has no known 'architectures' entry)", 3)
end

--- Parameter count and shape of a model from its decoded config.json.
function M.from_hf_config(cfg)
  if type(cfg) ~= "table" then
    error("deepspeed.models.from_hf_config: expected the decoded config.json table, got " ..
      type(cfg), 2)
  end
  local arch = detect_arch(cfg)
  if arch == "gpt2" or arch == "t5" or MOE_ARCHS[arch] then
    -- (models_enc.lua and models_moe.lua, loaded only for those)
    local helpers = { req = req, opt = opt, opt_bool = opt_bool, field = field,
      largest = largest, head_dim = head_dim }
    local mod = MOE_ARCHS[arch] and "deepspeed.models_moe" or "deepspeed.models_enc"
    return require(mod).count(cfg, arch, helpers)
  end
  return llama_like(cfg, arch)
end

-- Catalog access -------------------------------------------------------------

local function copy(v)
  if type(v) ~= "table" then return v end
  local t = {}
  for _, k in ipairs(dsforge.sorted_keys(v)) do t[k] = copy(v[k]) end
  return t
end

local ENTRIES, NAMES, BY_HF_ID = {}, catalog.names, catalog.by_hf_id

-- The entry for a catalog name, computed on first use (a run usually
-- needs one or two of the models, not all of them).
local function entry(name)
  local e = ENTRIES[name]
  if e == nil and CATALOG[name] then
    local c = CATALOG[name]
    e = M.from_hf_config(c.config)
    e.name = name
    e.hf_id = c.hf_id
    e.published_params = c.published_params
    e.source = c.source
    e.hf_config = copy(c.config)
    ENTRIES[name] = e
  end
  return e
end

-- config.json files named by a param (M.register), by the text given.
local FILES = {}

--- Catalog entry by name (case-insensitive) or Hub id, or the model of a
--- config.json registered under that exact name; a fresh copy, or nil.
function M.get(name)
  if type(name) ~= "string" then return nil end
  local key = name:lower()
  local e = FILES[name] or entry(key) or entry(BY_HF_ID[key] or "")
  if e == nil then return nil end
  return copy(e)
end

-- The model of a decoded config.json, or nil and a message.
local function from_file(doc)
  local ok, m = pcall(M.from_hf_config, doc)
  if ok then return m end
  local msg = tostring(m):gsub("^[^:]*:%d+: ", "")
  return nil, msg
end

--- Makes M.get(name) return the model of the decoded config.json `doc`
--- (a file the person named on the command line: dsforge read it, the
--- sandbox cannot). Returns the entry, or nil and why the file is unusable.
function M.register(name, doc)
  local m, err = from_file(doc)
  if not m then return nil, err end
  m.name = name
  FILES[name] = m
  return m
end

--- The `check` of a model param (profiles/base.lua): true when `value` is a
--- catalog name or Hub id, or names a usable config.json (`doc`, decoded
--- by dsforge; it is registered, see M.register); else
--- { error, hint [, in_file = true] }.
function M.check_param(value, doc)
  if type(doc) == "table" then
    local m, err = M.register(value, doc)
    if m then return true end
    return { error = err, in_file = true,
      hint = "a Hugging Face config.json needs hidden_size, num_hidden_layers, " ..
        "num_attention_heads, intermediate_size and vocab_size (or the GPT-2/T5 names)" }
  end
  if M.get(value) then return true end
  local s = M.suggest(value)
  return {
    error = ("unknown model '%s'"):format(tostring(value)),
    hint = (#s > 0 and ("did you mean " .. table.concat(s, ", ") .. "? ") or "")
      .. "a catalog model (dsforge models) or the path of a Hugging Face config.json",
  }
end

--- Sorted list of catalog names.
function M.names()
  local t = {}
  for i, n in ipairs(NAMES) do t[i] = n end
  return t
end

-- The edit distance and the suggestions: models_suggest.lua, loaded for
-- a name the catalog does not have.
function M.edit_distance(a, b)
  return require("deepspeed.models_suggest").distance(a, b)
end

--- Up to 3 catalog names close to `name`, nearest first, ties by name
--- (models_suggest.lua).
function M.suggest(name)
  return require("deepspeed.models_suggest").suggest(name, NAMES)
end

return M
