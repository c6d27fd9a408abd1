-- Tests for plugins/launch/yaml.lua (the accelerate config subset) and
-- plugins/launch/machine.lua (gen --detect's params).

local variants = require("fixtures.launch.variants")

local function parse(s) return require("launch.yaml").parse(s) end

return {
  mappings_scalars_and_comments = function()
    local v = parse(table.concat({
      "# written by accelerate config",
      "compute_environment: LOCAL_MACHINE",
      "deepspeed_config:",
      "  deepspeed_config_file: 'ds config.json'  # the JSON",
      "  zero3_init_flag: true",
      "  offload: ~",
      "distributed_type: DEEPSPEED",
      'main_process_ip: "10.0.0.1"',
      "main_process_port: 29500",
      "ratio: 0.5",
      "big: 1e3",
      "gpu_ids: all",
      "use_cpu: False",
      "downcast_bf16: 'no'",
      "empty:",
      "dynamo_config: {}",
      "ids:",
      "- 0",
      "- 1",
      "",
    }, "\n"))
    T.eq(v.compute_environment, "LOCAL_MACHINE")
    T.eq(v.deepspeed_config.deepspeed_config_file, "ds config.json")
    T.eq(v.deepspeed_config.zero3_init_flag, true)
    T.eq(v.deepspeed_config.offload, dsforge.null)
    T.eq(v.main_process_ip, "10.0.0.1")
    T.eq(math.type(v.main_process_port), "integer")
    T.eq(v.main_process_port, 29500)
    T.eq(v.ratio, 0.5)
    T.eq(v.big, 1000.0)
    T.eq(v.gpu_ids, "all")
    T.eq(v.use_cpu, false)
    T.eq(v.downcast_bf16, "no")
    T.eq(v.empty, dsforge.null)
    T.eq(dsforge.kind(v.dynamo_config), "object")
    T.eq(v.ids, { 0, 1 })
  end,

  double_quoted_escapes = function()
    T.eq(parse('a: "x\\"y\\\\z\\n\\t\\u00e9"').a, "x\"y\\z\n\té")
    T.eq(parse("a: 'it''s'").a, "it's")
  end,

  refuses_what_it_does_not_read = function()
    local function err(s)
      local v, msg, line = parse(s)
      T.eq(v, nil)
      return msg .. "@" .. line
    end
    T.eq(err("a: [1, 2]"), "flow collections are not supported@1")
    T.eq(err("a: &x 1"), "anchors, aliases, tags and block scalars are not supported@1")
    T.eq(err("a: |\n  text"), "anchors, aliases, tags and block scalars are not supported@1")
    T.eq(err("a: 1\na: 2"), "duplicate key 'a'@2")
    T.eq(err("a: 1\n   b: 2"), "unexpected indentation@2")
    T.eq(err("a: 'open"), "unterminated single-quoted scalar@1")
    T.eq(err('a: "x" y'), "trailing text after a double-quoted scalar@1")
    T.eq(err("just text"), "expected 'key: value'@1")
    T.eq(err("a: 1\n---\nb: 2"), "only one document is supported@2")
    T.eq(err("a:\n\tb: 1"), "a tab in the indentation@2")
  end,

  reads_every_accelerate_yaml_render_writes = function()
    local render = require("launch.render")
    for _, r in ipairs(variants()) do
      local v = { config = r.hf, params = r.params, file = "ds \"x\".json",
        name = r.profile .. "-" .. r.variant }
      local nodes, per = render.layout(v)
      local text = render.accelerate_yaml(v, { master_addr = "head", hostfile = "hosts" })
      local doc, err, line = parse(text)
      T.eq(err, nil, v.name .. ": " .. tostring(err) .. " at " .. tostring(line))
      T.eq(doc.distributed_type, "DEEPSPEED", v.name)
      T.eq(doc.num_processes, nodes * per, v.name)
      T.eq(doc.num_machines, nodes, v.name)
      T.eq(doc.deepspeed_config.deepspeed_config_file, "ds \"x\".json", v.name)
    end
  end,

  machine_params = function()
    local m = require("launch.machine")
    local gib = 1024 * 1024 * 1024
    local a100 = { name = "A100", memory_mib = 81920, compute_capability = "8.0" }
    local v100 = { name = "V100", memory_mib = 16384, compute_capability = "7.0" }
    local machine = { gpus = { a100, a100 }, gpu_count = 2, gpu_memory_mib_min = 81920,
      host_memory_bytes = 503 * gib + gib // 2, cpu_cores = 64 }
    T.eq(m.params(machine, { declared = {}, given = {} }), { gpus_per_node = 2, world_size = 2,
      gpu_mem_gb = 80, cpu_mem_gb = 503.5, precision = "bf16" })
    -- --param nodes=...: world_size is left to the profile
    T.eq(m.params(machine, { declared = {}, given = { "nodes" } }).world_size, nil)
    -- mixed: the smallest memory, fp16 unless every GPU has bf16
    machine.gpus[2] = v100
    machine.gpu_memory_mib_min = 16384
    local p = m.params(machine, { declared = {}, given = {} })
    T.eq({ p.gpu_mem_gb, p.precision }, { 16, "fp16" })
    -- 24564 MiB (a 24 GB card) rounds down to 0.01 GiB
    T.eq(m.params({ gpus = { { memory_mib = 24564, compute_capability = "8.9" } }, gpu_count = 1,
      gpu_memory_mib_min = 24564, host_memory_bytes = 0 }, {}),
      { gpus_per_node = 1, world_size = 1, gpu_mem_gb = 23.98, precision = "bf16" })
    -- AMD: no compute capability
    T.eq(m.precision({ { memory_mib = 65520 } }), "fp16")
    T.eq(m.params({ gpus = {}, gpu_count = 0 }, {}), nil)
  end,

  -- init.lua declares cmdcheck's environment without loading it (lazy)
  declared_env_is_cmdchecks = function()
    local decl = require("launch")
    T.eq(decl.check_command.env, require("launch.cmdcheck").env)
    T.eq(type(decl.check_command.run), "function")
    T.eq(type(decl.machine_params), "function")
  end,
}
