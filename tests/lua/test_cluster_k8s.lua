-- Tests for plugins/cluster/k8s.lua called directly (M.row, M.emit), with
-- a ctx that collects what ctx.write streams. The files gen writes are
-- validated against the TrainJob CRD by tests/cluster/test_schemas.py and
-- checked from the command line by tests/cli/test_cluster_k8s.py.

local function json(v)
  if type(v) == "string" then return '"' .. v .. '"' end
  return "{}"
end

local function ctx(options, train_cmd)
  local c = { target = "hf", train_cmd = train_cmd or "train.py", options = options or
    { image = "r/i:1" }, json = json, out = {} }
  function c.write(file, text)
    c.out[file] = (c.out[file] or "") .. text
  end
  return c
end

local PARAMS = { nodes = 2, gpus_per_node = 8, world_size = 16 }

-- A run of variants named names[i], each with a config of its own.
local function run_of(names, c)
  local k8s = require("cluster.k8s")
  local run = { profile = "8xa100", digest = string.rep("ab", 32), variants = {} }
  for i, name in ipairs(names) do
    local v = { profile = "8xa100", name = name, tier = "small", file = "8xa100-" .. name .. ".json",
      config = { train_micro_batch_size_per_gpu = i }, params = PARAMS,
      text = string.format('{\n  "train_micro_batch_size_per_gpu": %d\n}\n', i) }
    c.cache = {} -- (one variant's)
    run.variants[i] = { name = name, tier = "small", file = v.file,
      sha256 = string.format("%064x", i), row = k8s.row(v, c) }
  end
  return run
end

-- The TrainJobs' metadata.name values of k8s.yaml, in order.
local function job_names(text)
  local names = {}
  for doc in (text .. "---\n"):gmatch("(.-)\n%-%-%-\n") do
    if doc:find("\nkind: TrainJob\n", 1, true) then
      names[#names + 1] = doc:match('\nmetadata:\n  name: "([^"]*)"')
    end
  end
  return names
end

return {
  row_keeps_the_layout = function()
    local c = ctx()
    c.cache = {}
    local r = require("cluster.k8s").row({ profile = "p", name = "v", file = "p-v.json",
      config = { train_micro_batch_size_per_gpu = 2 }, params = PARAMS,
      text = '{\n  "train_micro_batch_size_per_gpu": 2\n}\n' }, c)
    T.eq(r.nodes, 2)
    T.eq(r.gpus, 8)
  end,

  row_refuses_more_nodes_than_pod_names_hold = function()
    local k8s = require("cluster.k8s")
    local c = ctx()
    c.cache = {}
    T.errors(function()
      k8s.row({ profile = "p", name = "v", file = "p-v.json",
        config = { train_micro_batch_size_per_gpu = 2 },
        text = '{\n  "train_micro_batch_size_per_gpu": 2\n}\n',
        params = { world_size = k8s.MAX_NODES + 1, gpus_per_node = 1 } }, c)
    end, "at most 100000")
  end,

  job_names_leave_room_for_jobset_names = function()
    -- JobSet refuses "<name>-launcher-0-<pod>-abcde" past 63 characters:
    -- long variant names are cut to M.JOB_NAME_MAX, and stay distinct.
    local k8s = require("cluster.k8s")
    local long = string.rep("micro_batch_size-1.", 6)
    local names = {}
    for i = 1, 50 do names[i] = long .. "lr-" .. i end
    names[#names + 1] = "Small.A"
    local c = ctx({ image = "r/i:1", runtime = "deepspeed-distributed" })
    k8s.emit(run_of(names, c), c)
    local jobs = job_names(c.out["k8s.yaml"])
    T.eq(#jobs, #names)
    local seen = {}
    for _, j in ipairs(jobs) do
      T.truthy(#j <= k8s.JOB_NAME_MAX, j)
      T.truthy(j:find("^[a-z][-a-z0-9]*[a-z0-9]$"), j)
      T.truthy(#(j .. "-launcher-0-99999-abcde") <= 63, j)
      T.falsy(seen[j], "two variants named " .. j)
      seen[j] = true
    end
    T.truthy(jobs[#jobs]:find("^dsf%-8xa100%-small%-a%-"), jobs[#jobs])
  end,

  dollars_are_doubled_for_kubernetes = function()
    -- $(VAR) in command, args and env values is Kubernetes' expansion;
    -- $$ is its escape for $.
    local c = ctx(nil, "train.py '--tag=$(HOSTNAME)' 'a$$b'")
    local k8s = require("cluster.k8s")
    k8s.emit(run_of({ "cost$(x)" }, c), c)
    local text = c.out["k8s.yaml"]
    T.truthy(text:find('- "--tag=$$(HOSTNAME)"', 1, true), text)
    T.truthy(text:find('- "a$$$$b"', 1, true), text)
    T.truthy(text:find('value: "cost$$(x)"', 1, true), text)
    -- the annotation is no container field: as written
    T.truthy(text:find('"dsforge.io/variant": "cost$(x)"', 1, true), text)
  end,
}
