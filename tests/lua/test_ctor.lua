-- Tests for deepspeed.ctor and the constructor-args rule on optimizers:
-- which class DeepSpeed's engine builds from optimizer.type
-- (runtime/engine.py _configure_basic_optimizer) and optimizer.params
-- checked against it, torch.optim classes included (torch_optim.lua,
-- generated from PyTorch's source by contrib/dsknow/torch_optim.py).

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

local function paths(found)
  local out = {}
  for _, f in ipairs(found) do out[#out + 1] = table.concat(f.path, ".") end
  table.sort(out)
  return table.concat(out, " ")
end

local OFFLOAD = { zero_optimization = { stage = 2, offload_optimizer = { device = "cpu" } } }

return {
  torch_data_names_version_and_source_lines = function()
    T.truthy(torch.torch_version:match("^%d+%.%d+%.%d+$"))
    T.truthy(#torch.origin > 0)
    for _, name in ipairs({ "SGD", "Adam", "AdamW", "Adagrad", "RMSprop" }) do
      local c = torch.optimizers[name]
      T.truthy(c, name)
      T.truthy(c.file:match("^torch/optim/[%w_]+%.py$"), c.file)
      T.truthy(math.type(c.line) == "integer" and c.line > 0)
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
    T.truthy(found[1].message:find("torch.optim.SGD.__init__ (torch " .. torch.torch_version
      .. ", torch/optim/sgd.py:", 1, true), found[1].message)
    T.truthy(found[1].message:find('did you mean "momentum"', 1, true))
    T.eq(paths(run(opt("SGD", { lr = 0.1, momentum = 0.9, nesterov = true }))), "")
  end,

  torch_missing_required_argument = function()
    local c = torch.optimizers.SGD
    if #c.required == 0 then return end -- newer torch: lr has a default
    local found = run(opt("SGD", { momentum = 0.9 }))
    T.eq(paths(found), "optimizer.params")
    T.truthy(found[1].message:find('requires "lr"', 1, true), found[1].message)
    -- no params at all: reported on the optimizer
    T.eq(paths(run({ optimizer = { type = "SGD" } })), "optimizer")
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
