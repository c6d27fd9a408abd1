-- deepspeed.activations: activation memory per GPU for a transformer.
--
-- Reference: V. Korthikanti, J. Casper, S. Lym, L. McAfee, M. Andersch,
-- M. Shoeybi, B. Catanzaro, "Reducing Activation Recomputation in Large
-- Transformer Models", MLSys 2023, arXiv:2205.05198.
--
-- Notation of the paper: s sequence length, b micro batch size, h hidden
-- size, a attention heads, L layers, v vocabulary size, t tensor-parallel size.
-- We assume no tensor, sequence or pipeline parallelism (t = 1, p = 1): ZeRO
-- data parallelism does not partition activations.
--
-- 1. One transformer layer, no recomputation (Section 4.1, Equation 1):
--        activations per layer = s*b*h*(34 + 5*a*s/h)  bytes
--                              = 34*s*b*h + 5*a*s^2*b
--    The paper assumes 16-bit activations and 1-byte dropout masks. Its
--    itemisation (Section 4.1):
--      attention: Q,K,V input 2sbh; Q and K 4sbh; softmax output 2as^2b;
--                 softmax dropout mask as^2b; dropout output 2as^2b; V 2sbh;
--                 output-projection input 2sbh; dropout mask sbh
--                 -> 11sbh + 5as^2b
--      MLP:       2sbh + 8sbh + 8sbh + mask sbh -> 19sbh
--      2 LayerNorms: 4sbh
--    Of these, the masks (2sbh + as^2b) are 1 byte per element and the rest
--    (32sbh + 4as^2b) are 16-bit values. For a `dtype_bytes` other than 2 we
--    scale only the 16-bit part:
--        per_layer = dtype_bytes*(16*s*b*h + 2*a*s^2*b) + 2*s*b*h + a*s^2*b
--    which is exactly Equation 1 for dtype_bytes = 2.
-- 2. Full activation recomputation (checkpointing every layer; Section 5 and
--    Table 2, "full activation recompute": 2sbhL): only each layer's input,
--    2*s*b*h bytes (dtype_bytes*s*b*h in general), is kept across the forward
--    pass; during the backward pass one layer at a time is recomputed, so its
--    full activations (item 1) are live on top of the stored inputs:
--        checkpointed = L*dtype_bytes*s*b*h + per_layer
-- 3. Output layer (Section 4.4): the cross-entropy loss keeps the logits in
--    32-bit floating point, 4*s*b*v bytes. That is the only non-layer term we
--    add (assumption: fp32 logits; the embedding-dropout mask and the final
--    LayerNorm input, about 3sbh together, are neglected as in the paper's
--    total, where they are small next to 4sbv).
--
-- Caveats: the formula describes a GPT-style block (MHA, 4h GeLU MLP, dropout).
-- Models with GQA, SwiGLU and no dropout differ somewhat; the estimate is
-- used as published, uniformly, which keeps the planner's choices explainable.
-- 4. FlashAttention (T. Dao et al., "FlashAttention: Fast and Memory-Efficient
--    Exact Attention with IO-Awareness", NeurIPS 2022, arXiv:2205.14135)
--    never materialises the s x s attention scores, softmax output or its
--    dropout mask: it recomputes them in the backward pass from O(s)
--    statistics. With flash_attention = true the 5as^2b terms are dropped,
--    leaving 34sbh per layer: the figure the paper gives for "selective
--    activation recomputation" of exactly those terms (Section 5). Default
--    false (eager attention, the conservative estimate).
--
-- Public API
--   M.per_layer{ seq_len, micro_batch, hidden_size, heads, dtype_bytes = 2 } -> bytes
--   M.breakdown{ seq_len, micro_batch, hidden_size, layers, heads, vocab,
--                checkpointing = false, dtype_bytes = 2,
--                flash_attention = false }
--        -> { per_layer, layers_bytes, logits, total }
--   M.bytes{ ... same ... } -> total bytes per GPU (integer)

local M = {}

local KEYS = {
  seq_len = true, micro_batch = true, hidden_size = true, layers = true,
  heads = true, vocab = true, checkpointing = true, dtype_bytes = true,
  flash_attention = true,
}

local function positive(opts, name, default)
  local v = opts[name]
  if v == nil then v = default end
  if v == nil then
    error("deepspeed.activations: " .. name .. " is required", 3)
  end
  local i = type(v) == "number" and math.tointeger(v) or nil
  if i == nil or i <= 0 then
    error(("deepspeed.activations: %s must be a positive whole number, got %s"):format(
      name, tostring(v)), 3)
  end
  return i
end

local function check_keys(opts, fname)
  if type(opts) ~= "table" then
    error("deepspeed.activations." .. fname .. ": expected a table of options", 3)
  end
  for _, k in ipairs(dsforge.sorted_keys(opts)) do
    if not KEYS[k] then
      error("deepspeed.activations." .. fname .. ": unknown option '" .. tostring(k) .. "'", 3)
    end
  end
end

local function layer_bytes(s, b, h, a, d, flash)
  -- d*(16sbh + 2as^2b) + (2sbh + as^2b); = 34sbh + 5as^2b for d = 2 (Eq. 1)
  local sbh = s * b * h
  local as2b = flash and 0 or a * s * s * b
  return d * (16 * sbh + 2 * as2b) + 2 * sbh + as2b
end

local function flag(opts, name)
  local v = opts[name]
  if v == nil then return false end
  if type(v) ~= "boolean" then
    error("deepspeed.activations: " .. name .. " must be a boolean, got " .. type(v), 3)
  end
  return v
end

--- Activation bytes of one transformer layer without recomputation (Eq. 1).
function M.per_layer(opts)
  check_keys(opts, "per_layer")
  local s = positive(opts, "seq_len")
  local b = positive(opts, "micro_batch")
  local h = positive(opts, "hidden_size")
  local a = positive(opts, "heads")
  local d = positive(opts, "dtype_bytes", 2)
  return layer_bytes(s, b, h, a, d, flag(opts, "flash_attention"))
end

--- Activation memory per GPU, itemised.
function M.breakdown(opts)
  check_keys(opts, "breakdown")
  local s = positive(opts, "seq_len")
  local b = positive(opts, "micro_batch")
  local h = positive(opts, "hidden_size")
  local L = positive(opts, "layers")
  local a = positive(opts, "heads")
  local v = positive(opts, "vocab")
  local d = positive(opts, "dtype_bytes", 2)
  local ckpt = opts.checkpointing
  if ckpt == nil then ckpt = false end
  if type(ckpt) ~= "boolean" then
    error("deepspeed.activations: checkpointing must be a boolean, got " .. type(ckpt), 2)
  end
  local per_layer = layer_bytes(s, b, h, a, d, flag(opts, "flash_attention"))
  local layers_bytes
  if ckpt then
    -- stored layer inputs + one layer's activations during recomputation
    layers_bytes = L * d * s * b * h + per_layer
  else
    layers_bytes = L * per_layer
  end
  local logits = 4 * s * b * v
  return {
    per_layer = per_layer,
    layers_bytes = layers_bytes,
    logits = logits,
    total = layers_bytes + logits,
  }
end

--- Total activation bytes per GPU (integer).
function M.bytes(opts)
  check_keys(opts, "bytes")
  return M.breakdown(opts).total
end

return M
