-- cluster.sky: the skypilot emitter -- one SkyPilot task YAML per variant
-- (contrib/docs/cluster.md, "skypilot").
--
-- API
--   M.emit(v, ctx) -> the task YAML's text (an emitter's emit hook:
--                     contrib/docs/plugins.md, "Emitters")
--   M.ACCELERATORS  the accelerator table: { name, gib, bf16 } rows
--   M.accelerators(summary, config, gpus) -> the mapping's text
--                   ('{"A100-80GB": 8, "H100": 8}'), or nil, message
--   M.task_name(s)  -> a name SkyPilot's task name rule takes
--
-- What the file says (keys written in this order, every string quoted
-- by launch.quote.yaml, every shell word by launch.quote.sh):
--   name          "<profile>-<variant>" made into a SkyPilot task name
--                 (sky/task.py _VALID_NAME_REGEX: [a-z0-9]+ joined by one
--                 or two of . _ -)
--   num_nodes     the variant's nodes (world_size / gpus_per_node)
--   resources.accelerators  a set of NAME: GPUS_PER_NODE, every accelerator
--                 of M.ACCELERATORS whose memory holds the memory estimate
--                 (the deepspeed plugin's summary gpu_bytes, with its
--                 fit_margin), bf16-capable when the config enables bf16;
--                 SkyPilot picks the cheapest one it can get
--   envs          DSF_VARIANT, DSF_CONFIG_SHA256 (v.sha256: the JSON's bytes),
--                 DSF_CONFIG (where the JSON is on the node)
--   workdir       "." (the directory sky launch runs in: the training
--                 script is there; run starts in it on every node)
--   file_mounts   the variant's JSON at /tmp/dsforge/<file> on every node
--   run           torchrun on every node, rank SKYPILOT_NODE_RANK, the
--                 rendezvous on the first of SKYPILOT_NODE_IPS, then the
--                 training command and the TrainingArguments words, with
--                 --deepspeed /tmp/dsforge/<file>

local type, tostring, ipairs, string, table, math, utf8 =
  type, tostring, ipairs, string, table, math, utf8
local dsforge = dsforge
local quote = require("launch.quote")
local params = require("launch.params")

local M = {}

local GIB = 1024 * 1024 * 1024

-- SkyPilot's accelerator names (sky/catalog) and each one's memory in GiB
-- as its catalog lists it; bf16 is false where the GPU has no bf16
-- (before Ampere). Largest first, then by name: the order they are written.
M.ACCELERATORS = {
  { name = "B200", gib = 180, bf16 = true },
  { name = "H200", gib = 141, bf16 = true },
  { name = "A100-80GB", gib = 80, bf16 = true },
  { name = "H100", gib = 80, bf16 = true },
  { name = "L40S", gib = 48, bf16 = true },
  { name = "A100", gib = 40, bf16 = true },
  { name = "V100-32GB", gib = 32, bf16 = false },
  { name = "A10", gib = 24, bf16 = true },
  { name = "A10G", gib = 24, bf16 = true },
  { name = "L4", gib = 24, bf16 = true },
  { name = "T4", gib = 16, bf16 = false },
  { name = "V100", gib = 16, bf16 = false },
}

-- Where the variant's JSON is on every node (file_mounts' target).
local REMOTE_DIR = "/tmp/dsforge/"

local function bf16_on(config)
  local b = type(config) == "table" and config.bf16
  return type(b) == "table" and b.enabled == true
end

function M.accelerators(summary, config, gpus)
  local need = type(summary) == "table" and summary.gpu_bytes
  if type(need) ~= "number" then
    return nil, "the skypilot emitter chooses accelerators by the memory estimate, and"
      .. " this variant has none: declare the model param (a catalog name) so the"
      .. " deepspeed plugin estimates its GPU memory"
  end
  local margin = tonumber(summary.fit_margin) or 0.10
  local bf16 = bf16_on(config)
  local out = {}
  for _, a in ipairs(M.ACCELERATORS) do
    if need <= a.gib * GIB * (1 - margin) and (a.bf16 or not bf16) then
      out[#out + 1] = quote.yaml(a.name) .. ": " .. gpus
    end
  end
  if #out == 0 then
    local top = M.ACCELERATORS[1]
    return nil, string.format("no accelerator SkyPilot knows holds this variant: it"
      .. " needs about %.1f GiB per GPU, and the largest, %s (%d GiB), holds %.1f with"
      .. " the %g%% margin the planner keeps", need / GIB, top.name, top.gib,
      top.gib * (1 - margin), margin * 100)
  end
  return "{" .. table.concat(out, ", ") .. "}"
end

function M.task_name(s)
  local n = s:lower():gsub("[^a-z0-9._%-]", "-")
  n = n:gsub("[._%-][._%-][._%-]+", "-"):gsub("^[._%-]+", ""):gsub("[._%-]+$", "")
  if n == "" then n = "dsforge" end
  return n
end

-- The training command's words, quoted (as the launch emitter reads it:
-- --train-cmd, else the train_cmd param).
local function train_words(v, ctx)
  local _, quoted = quote.train_command(ctx.train_cmd, v.params and v.params.train_cmd,
    "the skypilot emitter")
  return quoted
