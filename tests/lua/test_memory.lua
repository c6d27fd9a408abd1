-- Tests for plugins/deepspeed/memory.lua.
--
-- Expected figures come from two places:
--  * the worked examples in DeepSpeed's docs/code-docs/source/memory.rst
--    (t5-3b on 1 node x 8 GPUs, live model P = 2851598336, L = 32899072, and
--    the "cold" call with total_params=2851e6, largest_layer_params=32e6;
--    t5-large with 4 GPUs printed in MB);
--  * GOLDEN below: the integers returned by DeepSpeed's
--    estimate_zero2_model_states_mem_needs / estimate_zero3_model_states_mem_needs
--    (current code, v0.14.3+), evaluated with CPython for a spread of inputs,
--    including odd ones (P = 1000003 on 7 nodes of 3) where float rounding of
--    1/nodes and of the divisions matters.

local GOLDEN = {
  -- z2: {offload cpu, none}; z3: {param+opt zi=1, zi=0, opt zi=1, zi=0, none zi=1, zi=0}
  { P = 2851598336, L = 32899072, n = 8, nodes = 1,
    z2 = { { cpu = 136876720128, gpu = 5703196672 }, { cpu = 136876720128, gpu = 12119292928 } },
    z3 = { { cpu = 76993155072, gpu = 131596288 }, { cpu = 136876720128, gpu = 131596288 },
           { cpu = 68438360064, gpu = 844495872 }, { cpu = 136876720128, gpu = 844495872 },
           { cpu = 1579155456, gpu = 6547692544 }, { cpu = 136876720128, gpu = 6547692544 } } },
  { P = 737668096, L = 32899072, n = 4, nodes = 1,
    z2 = { { cpu = 17704034304, gpu = 1475336192 }, { cpu = 17704034304, gpu = 4794842624 } },
    z3 = { { cpu = 19917038592, gpu = 131596288 }, { cpu = 19917038592, gpu = 131596288 },
           { cpu = 17704034304, gpu = 500430336 }, { cpu = 17704034304, gpu = 500430336 },
           { cpu = 789577728, gpu = 3451102720 }, { cpu = 17704034304, gpu = 3451102720 } } },
  { P = 6738415616, L = 262144000, n = 8, nodes = 4,
    z2 = { { cpu = 1293775798272, gpu = 13476831232 }, { cpu = 323443949568, gpu = 17267190016 } },
    z3 = { { cpu = 45484305408, gpu = 1048576000 }, { cpu = 323443949568, gpu = 1048576000 },
           { cpu = 40430493696, gpu = 1469726976 }, { cpu = 323443949568, gpu = 1469726976 },
           { cpu = 12582912000, gpu = 4838934784 }, { cpu = 323443949568, gpu = 4838934784 } } },
  { P = 70553706496, L = 1050673152, n = 8, nodes = 8,
    z2 = { { cpu = 27092623294464, gpu = 141107412992 }, { cpu = 3386577911808, gpu = 160950642944 } },
    z3 = { { cpu = 238118759424, gpu = 4202692608 }, { cpu = 3386577911808, gpu = 4202692608 },
           { cpu = 211661119488, gpu = 6407495936 }, { cpu = 3386577911808, gpu = 6407495936 },
           { cpu = 50432311296, gpu = 24045922560 }, { cpu = 3386577911808, gpu = 24045922560 } } },
  { P = 124439808, L = 38597376, n = 1, nodes = 1,
    z2 = { { cpu = 2986555392, gpu = 248879616 }, { cpu = 746638848, gpu = 2488796160 } },
    z3 = { { cpu = 3359874816, gpu = 154389504 }, { cpu = 3359874816, gpu = 154389504 },
           { cpu = 2986555392, gpu = 403269120 }, { cpu = 2986555392, gpu = 403269120 },
           { cpu = 231584256, gpu = 2394306048 }, { cpu = 746638848, gpu = 2394306048 } } },
  { P = 1000003, L = 1000, n = 3, nodes = 7,
    z2 = { { cpu = 126000378, gpu = 2000006 }, { cpu = 18000054, gpu = 2857151 } },
    z3 = { { cpu = 3857154, gpu = 4000 }, { cpu = 18000054, gpu = 4000 },
           { cpu = 3428581, gpu = 99238 }, { cpu = 18000054, gpu = 99238 },
           { cpu = 18000, gpu = 861145 }, { cpu = 18000054, gpu = 861145 } } },
  { P = 405853388800, L = 2101346304, n = 8, nodes = 16,
    z2 = { { cpu = 311695402598400, gpu = 811706777600 }, { cpu = 19480962662400, gpu = 868779910400 } },
    z3 = { { cpu = 684877593600, gpu = 8405385216 }, { cpu = 19480962662400, gpu = 8405385216 },
           { cpu = 608780083200, gpu = 14746844416 }, { cpu = 19480962662400, gpu = 14746844416 },
           { cpu = 100864622592, gpu = 65478518016 }, { cpu = 19480962662400, gpu = 65478518016 } } },
}

