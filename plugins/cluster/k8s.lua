-- cluster.k8s: the k8s emitter. A whole sweep as Kubeflow Trainer v2
-- TrainJobs, one per variant, and the ConfigMaps holding the variants'
-- JSON, in one multi-document YAML (k8s.yaml) for `kubectl apply -f`.
--
-- API (plugins/cluster/init.lua's emitter; contrib/docs/cluster.md)
--   M.row(v, ctx)    -> what the run needs of variant v: its layout, its
--                       JSON text and its Trainer arguments
--   M.emit(run, ctx) -> { {file = "k8s.yaml", text =} }
--
-- Targets Kubeflow Trainer v2.3.0 (kubeflow/trainer, commit 658725bd):
-- TrainJob of trainer.kubeflow.org/v1alpha1, an alpha API, whose CRD
-- (manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml) the tests
-- validate every object against (tests/cluster/schemas/). The runtimes
-- are the Trainer's ClusterTrainingRuntimes (charts/kubeflow-trainer/
-- files/runtimes/): torch-distributed runs the command on every node with
-- torchrun's settings in PET_* variables (torchrun reads them); the
-- MPI-based deepspeed-distributed runs it under mpirun from the launcher
-- (docs/user-guides/deepspeed.md). The configs reach the pods as a
-- ConfigMap volume mounted into the trainer container ("node") through
-- spec.runtimePatches.

local quote = require("launch.quote")
local render = require("launch.render")
local trainer = require("launch.trainer")

local dsforge = dsforge
local string, table, ipairs, tostring, math, type =
  string, table, ipairs, tostring, math, type

local M = {}