end

-- A YAML value: a literal block when the text is printable ASCII lines
-- (readable, and what a literal block keeps as it is), else a
-- double-quoted scalar (which can say anything).
local function block(text)
  if text:find("^[^ \n][ -~\n]*\n$") and not text:find("\n\n") then
    return "|\n  " .. text:sub(1, -2):gsub("\n", "\n  ") .. "\n"
  end
  return quote.yaml(text) .. "\n"
end

function M.emit(v, ctx)
  local p = params.given(v.params)
  -- (the layout and Trainer words every cluster emitter needs, made once)
  local cv = require("cluster.variant").of(v, ctx, "skypilot")
  local n, g = cv.nodes, cv.gpus
  if p.nodes ~= nil and p.nodes ~= n then
    dsforge.fail(string.format("param 'nodes' = %s, but world_size %d over"
      .. " gpus_per_node %d is %d node(s)", tostring(p.nodes), p.world_size or 1, g, n), 0)
  end
  local acc, why = M.accelerators(v.summary, v.config, g)
  if not acc then dsforge.fail(why, 0) end
  local dir = v.dir and v.dir:gsub("/+$", "")
  local here = dir == nil and v.file or ((dir == "" and "/" or dir .. "/") .. v.file)
  if utf8.len(here) == nil then
    dsforge.fail("the -o directory is not valid UTF-8, and a SkyPilot task (YAML) can name"
      .. " only UTF-8 paths: write to a directory with a UTF-8 name", 0)
  end
  if here:find("$", 1, true) then
    dsforge.fail("the -o directory holds a '$', which SkyPilot replaces by a task"
      .. " variable in file_mounts: write to a directory without one", 0)
  end
  local remote = REMOTE_DIR .. v.file
  local hf = "--deepspeed " .. quote.sh(remote)
  if #cv.words > 0 then hf = hf .. " " .. quote.sh_words(cv.words) end
  local port = math.tointeger(p.master_port) or 29500
  local run = table.concat({
    "set -eu",
    'head_ip=$(printf \'%s\\n\' "$SKYPILOT_NODE_IPS" | head -n 1)',
    'torchrun --nnodes "$SKYPILOT_NUM_NODES" --nproc_per_node "$SKYPILOT_NUM_GPUS_PER_NODE"'
      .. ' --node_rank "$SKYPILOT_NODE_RANK" --master_addr "$head_ip" --master_port ' .. port
      .. " " .. train_words(v, ctx) .. (hf ~= "" and " " .. hf or ""),
    "" }, "\n")
  local stem = v.profile .. "-" .. v.name
  local title = stem:find("^%C*$") and stem or stem:gsub("%c", "?")
  return table.concat({
    "# " .. title .. ": SkyPilot task, " .. n .. " node(s) x " .. g .. " GPU(s)\n",
    "# Generated by dsforge (plugin cluster); use: sky launch THIS_FILE (or sky jobs launch)\n",
    "name: ", quote.yaml(M.task_name(stem)), "\n",
    "num_nodes: ", tostring(n), "\n",
    "resources:\n",
    "  accelerators: ", acc, "\n",
    "envs:\n",
    "  DSF_VARIANT: ", quote.yaml(v.name), "\n",
    "  DSF_CONFIG_SHA256: ", quote.yaml(v.sha256), "\n",
    "  DSF_CONFIG: ", quote.yaml(remote), "\n",
    "workdir: \".\"\n",
    "file_mounts:\n",
    "  ", quote.yaml(remote), ": ", quote.yaml(here), "\n",
    "run: ", block(run),
  })
end

return M
