-- cluster.slurm: the slurm-array emitter. A whole sweep as Slurm job
-- arrays: one array per resource shape (nodes x GPUs per node x time
-- limit), each task running one variant; a submit script that sends them
-- all, the control first with --canary.
--
-- API (plugins/cluster/init.lua's emitter; contrib/docs/cluster.md)
--   M.row(v, ctx)    -> what the run needs of variant v: its shape and
--                       its Trainer arguments (words)
--   M.emit(run, ctx) -> { {file =, text =}, ... }: per shape
--                       slurm-array.<shape>.sbatch and .list, and
--                       slurm-array.submit.sh
--
-- Files (DIR is gen's -o):
--   slurm-array.<shape>.list    one line per task: the variant's name,
--                               JSON file, sha256 and Trainer arguments,
--                               tab-separated (line i+1 is array task i)
--   slurm-array.<shape>.sbatch  the array job: #SBATCH --array=0-(N-1)%K;
--                               task i reads line i+1, checks the JSON's
--                               sha256, exports DSF_VARIANT,
--                               DSF_CONFIG_SHA256 and DSF_RESULTS_DIR, runs
--                               srun + torchrun (rendezvous on the first
--                               node) and writes DIR/results/<variant>/
--                               (stdout.log, stderr.log, dsf-run.json;
--                               <variant> is the JSON file's stem,
--                               {profile}-{variant})
--   slurm-array.submit.sh       bash FILE: submits every array (with
--                               --canary, the control task alone first
--                               and everything else after it succeeded,
--                               --dependency=afterok) and records the job
--                               ids in DIR/results/slurm-jobs.tsv
--
-- Sources: sbatch(1) (--array, %K, --dependency=afterok, --parsable,
-- #SBATCH lines read without a shell), srun(1); torchrun's c10d
-- rendezvous as the launch plugin's Slurm script uses it
-- (plugins/launch/render.lua).

local quote = require("launch.quote")
local render = require("launch.render")
local trainer = require("launch.trainer")
local lparams = require("launch.params")

local dsforge = dsforge
local string, table, ipairs, tostring, pcall, math, type =
  string, table, ipairs, tostring, pcall, math, type

local M = {}

local function fail(msg) dsforge.fail("slurm-array: " .. msg, 0) end

-- What sbatch reads on an #SBATCH line: no shell, so no quoting exists;
-- only characters that need none.
local SBATCH_SAFE = "^[%w._:/@+,=%-]+$"

local function sbatch_value(v, what)
  local s = tostring(v)
  if not s:find(SBATCH_SAFE) then
    fail(what .. " must be made of letters, digits and ._:/@+,=- (sbatch reads"
      .. " #SBATCH lines without a shell), got " .. string.format("%q", s))
  end
  return s
end

-- A variant's name, file and Trainer words go on one tab-separated line
-- of the list, read by bash's `read`: none may hold a tab or a line end,
-- or be empty.
local function list_field(s, what, name)
  if s == "" or s:find("[%c]") then
    fail(string.format("%s of variant %q cannot go in a job array's list"
      .. " (empty, or a tab, line end or other control character)", what, name))
  end
  return s
end

function M.row(v, ctx)
  local name = v.name
  if name:find("[%c]") then
    fail(string.format("variant name %q holds a control character: no Slurm job"
      .. " can be named by it", name))
  end
  -- The launch params, checked where they enter (exit 2 naming the param).
  local lp = lparams.given(v.params)
  local cv = require("cluster.variant").of(v, ctx, "slurm-array")
  local n, g = cv.nodes, cv.gpus
  local out = {}
  for i, w in ipairs(cv.words) do out[i] = list_field(w, "a Trainer argument", name) end
  list_field(name, "the name", name)
  -- One string, not a table: a sweep of 100,000 variants holds every row
  -- until emit (the shape's fields, then the Trainer words, tab-separated).
  return table.concat({ n, g, ctx.options.time or lp.slurm_time or "",
    lp.slurm_partition or "", lp.slurm_account or "",
    lp.master_port or 29500, table.concat(out, "\t") }, "\t")
end

-- A row back as its shape (a table) and its Trainer words (the text).
local function parse_row(row)
  local n, g, time, partition, account, port, args =
    row:match("^(%d+)\t(%d+)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t(%d+)\t(.*)$")
  return { nodes = math.tointeger(n), gpus = math.tointeger(g), time = time,
    partition = partition, account = account, port = math.tointeger(port) }, args
end

-- The run's options (ctx.options, all strings), checked.
local function options(o, profile)
  local r = { canary = false }
  if o.max_parallel ~= nil then
    local k = math.tointeger(tonumber(o.max_parallel))
    if not k or k < 1 or not o.max_parallel:find("^%d+$") then
      fail("max_parallel must be an integer >= 1, got " .. string.format("%q", o.max_parallel))
    end
    r.max_parallel = k
  end
  if o.canary ~= nil then
    if o.canary ~= "true" and o.canary ~= "false" then
      fail("canary must be true or false, got " .. string.format("%q", o.canary))
    end
    r.canary = o.canary == "true"
  end
  if o.time ~= nil and not lparams.slurm_time_ok(o.time) then
    fail("time must be a Slurm time limit (MINUTES, H:MM:SS, D-H:MM:SS or UNLIMITED),"
      .. " got " .. string.format("%q", o.time))
  end
  for _, k in ipairs({ "partition", "account", "qos", "constraint" }) do
    if o[k] ~= nil then r[k] = sbatch_value(o[k], k) end
  end
  r.job_name = sbatch_value(o.job_name or ("dsf-" .. profile:gsub("[^%w._%-]", "_")), "job_name")
  r.extra = {}
  if o.sbatch ~= nil then
    for w in o.sbatch:gmatch("%S+") do
      if not w:find("^%-%-[%w][%w%-]*=?") then
        fail("sbatch options are long options (--name or --name=value), got "
          .. string.format("%q", w))
      end
      r.extra[#r.extra + 1] = sbatch_value(w, "an sbatch option")
    end
  end
  if o.launcher ~= nil and o.launcher ~= "torchrun" then
    fail("launcher must be torchrun (srun starts one torchrun per node), got "
      .. string.format("%q", o.launcher))
  end
  return r
end

-- The shape's part of the file names: 2x8, 2x8.t1-00.00.00 with a time.
local function shape_name(row)
  local s = row.nodes .. "x" .. row.gpus
  if row.time ~= "" then s = s .. ".t" .. row.time:gsub(":", ".") end
  if row.partition ~= "" then s = s .. "." .. row.partition end
  if row.account ~= "" then s = s .. "." .. row.account end
  if row.port ~= 29500 then s = s .. ".p" .. row.port end
  return s
end

-- Variants grouped by shape, in the order each shape first appears; a
-- variant's task id is its index in its shape's list.
local function shapes_of(run)
  local by, order = {}, {}
  for _, v in ipairs(run.variants) do
    -- (the rows of one shape begin alike: parsed once per distinct head)
    local head = v.row:match("^[^\t]*\t[^\t]*\t[^\t]*\t[^\t]*\t[^\t]*\t[^\t]*")
    local s = by[head]
    if not s then
      local shape = parse_row(v.row)
      local key = shape_name(shape)
      s = by[key]
      if not s then
        s = { name = key, row = shape, variants = {}, lines = {} }
        by[key] = s
        order[#order + 1] = s
      end
      by[head] = s
    end
    local k = #s.variants + 1
    s.variants[k] = v
    local _, args = parse_row(v.row)
    s.lines[k] = v.name .. "\t" .. v.file .. "\t" .. v.sha256 .. (args ~= "" and "\t" .. args or "")
  end
  return order
end

local function array_spec(first, last, opt)
  local spec = first == last and tostring(first) or (first .. "-" .. last)
  if opt.max_parallel then spec = spec .. "%" .. opt.max_parallel end
  return spec
end

local TASK = [=[
set -euo pipefail
# The sweep's directory: the submit script sets DSF_SWEEP_DIR; submitted
# by hand, the directory gen wrote, from where gen ran (sbatch's cwd).
sweep=${DSF_SWEEP_DIR:-@DIR@}
list=$sweep/@LIST@
task=${SLURM_ARRAY_TASK_ID:?this is a Slurm job array: submit it with sbatch}
line=$(sed -n "$((task + 1))p" "$list")
if [[ -z $line ]]; then
  echo "dsforge slurm-array: no line $((task + 1)) in $list" >&2
  exit 3
fi
IFS=$'\t' read -r -a f <<<"$line"
name=${f[0]} file=${f[1]} sha=${f[2]}
args=("${f[@]:3}")
results=$sweep/results/${file%.json}
mkdir -p "$results"
got=$(sha256sum "$sweep/$file" | cut -d ' ' -f 1)
if [[ $got != "$sha" ]]; then
  echo "dsforge slurm-array: $sweep/$file has sha256 $got, but variant $name was generated as $sha: regenerate the sweep (dsforge gen ... -o $sweep)" >&2
  exit 3
fi
json_str() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }
record() { # the run's record, replaced whole (rename) at each step
  {
    printf '{\n  "profile": %s,\n  "variant": %s,\n' @PROFILE@ "$(json_str "$name")"
    printf '  "config_sha256": "%s",\n' "$sha"
    printf '  "host": %s,\n  "job_id": "%s",\n' "$(json_str "$(hostname)")" "${SLURM_JOB_ID:-}"
    printf '  "array_job_id": "%s",\n  "array_task_id": "%s",\n' "${SLURM_ARRAY_JOB_ID:-}" "$task"
    printf '  "start": %s%s\n}\n' "$start" "$1"
  } >"$results/dsf-run.json.tmp"
  mv -f "$results/dsf-run.json.tmp" "$results/dsf-run.json"
}
start=$(date +%s)
record ""
export DSF_VARIANT=$name DSF_CONFIG_SHA256=$sha DSF_RESULTS_DIR=$results
head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
# Tasks of one array may share a node: each its own rendezvous port.
port=$((@PORT@ + task % 1000))
set +e
srun --ntasks-per-node=1 torchrun --nnodes @NODES@ --nproc_per_node @GPUS@ \
  --rdzv_id "$SLURM_JOB_ID" --rdzv_backend c10d --rdzv_endpoint "$head_node:$port" \
  @TRAIN@ --deepspeed "$sweep/$file" "${args[@]}" \
  >"$results/stdout.log" 2>"$results/stderr.log"
rc=$?
set -e
# gen --probe: DeepSpeed wrote its metric file in this directory
# (autotuning.metric_path, named after the variant): it joins the results.
probe=dsf-probe-${file%.json}.json
if [[ -f $probe ]]; then mv -f "$probe" "$results/autotuning_metric.json"; fi
record ",
  \"end\": $(date +%s),
  \"exit_code\": $rc"
exit "$rc"
]=]

-- A JSON string literal (the profile's name in dsf-run.json).
local function json_text(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function fill(text, subs)
  return (text:gsub("@(%u+)@", function(k) return subs[k] or ("@" .. k .. "@") end))
end

local function sbatch_script(run, shape, opt, train_quoted)
  local r = shape.row
  local dir = run.dir or "."
  local base = "slurm-array." .. shape.name
  local lines = {
    "#!/usr/bin/env bash",
    string.format("# %s: %d variant(s) of profile %s as one Slurm job array, %d node(s) x %d GPU(s) each.",
      base, #shape.variants, run.profile:gsub("[%c]", "?"), r.nodes, r.gpus),
    "# Generated by dsforge (plugin cluster). Task i runs the variant on line i+1 of " .. base .. ".list.",
    "# Submit every array of the sweep: bash " .. "slurm-array.submit.sh; this one alone: sbatch THIS_FILE",
    "# (from the directory gen ran in, or with DSF_SWEEP_DIR set to the sweep's directory).",
    "#SBATCH --job-name=" .. opt.job_name .. "-" .. shape.name,
    "#SBATCH --array=" .. array_spec(0, #shape.variants - 1, opt),
    "#SBATCH --nodes=" .. r.nodes,
    "#SBATCH --ntasks-per-node=1",
    "#SBATCH --gpus-per-node=" .. r.gpus,
  }
  if dir:find(SBATCH_SAFE) then
    lines[#lines + 1] = "#SBATCH --output=" .. dir .. "/" .. base .. "-%A_%a.out"
  end
  local function add(flag, value)
    if value ~= nil and value ~= "" then
      lines[#lines + 1] = "#SBATCH --" .. flag .. "=" .. sbatch_value(value, flag)
    end
  end
  add("time", r.time)
  add("partition", opt.partition or r.partition)
  add("account", opt.account or r.account)
  add("qos", opt.qos)
  add("constraint", opt.constraint)
  for _, w in ipairs(opt.extra) do lines[#lines + 1] = "#SBATCH " .. w end
  lines[#lines + 1] = fill(TASK, { DIR = quote.sh(dir),
    PROFILE = quote.sh(json_text(run.profile)), LIST = quote.sh(base .. ".list"),
    NODES = tostring(r.nodes), GPUS = tostring(r.gpus), PORT = tostring(r.port),
    TRAIN = train_quoted })
  return table.concat(lines, "\n")
end

local function list_text(shape)
  return table.concat(shape.lines, "\n") .. "\n"
end

local SUBMIT_HEAD = [=[
#!/usr/bin/env bash
# Submits the whole sweep to Slurm: bash THIS_FILE [sbatch options...]
# Generated by dsforge (plugin cluster). Prints each job id; records them
# in results/slurm-jobs.tsv (shape, job id, array range) for collect.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$here/results"
jobs=$here/results/slurm-jobs.tsv
: >"$jobs"
submit() { # shape, array range, then sbatch's own options
  local shape=$1 range=$2; shift 2
  local id
  id=$(DSF_SWEEP_DIR=$here sbatch --parsable --export=ALL,DSF_SWEEP_DIR="$here" \
    --output="$here/slurm-array.$shape-%A_%a.out" --array="$range" "$@" \
    "$here/slurm-array.$shape.sbatch")
  id=${id%%;*}
  printf '%s\t%s\t%s\n' "$shape" "$id" "$range" >>"$jobs"
  echo "$id"
}
]=]

local function submit_script(shapes, opt, control)
  local lines = { SUBMIT_HEAD }
  local after = ""
  if opt.canary then
    lines[#lines + 1] = "# The control variant (" .. control.name:gsub("[%c]", "?")
      .. ") runs first; everything else only after it succeeded."
    lines[#lines + 1] = "canary=$(submit " .. quote.sh(shapes[1].name) .. " 0 \"$@\")"
    lines[#lines + 1] = 'echo "$canary"'
    lines[#lines + 1] = 'echo "canary: job $canary runs" ' .. quote.sh(control.name)
      .. ' "first; the others after it succeeded" >&2'
    after = ' --dependency=afterok:"$canary"'
  end
  for i, s in ipairs(shapes) do
    local first = (opt.canary and i == 1) and 1 or 0
    local last = #s.variants - 1
    if first <= last then
      lines[#lines + 1] = "submit " .. quote.sh(s.name) .. " " .. array_spec(first, last, opt)
        .. after .. ' "$@"'
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

function M.emit(run, ctx)
  local opt = options(ctx.options, run.profile)
  local _, train_quoted = quote.train_command(ctx.train_cmd, nil, "the slurm-array emitter")
  local shapes = shapes_of(run)
  local files = {}
  for _, s in ipairs(shapes) do
    local base = "slurm-array." .. s.name
    files[#files + 1] = { file = base .. ".list", text = list_text(s) }
    files[#files + 1] = { file = base .. ".sbatch", text = sbatch_script(run, s, opt, train_quoted) }
  end
  files[#files + 1] = { file = "slurm-array.submit.sh",
    text = submit_script(shapes, opt, run.variants[1]) }
  return files
end

return M
