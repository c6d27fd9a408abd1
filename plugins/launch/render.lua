-- launch.render: text emitters, each a pure function
--   M.<name>(variant, opts) -> text
-- variant = { config = the finished DeepSpeed config, params = its profile
--             params, file = the DeepSpeed JSON's file name or path,
--             name = "profile-variant" (optional, used in comments) }
-- opts (all optional unless said):
--   train_cmd     list of words: the training script and its own arguments
--                 (required by the launcher scripts); the TrainingArguments
--                 words (hf_args_words) are appended unless hf_args = false
--   train_quoted  quote.sh_words(train_cmd), when the caller has it
--   num_nodes, gpus_per_node   default: from params world_size and
--                 gpus_per_node (nodes * GPUs per node must equal world_size)
--   master_addr, master_port (default 29500), hostfile
--   accelerate_config  path of the accelerate YAML (default "accelerate.yaml")
--   job_name, partition, time, cpus_per_task, account   (Slurm)
-- Every value that reaches a shell goes through quote.sh, every YAML string
-- through quote.yaml (contrib/docs/launch.md). Output is deterministic.
--
-- variant.args (optional): the launch.trainer.training_args result, when
--             the caller computed it already (else computed per call)
-- Emitters: hf_args_json, hf_args_cli (a command-line fragment),
-- hf_args_sh (the same words as a bash array),
-- accelerate_yaml, launch_sh (the four launchers in one script: what the
-- launch emitter writes), deepspeed_sh, torchrun_sh, accelerate_sh,
-- slurm_sh (each launcher alone).
-- Helpers: hf_args_words, layout, json.

local type, error, ipairs, tostring, next = type, error, ipairs, tostring, next
local math, string, table = math, string, table
local dsforge = dsforge
local quote = require("launch.quote")
local trainer = require("launch.trainer")
local py = require("launch.py")

local M = {}

-- The name for a comment line: control characters as '?' (a comment ends
-- at a newline). The last name is kept: a variant's files are rendered
-- one after another, and a scan of a long name costs more than the rest.
local last_name, last_line
local function one_line(name)
  local s = tostring(name)
  if s ~= last_name then
    last_name, last_line = s, s:find("^%C*$") and s or (s:gsub("%c", "?"))
  end
  return last_line
end

---------------------------------------------------------------------------
-- JSON (sorted keys, two-space indent, numbers as Python writes them)
---------------------------------------------------------------------------