M.TRAINER_VERSION = "v2.3.0"
M.API_VERSION = "trainer.kubeflow.org/v1alpha1"
-- A TrainJob's name is its JobSet's (kubeflow/trainer v2.3.0,
-- pkg/runtime/framework/plugins/jobset/jobset.go), and JobSet's webhook
-- (sigs.k8s.io/jobset, pkg/webhooks/jobset_webhook.go, ValidateCreate)
-- refuses a JobSet whose job names "<name>-<replicatedJob>-<job index>"
-- or pod names "<name>-<replicatedJob>-<job index>-<pod index>-abcde"
-- would not be RFC 1035 labels of at most 63 characters. The runtimes'
-- replicated jobs are "launcher" and "node", one job each: 63 -
-- #"-launcher-0-" - #"-abcde" = 45 for the name and the pod index; 40
-- leaves five digits (up to 100,000 nodes, checked in M.row).
M.JOB_NAME_MAX = 40
-- The CRD's maxItems of spec.trainer.command and args.
M.MAX_WORDS = 128
M.MAX_NODES = 100000
-- A ConfigMap holds at most 1 MiB (etcd's object limit): the configs are
-- spread over as many as needed, each with at most this many data bytes.
M.CONFIGMAP_BYTES = 900 * 1024

local function fail(msg) dsforge.fail("k8s: " .. msg, 0) end

-- 64-bit FNV-1a (Lua's integers wrap at 2^64), its first 12 hex digits:
-- a short stable tag for names. 48 bits: the names of a 10,000-variant
-- sweep, cut to the same prefix, collide with a chance of about 2e-7
-- (and a collision is refused, never written).
local byte = string.byte
local P = 0x100000001b3
local function fnv(s)
  local h = 0xcbf29ce484222325 -- (wraps to a negative integer: the same bits)
  local n = #s
  local i = 1
  -- (eight bytes a call: a name and a hash are ~150 bytes per variant)
  while i + 7 <= n do
    local a, b, c, d, e, f, g, k = byte(s, i, i + 7)
    h = (h ~ a) * P; h = (h ~ b) * P; h = (h ~ c) * P; h = (h ~ d) * P
    h = (h ~ e) * P; h = (h ~ f) * P; h = (h ~ g) * P; h = (h ~ k) * P
    i = i + 8
  end
  for j = i, n do
    h = (h ~ byte(s, j)) * P
  end
  return string.format("%016x", h):sub(1, 12)
end

-- A DNS-1123 label (<= 63: lower-case letters, digits, '-', alphanumeric
-- at both ends) made from s, with a tag when it had to change or be cut.
local function dns_label(prefix, s, tag, max)
  max = max or 63
  local l = (prefix .. s):lower():gsub("[^a-z0-9%-]", "-"):gsub("%-%-+", "-")
  local room = max - #tag - 1
  if #l > room then l = l:sub(1, room) end
  l = l:gsub("%-+$", "")
  return l .. "-" .. tag
end

-- A label value (<= 63: alphanumeric at both ends, '-', '_', '.' inside).
local function label_value(s)
  local l = s:gsub("[^%w%-_.]", "_")
  if #l > 63 then l = l:sub(1, 63) end
  l = l:gsub("^[^%w]+", ""):gsub("[^%w]+$", "")
  return l
end

-- A text as a YAML double-quoted scalar. A JSON string is one (YAML 1.2,
-- and PyYAML's 1.1: the escapes \" \\ \n \t \uXXXX), made by the C side;
-- but for the characters a YAML reader refuses raw or folds (C1 controls,
-- U+2028, U+2029, U+FEFF), which JSON leaves as they are: quote.yaml.
-- (A plain find for each lead byte first: a config is mostly ASCII, and a
-- pattern is tried at every byte of a text of kilobytes.)
local function yaml_text(ctx, s)
  if (s:find("\194", 1, true) and s:find("\194[\128-\159]"))
    or (s:find("\226\128", 1, true) and s:find("\226\128[\168\169]"))
    or s:find("\239\187\191", 1, true) then
    return quote.yaml(s)
  end
  return ctx.json(s)
end

function M.row(v, ctx)
  local cv = require("cluster.variant").of(v, ctx, "k8s")
  local n, g, out = cv.nodes, cv.gpus, cv.words
  if n > M.MAX_NODES then
    fail(string.format("variant %s asks for %d nodes: at most %d fit a TrainJob's"
      .. " pod names (63 characters)", tostring(v.name), n, M.MAX_NODES))
  end
  -- The bytes gen writes (v.text: the ConfigMap's copy has the file's
  -- sha256), as a YAML double-quoted scalar, made here once.
  return { nodes = n, gpus = g, json = yaml_text(ctx, v.text), args = out }
end

-- s is made of the characters of class `inner`, with an alphanumeric
-- (of class `edge`) at both ends, and at most max bytes.
local function label_like(s, edge, inner, max)
  return #s >= 1 and #s <= max and s:find("^" .. edge) ~= nil and s:find(edge .. "$") ~= nil
    and s:find("^" .. inner .. "*$") ~= nil
end

-- The options (ctx.options, all strings), checked.
local RUNTIMES = { ["torch-distributed"] = true, ["deepspeed-distributed"] = true }

local function options(o)
  local r = {}
  r.image = o.image
  if r.image == nil or r.image == "" then
    fail("needs the container image: --emit-opt image=REGISTRY/IMAGE:TAG")
  end
  -- (the CRD: spec.trainer.image has maxLength 500)
  if not r.image:find("^[%w][%w._/:@%-]*$") or #r.image > 500 then
    fail("image must be an image reference (letters, digits and ._/:@-, at most 500), got "
      .. string.format("%q", r.image))
  end
  r.runtime = o.runtime or "torch-distributed"
  if not RUNTIMES[r.runtime] then
    fail("runtime must be torch-distributed or deepspeed-distributed (the Trainer's"
      .. " ClusterTrainingRuntimes), got " .. string.format("%q", r.runtime))
  end
  if o.namespace ~= nil and not label_like(o.namespace, "[a-z0-9]", "[a-z0-9%-]", 63) then
    fail("namespace must be a DNS-1123 label (lower-case letters, digits, '-'), got "
      .. string.format("%q", o.namespace))
  end
  r.namespace = o.namespace
  if o.queue ~= nil and not label_like(o.queue, "[%w]", "[%w%-_.]", 63) then
    fail("queue must be a Kueue LocalQueue name (a label value), got " .. string.format("%q", o.queue))
  end
  r.queue = o.queue
  r.gpu_resource = o.gpu_resource or "nvidia.com/gpu"
  if not r.gpu_resource:find("^[%w][%w.%-]*/[%w][%w.%-_]*$") then
    fail("gpu_resource must be an extended resource name such as nvidia.com/gpu, got "
      .. string.format("%q", r.gpu_resource))
  end
  r.mount = o.mount or "/etc/dsforge"
  if not r.mount:find("^/[%w._/%-]*$") then
    fail("mount must be an absolute path of letters, digits and ._/-, got "
      .. string.format("%q", r.mount))
  end
  return r
end

-- YAML text: a writer of lines at an indentation.
local function writer()
  local out = {}
  local w = {}
  function w.line(ind, s) out[#out + 1] = string.rep(" ", ind) .. s end
  function w.kv(ind, k, v) out[#out + 1] = string.rep(" ", ind) .. k .. ": " .. v end
  function w.text() return table.concat(out, "\n") .. "\n" end
  return w
end

local y = quote.yaml

-- Kubernetes expands $(VAR) in a container's command, args and env values
-- with the container's variables, and reads $$ as $ (k8s.io/kubernetes,
-- third_party/forked/golang/expansion/expand.go): every $ doubled, a
-- word reaches the process as it was written, as in the launch scripts.
local function literal(s)
  if not s:find("$", 1, true) then return s end
  return (s:gsub("%$", "$$"))
end

local function metadata(w, name, o, labels, annotations)
  w.line(0, "metadata:")
  w.kv(2, "name", y(name))
  if o.namespace then w.kv(2, "namespace", y(o.namespace)) end
  w.line(2, "labels:")
  for _, kv in ipairs(labels) do w.kv(4, y(kv[1]), y(kv[2])) end
  if annotations then
    w.line(2, "annotations:")
    for _, kv in ipairs(annotations) do w.kv(4, y(kv[1]), y(kv[2])) end
  end
end

local function configmap(w, name, o, labels, items)
  w.line(0, "---")
  w.kv(0, "apiVersion", "v1")
  w.kv(0, "kind", "ConfigMap")
  metadata(w, name, o, labels)
  w.line(0, "data:")
  for _, it in ipairs(items) do w.kv(2, y(it.file), it.json) end
end

local function list(w, ind, items)
  for _, s in ipairs(items) do w.line(ind, "- " .. y(literal(s))) end
end

-- The launcher's words, before the training command's. mpirun, from the
-- MPI runtime's launcher, starts one process per GPU slot of the hostfile
-- the runtime writes (-np: the variant's nodes x GPUs, put in its place);
-- the script runs under python3. The trainer's env is set in the
-- launcher's container only: -x passes it on to the ranks mpirun starts
-- over ssh on the other nodes. The hostfile is named, not only left to
-- OMPI_MCA_orte_default_hostfile (an ORTE name; Open MPI 5, in the
-- Trainer's DeepSpeed image, runs PRRTE): the runtime mounts it at
-- /etc/mpi/hostfile (kubeflow/trainer v2.3.0 pkg/constants/constants.go,
-- MPIHostfileDir, MPIHostfileName).
local PROCS = {}
local LAUNCHER = {
  ["deepspeed-distributed"] = { "mpirun", "-np", PROCS, "-x", "DSF_VARIANT", "-x",
    "DSF_CONFIG_SHA256", "--hostfile", "/etc/mpi/hostfile", "python3" },
  ["torch-distributed"] = { "torchrun" },
}

local PH = "\0"

-- The TrainJob text with %s where a variant's own values go, made once
-- per run (a sweep's jobs differ only there): job name, variant label,
-- config sha256, variant name, nodes, [procs per node,] GPUs, the
-- Trainer args' lines, the two env values, then per runtime job the
-- ConfigMap's name and the file's name twice.
local function trainjob_template(o, run, train_words, runtime_jobs)
  local w = writer()
  local labels = { { "app.kubernetes.io/managed-by", y("dsforge") },
    { "dsforge.io/profile", y(label_value(run.profile)) }, { "dsforge.io/variant", PH } }
  if o.queue then labels[#labels + 1] = { "kueue.x-k8s.io/queue-name", y(o.queue) } end
  w.line(0, "---")
  w.kv(0, "apiVersion", M.API_VERSION)
  w.kv(0, "kind", "TrainJob")
  w.line(0, "metadata:")
  w.kv(2, "name", PH)
  if o.namespace then w.kv(2, "namespace", y(o.namespace)) end
  w.line(2, "labels:")
  for _, kv in ipairs(labels) do w.kv(4, y(kv[1]), kv[2]) end
  w.line(2, "annotations:")
  w.kv(4, y("dsforge.io/config-sha256"), PH)
  w.kv(4, y("dsforge.io/variant"), PH)
  w.line(0, "spec:")
  w.line(2, "runtimeRef:")
  w.kv(4, "name", y(o.runtime))
  w.line(2, "trainer:")
  w.kv(4, "image", y(o.image))
  w.kv(4, "numNodes", PH)
  if o.runtime == "torch-distributed" then w.kv(4, "numProcPerNode", PH) end
  w.line(4, "resourcesPerNode:")
  w.line(6, "limits:")
  w.kv(8, y(o.gpu_resource), PH)
  w.line(4, "command:")
  for _, word in ipairs(LAUNCHER[o.runtime]) do
    if word == PROCS then w.line(6, "- " .. PH) else list(w, 6, { word }) end
  end
  list(w, 6, train_words)
  w.line(4, "args:")
  w.line(6, "- " .. y("--deepspeed"))
  w.line(0, PH)                    -- the file's path, then the words
  w.line(4, "env:")
  w.kv(6, "- name", y("DSF_VARIANT"))
  w.kv(8, "value", PH)
  w.kv(6, "- name", y("DSF_CONFIG_SHA256"))
  w.kv(8, "value", PH)
  w.line(2, "runtimePatches:")
  w.kv(4, "- manager", y("dsforge.io/dsforge"))
  w.line(6, "trainingRuntimeSpec:")
  w.line(8, "template:")
  w.line(10, "spec:")
  w.line(12, "replicatedJobs:")
  for _, rj in ipairs(runtime_jobs) do
    w.kv(14, "- name", y(rj))
    w.line(16, "template:")
    w.line(18, "spec:")
    w.line(20, "template:")
    w.line(22, "spec:")
    w.line(24, "volumes:")
    w.kv(26, "- name", y("dsforge-config"))
    w.line(28, "configMap:")
    w.kv(30, "name", PH)
    w.line(30, "items:")
    w.kv(32, "- key", PH)
    w.kv(34, "path", PH)
    w.line(24, "containers:")
    w.kv(26, "- name", y("node"))
    w.line(28, "volumeMounts:")
    w.kv(30, "- name", y("dsforge-config"))
    w.kv(32, "mountPath", y(o.mount))
    w.kv(32, "readOnly", "true")
  end
  -- Every % of the text doubled for string.format, then the holes
  -- (NUL, which no quoted value holds) made its %s.
  return (w.text():gsub("%%", "%%%%"):gsub("\0", "%%s"))
end

-- One TrainJob's text from the run's template.
local function trainjob(tpl, o, v, job, cm, runtime_jobs)
  local r = v.row
  local argl = { "      - " .. y(literal(o.mount .. "/" .. v.file)) }
  for i, a in ipairs(r.args) do argl[i + 1] = "      - " .. y(literal(a)) end
  local vals = { y(job), y(label_value(v.name)), y(v.sha256), y(v.name), tostring(r.nodes) }
  if o.runtime == "torch-distributed" then vals[#vals + 1] = tostring(r.gpus) end
  vals[#vals + 1] = tostring(r.gpus)
  if o.runtime == "deepspeed-distributed" then vals[#vals + 1] = y(tostring(r.nodes * r.gpus)) end
  vals[#vals + 1] = table.concat(argl, "\n")
  vals[#vals + 1] = y(literal(v.name))
  vals[#vals + 1] = y(v.sha256)
  local cmq, fq = y(cm), y(v.file)
  for _ = 1, #runtime_jobs do
    vals[#vals + 1] = cmq
    vals[#vals + 1] = fq
    vals[#vals + 1] = fq
  end
  return string.format(tpl, table.unpack(vals))
end

function M.emit(run, ctx)
  local o = options(ctx.options)
  local words = quote.train_command(ctx.train_cmd, nil, "the k8s emitter")
  -- The CRD: spec.trainer.command holds at most 128 words.
  local ncmd = #LAUNCHER[o.runtime] + #words
  if ncmd > M.MAX_WORDS then
    fail(string.format("--train-cmd has %d words: with the launcher's that is %d, and a"
      .. " TrainJob's command holds at most %d", #words, ncmd, M.MAX_WORDS))
  end
  -- The run's tag (run.digest: every variant's file and hash): another
  -- sweep, or a changed config, gets other ConfigMaps.
  local tag = run.digest:sub(1, 8)
  local base_labels = { { "app.kubernetes.io/managed-by", "dsforge" },
    { "dsforge.io/profile", label_value(run.profile) } }
  local runtime_jobs = o.runtime == "deepspeed-distributed" and { "launcher", "node" } or { "node" }
  -- One pass, written as it is made (ctx.write: a sweep of 10,000
  -- variants makes tens of megabytes): each ConfigMap of at most
  -- CONFIGMAP_BYTES of configs, followed by the TrainJobs that mount it.
  local file = "k8s.yaml"
  local nv = #run.variants
  ctx.write(file, string.format("# k8s.yaml: %d Kubeflow Trainer TrainJob(s) of profile %s and"
    .. " the ConfigMap(s) holding their configs.\n", nv, (run.profile:gsub("[%c]", "?")))
    .. "# Generated by dsforge (plugin cluster) for Kubeflow Trainer " .. M.TRAINER_VERSION
    .. " (" .. M.API_VERSION .. ", an alpha API).\n"
    .. "# Apply: kubectl apply -f k8s.yaml (the ClusterTrainingRuntime " .. o.runtime
    .. " must be installed).\n")
  local maps, cur, size, items, jobs = 0, nil, 0, nil, nil
  local function flush()
    if not cur then return end
    local w = writer()
    configmap(w, cur, o, base_labels, items)
    ctx.write(file, w.text())
    ctx.write(file, table.concat(jobs))
  end
  local tpl = trainjob_template(o, run, words, runtime_jobs)
  local seen = {}
  for i = 1, nv do
    local v = run.variants[i]
    local bytes = #v.row.json
    if bytes > M.CONFIGMAP_BYTES then
      fail(string.format("variant %s's config is %d bytes: more than a ConfigMap holds", v.name, bytes))
    end
    if not cur or size + bytes > M.CONFIGMAP_BYTES then
      flush()
      maps = maps + 1
      cur = dns_label("dsf-", run.profile, tag .. "-" .. maps, 253)
      size, items, jobs = 0, {}, {}
    end
    items[#items + 1] = { file = v.file, json = v.row.json }
    size = size + bytes
    local job = dns_label("dsf-", run.profile .. "-" .. v.name, fnv(v.file .. " " .. v.sha256),
      M.JOB_NAME_MAX)
    if seen[job] then fail("two variants would be the TrainJob " .. job) end
    seen[job] = true
    jobs[#jobs + 1] = trainjob(tpl, o, v, job, cur, runtime_jobs)
  end
  flush()
  return nil
end

return M
