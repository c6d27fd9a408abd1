-- launch.cmdline: a training command, parsed into facts and checked
-- against a DeepSpeed config.
--
-- API
--   M.parse(words, env, files, opts) -> facts
--     words: the command as a list of strings; index 1 is the first word.
--     env:   { NAME = "value" } the command's environment (WORLD_SIZE is
--            read for a plain `python` run); leading NAME=value words of
--            the command are added to it.
--     files: optional { [path] = text } for a --hostfile or an accelerate
--            --config_file the caller has read (this module reads nothing).
--     opts:  optional { gpus_per_node = n }: the GPUs a launcher uses when
--            the command does not say (deepspeed without --num_gpus,
--            torchrun --nproc_per_node gpu|auto), e.g. from `dsforge detect`.
--     Launcher options not known to take a value are read as flags.
--     facts = { launcher = "deepspeed"|"torchrun"|"accelerate"|"python"|
--               "unknown", launcher_index, options = { name = { value,
--               index } } (launcher options, '-' in names as '_'),
--               script = { word, index } or nil, world_size, world_indexes
--               = { indexes of the arguments that set it }, world_source,
--               flags = { name = { value (string or true), index, form =
--               "space"|"equals"|"bare" } } (the script's --flags, '-' in
--               names as '_', the last one wins), notes = { {index,
--               message} } }
--   M.trainer_args(facts) -> args, problems
--     TrainingArguments values the flags set (typed as HfArgumentParser
--     types them), and { {index, message} } for values it would reject.
--   M.check(config, facts, opts) -> findings
--     opts = { params = the variant's profile params (the intent),
--              hidden_size, num_training_steps, ds_version = the
--              DeepSpeed release asked for (--ds-version; nil: the newest) }
--     findings: sorted list of { severity = "error"|"warning"|"note",
--       rule, index (first argument concerned, or nil), indexes (all of
--       them), path (config key concerned, or nil), message }.
-- Sources: deepspeed/launcher/runner.py (parse_args), torch/distributed/
-- run.py (get_args_parser), accelerate commands/launch.py and
-- utils/dataclasses.py (DeepSpeedPlugin), transformers hf_argparser.py
-- (string_to_bool, '--a-b' aliases) and integrations/deepspeed.py.

local type, ipairs, tostring, tonumber = type, ipairs, tostring, tonumber
local math, string, table = math, string, table
local dsforge = dsforge
local trainer = require("launch.trainer")
local py = require("launch.py")
local yaml = require("launch.yaml")

local M = {}

local function set(list)
  local s = {}
  for _, k in ipairs(list) do s[k] = true end
  return s
end

-- Launcher options that take a value; every other option is a flag.
local VALUE_OPTS = {
  deepspeed = set({ "hostfile", "H", "include", "i", "exclude", "e", "num_nodes",
    "min_elastic_nodes", "max_elastic_nodes", "num_gpus", "master_port", "master_addr",
    "node_rank", "launcher", "launcher_args", "enable_each_rank_log", "bind_core_list",
    "ssh_port", "venv_script", "comment", "account" }),
  torchrun = set({ "nnodes", "nproc_per_node", "rdzv_backend", "rdzv_endpoint", "rdzv_id",
    "rdzv_conf", "max_restarts", "monitor_interval", "start_method", "role", "node_rank",
    "master_addr", "master_port", "local_addr", "log_dir", "redirects", "r", "tee", "t",
    "logs_specs", "local_ranks_filter", "event_log_handler", "numa_binding", "signals_to_handle" }),
  accelerate = set({ "config_file", "num_processes", "num_machines", "machine_rank",
    "main_process_ip", "main_process_port", "mixed_precision", "dynamo_backend",
    "gpu_ids", "num_cpu_threads_per_process", "deepspeed_config_file", "zero_stage",
    "offload_optimizer_device", "offload_param_device", "gradient_accumulation_steps",
    "gradient_clipping", "zero3_init_flag", "zero3_save_16bit_model",
    "deepspeed_hostfile", "deepspeed_exclusion_filter", "deepspeed_inclusion_filter",
    "deepspeed_multinode_launcher", "rdzv_backend", "rdzv_conf", "max_restarts",
    "monitor_interval", "main_training_function", "log_dir", "tee", "role",
    "downcast_bf16", "same_network" }),
}
VALUE_OPTS.python = {}