-- DeepSpeed's zero-3 loop order: (opt, param, zero_init)
local Z3_ORDER = {
  { true, true, true }, { true, true, false },
  { true, false, true }, { true, false, false },
  { false, false, true }, { false, false, false },
}

local function mem() return require("deepspeed.memory") end

return {
  zero2_matches_deepspeed_golden_integers = function()
    local m = mem()
    for _, g in ipairs(GOLDEN) do
      local off = m.zero2(g.P, g.n, g.nodes, true)
      local none = m.zero2(g.P, g.n, g.nodes, false)
      T.eq(off, g.z2[1], "zero2 offload P=" .. g.P)
      T.eq(none, g.z2[2], "zero2 none P=" .. g.P)
      T.eq(math.type(off.gpu), "integer")
      T.eq(math.type(off.cpu), "integer")
    end
  end,

  zero3_matches_deepspeed_golden_integers = function()
    local m = mem()
    for _, g in ipairs(GOLDEN) do
      for i, o in ipairs(Z3_ORDER) do
        local r = m.zero3(g.P, g.L, g.n, g.nodes, o[1], o[2], o[3])
        T.eq(r.gpu, g.z3[i].gpu, ("zero3 gpu P=%d row %d"):format(g.P, i))
        T.eq(r.cpu, g.z3[i].cpu, ("zero3 cpu P=%d row %d"):format(g.P, i))
        T.eq(r.largest_layer, 4 * g.L)
        T.eq(math.type(r.cpu), "integer")
      end
    end
  end,

  t5_3b_zero2_live_table_from_memory_rst = function()
    -- memory.rst: "127.48GB | 5.31GB | offload_optimizer=cpu"; its no-offload
    -- row (15.93GB) was printed by the pre-v0.14.3 formula 4P + 16P/N.
    local m = mem()
    local P = 2851598336
    local off = m.zero2(P, 8, 1, true)
    local none = m.zero2(P, 8, 1, false)
    T.eq(m.format_gib(off.cpu), "127.48GB")
    T.eq(m.format_gib(off.gpu), "5.31GB")
    T.eq(m.format_gib(none.cpu), "127.48GB")
    T.eq(m.format_gib(none.gpu), "11.29GB") -- current formula 2P + 18P/N
    -- the documented 15.93GB is the old 4P + int(16P/N), i.e. our stage 1 row
    T.eq(m.format_gib(4 * P + (16 * P) // 8), "15.93GB")
    T.eq(m.format_gib(m.zero1(P, 8, 1, false).gpu), "15.93GB")
  end,

  t5_3b_zero2_cold_table_from_memory_rst = function()
    local m = mem()
    local off = m.zero2(2851e6, 8, 1, true)
    local none = m.zero2(2851e6, 8, 1, false)
    T.eq(m.format_gib(off.cpu), "127.45GB")
    T.eq(m.format_gib(off.gpu), "5.31GB")
    T.eq(m.format_gib(none.cpu), "127.45GB")
    T.eq(m.format_gib(none.gpu), "11.28GB") -- docs print 15.93GB (old formula)
    T.eq(none.gpu, 12116750000)
    T.eq(m.format_gib(m.zero1(2851e6, 8, 1, false).gpu), "15.93GB")
    T.eq(m.format_row({ stage = 2, offload_optimizer = "cpu", gpu = off.gpu, cpu = off.cpu }),
      "  127.45GB |   5.31GB | offload_optimizer=cpu ")
  end,

  t5_3b_zero3_live_table_lines_from_memory_rst = function()
    local m = mem()
    local rows = m.all_cold(2851598336, 32899072, 8, 1)
    local want = {
      "   71.71GB |   0.12GB | offload_param=cpu , offload_optimizer=cpu , zero_init=1",
      "  127.48GB |   0.12GB | offload_param=cpu , offload_optimizer=cpu , zero_init=0",
      "   63.74GB |   0.79GB | offload_param=none, offload_optimizer=cpu , zero_init=1",
      "  127.48GB |   0.79GB | offload_param=none, offload_optimizer=cpu , zero_init=0",
      "    1.47GB |   6.10GB | offload_param=none, offload_optimizer=none, zero_init=1",
      "  127.48GB |   6.10GB | offload_param=none, offload_optimizer=none, zero_init=0",
    }
    local got = {}
    for _, r in ipairs(rows) do
      if r.stage == 3 then got[#got + 1] = m.format_row(r) end
    end
    T.eq(got, want)
  end,

  t5_3b_zero3_cold_table_from_memory_rst = function()
    local m = mem()
    local want = {
      { "71.69GB", "0.12GB" }, { "127.45GB", "0.12GB" },
      { "63.72GB", "0.78GB" }, { "127.45GB", "0.78GB" },
      { "1.43GB", "6.09GB" }, { "127.45GB", "6.09GB" },
    }
    for i, o in ipairs(Z3_ORDER) do
      local r = m.zero3(2851e6, 32e6, 8, 1, o[1], o[2], o[3])
      T.eq({ m.format_gib(r.cpu), m.format_gib(r.gpu) }, want[i], "row " .. i)
    end
  end,

  t5_large_zero3_gpu_cases_from_memory_rst = function()
    -- total params 737.67M, largest layer 32.90M, 4 GPUs; printed with >> 20:
    -- largest layer memory 125MB, case1 3291MB, case2 125MB, case3 477MB.
    local m = mem()
    local P, L = 737668096, 32899072
    T.eq(string.format("%6.2fM", P / 1e6), "737.67M")
    T.eq(string.format("%6.2fM", L / 1e6), " 32.90M")
    local case1 = m.zero3(P, L, 4, 1, false, false, true)
    local case2 = m.zero3(P, L, 4, 1, true, true, true)
    local case3 = m.zero3(P, L, 4, 1, true, false, true)
    T.eq(case1.largest_layer >> 20, 125)
    T.eq(case1.gpu >> 20, 3291)
    T.eq(case2.gpu >> 20, 125)
    T.eq(case3.gpu >> 20, 477)
  end,

  gib_and_format = function()
    local m = mem()
    T.eq(m.gib(2 ^ 30), 1.0)
    T.eq(m.gib(3 * 2 ^ 29), 1.5)
    T.eq(m.format_gib(0), "0.00GB")
    T.eq(m.format_gib(136848000000), "127.45GB")
    T.eq(m.format_gib(1024 * 2 ^ 30), "1024.00GB")
  end,

  stage0_and_stage1_accounting = function()
    local m = mem()
    local P, n = 1000, 4
    -- stage 0: 2+2+16 bytes/param replicated; CPU P*4*n*f
    T.eq(m.zero0(P, n, 1), { gpu = 20 * P, cpu = 24000 })
    T.eq(m.zero0(P, n, 3), { gpu = 20 * P, cpu = 24000 }, "no partitioning over nodes")
    -- stage 1: 4P replicated + 16P/N partitioned
    T.eq(m.zero1(P, n, 1, false), { gpu = 4 * P + 4000, cpu = 24000 })
    T.eq(m.zero1(P, n, 2, false), { gpu = 4 * P + 2000, cpu = 24000 })
    -- stage 1 + optimizer offload: fp16 params+grads on GPU, like ZeRO-2 on CPU
    T.eq(m.zero1(P, n, 1, true), { gpu = 4 * P, cpu = P * 16 * 3 // 2 })
    T.eq(m.zero1(P, n, 2, true), { gpu = 4 * P, cpu = P * 32 * 3 // 2 })
    -- one GPU: stage 1 is stage 0
    T.eq(m.zero1(12345, 1, 1, false).gpu, m.zero0(12345, 1, 1).gpu)
    -- truncation like int(): 16*7/3 = 37.33 -> 37
    T.eq(m.zero1(7, 3, 1, false).gpu, 28 + 37)
    T.errors(function() m.zero0(P, n, 1, true) end, "offload_optimizer needs ZeRO stage 1, 2 or 3")
  end,

  stages_order_gpu_memory = function()
    -- more partitioning never needs more GPU memory (same setup, no offload)
    local m = mem()
    for _, g in ipairs(GOLDEN) do
      local s0 = m.zero0(g.P, g.n, g.nodes).gpu
      local s1 = m.zero1(g.P, g.n, g.nodes, false).gpu
      local s2 = m.zero2(g.P, g.n, g.nodes, false).gpu
      T.truthy(s0 >= s1 and s1 >= s2, "stage 0 >= 1 >= 2 for P=" .. g.P)
      T.truthy(m.zero1(g.P, g.n, g.nodes, true).gpu >= m.zero2(g.P, g.n, g.nodes, true).gpu)
      T.truthy(m.zero2(g.P, g.n, g.nodes, true).gpu <= s2)
    end
  end,

  zero3_param_offload_without_optimizer_offload_is_derived = function()
    local m = mem()
    local P, L, n = 1000000, 1000, 4
    local r = m.zero3(P, L, n, 2, false, true, true)
    T.eq(r.gpu, 4 * L + 16 * P // 8)
    T.eq(r.cpu, P * 2 * 3 // 4) -- P * 2 * (1/2) * 1.5
    local r0 = m.zero3(P, L, n, 2, false, true, false)
    T.eq(r0.cpu, P * 4 * n * 3 // 2) -- max(4n, 2/nodes) = 4n
    -- sits between optimizer-only offload and no offload on the GPU
    local opt_only = m.zero3(P, L, n, 2, true, false, true)
    local none = m.zero3(P, L, n, 2, false, false, true)
    T.truthy(opt_only.gpu < r.gpu and r.gpu < none.gpu)
    T.eq(m.estimate{ stage = 3, params = P, largest_layer = L, gpus_per_node = n, nodes = 2,
      offload_param = "cpu" }, { gpu = r.gpu, cpu = r.cpu })
  end,

  buffer_factor_is_applied = function()
    local m = mem()
    T.eq(m.zero2(1000, 2, 1, false, 1).cpu, 8000)
    T.eq(m.zero2(1000, 2, 1, false, 2.0).cpu, 16000)
    T.eq(m.zero2(1000, 2, 1, false).cpu, 12000)
    T.eq(m.estimate{ stage = 2, params = 1000, gpus_per_node = 2, buffer_factor = 1 }.cpu, 8000)
    T.errors(function() m.zero2(1000, 2, 1, false, 0) end, "buffer factor must be a positive number")
  end,

  zero2_offload_cpu_grows_with_total_gpus = function()
    -- DeepSpeed uses the total GPU count in max(4N, 16) (memory.rst says per node)
    local m = mem()
    local one = m.zero2(1000, 8, 1, true).cpu
    local four = m.zero2(1000, 8, 4, true).cpu
    T.eq(one, 1000 * 32 * 3 // 2)
    T.eq(four, 1000 * 128 * 3 // 2)
  end,

  estimate_dispatches_to_the_stage_functions = function()
    local m = mem()
    local g = GOLDEN[3]
    local base = { params = g.P, largest_layer = g.L, gpus_per_node = g.n, nodes = g.nodes }
    local function with(t)
      local o = {}
      for _, k in ipairs(dsforge.sorted_keys(base)) do o[k] = base[k] end
      for _, k in ipairs(dsforge.sorted_keys(t)) do o[k] = t[k] end
      return o
    end
    T.eq(m.estimate(with{ stage = 2, offload_optimizer = "cpu" }), g.z2[1])
    T.eq(m.estimate(with{ stage = 2 }), g.z2[2])
    T.eq(m.estimate(with{ stage = 3, offload_optimizer = "cpu", offload_param = "cpu" }), g.z3[1])
    T.eq(m.estimate(with{ stage = 3, offload_optimizer = "cpu", offload_param = "cpu",
      zero_init = false }), g.z3[2])
    T.eq(m.estimate(with{ stage = 3, offload_optimizer = "cpu" }), g.z3[3])
    T.eq(m.estimate(with{ stage = 3 }), g.z3[5])
    T.eq(m.estimate(with{ stage = 3, zero_init = false }), g.z3[6])
    T.eq(m.estimate(with{ stage = 0 }), m.zero0(g.P, g.n, g.nodes))
    T.eq(m.estimate(with{ stage = 1, offload_optimizer = "cpu" }), m.zero1(g.P, g.n, g.nodes, true))
    -- nodes defaults to 1, floats that are whole numbers are accepted
    T.eq(m.estimate{ stage = 2, params = 2851e6, gpus_per_node = 8 }.gpu, 12116750000)
    T.eq(m.estimate{ stage = 2.0, params = 2851e6, gpus_per_node = 8.0, nodes = 1.0 }.gpu, 12116750000)
  end,

  estimate_rejects_bad_input = function()
    local m = mem()
    local e = m.estimate
    T.errors(function() e{ stage = 2, params = 1000, gpus_per_node = 0 } end, "gpus_per_node must be at least 1")
    T.errors(function() e{ stage = 2, params = 1000, gpus_per_node = 8, nodes = 0 } end, "nodes must be at least 1")
    T.errors(function() e{ stage = 2, params = -5, gpus_per_node = 8 } end, "params must not be negative")
    T.errors(function() e{ stage = 2, params = 0, gpus_per_node = 8 } end, "params must be greater than 0")
    T.errors(function() e{ stage = 3, params = 1000, largest_layer = -1, gpus_per_node = 8 } end,
      "largest_layer must not be negative")
    T.errors(function() e{ stage = 3, params = 1000, largest_layer = 2000, gpus_per_node = 8 } end,
      "largest_layer (2000) cannot exceed params (1000)")
    T.errors(function() e{ stage = 3, params = 1000, gpus_per_node = 8 } end, "largest_layer is required for stage 3")
    T.errors(function() e{ stage = 2, params = 1000, gpus_per_node = 8, offload_param = "cpu" } end,
      "offload_param needs ZeRO stage 3 (DeepSpeed silently ignores it at stage 2)")
    T.errors(function() e{ stage = 0, params = 1000, gpus_per_node = 8, offload_optimizer = "cpu" } end,
      "offload_optimizer needs ZeRO stage 1, 2 or 3")
    T.errors(function() e{ stage = 4, params = 1000, gpus_per_node = 8 } end, "stage must be 0, 1, 2 or 3, got 4")
    T.errors(function() e{ stage = "2", params = 1000, gpus_per_node = 8 } end, "stage must be 0, 1, 2 or 3")
    T.errors(function() e{ stage = 2, params = 1000, gpus_per_node = 8, offload_optimizer = "nvme" } end,
      "offload_optimizer must be \"none\" or \"cpu\", got \"nvme\"")
    T.errors(function() e{ stage = 2, params = 1000.5, gpus_per_node = 8 } end, "params must be a whole number")
    T.errors(function() e{ stage = 2, params = 1000, gpus_per_node = 8, offload = "cpu" } end,
      "unknown option 'offload'")
    T.errors(function() e{ stage = 2, params = 1000, gpus_per_node = 8, zero_init = 1 } end,
      "zero_init must be a boolean")
    T.errors(function() e{ stage = 2, gpus_per_node = 8 } end, "params is required")
    T.errors(function() e() end, "expected a table of options")
  end,

  all_cold_rows_in_documented_order = function()
    local m = mem()
    local rows = m.all_cold(2851598336, 32899072, 8, 1)
    T.eq(#rows, 11)
    T.eq(#rows, #m.ALL_COLD_ORDER)
    local shape = {}
    for i, r in ipairs(rows) do
      shape[i] = { r.stage, r.offload_optimizer, r.offload_param, r.zero_init == nil and "n/a" or r.zero_init }
    end
    T.eq(shape, {
      { 0, "none", "none", "n/a" },
      { 1, "cpu", "none", "n/a" }, { 1, "none", "none", "n/a" },
      { 2, "cpu", "none", "n/a" }, { 2, "none", "none", "n/a" },
      { 3, "cpu", "cpu", true }, { 3, "cpu", "cpu", false },
      { 3, "cpu", "none", true }, { 3, "cpu", "none", false },
      { 3, "none", "none", true }, { 3, "none", "none", false },
    })
    local g = GOLDEN[1]
    T.eq({ cpu = rows[4].cpu, gpu = rows[4].gpu }, g.z2[1])
    T.eq({ cpu = rows[5].cpu, gpu = rows[5].gpu }, g.z2[2])
    for i = 1, 6 do
      T.eq({ cpu = rows[5 + i].cpu, gpu = rows[5 + i].gpu }, g.z3[i], "z3 row " .. i)
    end
    T.eq(rows[1].gpu, 20 * 2851598336)
  end,

  -- deepspeed.activations (Korthikanti et al. 2022), hand-computed values ----

  activations_gpt2_without_checkpointing = function()
    local act = require("deepspeed.activations")
    -- s=1024, b=1, h=768, a=12, L=12, v=50257
    -- Eq. 1: sbh(34 + 5as/h) = 786432 * (34 + 5*12*1024/768) = 786432 * 114
    local o = { seq_len = 1024, micro_batch = 1, hidden_size = 768, layers = 12,
                heads = 12, vocab = 50257 }
    T.eq(act.per_layer{ seq_len = 1024, micro_batch = 1, hidden_size = 768, heads = 12 }, 89653248)
    T.eq(786432 * 114, 89653248)
    local bd = act.breakdown(o)
    T.eq(bd.per_layer, 89653248)
    T.eq(bd.layers_bytes, 12 * 89653248)          -- 1,075,838,976
    T.eq(bd.logits, 4 * 1024 * 50257)             -- fp32 logits: 205,852,672
    T.eq(bd.total, 1281691648)
    T.eq(act.bytes(o), 1281691648)
    T.eq(math.type(act.bytes(o)), "integer")
  end,

  activations_gpt2_with_full_checkpointing = function()
    local act = require("deepspeed.activations")
    -- kept: 12 layer inputs of 2sbh = 12 * 1,572,864 = 18,874,368
    -- + one layer recomputed 89,653,248 + logits 205,852,672
    T.eq(act.bytes{ seq_len = 1024, micro_batch = 1, hidden_size = 768, layers = 12,
                    heads = 12, vocab = 50257, checkpointing = true }, 314380288)
  end,

  activations_scale_with_batch_and_dtype = function()
    local act = require("deepspeed.activations")
    local o = { seq_len = 1024, micro_batch = 4, hidden_size = 768, layers = 12,
                heads = 12, vocab = 50257 }
    T.eq(act.bytes(o), 4 * 1281691648, "linear in the micro batch")
    -- fp32 activations: 4*(16sbh + 2as^2b) + 2sbh + as^2b with sbh=786432, as^2b=12582912
    T.eq(act.per_layer{ seq_len = 1024, micro_batch = 1, hidden_size = 768, heads = 12,
                        dtype_bytes = 4 }, 165150720)
  end,

  activations_llama2_7b_layer = function()
    local act = require("deepspeed.activations")
    -- s=4096, h=4096, a=32: 34*16777216 + 5*32*4096^2 = 570425344 + 2684354560
    local per = act.per_layer{ seq_len = 4096, micro_batch = 1, hidden_size = 4096, heads = 32 }
    T.eq(per, 3254779904)
    local ck = act.bytes{ seq_len = 4096, micro_batch = 1, hidden_size = 4096, layers = 32,
                          heads = 32, vocab = 32000, checkpointing = true }
    T.eq(ck, 32 * 2 * 4096 * 4096 + 3254779904 + 4 * 4096 * 32000)
    local full = act.bytes{ seq_len = 4096, micro_batch = 1, hidden_size = 4096, layers = 32,
                            heads = 32, vocab = 32000 }
    T.truthy(full > ck * 10, "checkpointing saves an order of magnitude here")
  end,

  activations_reject_bad_input = function()
    local act = require("deepspeed.activations")
    T.errors(function() act.bytes{ seq_len = 0, micro_batch = 1, hidden_size = 8, layers = 1,
      heads = 1, vocab = 8 } end, "seq_len must be a positive whole number")
    T.errors(function() act.bytes{ seq_len = 8, micro_batch = 1, hidden_size = 8, layers = 1,
      heads = 1 } end, "vocab is required")
    T.errors(function() act.bytes{ seq_len = 8, micro_batch = 1.5, hidden_size = 8, layers = 1,
      heads = 1, vocab = 8 } end, "micro_batch must be a positive whole number")
    T.errors(function() act.bytes{ seq_len = 8, micro_batch = 1, hidden_size = 8, layers = 1,
      heads = 1, vocab = 8, checkpointing = "yes" } end, "checkpointing must be a boolean")
    T.errors(function() act.bytes{ seq_len = 8, micro_batch = 1, hidden_size = 8, layers = 1,
      heads = 1, vocab = 8, seq = 2 } end, "unknown option 'seq'")
  end,
}
