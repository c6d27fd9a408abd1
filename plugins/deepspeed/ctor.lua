-- plugins/deepspeed/ctor.lua -- which constructor DeepSpeed calls with
-- optimizer.params, read from runtime/engine.py _configure_basic_optimizer
-- (the same in every covered release):
--
--   * optimizer.type is lower-cased when it is one of DEEPSPEED_OPTIMIZERS
--     (runtime/config.py); any other name goes to
--     getattr(torch.optim, type) as written (case-sensitive), called as
--     torch_optimizer(model_parameters, **optimizer.params);
--   * adam/adamw pop torch_adam and adam_w_mode first; with a truthy
--     torch_adam the engine builds torch.optim.AdamW (type adamw, or
--     adam_w_mode truthy, its default) or torch.optim.Adam; otherwise
--     FusedAdam, or DeepSpeedCPUAdam when the optimizer is offloaded;
--   * adagrad builds DeepSpeedCPUAdagrad when offloaded, else
--     torch.optim.Adagrad; lion builds DeepSpeedCPULion when offloaded,
--     else FusedLion ("offloaded": zero_optimization.offload_optimizer.device
--     is cpu or nvme, zero_use_cpu_optimizer).
--
-- The DeepSpeed classes' constructors per release are generated
-- (dsdata/, contrib/dsknow/extract.py); torch.optim's come from PyTorch's
-- source of several torch releases (torch_optim.lua,
-- contrib/dsknow/torch_optim.py). The user does not name a torch release,
-- so a torch class's signature is the covered releases' merged: an
-- argument any of them takes is accepted (`only` lists the releases of
-- one that some do not take), an argument is required only when every
-- covered release that has the class requires it.
--
-- scheduler.type: a class of deepspeed.runtime.lr_schedules, else
-- getattr(torch.optim.lr_scheduler, type) (case-sensitive), called as
-- scheduler(optimizer, **scheduler.params) (_scheduler_from_config).
--
--   M.optimizer(cfg, rel) -> { class =, args =, required =, popped =,
--                              origin =, torch = bool, only =, releases = }
--                              or nil when the constructor is not known
--                              (a class outside the data)
--   M.scheduler(cfg, rel) -> { class =, args =, required =, origin =,
--                              torch = bool, only =, releases = } or nil
--   (torch classes only: only[arg] = the covered torch releases that take
--   arg, oldest first, when some releases that have the class do not;
--   releases = those that have it)

local dsversion = require("deepspeed.dsversion")
-- torch.optim's signatures (three releases, 30 KB) are read only when a
-- type falls through to torch, not for DeepSpeed's own classes (issue 15)
local torch_data
local function torch()
  torch_data = torch_data or require("deepspeed.torch_optim")
  return torch_data
end

local M = {}

local NULL = dsforge.null

-- DEEPSPEED_OPTIMIZERS of runtime/config.py (lower case), every covered
-- release: a name in this list is never looked up in torch.optim.
local DS_NAMES = {}
for _, n in ipairs({ "adagrad", "adam", "adamw", "lamb", "lion", "muadam", "muadamw",
                     "muon", "musgd", "onebitadam", "onebitlamb", "zerooneadam" }) do
  DS_NAMES[n] = true
end

-- A JSON object (not an array, even an empty one), else nil.
local function object(v)
  if type(v) == "table" and v ~= NULL and dsforge.kind(v) == "object" then return v end
  return nil
end
M.object = object

-- Python's truthiness of a JSON value (DeepSpeed's `if value:`).
local function truthy(v)
  if v == nil or v == NULL or v == false then return false end
  if type(v) == "number" then return v ~= 0 end
  if type(v) == "string" then return v ~= "" end
  if type(v) == "table" then return next(v) ~= nil end
  return true
end
M.truthy = truthy

