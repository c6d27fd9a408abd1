-- plugins/launch/init.lua -- from a finished DeepSpeed config to a run.
--
-- Pure modules, loaded with require("launch.<module>"):
--   trainer  the Hugging Face TrainingArguments that reproduce a variant,
--            and the Trainer's own "auto" fill and mismatch checks
--   render   text emitters: hf-args (JSON, command line), accelerate YAML,
--            the launch script (deepspeed / torchrun / accelerate launch /
--            Slurm), and each launcher's script alone
--   quote    sh and YAML quoting
--   cmdline  a training command parsed into facts, checked against a config
--   cmdcheck the check_command hook of `dsforge check CONFIG -- COMMAND...`
--   machine  the machine_params hook of `gen --detect`
--   params   the params the launch files read, checked where they enter
--   yaml     the YAML subset of an accelerate config file
-- (contrib/docs/launch.md). The emitters below are what `gen --emit`
-- writes next to every variant's JSON (contrib/docs/plugins.md,
-- "Emitters").

local tostring, pcall = tostring, pcall
local dsforge = dsforge
local require = require

-- The modules are loaded when a hook first runs, not when the plugin is
-- declared: a command that runs none of them (most gen, check, estimate
-- runs) does not pay for them (issue 15).
local lazy = setmetatable({}, { __index = function(t, name)
  local m = require("launch." .. name)
  t[name] = m
  return m
end })

-- The variant as launch.render takes it, with its TrainingArguments:
-- computed once per variant (ctx.cache is shared by this plugin's
-- emitters for one variant) and reused by every file.
local function variant_of(v, ctx)
  local c = ctx.cache
  if c.variant then return c.variant end
  -- Paths as seen from where gen ran: -o DIR/FILE.
  local dir = v.dir and v.dir:gsub("/+$", "")
  local function path(name)
    if dir == nil then return name end
    return (dir == "" and "/" or dir .. "/") .. name
  end
  local rv = { config = v.config, params = v.params or {}, name = v.profile .. "-" .. v.name,
    file = path(v.file) }
  local args, err = lazy.trainer.training_args({ config = rv.config, params = rv.params,
    deepspeed_file = rv.file })
  if not args then dsforge.fail(err, 0) end
  rv.args = args
  rv.path = path
  c.variant = rv
  return rv
end

local function stem(v) return v.profile .. "-" .. v.name end

-- YAML and JSON hold text: a path in them must be UTF-8 (a shell script
-- takes any bytes). Checked where the path enters the file.
local function utf8_path(rv, file_kind)
  if utf8.len(rv.file) == nil then
    dsforge.fail("the -o directory is not valid UTF-8, and " .. file_kind
      .. " can name only UTF-8 paths: write to a directory with a UTF-8 name", 0)
  end
end

-- A Slurm job name: characters sbatch reads without quoting, others as _.
local function job_name(s)
  if s:find("^[%w._:/@+,=%-]*$") then return s end
  return (s:gsub("[^%w._:/@+,=%-]", "_"))
end

-- The layout and the launcher options from the variant's params (the
-- names are documented in contrib/docs/launch.md, "Emitted files").
local function launch_opts(v, ctx, rv)
  local c = ctx.cache
  if c.opts then return c.opts, c.nodes end
  local p = lazy.params.given(rv.params)
  local opts = {
    master_addr = p.master_addr, master_port = p.master_port, hostfile = p.hostfile,
    partition = p.slurm_partition, time = p.slurm_time, account = p.slurm_account,
    cpus_per_task = p.cpus_per_task,
    accelerate_config = rv.path(stem(v) .. ".accelerate.yaml"),
    job_name = job_name(stem(v)),
  }
  local ok, n = pcall(lazy.render.layout, rv, opts)
  if not ok then
    dsforge.fail((tostring(n):gsub("^.-launch%.render: ", "")), 0)
  end
  -- Several nodes: the deepspeed launcher reads a hostfile (its default
  -- path unless the profile's hostfile param names one).
  if n > 1 and not opts.hostfile then opts.hostfile = "/job/hostfile" end
  c.opts, c.nodes = opts, n
  return opts, n
end

local function train_cmd(v, ctx)
  return lazy.quote.train_command(ctx.train_cmd, v.params and v.params.train_cmd,
    "the launch emitter")
end

return {
  name = "launch",
  interface = 1,
  version = "0.2.0",
  summary = "Trainer arguments, accelerate and launcher files, training command checks",
  -- Its files and checks are about DeepSpeed configs: it adds to the
  -- deepspeed plugin's targets (plugins.md, Targets).
  targets = { adds = { "deepspeed", "hf" } },
  -- the variables cmdcheck reads (its M.env; a test keeps them equal)
  check_command = { env = { "WORLD_SIZE" },
    run = function(...) return lazy.cmdcheck.run(...) end },
  machine_params = function(...) return lazy.machine.params(...) end,
  emitters = {
    {
      name = "hf-args",
      summary = "the Hugging Face TrainingArguments that reproduce the variant, as JSON"
        .. " and as a bash array",
      files = { "{profile}-{variant}.hf-args.json", "{profile}-{variant}.hf-args.sh" },
      emit = function(v, ctx)
        local rv = variant_of(v, ctx)
        utf8_path(rv, "the Trainer arguments (JSON)")
        return { lazy.render.hf_args_json(rv), lazy.render.hf_args_sh(rv) }
      end,
    },
    {
      name = "accelerate",
      summary = "an accelerate config (DeepSpeed with the variant's JSON) for"
        .. " accelerate launch --config_file",
      file = "{profile}-{variant}.accelerate.yaml",
      emit = function(v, ctx)
        local rv = variant_of(v, ctx)
        utf8_path(rv, "an accelerate config (YAML)")
        local opts, n = launch_opts(v, ctx, rv)
        if n > 1 and not opts.master_addr then
          dsforge.fail("a multi-node accelerate config needs the"
            .. " first node's address: declare a master_addr param in the profile", 0)
        end
        return lazy.render.accelerate_yaml(rv, opts)
      end,
    },
    {
      name = "launch",
      summary = "a launch script: bash FILE deepspeed|torchrun|accelerate, or sbatch FILE"
        .. " (Slurm: srun + torchrun rendezvous)",
      file = "{profile}-{variant}.launch.sh",
      emit = function(v, ctx)
        local rv = variant_of(v, ctx)
        local opts = launch_opts(v, ctx, rv)
        opts.train_cmd, opts.train_quoted = train_cmd(v, ctx)
        return lazy.render.launch_sh(rv, opts)
      end,
    },
  },
}
