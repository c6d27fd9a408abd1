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

-- (Order does not matter here: the answer is the same for any order.)
local function has_auto(v)
  if v == "auto" then return true end
  if type(v) == "table" then
    for _, x in next, v do
      if has_auto(x) then return true end
    end
  end
  return false
end

-- M.auto(cfg, params, world_size) -> the config with "auto" filled, or nil
-- when there is none. What cannot be filled stays "auto" (the auto-value
-- rule then reports it) and a warning names the missing inputs.
function M.auto(cfg, params, world_size)
  if not has_auto(cfg) then return nil end
  local new, missing = hf.resolve(cfg, M.inputs(params, world_size))
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
