-- cluster.sky: the skypilot emitter. One SkyPilot task YAML per variant
-- ({profile}-{variant}.sky.yaml) for `sky launch` or `sky jobs launch`.
--
-- API (plugins/cluster/init.lua's emitter; contrib/docs/cluster.md)
--   M.emit(v, ctx)      -> the task's YAML text
--   M.ACCELERATORS      the GPUs it chooses from, with their memory
--   M.candidates(need_bytes, margin) -> names of those with enough memory
--
-- The task (SkyPilot's task schema, sky/utils/schemas.py get_task_schema
-- and get_resources_schema, pinned in tests/cluster/schemas/):
--   name, num_nodes        the variant and its `nodes` param
--   resources.accelerators a set of "<GPU>:<GPUs per node>" candidates:
--                          every GPU of M.ACCELERATORS whose memory holds
--                          the variant's estimated need per GPU (the
--                          deepspeed plugin's summary, gpu_bytes) within
--                          the planner's margin (fit_margin); SkyPilot
--                          picks the cheapest it can get
--   envs                   DSF_VARIANT, DSF_CONFIG_SHA256
--   file_mounts            the variant's JSON at <mount>/<file> on every node
--   run                    checks the file's sha256, then torchrun across
--                          the nodes from SkyPilot's own variables
--                          (SKYPILOT_NODE_RANK, SKYPILOT_NODE_IPS,
--                          SKYPILOT_NUM_NODES, SKYPILOT_NUM_GPUS_PER_NODE)

local quote = require("launch.quote")
local render = require("launch.render")
local trainer = require("launch.trainer")

local dsforge = dsforge
local string, table, ipairs, tostring, pcall, math, type =
  string, table, ipairs, tostring, pcall, math, type

local M = {}

local function fail(msg) dsforge.fail("skypilot: " .. msg, 2) end

-- SkyPilot's names of NVIDIA data-centre GPUs (`sky show-gpus`) and their memory per GPU
-- in GiB, largest first among equals.
M.ACCELERATORS = {
  { "B200", 180 }, { "H200", 141 }, { "H100", 80 }, { "A100-80GB", 80 },
  { "L40S", 48 }, { "A6000", 48 }, { "A100", 40 }, { "V100-32GB", 32 }, { "A10G", 24 },
  { "L4", 24 }, { "A10", 24 }, { "V100", 16 }, { "T4", 16 },
}

-- The names whose memory holds need_bytes with margin (the planner's:
-- the estimate must fit in (1 - margin) of the GPU), in table order.
function M.candidates(need_bytes, margin)
  local out = {}
  for _, a in ipairs(M.ACCELERATORS) do
    if need_bytes <= a[2] * 2 ^ 30 * (1 - margin) then out[#out + 1] = a[1] end
  end
  return out
end

local y = quote.yaml

-- The run section: bash, set -euo pipefail; the config checked, then
-- torchrun across the nodes SkyPilot started.
local function run_text(path, train_quoted, hf_quoted, port)
  return table.concat({
    "set -euo pipefail",
    "# the config SkyPilot copied is the one gen wrote",
    'echo "$DSF_CONFIG_SHA256  ' .. path .. '" | sha256sum --check --quiet',
    'head_node=$(echo "$SKYPILOT_NODE_IPS" | head -n 1)',
    'torchrun --nnodes "$SKYPILOT_NUM_NODES" --nproc_per_node "$SKYPILOT_NUM_GPUS_PER_NODE" \\',
    '  --node_rank "$SKYPILOT_NODE_RANK" --master_addr "$head_node" --master_port ' .. port .. ' \\',
    "  " .. train_quoted .. " --deepspeed " .. quote.sh(path)
      .. (hf_quoted ~= "" and (" " .. hf_quoted) or ""),
  }, "\n") .. "\n"
end

-- A YAML block scalar (|) for text of printable lines, else a quoted one.
local function block(text, ind)
  if text:gsub("\n", ""):find("[%c]") or text:find("[ \t]\n") then return y(text) end
  local pad = string.rep(" ", ind)
  local lines = {}
  for line in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = line == "" and "" or (pad .. line) end
  return "|\n" .. table.concat(lines, "\n")
end

function M.emit(v, ctx)
  local p = v.params or {}
  local o = ctx.options
  local mount = o.mount or "/dsforge"
  if not mount:find("^/[%w._/%-]*$") then
    fail("mount must be an absolute path of letters, digits and ._/-, got " .. string.format("%q", mount))
  end
  local text = ctx.train_cmd
  if text == nil then
    fail("needs the training command (the script and its arguments): gen --train-cmd"
      .. " 'train.py --my-flag'")
  end
  local words, err = quote.split(text)
  if not words then fail("--train-cmd: " .. err) end
  if #words == 0 then fail("--train-cmd is empty") end
  local ok, n, g = pcall(render.layout, { params = p })
  if not ok then fail((tostring(n):gsub("^.-launch%.render: ", ""))) end
  local port = p.master_port or 29500
  if math.type(port) ~= "integer" or port < 1 or port > 65535 then
    fail("param 'master_port' must be an integer port from 1 to 65535")
  end
  -- The accelerators: from the estimate, or the one the options name.
  local s = v.summary or {}
  local accel
  if o.accelerators ~= nil then
    accel = {}
    for name in o.accelerators:gmatch("[^,]+") do
      if not name:find("^[%w][%w.%-]*$") then
        fail("accelerators must be GPU names separated by commas, got " .. string.format("%q", o.accelerators))
      end
      accel[#accel + 1] = name
    end
  elseif type(s.gpu_bytes) == "number" then
    accel = M.candidates(s.gpu_bytes, type(s.fit_margin) == "number" and s.fit_margin or 0.1)
    if #accel == 0 then
      dsforge.fail(string.format("skypilot: variant %s needs %.1f GiB per GPU: more than any"
        .. " GPU SkyPilot offers holds (the largest: %s); raise the ZeRO stage, offload or"
        .. " lower the micro batch, or name them with --emit-opt accelerators=...",
        v.name, s.gpu_bytes / 2 ^ 30, M.ACCELERATORS[1][1]), 3)
    end
  else
    fail("no memory estimate for variant " .. v.name .. ": name the GPUs with --emit-opt"
      .. " accelerators=H100,A100-80GB")
  end
  -- Paths as seen from where gen ran (sky launch is run there too).
  local dir = v.dir and v.dir:gsub("/+$", "")
  local src = dir and ((dir == "" and "/" or dir .. "/") .. v.file) or v.file
  if utf8.len(src) == nil then
    fail("the -o directory is not valid UTF-8, and a YAML file can name only UTF-8 paths")
  end
  local path = mount .. "/" .. v.file
  local args, aerr = trainer.training_args({ config = v.config, params = p, deepspeed_file = path })
  if not args then fail(aerr) end
  local hf = render.hf_args_words({ args = args })
  local rest = {}
  for i = 1, #hf do
    if not (hf[i] == "--deepspeed" or hf[i - 1] == "--deepspeed") then rest[#rest + 1] = hf[i] end
  end
  local lines = {
    "# " .. (v.profile .. "-" .. v.name):gsub("[%c]", "?") .. ": a SkyPilot task (generated by"
      .. " dsforge, plugin cluster): sky launch THIS_FILE",
    "name: " .. y(("dsf-" .. v.profile .. "-" .. v.name):lower():gsub("[^a-z0-9%-]", "-")),
    "num_nodes: " .. n,
    "resources:",
    "  accelerators:",
  }
  for _, a in ipairs(accel) do lines[#lines + 1] = "    " .. y(a .. ":" .. g) .. ": null" end
  lines[#lines + 1] = "envs:"
  lines[#lines + 1] = "  DSF_VARIANT: " .. y(v.name)
  lines[#lines + 1] = "  DSF_CONFIG_SHA256: " .. y(v.sha256 or "")
  lines[#lines + 1] = "file_mounts:"
  lines[#lines + 1] = "  " .. y(path) .. ": " .. y(src)
  lines[#lines + 1] = "run: " .. block(run_text(path, quote.sh_words(words),
    quote.sh_words(rest), port), 2)
  return table.concat(lines, "\n") .. "\n"
end

return M
