-- plugins/deepspeed/resolve.lua -- "auto" resolution for --target deepspeed.
--
-- Maps a variant's profile params onto the inputs Hugging Face's Trainer
-- would use (hf.lua) and fills every "auto" exactly as it would. The
-- profile param names are the convention documented in contrib/docs/profiles.md:
-- world_size, micro_batch_size, gradient_accumulation, precision,
-- max_grad_norm, learning_rate, weight_decay, num_training_steps,
-- warmup_steps, warmup_ratio, model (catalog name, gives hidden_size) or
-- hidden_size.

local hf = require("deepspeed.hf")

local M = {}

local DIRECT = { "world_size", "micro_batch_size", "gradient_accumulation",
  "max_grad_norm", "learning_rate", "adam_beta1", "adam_beta2", "adam_epsilon",
  "weight_decay", "precision", "hidden_size", "num_training_steps",
  "warmup_steps", "warmup_ratio", "save_on_each_node" }

-- The hidden size of a catalog model, or nil (memoised: a sweep asks for
-- the same few models thousands of times).
local hidden_sizes = {}
function M.hidden_size(model)
  local h = hidden_sizes[model]
  if h == nil then
    local m = require("deepspeed.models").get(model)
    h = m and m.hidden_size or false
    hidden_sizes[model] = h
  end
  return h or nil
end

-- M.inputs(params, world_size) -> the hf.resolve inputs for a variant.
function M.inputs(params, world_size)
  local inputs = {}
  for _, k in ipairs(DIRECT) do
    if params[k] ~= nil and params[k] ~= dsforge.null then inputs[k] = params[k] end
  end
  inputs.world_size = inputs.world_size or world_size
  if inputs.hidden_size == nil and type(params.model) == "string" then
    inputs.hidden_size = M.hidden_size(params.model)
  end
  return inputs
end

-- Stage-3-only ZeRO keys (and their alias names). Below stage 3 the
-- Trainer leaves their "auto" in place and DeepSpeed's pydantic model drops
-- it (the stage-1/2 engine never reads them), so the resolver removes them.
local STAGE3_ONLY = {
  stage3_prefetch_bucket_size = true, prefetch_bucket_size = true,
  stage3_param_persistence_threshold = true, param_persistence_threshold = true,
  stage3_model_persistence_threshold = true, model_persistence_threshold = true,
  stage3_max_live_parameters = true, max_live_parameters = true,
  stage3_max_reuse_distance = true, max_reuse_distance = true,
  stage3_gather_16bit_weights_on_model_save = true, gather_16bit_weights_on_model_save = true,
  stage3_gather_fp16_weights_on_model_save = true,
}

local function drop_stage3_auto(cfg)
  local zero = type(cfg) == "table" and dsforge.kind(cfg) == "object" and rawget(cfg, "zero_optimization")
  if type(zero) ~= "table" or dsforge.kind(zero) ~= "object" then return end
  local stage = rawget(zero, "stage")
  if math.type(stage) == nil or stage >= 3 then return end
  for _, k in ipairs(dsforge.sorted_keys(zero)) do
    if STAGE3_ONLY[k] and rawget(zero, k) == "auto" then zero[k] = nil end
  end
end

-- M.auto(cfg, params, world_size) -> cfg with "auto" filled (in place:
-- the resolver's own copy of the variant's config), or nil when there is
-- none. What cannot be filled stays "auto" (the auto-value rule then
-- reports it) and a warning names the missing inputs.
function M.auto(cfg, params, world_size)
  local autos = hf.find_autos(cfg)
  if #autos == 0 then return nil end
  local new, missing = hf.resolve_own(cfg, M.inputs(params, world_size), autos)
  drop_stage3_auto(new)
  for _, m in ipairs(missing) do
    if m.needs then
      dsforge.warn(string.format(
        "cannot resolve \"auto\" at %s: the profile has no param '%s' "
        .. "(add it, pass --param %s=..., or use --target hf)", m.path, m.needs, m.needs))
    end
  end
  return new
end

return M