-- TrainingArguments fields by type (transformers training_args.py).
local INT = set({ "per_device_train_batch_size", "gradient_accumulation_steps", "max_steps",
  "warmup_steps" })
local FLOAT = set({ "learning_rate", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon",
  "max_grad_norm", "warmup_ratio" })
local BOOL = set({ "bf16", "fp16", "bf16_full_eval", "fp16_full_eval", "gradient_checkpointing",
  "save_on_each_node", "auto_find_batch_size", "adafactor" })

-- hf_argparser.string_to_bool
local TRUE = set({ "yes", "true", "t", "y", "1" })
local FALSE = set({ "no", "false", "f", "n", "0" })
local function is_bool_word(w) w = w:lower(); return TRUE[w] or FALSE[w] end

local function basename(w) return (w:match("([^/]+)$")) or w end

local function norm(name) return (name:gsub("%-", "_")) end

-- Launcher options from words[i]; returns the index of the first word that
-- is not a launcher option.
local function options(words, i, kind, facts)
  local takes = VALUE_OPTS[kind]
  while i <= #words do
    local w = words[i]
    if w == "--" then return i + 1 end
    if w:sub(1, 1) ~= "-" or w == "-" then return i end
    local name, value = w:match("^%-%-?([^=]+)=(.*)$")
    if not name then name = w:match("^%-%-?(.+)$") end
    name = norm(name)
    if value ~= nil then
      facts.options[name] = { value = value, index = i }
    elseif takes[name] and i < #words then
      facts.options[name] = { value = words[i + 1], index = i }
      i = i + 1
    else
      facts.options[name] = { value = true, index = i }
    end
    i = i + 1
  end
  return i
end

-- The script's own --flags (HfArgumentParser style).
local function flags(words, i, facts)
  while i <= #words do
    local w = words[i]
    local name, value = w:match("^%-%-([^=]+)=(.*)$")
    if name then
      facts.flags[norm(name)] = { value = value, index = i, form = "equals" }
    else
      name = w:match("^%-%-(.+)$")
      if name then
        name = norm(name)
        local nxt = words[i + 1]
        local takes = nxt ~= nil and nxt:sub(1, 2) ~= "--"
        if BOOL[name] then takes = nxt ~= nil and is_bool_word(nxt) end
        if takes then
          facts.flags[name] = { value = nxt, index = i, form = "space" }
          i = i + 1
        else
          facts.flags[name] = { value = true, index = i, form = "bare" }
        end
      end
    end
    i = i + 1
  end
end

-- The first code points of Unicode's runs of ten decimal digits
-- (category Nd, Unicode 15): Python's int() reads every one of them.
local ND = { 0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6,
  0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810,
  0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0,
  0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0,
  0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0,
  0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE,
  0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950, 0x1FBF0 }

local function digit_of(cp)
  for i = 1, #ND do
    local z = ND[i]
    if cp < z then return nil end
    if cp < z + 10 then return cp - z end
  end
  return nil
end

