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
-- 5. Parallelism and long-sequence savings (options, all default off):
--    tp (tensor-parallel size, AutoTP; Korthikanti et al. Section 4.2,
--      Equation 2 "tensor parallel, no sequence parallel"):
--        per layer = sbh*(10 + 24/t + 5as/(ht))
--      The 10sbh that stay replicated are the two LayerNorm inputs, the
--      attention and MLP inputs (8sbh of 16-bit values) and two dropout
--      masks (2sbh); the 24sbh and the attention-score terms split over t.
--      In general: d*(4sbh + (12sbh + 2as^2b)/t) + 2sbh + as^2b/t (the
--      divided part rounded up). Stored layer inputs (checkpointing) and
--      the logits are not divided (AutoTP replicates them).
--    sp (Ulysses sequence-parallel size; S. A. Jacobs et al., "DeepSpeed
--      Ulysses", arXiv:2309.14509, Section 3): each rank holds s/sp tokens
--      outside attention and a/sp heads over the full sequence inside it,
--      so every term above (34sbh, 5as^2b, the stored inputs and the logits)
--      is divided by sp: the total is ceil(total/sp).
--    cpu_checkpointing (DeepSpeed activation_checkpointing.cpu_checkpointing,
--      deepspeed/runtime/activation_checkpointing/checkpointing.py: the
--      checkpointed layer inputs are copied to the host): with
--      checkpointing, the L stored inputs move to host memory (`host`, per
--      GPU); the GPU keeps the recomputed layer's activations and its input.
--    loss_tiles (Arctic Long Sequence Training, S. Bekman et al.,
--      arXiv:2506.13996, TiledFusedLogitsLoss): the logits and loss are
--      computed k sequence shards at a time, so 4sbv becomes ceil(4sbv/k).
--    mlp_tiles (Arctic's TiledMLP, same paper: the MLP runs on k sequence
--      shards inside an autograd function that keeps only its input and
--      recomputes each shard in the backward pass): of the MLP's 19sbh
--      (input 2sbh, two 8sbh intermediates, the 1-byte dropout mask; with
--      tp: d*sbh + sbh + ceil(d*8sbh/t)) a layer stores only the input
--      (d*sbh), and one layer's MLP is live a shard at a time, ceil(mlp/k),
--      on top of the stored activations.
--
-- Public API
--   M.per_layer{ seq_len, micro_batch, hidden_size, heads, dtype_bytes = 2 } -> bytes
--   M.breakdown{ seq_len, micro_batch, hidden_size, layers, heads, vocab,
--                checkpointing = false, dtype_bytes = 2,
--                flash_attention = false, tp = 1, sp = 1,
--                cpu_checkpointing = false, loss_tiles = 1, mlp_tiles = 1 }
--        -> { per_layer, layers_bytes, logits, total, host }
--        (total: per GPU; host: per GPU's process in host memory)
--   M.bytes{ ... same ... } -> total bytes per GPU (integer)

local M = {}

local KEYS = {
  seq_len = true, micro_batch = true, hidden_size = true, layers = true,
  heads = true, vocab = true, checkpointing = true, dtype_bytes = true,
  flash_attention = true, tp = true, sp = true, cpu_checkpointing = true,
  loss_tiles = true, mlp_tiles = true,
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

local function layer_bytes(s, b, h, a, d, flash, t)
  -- d*(16sbh + 2as^2b) + (2sbh + as^2b); = 34sbh + 5as^2b for d = 2 (Eq. 1)
  -- with tensor parallelism t: d*4sbh + 2sbh + ceil((d*12sbh + (2d+1)as^2b)/t)
  -- (= sbh(10 + 24/t + 5as/(ht)) for d = 2, Eq. 2)
  local sbh = s * b * h
  local as2b = flash and 0 or a * s * s * b
  t = t or 1
  if t == 1 then
    return d * (16 * sbh + 2 * as2b) + 2 * sbh + as2b
  end
  local split = d * 12 * sbh + (2 * d + 1) * as2b
  return d * 4 * sbh + 2 * sbh + (split + t - 1) // t
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
  local t = positive(opts, "tp", 1)
  local sp = positive(opts, "sp", 1)
  local tiles = positive(opts, "loss_tiles", 1)
  local cpu_ckpt = flag(opts, "cpu_checkpointing")
  if cpu_ckpt and not ckpt then
    error("deepspeed.activations: cpu_checkpointing needs checkpointing", 2)
  end
  local function div(x, k) return (x + k - 1) // k end
  local per_layer = layer_bytes(s, b, h, a, d, flag(opts, "flash_attention"), t)
  local mlp_tiles = positive(opts, "mlp_tiles", 1)
  -- what a layer keeps, and what is live a moment on top of that
  local kept, transient = per_layer, 0
  if mlp_tiles > 1 then
    local sbh = s * b * h
    local mlp = d * sbh + sbh + div(d * 8 * sbh, t)
    kept = per_layer - mlp + d * sbh
    transient = div(mlp, mlp_tiles)
  end
  local layers_bytes, host = nil, 0
  if ckpt then
    -- stored layer inputs + one layer's activations during recomputation
    local stored = L * d * s * b * h
    if cpu_ckpt then
      -- the inputs live on the host; the recomputed layer's comes back
      host = div(stored, sp)
      layers_bytes = d * s * b * h + kept + transient
    else
      layers_bytes = stored + kept + transient
    end
  else
    layers_bytes = L * kept + transient
  end
  local logits = div(4 * s * b * v, tiles)
  if sp > 1 then
    per_layer, layers_bytes, logits = div(per_layer, sp), div(layers_bytes, sp), div(logits, sp)
  end
  return {
    per_layer = per_layer,
    layers_bytes = layers_bytes,
    logits = logits,
    total = layers_bytes + logits,
    host = host,
  }
end

--- Total activation bytes per GPU (integer).
function M.bytes(opts)
  check_keys(opts, "bytes")
  return M.breakdown(opts).total
end

return M
