-- plugins/launch/emit.lua -- the launch plugin's variant emitters
-- (init.lua declares them; contrib/docs/launch.md, "Emitted files"):
-- the Trainer arguments, the accelerate config and the launch script of
-- one variant. Loaded when gen first emits one of them.

local tostring, pcall = tostring, pcall
local dsforge = dsforge

-- (every emitter here renders with them: loaded with this module, which
-- init.lua loads only when gen emits a launch file)
local render = require("launch.render")
local trainer = require("launch.trainer")
local quote = require("launch.quote")
local params = require("launch.params")

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
  local args, err = trainer.training_args({ config = rv.config, params = rv.params,
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
  local p = params.given(rv.params)
  local opts = {
    master_addr = p.master_addr, master_port = p.master_port, hostfile = p.hostfile,
    partition = p.slurm_partition, time = p.slurm_time, account = p.slurm_account,
    cpus_per_task = p.cpus_per_task,
    accelerate_config = rv.path(stem(v) .. ".accelerate.yaml"),
    job_name = job_name(stem(v)),
  }
  local ok, n = pcall(render.layout, rv, opts)
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
  return quote.train_command(ctx.train_cmd, v.params and v.params.train_cmd,
    "the launch emitter")
end

local M = {}

function M.hf_args(v, ctx)
  local rv = variant_of(v, ctx)
  utf8_path(rv, "the Trainer arguments (JSON)")
  return { render.hf_args_json(rv), render.hf_args_sh(rv) }
end

function M.accelerate(v, ctx)
  local rv = variant_of(v, ctx)
  utf8_path(rv, "an accelerate config (YAML)")
  local opts, n = launch_opts(v, ctx, rv)
  if n > 1 and not opts.master_addr then
    dsforge.fail("a multi-node accelerate config needs the"
      .. " first node's address: declare a master_addr param in the profile", 0)
  end
  return render.accelerate_yaml(rv, opts)
end

function M.launch(v, ctx)
  local rv = variant_of(v, ctx)
  local opts = launch_opts(v, ctx, rv)
  opts.train_cmd, opts.train_quoted = train_cmd(v, ctx)
  return render.launch_sh(rv, opts)
end

return M