-- Python int() of a string, as the Trainer's argument parser reads an int
-- option: surrounding whitespace, a sign, decimal digits of any script
-- with single underscores between them, any size (beyond 2^63 the
-- nearest float: a value that size only ever mismatches). nil when
-- Python raises ValueError.
local function int_of(v)
  if type(v) ~= "string" then return nil end
  local s = v:gsub("^%s+", ""):gsub("%s+$", "")
  local sign, body = s:match("^([+-]?)(.+)$")
  if not body or not utf8.len(body) then return nil end
  local digits, after_sep = {}, true
  for _, cp in utf8.codes(body) do
    if cp == 0x5F then
      if after_sep then return nil end
      after_sep = true
    else
      local d = digit_of(cp)
      if d == nil then return nil end
      digits[#digits + 1] = d
      after_sep = false
    end
  end
  if after_sep then return nil end
  local text = table.concat(digits)
  local n = math.tointeger(tonumber(text)) or tonumber(text)
  return sign == "-" and -n or n
end

-- Python float(): decimal or exponent form, inf, nan; no hex.
local function float_of(v)
  if type(v) ~= "string" then return nil end
  local s = v:gsub("^%s+", ""):gsub("%s+$", ""):lower()
  local sign = 1
  if s:sub(1, 1) == "-" then sign = -1 end
  local body = s:gsub("^[+-]", "")
  if body == "inf" or body == "infinity" then return sign * math.huge end
  if body:find("x") or body:find("^[%.]?$") then return nil end
  if not body:find("^%d*%.?%d*e?[+-]?%d*$") then return nil end
  local n = tonumber(s)
  return n and n + 0.0 or nil
end

-- The world size of a deepspeed launcher command.
local function deepspeed_world(facts, files, opts)
  local o = facts.options
  local function num(name)
    local x = o[name]
    if not x then return nil end
    local n = int_of(x.value)
    if n == nil then
      facts.notes[#facts.notes + 1] = { x.index, "--" .. name .. " is not an integer" }
    end
    return n, x.index
  end
  local nodes, ni = num("num_nodes")
  local gpus, gi = num("num_gpus")
  if nodes and nodes < 0 then nodes = nil end
  if gpus and gpus < 0 then gpus = nil end
  local hostfile = o.hostfile or o.H
  local slots
  if hostfile and files and type(hostfile.value) == "string" and files[hostfile.value] then
    slots = {}
    for line in (files[hostfile.value] .. "\n"):gmatch("([^\n]*)\n") do
      line = line:gsub("#.*", "")
      local host, n = line:match("^%s*(%S+)%s+slots%s*=%s*(%d+)")
      if host then slots[#slots + 1] = tonumber(n) end
    end
  end
  local include = o.include or o.i
  if include and type(include.value) == "string" then
    local total = 0
    for part in include.value:gmatch("[^@]+") do
      local ids = part:match(":(.*)$")
      if not ids then return nil, {} end
      for _ in ids:gmatch("[^,]+") do total = total + 1 end
    end
    return total, { include.index }
  end
  local idx = {}
  if hostfile then idx[#idx + 1] = hostfile.index end
  if ni then idx[#idx + 1] = ni end
  if gi then idx[#idx + 1] = gi end
  if slots and #slots > 0 then
    nodes = nodes or #slots
    if gpus == nil then
      local sum = 0
      for k = 1, math.min(nodes, #slots) do sum = sum + slots[k] end
      return sum, idx
    end
  end
  if hostfile and not slots and nodes == nil then return nil, idx end
  nodes = nodes or 1
  gpus = gpus or (opts and opts.gpus_per_node)
  if gpus == nil then return nil, idx end
  return nodes * gpus, idx
end

local function torchrun_world(facts, opts)
  local o = facts.options
  local npn = o.nproc_per_node
  local nn = o.nnodes
  local idx = {}
  local per = 1 -- torchrun's default
  if npn then
    idx[#idx + 1] = npn.index
    per = int_of(npn.value)
    if per == nil then
      if npn.value == "gpu" or npn.value == "auto" then per = opts and opts.gpus_per_node end
      if per == nil then return nil, idx end
    end
  end
  local nodes = 1
  if nn then
    idx[#idx + 1] = nn.index
    local a, b = tostring(nn.value):match("^(%d+):(%d+)$")
    if a then
      if a ~= b then
        facts.notes[#facts.notes + 1] = { nn.index, "--nnodes " .. nn.value
          .. " is elastic: the world size is only known at run time" }
        return nil, idx
      end
      nodes = tonumber(a)
    else
      nodes = int_of(nn.value)
      if nodes == nil then return nil, idx end
    end
  end
  return nodes * per, idx
end

-- accelerate launch reads what the command line does not give from its
-- --config_file (commands/launch.py): its top-level fields and those of
-- deepspeed_config stand for the options of the same names, at the
-- --config_file argument (from_file = true).
local function accelerate_config(facts, files)
  local cf = facts.options.config_file
  if not (cf and type(cf.value) == "string" and files and files[cf.value]) then return end
  local doc, err, line = yaml.parse(files[cf.value])
  if doc == nil then
    facts.notes[#facts.notes + 1] = { cf.index, cf.value .. ":" .. line .. ": " .. err
      .. ": the accelerate config is not read" }
    return
  end
  if type(doc) ~= "table" then return end
  facts.accelerate_config = doc
  local function take(t)
    for _, k in ipairs(dsforge.sorted_keys(t)) do
      local v = t[k]
      if type(k) == "string" and facts.options[k] == nil and type(v) ~= "table" and v ~= dsforge.null then
        facts.options[k] = { value = type(v) == "number" and py.num(v) or tostring(v),
          index = cf.index, from_file = cf.value }
      end
    end
  end
  take(doc)
  if type(doc.deepspeed_config) == "table" then take(doc.deepspeed_config) end
end

local function accelerate_world(facts)
  local o = facts.options
  if o.num_processes then
    return int_of(o.num_processes.value), { o.num_processes.index }
  end
  return nil, o.config_file and { o.config_file.index } or {}
end

local PY_VALUE_OPTS = set({ "-W", "-X", "-c" })

function M.parse(words, env, files, opts)
  local facts = { words = words, env = {}, options = {}, flags = {}, notes = {},
    launcher = "unknown", world_indexes = {} }
  for _, k in ipairs(dsforge.sorted_keys(env or {})) do facts.env[k] = env[k] end
  local i = 1
  while words[i] and words[i]:find("^[%a_][%w_]*=") do
    local k, v = words[i]:match("^([^=]+)=(.*)$")
    facts.env[k] = v
    i = i + 1
  end
  if words[i] == "env" then
    i = i + 1
    while words[i] and words[i]:find("^[%a_][%w_]*=") do
      local k, v = words[i]:match("^([^=]+)=(.*)$")
      facts.env[k] = v
      i = i + 1
    end
  end
  local first = words[i]
  if first == nil then return facts end
  local prog = basename(first)
  facts.launcher_index = i
  local kind
  if prog == "deepspeed" then kind, i = "deepspeed", i + 1
  elseif prog == "torchrun" then kind, i = "torchrun", i + 1
  elseif prog == "accelerate" and words[i + 1] == "launch" then kind, i = "accelerate", i + 2
  elseif prog:find("^python[%d.]*$") then
    i = i + 1
    while words[i] and words[i]:sub(1, 1) == "-" and words[i] ~= "-m" do
      if PY_VALUE_OPTS[words[i]] then i = i + 1 end
      i = i + 1
    end
    if words[i] == "-m" then
      local mod = words[i + 1]
      if mod == "torch.distributed.run" or mod == "torch.distributed.launch" then
        kind, i = "torchrun", i + 2
      elseif mod == "deepspeed.launcher.runner" then
        kind, i = "deepspeed", i + 2
      elseif mod == "accelerate.commands.launch" then
        kind, i = "accelerate", i + 2
      else
        facts.launcher = "python"
        facts.script = { word = mod, index = i + 1, module = true }
        flags(words, i + 2, facts)
      end
    else
      facts.launcher = "python"
      if words[i] then facts.script = { word = words[i], index = i } end
      flags(words, i + 1, facts)
    end
  end
  if kind then
    facts.launcher = kind
    i = options(words, i, kind, facts)
    if words[i] then facts.script = { word = words[i], index = i } end
    flags(words, i + 1, facts)
  elseif facts.launcher == "unknown" then
    facts.script = { word = first, index = i }
    flags(words, i + 1, facts)
  end

  local w, idx
  if facts.launcher == "deepspeed" then
    w, idx = deepspeed_world(facts, files, opts)
    facts.world_source = "the deepspeed launcher's --num_nodes/--num_gpus/--hostfile/--include"
  elseif facts.launcher == "torchrun" then
    w, idx = torchrun_world(facts, opts)
    facts.world_source = "torchrun's --nnodes x --nproc_per_node"
  elseif facts.launcher == "accelerate" then
    accelerate_config(facts, files)
    w, idx = accelerate_world(facts)
    facts.world_source = "accelerate's --num_processes"
  else
    local ws = facts.env.WORLD_SIZE
    if ws ~= nil then
      w = int_of(ws)
      facts.world_source = "WORLD_SIZE"
    else
      w = 1
      facts.world_source = "a single process (no launcher, no WORLD_SIZE)"
    end
    idx = {}
  end
  idx = idx or {}
  table.sort(idx)
  facts.world_size, facts.world_indexes = w, dsforge.array(idx)
  return facts
end

function M.trainer_args(facts)
  local args, problems = {}, {}
  for _, name in ipairs(dsforge.sorted_keys(facts.flags)) do
    local f = facts.flags[name]
    local v = f.value
    if INT[name] then
      local n = int_of(v)
      if n == nil then
        problems[#problems + 1] = { f.index, "--" .. name .. " needs an integer, got "
          .. (v == true and "nothing" or string.format("%q", v)) }
      else args[name] = n end
    elseif FLOAT[name] then
      local n = float_of(v)
      if n == nil then
        problems[#problems + 1] = { f.index, "--" .. name .. " needs a number, got "
          .. (v == true and "nothing" or string.format("%q", v)) }
      else args[name] = n end
    elseif BOOL[name] then
      if v == true then args[name] = true
      elseif TRUE[v:lower()] then args[name] = true
      elseif FALSE[v:lower()] then args[name] = false
      else
        problems[#problems + 1] = { f.index, "--" .. name .. ": Truthy value expected: got "
          .. v .. " but expected one of yes/no, true/false, t/f, y/n, 1/0 (case insensitive)." }
      end
    elseif name == "deepspeed" or name == "lr_scheduler_type" then
      if v ~= true then args[name] = v end
    end
  end
  return args, problems
end

---------------------------------------------------------------------------
-- check
---------------------------------------------------------------------------

-- Config path -> the TrainingArguments fields the Trainer compares it with.
local PATH_FLAGS = {
  train_micro_batch_size_per_gpu = { "per_device_train_batch_size" },
  gradient_accumulation_steps = { "gradient_accumulation_steps" },
  train_batch_size = { "per_device_train_batch_size", "gradient_accumulation_steps" },
  gradient_clipping = { "max_grad_norm" },
  ["optimizer.params.lr"] = { "learning_rate" },
  ["optimizer.params.betas"] = { "adam_beta1", "adam_beta2" },
  ["optimizer.params.eps"] = { "adam_epsilon" },
  ["optimizer.params.weight_decay"] = { "weight_decay" },
  ["scheduler.params.warmup_max_lr"] = { "learning_rate" },
  ["fp16.enabled"] = { "fp16", "fp16_full_eval" },
  ["bf16.enabled"] = { "bf16", "bf16_full_eval" },
  ["scheduler.params.total_num_steps"] = { "max_steps" },
  ["scheduler.params.warmup_num_steps"] = { "warmup_steps", "warmup_ratio" },
}
M.PATH_FLAGS = PATH_FLAGS

local function pystr(v) return py.str(v) end

-- Is the DeepSpeed version v (X.Y[.Z], a leading "v" allowed; nil: the
-- newest) older than the release r?
local function before(v, r)
  if type(v) ~= "string" then return false end
  local a = { v:match("^v?(%d+)%.(%d+)%.?(%d*)") }
  if not a[1] then return false end
  local b = { r:match("^(%d+)%.(%d+)%.(%d+)$") }
  for i = 1, 3 do
    local x, y = tonumber(a[i]) or 0, tonumber(b[i])
    if x ~= y then return x < y end
  end
  return false
end

function M.check(config, facts, opts)
  opts = opts or {}
  local out = {}
  local function add(sev, rule, indexes, path, msg)
    local idx = {}
    for _, x in ipairs(indexes or {}) do if x then idx[#idx + 1] = x end end
    table.sort(idx)
    out[#out + 1] = { severity = sev, rule = rule, index = idx[1], indexes = dsforge.array(idx),
      path = path, message = msg }
  end
  local F = facts.flags
  local function where(names)
    local idx = {}
    for _, n in ipairs(names) do if F[n] then idx[#idx + 1] = F[n].index end end
    return idx
  end

  for _, n in ipairs(facts.notes) do add("note", "launcher-args", { n[1] }, nil, n[2]) end
  local args, problems = M.trainer_args(facts)
  for _, p in ipairs(problems) do add("error", "bad-flag", { p[1] }, nil, p[2]) end

  if not F.deepspeed and facts.launcher ~= "accelerate" then
    add("warning", "no-deepspeed-flag", {}, nil, "the command does not pass --deepspeed"
      .. " CONFIG: the Trainer will not use DeepSpeed or this config")
  end
  if args.fp16 and args.bf16 then
    add("error", "precision", where({ "fp16", "bf16" }), nil, "--fp16 and --bf16 are both set:"
      .. " TrainingArguments refuses both (at most one of fp16 and bf16)")
  end

  local w = facts.world_size
  local windex = facts.world_indexes or {}
  if w == nil then
    add("note", "world-size", windex, nil, "the world size is unknown from the command ("
      .. (facts.world_source or "no launcher") .. "): the batch identity is not checked")
  end

  -- The Trainer's own checks (HfTrainerDeepSpeedConfig.fill_match).
  local res = trainer.fill(config, args, w, { hidden_size = opts.hidden_size,
    num_training_steps = opts.num_training_steps })
  for _, m in ipairs(res.mismatches) do
    local names = PATH_FLAGS[m.path] or {}
    local idx = where(names)
    if m.path == "train_batch_size" then
      for _, x in ipairs(windex) do idx[#idx + 1] = x end
    end
    local given = #where(names) > 0
    add("error", "trainer-mismatch", idx, m.path, m.message:sub(3)
      .. (given and "" or " (the Trainer's default: the command does not pass --" .. names[1] .. ")")
      .. ": the Trainer raises ValueError at start-up")
  end

  -- DeepSpeed's batch identity at this world size.
  local tb = trainer.get(config, "train_batch_size")
  local mb = trainer.get(config, "train_micro_batch_size_per_gpu")
  local gas = trainer.get(config, "gradient_accumulation_steps")
  if w and type(tb) == "number" and type(mb) == "number" and type(gas) == "number"
    and tb ~= mb * gas * w then
    add("error", "batch-identity", windex, "train_batch_size", string.format(
      "train_batch_size %s != micro batch %s * accumulation %s * world size %d (%s):"
      .. " DeepSpeed asserts at start-up", py.num(tb), py.num(mb), py.num(gas), w,
      facts.world_source or "?"))
  end

  -- Accumulation counted twice.
  local pd = F.per_device_train_batch_size and args.per_device_train_batch_size
  local cgas = type(gas) == "number" and gas or nil
  if pd and type(mb) == "number" and cgas and cgas > 1 and pd == mb * cgas then
    add("warning", "accumulation-twice", where({ "per_device_train_batch_size" }), "train_micro_batch_size_per_gpu",
      string.format("--per_device_train_batch_size %d is micro batch %s x accumulation %s:"
        .. " the per-device batch is the micro batch; accumulation is counted again by"
        .. " gradient_accumulation_steps", pd, py.num(mb), py.num(cgas)))
  elseif pd and type(tb) == "number" and pd == tb and tb ~= mb then
    add("warning", "accumulation-twice", where({ "per_device_train_batch_size" }), "train_batch_size",
      string.format("--per_device_train_batch_size %d is the global batch (train_batch_size):"
        .. " the world size and accumulation multiply it again", pd))
  end
  local ag = facts.options.gradient_accumulation_steps
  if facts.launcher == "accelerate" and ag and F.gradient_accumulation_steps then
    add("warning", "accumulation-twice", { ag.index, F.gradient_accumulation_steps.index },
      "gradient_accumulation_steps", "gradient accumulation is set both for accelerate"
      .. (ag.from_file and " (in " .. ag.from_file .. ")" or "") .. " and for"
      .. " the Trainer: set it once, in the DeepSpeed config and --gradient_accumulation_steps")
  end

  -- accelerate --mixed_precision against the config (DeepSpeedPlugin.set_mixed_precision).
  local mp = facts.options.mixed_precision
  if facts.launcher == "accelerate" and mp and mp.value ~= "no" then
    local other = mp.value == "fp16" and "bf16" or "fp16"
    local v = trainer.get(config, other .. ".enabled")
    if v ~= nil and tostring(v):lower() == "true" then
      add("error", "precision", { mp.index }, other .. ".enabled", "`--mixed_precision` arg cannot"
        .. " be set to `" .. mp.value .. "` when `" .. other .. "` is set in the DeepSpeed config file"
        .. " (accelerate raises ValueError)" .. (mp.from_file and " (mixed_precision: " .. mp.value
        .. " in " .. mp.from_file .. ")" or ""))
    end
  end

  -- Values the Trainer fills from its defaults (or flags) that differ
  -- from what the config intends.
  local intended = opts.params and trainer.training_args({ config = config, params = opts.params })
  if intended then
    local target = trainer.fill(config, intended, w or opts.params.world_size,
      { hidden_size = opts.hidden_size, num_training_steps = opts.num_training_steps }).config
    for _, path in ipairs(dsforge.sorted_keys(PATH_FLAGS)) do
      if trainer.get(config, path) == "auto" then
        local filled = trainer.get(res.config, path)
        local want = trainer.get(target, path)
        if want ~= nil and want ~= "auto" and filled ~= "auto" and filled ~= nil
          and not py.eq(filled, want) then
          local names = PATH_FLAGS[path]
          local given = where(names)
          local how = #given > 0 and "from the command" or "from its default (the command does not pass --"
            .. names[1] .. ")"
          add(path:find("enabled") and "error" or "warning", path:find("enabled") and "precision"
            or "default-differs", given, path, string.format("the Trainer fills %s = %s %s;"
            .. " the config intends %s", path, pystr(filled), how, pystr(want)))
        elseif filled == "auto" and want ~= nil and want ~= "auto" and path == "scheduler.params.total_num_steps" then
          add("warning", "default-differs", {}, path, "the Trainer fills total_num_steps from the"
            .. " epochs and the data size (no --max_steps); the config intends " .. pystr(want))
        end
      end
    end
  end
  local sched = trainer.get(res.config, "scheduler.type")
  local warm = trainer.get(res.config, "scheduler.params.warmup_num_steps")
  if (sched == "WarmupDecayLR" or sched == "WarmupLR" or sched == "WarmupCosineLR") and warm == 0
    and trainer.get(config, "scheduler.params.warmup_num_steps") == "auto" then
    -- DeepSpeed's WarmupLR/WarmupCosineLR raise ValueError for a value
    -- that is not an int > 0 from 0.19.3 (runtime/lr_schedules.py:695 and
    -- 844 at v0.19.5); before, they take max(2, warmup_num_steps)
    -- (lr_schedules.py:675 at v0.19.2)
    if before(opts.ds_version, "0.19.3") then
      add("warning", "zero-warmup", where({ "warmup_steps", "warmup_ratio" }),
        "scheduler.params.warmup_num_steps", "the Trainer fills warmup_num_steps with 0;"
        .. " DeepSpeed " .. opts.ds_version .. "'s " .. sched .. " takes max(2, 0), a warm-up"
        .. " of 2 steps (from 0.19.3 it raises ValueError): pass --warmup_steps N")
    else
      add("error", "zero-warmup", where({ "warmup_steps", "warmup_ratio" }),
        "scheduler.params.warmup_num_steps", "the Trainer fills warmup_num_steps with 0, but"
        .. " DeepSpeed's " .. sched .. " requires a positive integer (ValueError at start-up):"
        .. " pass --warmup_steps N")
    end
  end

  table.sort(out, function(a, b)
    local ia, ib = a.index or math.maxinteger, b.index or math.maxinteger
    if ia ~= ib then return ia < ib end
    if (a.path or "") ~= (b.path or "") then return (a.path or "") < (b.path or "") end
    if a.rule ~= b.rule then return a.rule < b.rule end
    return a.message < b.message
  end)
  return dsforge.array(out)
end

return M
