-- Tests for deepspeed.ctor and the constructor-args rule on optimizers:
-- which class DeepSpeed's engine builds from optimizer.type
-- (runtime/engine.py _configure_basic_optimizer) and optimizer.params
-- checked against it, torch.optim classes included (torch_optim.lua,
-- generated from PyTorch's source of several torch releases by
-- contrib/dsknow/torch_optim.py; the signatures merged over them).

local ctor = require("deepspeed.ctor")
local dv = require("deepspeed.dsversion")
local torch = require("deepspeed.torch_optim")

local function run(cfg, version)
  local found = {}
  local ctx = { target = "deepspeed", ds_version = version, params = { world_size = 1 },
                report = function(f) found[#found + 1] = f end }
  for _, r in ipairs(require("deepspeed.rules").rules) do
    if r.id == "constructor-args" then r.check(cfg, ctx) end
  end
  return found
end

local function opt(t, params, extra)
  local c = { train_micro_batch_size_per_gpu = 1, optimizer = { type = t, params = params } }
  for k, v in next, extra or {} do c[k] = v end
  return c
end

-- the paths of the errors (notes left out: see notes())
local function paths(found)
  local out = {}
  for _, f in ipairs(found) do
    if f.severity ~= "note" then out[#out + 1] = table.concat(f.path, ".") end
  end
  table.sort(out)
  return table.concat(out, " ")
end

local function notes(found)
  local out = {}
  for _, f in ipairs(found) do
    if f.severity == "note" then out[#out + 1] = f end
  end
  return out
end

local VERSIONS = {}
for _, r in ipairs(torch.releases) do VERSIONS[#VERSIONS + 1] = r.version end
local ALL = table.concat(VERSIONS, ", ")

local OFFLOAD = { zero_optimization = { stage = 2, offload_optimizer = { device = "cpu" } } }

return {
  torch_data_names_versions_and_source_lines = function()
    -- several releases, oldest first, 1.13.1 (Debian 12) and a 2.x among them
    T.truthy(#torch.releases >= 2)
    T.eq(torch.releases[1].version, "1.13.1")
    T.truthy(torch.releases[#torch.releases].version:match("^2%.%d+%.%d+$"))
    local function key(v)
      local a, b, c = v:match("^(%d+)%.(%d+)%.(%d+)$")
      return tonumber(a) * 1e6 + tonumber(b) * 1e3 + tonumber(c)
    end
    for i, r in ipairs(torch.releases) do
      T.truthy(r.version:match("^%d+%.%d+%.%d+$"), r.version)
      T.truthy(#r.origin > 0)
      if i > 1 then T.truthy(key(torch.releases[i - 1].version) < key(r.version)) end
      for _, name in ipairs({ "SGD", "Adam", "AdamW", "Adagrad", "RMSprop" }) do
        local c = torch.optimizers[name][r.version]
        T.truthy(c, name .. " " .. r.version)
        T.truthy(c.file:match("^torch/optim/[%w_]+%.py$"), c.file)
        T.truthy(math.type(c.line) == "integer" and c.line > 0)
      end
    end
  end,

  engine_class_follows_the_type = function()
    local rel = dv.newest
    -- a name DeepSpeed does not know goes to torch.optim, case-sensitively
    T.eq(ctor.optimizer(opt("SGD", {}), rel).class, "torch.optim.SGD")
    T.eq(ctor.optimizer(opt("sgd", {}), rel), nil)
    T.eq(ctor.optimizer(opt("RMSprop", {}), rel).class, "torch.optim.RMSprop")
    -- built-ins any case; torch_adam picks torch's Adam(W) by adam_w_mode
    T.eq(ctor.optimizer(opt("ADAMW", {}), rel).class, "FusedAdam")
    T.eq(ctor.optimizer(opt("Adam", { torch_adam = true }), rel).class, "torch.optim.AdamW")
    T.eq(ctor.optimizer(opt("Adam", { torch_adam = true, adam_w_mode = false }), rel).class, "torch.optim.Adam")
    T.eq(ctor.optimizer(opt("AdamW", { torch_adam = true, adam_w_mode = false }), rel).class, "torch.optim.AdamW")
    -- Adagrad: torch's unless offloaded (then DeepSpeedCPUAdagrad)
    T.eq(ctor.optimizer(opt("Adagrad", {}), rel).class, "torch.optim.Adagrad")
    T.eq(ctor.optimizer(opt("Adagrad", {}, OFFLOAD), rel).class, "DeepSpeedCPUAdagrad")
    -- offloaded Adam/Lion build CPU classes outside the data: not checked
    T.eq(ctor.optimizer(opt("AdamW", {}, OFFLOAD), rel), nil)
    T.eq(ctor.optimizer(opt("Lion", {}, OFFLOAD), rel), nil)
    -- a DeepSpeed name with no constructor data (mup) is never torch's
    T.eq(ctor.optimizer(opt("MuSGD", {}), rel), nil)
  end,

  torch_unknown_keyword_with_did_you_mean = function()
    local found = run(opt("SGD", { lr = 0.1, momentun = 0.9 }))
    T.eq(paths(found), "optimizer.params.momentun")
    -- the message names every covered release (none takes it)
    T.truthy(found[1].message:find("torch.optim.SGD.__init__ (torch " .. ALL
      .. "; torch/optim/sgd.py:", 1, true), found[1].message)
    T.truthy(found[1].message:find('did you mean "momentum"', 1, true))
    T.eq(paths(run(opt("SGD", { lr = 0.1, momentum = 0.9, nesterov = true }))), "")
    -- a typo on torch's AdamW (torch_adam) too
    found = run(opt("AdamW", { lr = 1e-4, torch_adam = true, weight_decy = 0.1 }))
    T.eq(paths(found), "optimizer.params.weight_decy")
    T.truthy(found[1].message:find('did you mean "weight_decay"', 1, true), found[1].message)
  end,

  required_only_when_every_torch_release_requires_it = function()
    -- SGD's lr has no default in 1.13.1, one in 2.x: not required
    T.eq(torch.optimizers.SGD["1.13.1"].required, { "lr" })
    T.eq(#torch.optimizers.SGD[VERSIONS[#VERSIONS]].required, 0)
    T.eq(paths(run(opt("SGD", { momentum = 0.9 }))), "")
    T.eq(#notes(run(opt("SGD", { momentum = 0.9 }))), 0)
    T.eq(paths(run({ optimizer = { type = "SGD" } })), "")
    -- StepLR's step_size is required in every release
    T.eq(paths(run({ scheduler = { type = "StepLR", params = { gamma = 0.5 } } })), "scheduler.params")
  end,

  keyword_of_newer_torch_is_a_note = function()
    -- AdamW fused: torch >= 2.x only; fine, with a note naming the releases
    local found = run(opt("AdamW", { lr = 1e-4, torch_adam = true, fused = true }))
    T.eq(paths(found), "")
    local n = notes(found)
    T.eq(#n, 1)
    T.eq(table.concat(n[1].path, "."), "optimizer.params.fused")
    T.eq(n[1].rule, "constructor-args")
    T.truthy(n[1].message:find("(" .. ALL .. "), only torch >= 2.", 1, true), n[1].message)
    T.truthy(n[1].message:find('takes "fused"', 1, true), n[1].message)
    -- SGD differentiable is in every covered release: no note; fused is newer
    T.eq(#notes(run(opt("SGD", { lr = 0.1, differentiable = false }))), 0)
    T.eq(paths(run(opt("SGD", { lr = 0.1, fused = false }))), "")
    -- a keyword a newer torch dropped (StepLR verbose): a note, no error
    -- (torch 2.14 dropped it)
    found = run({ scheduler = { type = "StepLR", params = { step_size = 10, verbose = true } } })
    T.eq(paths(found), "")
    T.eq(#notes(found), 1)
    T.truthy(notes(found)[1].message:find("only torch <= 2.", 1, true), notes(found)[1].message)
    -- a class only newer releases have (Adafactor): its signature is theirs
    local c = ctor.optimizer(opt("Adafactor", {}), dv.newest)
    T.eq(c.class, "torch.optim.Adafactor")
    T.truthy(not c.origin:find("1.13.1", 1, true), c.origin)
    T.truthy(#c.releases < #VERSIONS)
    T.eq(paths(run(opt("Adafactor", { lr = 0.01, beta2_decay = -0.8 }))), "")
  end,

  torch_adam_checks_torchs_signature = function()
    -- FusedAdam takes set_grad_none; torch.optim.AdamW does not
    T.eq(paths(run(opt("AdamW", { lr = 1e-4, set_grad_none = true }))), "")
    T.eq(paths(run(opt("AdamW", { lr = 1e-4, set_grad_none = true, torch_adam = true }))),
      "optimizer.params.set_grad_none")
    -- the engine pops torch_adam and adam_w_mode before the call
    T.eq(paths(run(opt("Adam", { lr = 1e-4, torch_adam = true, adam_w_mode = false }))), "")
  end,

  adagrad_without_offload_is_torchs = function()
    -- torch.optim.Adagrad takes lr_decay; DeepSpeedCPUAdagrad does not
    T.eq(paths(run(opt("Adagrad", { lr = 0.01, lr_decay = 0.1 }))), "")
    T.eq(paths(run(opt("Adagrad", { lr = 0.01, lr_decay = 0.1 }, OFFLOAD))), "optimizer.params.lr_decay")
  end,

  torch_scheduler_keywords_and_required_arguments = function()
    local function sched(t, params)
      return { train_micro_batch_size_per_gpu = 1, scheduler = { type = t, params = params } }
    end
    T.eq(ctor.scheduler(sched("StepLR", {}), dv.newest).class, "torch.optim.lr_scheduler.StepLR")
    T.eq(ctor.scheduler(sched("WarmupLR", {}), dv.newest).class, "WarmupLR")
    T.eq(ctor.scheduler(sched("steplr", {}), dv.newest), nil)
    local found = run(sched("StepLR", { step_sise = 10, gamma = 0.5 }))
    T.eq(paths(found), "scheduler.params scheduler.params.step_sise")
    local text = found[1].message .. found[2].message
    T.truthy(text:find('did you mean "step_size"', 1, true), text)
    T.truthy(text:find('requires "step_size"', 1, true), text)
    T.truthy(text:find("torch/optim/lr_scheduler.py:", 1, true), text)
    T.eq(paths(run(sched("StepLR", { step_size = 10, gamma = 0.5 }))), "")
    T.eq(paths(run({ scheduler = { type = "CosineAnnealingLR" } })), "scheduler")
    -- DeepSpeed's own: unknown keywords here, missing ones in scheduler-missing-param
    T.eq(paths(run(sched("WarmupDecayLR", { warmup_num_steps = 10 }))), "")
  end,

  every_release_checks_the_same_torch_class = function()
    for _, r in ipairs(dv.releases) do
      T.eq(paths(run(opt("RMSprop", { lr = 0.01, alpah = 0.9 }), r.version)), "optimizer.params.alpah")
    end
  end,
}