local function offloaded(cfg)
  local z = object(rawget(cfg, "zero_optimization"))
  local o = z and object(rawget(z, "offload_optimizer"))
  local dev = o and rawget(o, "device")
  if dev == "cpu" or dev == "nvme" then return true end
  return z ~= nil and rawget(z, "cpu_offload") == true
end

-- The class's signature merged over the covered torch releases that have
-- it (see the top); cached per kind and name.
local merged = { optimizers = {}, schedulers = {} }

local function merge(kind, name)
  local per = torch()[kind][name]
  if not per then return false end
  local vers = {}
  for _, r in ipairs(torch().releases) do
    if per[r.version] then vers[#vers + 1] = r.version end
  end
  -- arguments in the newest release's order, then older ones' leftovers
  local args, takes, nreq = {}, {}, {}
  for i = #vers, 1, -1 do
    for _, a in ipairs(per[vers[i]].args) do
      if not takes[a] then args[#args + 1] = a; takes[a] = {} end
      table.insert(takes[a], 1, vers[i])
    end
    for _, a in ipairs(per[vers[i]].required) do nreq[a] = (nreq[a] or 0) + 1 end
  end
  local required, only = {}, {}
  for _, a in ipairs(args) do
    if nreq[a] == #vers then required[#required + 1] = a end
    if #takes[a] < #vers then only[a] = takes[a] end
  end
  local newest = per[vers[#vers]]
  return { args = args, required = required, only = only, releases = vers,
    origin = string.format("torch %s; %s:%d in %s", table.concat(vers, ", "),
      newest.file, newest.line, vers[#vers]) }
end

-- (shared, never written: rules_optim.lua keeps a set per list)
local NONE_POPPED = {}
local ADAM_POPPED = { "torch_adam", "adam_w_mode" }

local function torch_class(name, popped, scheduler)
  local kind = scheduler and "schedulers" or "optimizers"
  local m = merged[kind][name]
  if m == nil then
    m = merge(kind, name)
    merged[kind][name] = m
  end
  if not m then return nil end
  return { class = (scheduler and "torch.optim.lr_scheduler." or "torch.optim.") .. name,
    args = m.args, required = m.required, popped = popped or NONE_POPPED, torch = true,
    only = m.only, releases = m.releases, origin = m.origin }
end

function M.scheduler(cfg, rel)
  local sch = object(rawget(cfg, "scheduler"))
  local t = sch and rawget(sch, "type")
  if type(t) ~= "string" then return nil end
  local d = dsversion.data(rel).schedulers[t]
  if d then
    return { class = t, args = d.args, required = d.required, torch = false,
      origin = "DeepSpeed " .. rel.version }
  end
  return torch_class(t, nil, true)
end

local function ds_class(b, rel, popped)
  return { class = b.class, args = b.args, required = b.required, popped = popped or b.engine or NONE_POPPED,
    origin = "DeepSpeed " .. rel.version }
end

function M.optimizer(cfg, rel)
  local opt = object(rawget(cfg, "optimizer"))
  local t = opt and rawget(opt, "type")
  if type(t) ~= "string" then return nil end
  local params = object(rawget(opt, "params")) or {}
  local low = t:lower()
  if not DS_NAMES[low] then return torch_class(t) end
  local b = dsversion.data(rel).optimizers[low]
  if low == "adam" or low == "adamw" then
    local popped = ADAM_POPPED
    if truthy(rawget(params, "torch_adam")) then
      local awm = rawget(params, "adam_w_mode")
      local w = low == "adamw" or awm == nil or truthy(awm)
      return torch_class(w and "AdamW" or "Adam", popped)
    end
    if offloaded(cfg) or not b then return nil end -- DeepSpeedCPUAdam: not in the data
    return ds_class(b, rel, popped)
  end
  if low == "adagrad" then
    if offloaded(cfg) then return b and ds_class(b, rel) or nil end
    return torch_class("Adagrad")
  end
  if low == "lion" and offloaded(cfg) then return nil end -- DeepSpeedCPULion
  return b and ds_class(b, rel) or nil
end

return M