local function jstr(s)
  if s:find('^[^%c"\\]*$') then return '"' .. s .. '"' end
  return '"' .. s:gsub('[%c"\\]', function(c)
    local e = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r" }
    return e[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function json(v, ind)
  ind = ind or ""
  if v == true then return "true" end
  if v == false then return "false" end
  if v == nil or v == dsforge.null then return "null" end
  if type(v) == "number" then
    if v ~= v or v == math.huge or v == -math.huge then
      error("launch.render: " .. tostring(v) .. " has no JSON form", 3)
    end
    return py.num(v)
  end
  if type(v) == "string" then return jstr(v) end
  local inner = ind .. "  "
  local parts = {}
  if py.is_array(v) then
    if #v == 0 then return "[]" end
    for i = 1, #v do parts[i] = inner .. json(v[i], inner) end
    return "[\n" .. table.concat(parts, ",\n") .. "\n" .. ind .. "]"
  end
  local keys = dsforge.sorted_keys(v)
  if #keys == 0 then return "{}" end
  for i, k in ipairs(keys) do parts[i] = inner .. jstr(tostring(k)) .. ": " .. json(v[k], inner) end
  return "{\n" .. table.concat(parts, ",\n") .. "\n" .. ind .. "}"
end
M.json = json

---------------------------------------------------------------------------
-- hf-args
---------------------------------------------------------------------------

-- The order the words are written in (TrainingArguments' own order).
M.HF_ARG_ORDER = { "deepspeed", "per_device_train_batch_size", "gradient_accumulation_steps",
  "learning_rate", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm",
  "max_steps", "lr_scheduler_type", "warmup_ratio", "warmup_steps", "bf16", "fp16",
  "gradient_checkpointing" }

-- "--name" for each, already a plain sh word.
local FLAG = {}
for _, k in ipairs(M.HF_ARG_ORDER) do FLAG[k] = "--" .. k end

-- variant.args, when given, is the training_args result to use (the
-- emitters compute it once per variant and share it: plugins/launch/init.lua).
local function args_of(variant)
  if variant.args then return variant.args end
  local args, err = trainer.training_args({ config = variant.config, params = variant.params,
    deepspeed_file = variant.file })
  if not args then error("launch.render: " .. err, 3) end
  return args
end
M.training_args = args_of

-- Every key training_args may return, in sorted order: json()'s order for
-- those, without sorting per variant.
local ARG_KEYS = {}
for i, k in ipairs(M.HF_ARG_ORDER) do ARG_KEYS[i] = k end
table.sort(ARG_KEYS)

function M.hf_args_json(variant)
  local args = args_of(variant)
  local out, n = {}, 0
  for _, k in ipairs(ARG_KEYS) do
    local v = args[k]
    if v ~= nil then
      n = n + 1
      out[n] = '  "' .. k .. '": ' .. json(v, "  ")
    end
  end
  local total = 0
  for _ in next, args do total = total + 1 end
  -- Keys of another caller's args: the general writer.
  if total ~= n or n == 0 then return json(args) .. "\n" end
  return "{\n" .. table.concat(out, ",\n") .. "\n}\n"
end

-- Words for HfArgumentParser: "--name value"; a true boolean is the bare
-- flag, a false one is left out (every boolean here defaults to False).
function M.hf_args_words(variant)
  local args = args_of(variant)
  local words = {}
  for _, k in ipairs(M.HF_ARG_ORDER) do
    local v = args[k]
    if v == true then words[#words + 1] = "--" .. k
    elseif v ~= nil and v ~= false then
      words[#words + 1] = "--" .. k
      words[#words + 1] = type(v) == "number" and py.num(v) or tostring(v)
    end
  end
  return words
end

local function hf_quoted(variant)
  local hf = variant.hf_quoted
  if hf then return hf end
  -- hf_args_words, quoted, without the list: the flags are quoted once
  -- (FLAG), the values by quote.sh.
  local args = args_of(variant)
  local out, n = {}, 0
  for _, k in ipairs(M.HF_ARG_ORDER) do
    local v = args[k]
    if v == true then
      n = n + 1
      out[n] = FLAG[k]
    elseif v ~= nil and v ~= false then
      n = n + 1
      out[n] = FLAG[k] .. " " .. quote.sh(type(v) == "number" and py.num(v) or tostring(v))
    end
  end
  hf = table.concat(out, " ")
  if variant.args then variant.hf_quoted = hf end
  return hf
end

function M.hf_args_cli(variant)
  return hf_quoted(variant) .. "\n"
end

-- The same words as a bash array, for `source FILE` then
-- `python train.py "${hf_args[@]}"`.
function M.hf_args_sh(variant)
  local name = one_line(variant.name or variant.file or "variant")
  return "# TrainingArguments for " .. name .. " (generated by dsforge, plugin launch)\n"
    .. '# use: source THIS_FILE; python train.py "${hf_args[@]}"\n'
    .. "hf_args=(" .. hf_quoted(variant) .. ")\n"
end

---------------------------------------------------------------------------
-- Layout: nodes x GPUs per node
---------------------------------------------------------------------------

local function posint(v, what)
  if math.type(v) ~= "integer" or v < 1 then
    error("launch.render: " .. what .. " must be an integer >= 1, got " .. tostring(v), 3)
  end
  return v
end

-- M.layout(variant, opts) -> nodes, gpus_per_node, world_size
function M.layout(variant, opts)
  opts = opts or {}
  local p = variant.params or {}
  local w = p.world_size or 1
  local g = opts.gpus_per_node or math.min(p.gpus_per_node or w, w)
  local n = opts.num_nodes or (w + g - 1) // g
  posint(w, "world_size"); posint(g, "gpus_per_node"); posint(n, "num_nodes")
  if n * g ~= w then
    error(string.format("launch.render: %d node(s) x %d GPU(s) is %d processes, but the"
      .. " config's world_size is %d", n, g, n * g, w), 2)
  end
  return n, g, w
end

-- The training command and the TrainingArguments words, quoted. With
-- variant.args given (a caller that shares work between the files of a
-- variant), the quoted words are kept in variant.hf_quoted;
-- opts.train_quoted, when given, is quote.sh_words(opts.train_cmd) (a
-- caller that renders many variants of one command quotes it once).
local function command_text(variant, opts)
  local cmd = opts.train_cmd
  if type(cmd) ~= "table" or #cmd == 0 then
    error("launch.render: opts.train_cmd must be a non-empty list of words", 4)
  end
  local text = opts.train_quoted or quote.sh_words(cmd)
  if opts.hf_args ~= false then
    local hf = hf_quoted(variant)
    if hf ~= "" then text = text .. " " .. hf end
  end
  return text
end

-- The same, as one group of raw words.
local function command(variant, opts)
  return { { raw = command_text(variant, opts) } }
end

-- A script: header comment, set -eu, then the launcher words. Groups of
-- words go on continuation lines for reading; `raw` words are shell text
-- this module wrote: its variable expansions, or words it quoted already.
local function script(title, pre, groups)
  local lines = { "#!/usr/bin/env bash", "# " .. title, "# Generated by dsforge (plugin launch)." }
  for _, l in ipairs(pre) do lines[#lines + 1] = l end
  local parts = {}
  for _, g in ipairs(groups) do
    local ws = {}
    for _, w in ipairs(g) do
      ws[#ws + 1] = type(w) == "table" and w.raw or quote.sh(w)
    end
    if #ws > 0 then parts[#parts + 1] = table.concat(ws, " ") end
  end
  lines[#lines + 1] = table.concat(parts, " \\\n  ")
  return table.concat(lines, "\n") .. "\n"
end

local function title(variant, what, n, g)
  local name = variant.name or variant.file or "variant"
  -- A comment line ends at a newline: keep the name on one line.
  return string.format("%s: %s, %d node(s) x %d GPU(s)", one_line(name), what, n, g)
end

local function port(opts) return posint(opts.master_port or 29500, "master_port") end

---------------------------------------------------------------------------
-- accelerate config YAML
---------------------------------------------------------------------------

-- What `accelerate config` writes for DeepSpeed with a config file
-- (accelerate commands/config/cluster.py, config_args.py ClusterConfig).
-- No mixed_precision: with deepspeed_config_file, a mixed_precision from the
-- accelerate config makes DeepSpeedPlugin._deepspeed_config_checks raise
-- (utils/dataclasses.py; launch.py passes it in ACCELERATE_CONFIG_DS_FIELDS);
-- the JSON's bf16/fp16 sections decide the precision.
function M.accelerate_mapping(variant, opts)
  opts = opts or {}
  local n, _, w = M.layout(variant, opts)
  local zero = trainer.get(variant.config, "zero_optimization.stage")
  local ds = { deepspeed_config_file = variant.file or error("launch.render: variant.file is required", 2),
    zero3_init_flag = zero == 3 }
  if n > 1 then ds.deepspeed_multinode_launcher = "standard" end
  if opts.hostfile then ds.deepspeed_hostfile = opts.hostfile end
  local m = {
    compute_environment = "LOCAL_MACHINE", debug = false, deepspeed_config = ds,
    distributed_type = "DEEPSPEED", machine_rank = 0, main_process_port = port(opts),
    main_training_function = "main", num_machines = n, num_processes = w,
    rdzv_backend = "static", same_network = true, use_cpu = false,
  }
  if n > 1 then
    m.main_process_ip = opts.master_addr
      or error("launch.render: a multi-node accelerate config needs opts.master_addr", 2)
  end
  return m
end

local function yaml_scalar(v)
  if v == true then return "true" end
  if v == false then return "false" end
  if math.type(v) == "integer" then return string.format("%d", v) end
  if type(v) == "string" then return quote.yaml(v) end
  error("launch.render: no YAML form for " .. tostring(v), 3)
end

-- The keys accelerate_mapping writes, both levels, sorted: a mapping made
-- only of these is written in this order without sorting its keys.
local YAML_KEYS = { "compute_environment", "debug", "deepspeed_config", "deepspeed_config_file",
  "deepspeed_hostfile", "deepspeed_multinode_launcher", "distributed_type", "machine_rank",
  "main_process_ip", "main_process_port", "main_training_function", "num_machines",
  "num_processes", "rdzv_backend", "same_network", "use_cpu", "zero3_init_flag" }

local function sorted_keys(m)
  local n, known = 0, {}
  for _ in next, m do n = n + 1 end
  for _, k in ipairs(YAML_KEYS) do
    if m[k] ~= nil then known[#known + 1] = k end
  end
  if #known == n then return known end
  return dsforge.sorted_keys(m)
end

local function yaml(m, ind, out)
  for _, k in ipairs(sorted_keys(m)) do
    local v = m[k]
    if type(v) == "table" then
      out[#out + 1] = ind .. k .. ":"
      yaml(v, ind .. "  ", out)
    else
      out[#out + 1] = ind .. k .. ": " .. yaml_scalar(v)
    end
  end
  return out
end

function M.accelerate_yaml(variant, opts)
  local lines = { "# accelerate config for " .. one_line(variant.name or variant.file),
    "# Generated by dsforge (plugin launch); use: accelerate launch --config_file FILE ..." }
  yaml(M.accelerate_mapping(variant, opts), "", lines)
  return table.concat(lines, "\n") .. "\n"
end

---------------------------------------------------------------------------
-- Launcher scripts
---------------------------------------------------------------------------

local PRE = { "set -euo pipefail" }

-- Each launcher as (pre, line): pre are the lines it needs before its
-- command (variables it reads), line is its own words, quoted, before the
-- training command. n, g and the port are integers (layout, port).
local function deepspeed_part(opts, n, g)
  local line = "deepspeed --num_nodes " .. n .. " --num_gpus " .. g
  if opts.hostfile then
    line = line .. " --hostfile " .. quote.sh(opts.hostfile)
  elseif n > 1 then
    error("launch.render: the deepspeed launcher needs opts.hostfile for more than one node", 3)
  end
  if opts.master_addr then line = line .. " --master_addr " .. quote.sh(opts.master_addr) end
  return {}, line .. " --master_port " .. port(opts)
end

local NONE = {}

local function torchrun_part(variant, opts, n, g)
  if n == 1 then
    return NONE, "torchrun --standalone --nnodes 1 --nproc_per_node " .. g
  end
  -- The same script runs on every node; they meet at the rendezvous.
  local addr = opts.master_addr and quote.sh(opts.master_addr)
    or '"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}"'
  return { "rdzv_host=" .. addr },
    "torchrun --nnodes " .. n .. " --nproc_per_node " .. g .. " --rdzv_backend c10d"
      .. ' --rdzv_endpoint "$rdzv_host":' .. port(opts) .. " --rdzv_id "
      .. quote.sh(opts.rdzv_id or ("dsforge-" .. tostring(variant.name or "run")))
end

local function accelerate_part(opts, n)
  local line = "accelerate launch --config_file " .. quote.sh(opts.accelerate_config or "accelerate.yaml")
  if n == 1 then return NONE, line end
  return { 'machine_rank="${MACHINE_RANK:?set MACHINE_RANK to the rank of this node, 0..'
      .. (n - 1) .. '}"' }, line .. ' --machine_rank "$machine_rank"'
end

-- #SBATCH lines are read by sbatch, not by a shell: no quoting exists
-- there, so their values are restricted to characters that need none.
local function sbatch_value(v, what)
  local s = type(v) == "number" and string.format("%d", v) or v
  if type(s) ~= "string" or not s:find("^[%w._:/@+,=%-]+$") then
    error("launch.render: Slurm " .. what .. " must be made of letters, digits and"
      .. " ._:/@+,=- (sbatch reads #SBATCH lines without a shell), got " .. string.format("%q", tostring(v)), 4)
  end
  return s
end

local SBATCH_OPTS = { { "cpus_per_task", "cpus-per-task" }, { "time", "time" },
  { "partition", "partition" }, { "account", "account" } }

-- The #SBATCH lines; they must come before the script's first command.
local function sbatch_lines(variant, opts, n, g)
  local lines = {
    "#SBATCH --job-name=" .. sbatch_value(opts.job_name
      or ("dsforge-" .. tostring(variant.name or "run")):gsub("[^%w._:/@+,=%-]", "_"), "job_name"),
    "#SBATCH --nodes=" .. n,
    "#SBATCH --ntasks-per-node=1",
    "#SBATCH --gpus-per-node=" .. g,
  }
  for _, o in ipairs(SBATCH_OPTS) do
    if opts[o[1]] ~= nil then lines[#lines + 1] = "#SBATCH --" .. o[2] .. "=" .. sbatch_value(opts[o[1]], o[1]) end
  end
  return lines
end

-- One task per node; each task's torchrun starts the node's GPUs and
-- meets the others at the head node's rendezvous.
local SLURM_PRE = { 'head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)' }

local function slurm_part(opts, n, g)
  return SLURM_PRE, "srun torchrun --nnodes " .. n .. " --nproc_per_node " .. g
    .. ' --rdzv_id "$SLURM_JOB_ID" --rdzv_backend c10d --rdzv_endpoint "$head_node":' .. port(opts)
end

local function with(pre, lines)
  for _, l in ipairs(lines) do pre[#pre + 1] = l end
  return pre
end

function M.deepspeed_sh(variant, opts)
  opts = opts or {}
  local n, g = M.layout(variant, opts)
  local pre, launcher = deepspeed_part(opts, n, g)
  return script(title(variant, "deepspeed launcher", n, g), with({ PRE[1] }, pre),
    { { { raw = launcher } }, command(variant, opts) })
end

function M.torchrun_sh(variant, opts)
  opts = opts or {}
  local n, g = M.layout(variant, opts)
  local pre, launcher = torchrun_part(variant, opts, n, g)
  return script(title(variant, "torchrun", n, g), with({ PRE[1] }, pre),
    { { { raw = launcher } }, command(variant, opts) })
end

function M.accelerate_sh(variant, opts)
  opts = opts or {}
  local n, g = M.layout(variant, opts)
  local pre, launcher = accelerate_part(opts, n)
  return script(title(variant, "accelerate launch", n, g), with({ PRE[1] }, pre),
    { { { raw = launcher } }, command(variant, opts) })
end

function M.slurm_sh(variant, opts)
  opts = opts or {}
  local n, g = M.layout(variant, opts)
  local pre, launcher = slurm_part(opts, n, g)
  return script(title(variant, "Slurm sbatch + srun torchrun", n, g),
    with(with(sbatch_lines(variant, opts, n, g), PRE), pre),
    { { { raw = launcher } }, command(variant, opts) })
end

-- The launch script's constant text.
local LAUNCH_HEAD = table.concat({
  "# Generated by dsforge (plugin launch). One of:",
  "#   bash THIS_FILE deepspeed    the deepspeed launcher",
  "#   bash THIS_FILE torchrun     torchrun",
  "#   bash THIS_FILE accelerate   accelerate launch with the accelerate config",
  "#   sbatch THIS_FILE            Slurm: srun + torchrun rendezvous (bash THIS_FILE slurm in a job)",
  "" }, "\n")
local LAUNCH_CASE = table.concat({
  "launcher=${1:-}",
  "if [[ -z $launcher && -n ${SLURM_JOB_ID:-} ]]; then launcher=slurm; fi",
  "case $launcher in",
  "" }, "\n")
local LAUNCH_TAIL = table.concat({
  "  *)",
  "    echo " .. quote.sh("usage: bash THIS_FILE deepspeed|torchrun|accelerate, or sbatch THIS_FILE")
    .. " >&2",
  "    exit 2",
  "    ;;",
  "esac",
  "" }, "\n")

-- One branch of the launch script's case into out.
local function case(out, name, pre, line)
  out[#out + 1] = name
  for _, l in ipairs(pre) do out[#out + 1] = "    " .. l .. "\n" end
  out[#out + 1] = "    " .. line .. ' "${cmd[@]}"\n    ;;\n'
end

-- All four in one script: `bash FILE deepspeed|torchrun|accelerate`, and
-- `sbatch FILE` (its #SBATCH lines are comments to bash; under Slurm,
-- SLURM_JOB_ID chooses srun + torchrun when no launcher is named; `slurm`
-- names it). The training command is the bash array cmd, written once.
function M.launch_sh(variant, opts)
  opts = opts or {}
  local n, g = M.layout(variant, opts)
  local name = one_line(variant.name or variant.file or "variant")
  local out = {
    "#!/usr/bin/env bash\n",
    string.format("# %s: launch script, %d node(s) x %d GPU(s)\n", name, n, g),
    LAUNCH_HEAD,
    table.concat(sbatch_lines(variant, opts, n, g), "\n"),
    "\nset -euo pipefail\ncmd=(", command_text(variant, opts), ")\n",
    LAUNCH_CASE,
  }
  case(out, "  deepspeed)\n", deepspeed_part(opts, n, g))
  case(out, "  torchrun)\n", torchrun_part(variant, opts, n, g))
  case(out, "  accelerate)\n", accelerate_part(opts, n))
  case(out, "  slurm)\n", slurm_part(opts, n, g))
  out[#out + 1] = LAUNCH_TAIL
  return table.concat(out)
end

return M
