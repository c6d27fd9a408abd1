-- Tests for plugins/deepspeed/planner.lua.

local GiB = 1 << 30

local function planner() return require("deepspeed.planner") end
local function model(name) return require("deepspeed.models").get(name) end

-- lexicographic a < b / a <= b on rank tuples
local function rank_le(a, b)
  for i = 1, #a do
    if a[i] ~= b[i] then return a[i] < b[i] end
  end
  return true
end

local GRID_MODELS = { "gpt2", "gpt2-xl", "llama-3.2-1b", "llama-2-7b", "llama-3-8b",
  "llama-2-13b", "llama-3-70b" }
local GRID_GPUS = { { 1, 1 }, { 2, 1 }, { 8, 1 }, { 8, 2 }, { 8, 8 } } -- 1..64 GPUs
local GRID_MEM = { 24, 40, 80 }

local function check_consistent(r, o, what)
  if r.fits then
    local dp = o.gpus_per_node * (o.nodes or 1)
    T.eq(r.micro_batch * r.gradient_accumulation * dp, o.global_batch, what .. " batch equation")
    T.truthy(r.gpu_bytes <= math.floor(o.gpu_mem_bytes * 0.9), what .. " within GPU budget")
    T.truthy(r.cpu_bytes <= math.floor(o.cpu_mem_bytes * 0.9), what .. " within CPU budget")
    T.truthy(r.micro_batch <= 64, what .. " max micro batch")
    T.eq(r.gpu_bytes, r.model_states_gpu_bytes + r.activation_bytes, what)
    T.truthy(r.offload_param == "none" or r.stage == 3, what .. " param offload needs stage 3")
    T.truthy(r.offload_optimizer == "none" or r.stage >= 1, what .. " offload needs ZeRO")
    T.eq(r.zero_init, r.stage == 3 or nil, what .. " zero_init at stage 3 only")
    T.truthy(r.reasons[1]:find("chosen: ", 1, true) == 1, what .. " summary first")
  else
    T.truthy(r.reasons[1]:find("nothing fits", 1, true) == 1, what .. " says nothing fits")
  end
end

return {
  order_is_documented = function()
    local p = planner()
    T.eq(type(p.ORDER), "string")
    T.truthy(p.ORDER:find("no offload, then optimizer offload to CPU, then optimizer + parameter offload", 1, true))
    T.truthy(p.ORDER:find("lower ZeRO stage", 1, true))
    T.truthy(p.ORDER:find("activation checkpointing", 1, true))
    T.truthy(p.ORDER:find("largest micro batch", 1, true))
    local seq = {}
    for i, c in ipairs(p.CANDIDATES) do seq[i] = c.level .. ":" .. c.stage end
    T.eq(seq, { "0:0", "0:1", "0:2", "0:3", "1:1", "1:2", "1:3", "2:3" })
  end,

  llama2_7b_on_8x40gb_hand_computed = function()
    -- usable GPU floor(40 GiB * 0.9) = 38,654,705,664 B.
    -- ZeRO-0 20P = 125.51 GiB, ZeRO-1 4P + 16P/8 = 37.65 GiB: too big.
    -- ZeRO-2 2P + int(18P/8) = 28,638,266,368 B; CPU 48P = 323,443,949,568 B.
    -- Activations (s=4096, h=4096, a=32, L=32, v=32000) per micro batch:
    --   without checkpointing 32 * 3,254,779,904 + 524,288,000 -> 97.49 GiB even at 1;
    --   with checkpointing 32*2*4096*4096 + 3,254,779,904 + 524,288,000 = 4,852,809,728.
    -- micro 4: 28,638,266,368 + 19,411,238,912 > limit; micro 2: 38,343,885,824 fits.
    local p = planner()
    local r = p.plan{ model = model("llama-2-7b"), gpus_per_node = 8, gpu_mem_bytes = 40 * GiB,
      cpu_mem_bytes = 512 * GiB, seq_len = 4096, global_batch = 64 }
    T.eq(r.fits, true)
    T.eq(r.stage, 2)
    T.eq(r.offload_optimizer, "none")
    T.eq(r.offload_param, "none")
    T.eq(r.zero_init, nil)
    T.eq(r.activation_checkpointing, true)
    T.eq(r.micro_batch, 2)
    T.eq(r.gradient_accumulation, 4)
    T.eq(r.model_states_gpu_bytes, 28638266368)
    T.eq(r.activation_bytes, 2 * 4852809728)
    T.eq(r.gpu_bytes, 38343885824)
    T.eq(r.cpu_bytes, 323443949568)
    T.eq(r.gpu_limit_bytes, 38654705664)
    local text = table.concat(r.reasons, "\n")
    T.truthy(text:find("ZeRO-0, no offload: rejected, model states alone need 125.51 GiB per GPU " ..
      "but only 36.00 GiB is usable", 1, true), text)
    T.truthy(text:find("ZeRO-1, no offload: rejected, model states alone need 37.65 GiB", 1, true))
    T.truthy(text:find("ZeRO-2, no offload without activation checkpointing: rejected, even " ..
      "micro batch 1 needs", 1, true))
    T.truthy(text:find("micro batch 4 would need 44.75 GiB per GPU", 1, true))
    T.truthy(r.reasons[1]:find("chosen: ZeRO-2, no offload, activation checkpointing on, " ..
      "micro batch 2 x gradient accumulation 4 x 8 GPUs = global batch 64", 1, true))
  end,

  gpt2_on_one_24gb_gpu_hand_computed = function()
    -- ZeRO-0: 20 * 124,439,808 = 2,488,796,160 B; activations at s=1024 are
    -- 1,281,691,648 B per micro batch (see test_memory). Limit floor(21.6 GiB)
    -- = 23,192,823,398: micro 16 -> 22,995,862,528 fits, 32 does not.
    local p = planner()
    local r = p.plan{ model = model("gpt2"), gpus_per_node = 1, gpu_mem_bytes = 24 * GiB,
      cpu_mem_bytes = 64 * GiB, seq_len = 1024, global_batch = 32 }
    T.eq({ r.fits, r.stage, r.offload_optimizer, r.activation_checkpointing, r.micro_batch,
      r.gradient_accumulation }, { true, 0, "none", false, 16, 2 })
    T.eq(r.gpu_bytes, 22995862528)
    T.eq(r.cpu_bytes, 746638848)
    T.truthy(table.concat(r.reasons, "\n"):find("micro batch 32 would need", 1, true))
  end,

  max_micro_batch_caps_the_micro_batch = function()
    local p = planner()
    local r = p.plan{ model = model("gpt2"), gpus_per_node = 1, gpu_mem_bytes = 80 * GiB,
      cpu_mem_bytes = 64 * GiB, seq_len = 128, global_batch = 512 }
    T.eq({ r.micro_batch, r.gradient_accumulation }, { 64, 8 })
    T.truthy(table.concat(r.reasons, "\n"):find("allowed by max_micro_batch 64", 1, true))
    local r2 = p.plan{ model = model("gpt2"), gpus_per_node = 1, gpu_mem_bytes = 80 * GiB,
      cpu_mem_bytes = 64 * GiB, seq_len = 128, global_batch = 512, max_micro_batch = 48 }
    T.eq({ r2.micro_batch, r2.gradient_accumulation }, { 32, 16 }, "largest divisor of 512 <= 48")
  end,

  global_batch_not_a_multiple_of_the_data_parallel_size = function()
    local p = planner()
    local r = p.plan{ model = model("gpt2"), gpus_per_node = 8, gpu_mem_bytes = 80 * GiB,
      cpu_mem_bytes = 512 * GiB, seq_len = 1024, global_batch = 20 }
    T.eq(r.fits, false)
    T.truthy(r.reasons[1]:find("global_batch 20 is not a multiple of the data-parallel size 8", 1, true),
      r.reasons[1])
    T.eq(r.stage, nil)
  end,

  nothing_fits_70b_on_one_24gb_gpu = function()
    local p = planner()
    local r = p.plan{ model = model("llama-3-70b"), gpus_per_node = 1, gpu_mem_bytes = 24 * GiB,
      cpu_mem_bytes = 64 * GiB, seq_len = 4096, global_batch = 8 }
    T.eq(r.fits, false)
    T.truthy(r.reasons[1]:find("nothing fits", 1, true) == 1)
    -- the full-offload row fits the GPU but its host RAM (18P*1.5) does not fit
    T.truthy(r.reasons[1]:find("ZeRO-3, optimizer + parameter offload to CPU", 1, true), r.reasons[1])
    T.truthy(r.reasons[1]:find("1774.12 GiB of CPU RAM per node, only 57.60 GiB is usable", 1, true),
      r.reasons[1])
    -- one line per candidate after the summary and the header
    T.eq(#r.reasons, 2 + #p.CANDIDATES)
  end,

  nothing_fits_when_even_full_offload_exceeds_the_gpu = function()
    -- 405B on one 24 GiB GPU: ZeRO-3 full offload still gathers the largest
    -- layer (4 * 2.1B = 7.83 GiB) and micro-batch-1 activations at s=8192.
    local p = planner()
    local r = p.plan{ model = model("llama-3.1-405b"), gpus_per_node = 1, gpu_mem_bytes = 24 * GiB,
      cpu_mem_bytes = 16384 * GiB, seq_len = 8192, global_batch = 1 }
    T.eq(r.fits, false)
    T.truthy(r.reasons[1]:find("nothing fits: the smallest configuration (ZeRO-3, optimizer + " ..
      "parameter offload to CPU, micro batch 1, activation checkpointing) needs", 1, true), r.reasons[1])
    T.truthy(r.reasons[1]:find("but only 21.60 GiB is usable", 1, true))
  end,

  offload_is_chosen_only_when_needed = function()
    local p = planner()
    -- one 24 GiB GPU: llama-2-7b needs optimizer offload (ZeRO-2 offload: 2P = 12.55 GiB)
    local r = p.plan{ model = model("llama-2-7b"), gpus_per_node = 1, gpu_mem_bytes = 24 * GiB,
      cpu_mem_bytes = 512 * GiB, seq_len = 2048, global_batch = 16 }
    T.eq({ r.fits, r.offload_optimizer, r.offload_param, r.stage }, { true, "cpu", "none", 2 })
    local text = table.concat(r.reasons, "\n")
    T.truthy(text:find("ZeRO-3, no offload: rejected", 1, true))
    T.truthy(text:find("ZeRO-1, optimizer offload to CPU: rejected, model states alone need 25.10 GiB",
      1, true), text)
    -- with 8 such GPUs, ZeRO-3 without offload fits
    local r8 = p.plan{ model = model("llama-2-7b"), gpus_per_node = 8, gpu_mem_bytes = 24 * GiB,
      cpu_mem_bytes = 512 * GiB, seq_len = 2048, global_batch = 16 }
    T.eq({ r8.fits, r8.offload_optimizer, r8.stage, r8.zero_init }, { true, "none", 3, true })
  end,

  cpu_budget_decides_between_stages = function()
    -- 64 GPUs: ZeRO-0..2 need P*4*8*1.5 host RAM per node to build the model;
    -- with little host RAM only ZeRO-3 with zero.Init (L*4*8*1.5) fits.
    local p = planner()
    local big = p.plan{ model = model("llama-2-13b"), gpus_per_node = 8, nodes = 8,
      gpu_mem_bytes = 80 * GiB, cpu_mem_bytes = 1024 * GiB, seq_len = 2048, global_batch = 64 }
    local small = p.plan{ model = model("llama-2-13b"), gpus_per_node = 8, nodes = 8,
      gpu_mem_bytes = 80 * GiB, cpu_mem_bytes = 64 * GiB, seq_len = 2048, global_batch = 64 }
    T.eq(big.stage, 1)
    T.eq(small.stage, 3)
    T.truthy(table.concat(small.reasons, "\n"):find(
      "ZeRO-1, no offload: rejected, its model states need 581.85 GiB of CPU RAM per node " ..
      "but only 57.60 GiB is usable", 1, true)) -- 48 * 13,015,864,320 B
  end,

  grid_of_models_and_budgets = function()
    local p = planner()
    local fits, misses = 0, 0
    for _, name in ipairs(GRID_MODELS) do
      for _, g in ipairs(GRID_GPUS) do
        for _, mem in ipairs(GRID_MEM) do
          local o = { model = model(name), gpus_per_node = g[1], nodes = g[2],
            gpu_mem_bytes = mem * GiB, cpu_mem_bytes = 512 * GiB, seq_len = 2048,
            global_batch = 128 }
          local r = p.plan(o)
          check_consistent(r, o, ("%s %dx%d %dGB"):format(name, g[1], g[2], mem))
          if r.fits then fits = fits + 1 else misses = misses + 1 end
        end
      end
    end
    T.truthy(fits > 0 and misses > 0, "the grid has both outcomes")
    -- spot checks
    local function pl(name, n, nodes, mem)
      return p.plan{ model = model(name), gpus_per_node = n, nodes = nodes,
        gpu_mem_bytes = mem * GiB, cpu_mem_bytes = 512 * GiB, seq_len = 2048, global_batch = 128 }
    end
    for _, mem in ipairs(GRID_MEM) do
      local r = pl("gpt2", 1, 1, mem)
      T.eq({ r.fits, r.stage, r.offload_optimizer }, { true, 0, "none" }, "gpt2 never needs ZeRO")
    end
    T.eq(pl("llama-3-70b", 1, 1, 80).fits, false)
    local r = pl("llama-3-70b", 8, 8, 80)
    T.eq({ r.fits, r.stage, r.offload_optimizer, r.offload_param }, { true, 3, "none", "none" })
    local r2 = pl("llama-3-70b", 8, 8, 24)
    T.eq({ r2.fits, r2.stage, r2.offload_optimizer }, { true, 3, "cpu" })
  end,

  more_memory_never_picks_a_costlier_option = function()
    local p = planner()
    for _, name in ipairs(GRID_MODELS) do
      for _, g in ipairs(GRID_GPUS) do
        for _, seq in ipairs({ 1024, 4096 }) do
          local prev = nil
          for _, mem in ipairs({ 16, 24, 32, 40, 48, 64, 80, 96, 141 }) do
            for _, cpu in ipairs({ 128, 512, 2048 }) do
              local r = p.plan{ model = model(name), gpus_per_node = g[1], nodes = g[2],
                gpu_mem_bytes = mem * GiB, cpu_mem_bytes = cpu * GiB, seq_len = seq,
                global_batch = 256 }
              local what = ("%s %dx%d seq %d %d GiB cpu %d"):format(name, g[1], g[2], seq, mem, cpu)
              if prev ~= nil and prev.cpu <= cpu then
                if prev.r.fits then
                  T.truthy(r.fits, what .. ": more memory lost the fit")
                  T.truthy(rank_le(p.rank(r), p.rank(prev.r)), what .. ": costlier option picked")
                end
              end
              if cpu == 2048 then prev = { r = r, cpu = cpu } end
            end
          end
        end
      end
    end
  end,

  more_cpu_memory_never_picks_a_costlier_option = function()
    local p = planner()
    for _, name in ipairs({ "llama-2-7b", "llama-2-13b", "llama-3-70b" }) do
      for _, g in ipairs({ { 1, 1 }, { 8, 1 }, { 8, 4 } }) do
        local prev = nil
        for _, cpu in ipairs({ 32, 64, 128, 256, 512, 1024, 2048, 4096 }) do
          local r = p.plan{ model = model(name), gpus_per_node = g[1], nodes = g[2],
            gpu_mem_bytes = 40 * GiB, cpu_mem_bytes = cpu * GiB, seq_len = 2048, global_batch = 64 }
          if prev and prev.fits then
            T.truthy(r.fits and rank_le(p.rank(r), p.rank(prev)), name .. " cpu " .. cpu)
          end
          prev = r
        end
      end
    end
  end,

  works_with_a_model_from_config_json_and_notes_long_sequences = function()
    local p = planner()
    local e = require("deepspeed.models").from_hf_config{
      model_type = "gpt2", n_embd = 768, n_layer = 12, n_head = 12, n_positions = 1024,
      vocab_size = 50257 }
    local r = p.plan{ model = e, gpus_per_node = 1, gpu_mem_bytes = 80 * GiB,
      cpu_mem_bytes = 64 * GiB, seq_len = 2048, global_batch = 4 }
    T.eq(r.fits, true)
    T.truthy(table.concat(r.reasons, "\n"):find("seq_len 2048 exceeds the model's context length 1024",
      1, true))
  end,

  rank_orders_plans = function()
    local p = planner()
    T.eq(p.rank{ fits = true, stage = 2, offload_optimizer = "cpu", offload_param = "none",
      activation_checkpointing = true, micro_batch = 4 }, { 1, 1, 1, 2, 1, -4 })
    T.eq(p.rank{ fits = true, stage = 3, offload_optimizer = "cpu", offload_param = "cpu",
      activation_checkpointing = false, micro_batch = 1 }, { 2, 1, 1, 3, 0, -1 })
    T.eq(p.rank{ fits = true, stage = 3, offload_optimizer = "nvme", offload_param = "none",
      sp = 4, activation_checkpointing = true, micro_batch = 1 }, { 3, 4, 1, 3, 1, -1 })
    T.errors(function() p.rank{ fits = false } end, "expected a plan with fits = true")
  end,

  rejects_bad_input = function()
    local p = planner()
    local function base()
      return { model = model("gpt2"), gpus_per_node = 1, gpu_mem_bytes = 24 * GiB,
        cpu_mem_bytes = 64 * GiB, seq_len = 1024, global_batch = 8 }
    end
    local o = base(); o.gpus_per_node = 0
    T.errors(function() p.plan(o) end, "gpus_per_node must be a positive whole number, got 0")
    o = base(); o.cpu_mem_bytes = nil
    T.errors(function() p.plan(o) end, "cpu_mem_bytes is required")
    o = base(); o.gpu_mem_bytes = -1
    T.errors(function() p.plan(o) end, "gpu_mem_bytes must be a positive number of bytes")
    o = base(); o.margin = 1
    T.errors(function() p.plan(o) end, "margin must be a number in %[0, 1%)")
    o = base(); o.model = { params = 10 }
    T.errors(function() p.plan(o) end, "model.largest_layer must be a positive whole number")
    o = base(); o.model = nil
    T.errors(function() p.plan(o) end, "model is required")
    o = base(); o.global_batch = 0
    T.errors(function() p.plan(o) end, "global_batch must be a positive whole number")
    o = base(); o.micro_batches = 4
    T.errors(function() p.plan(o) end, "unknown option 'micro_batches'")
    o = base(); o.stage = 4
    T.errors(function() p.plan(o) end, "stage must be 0, 1, 2 or 3, got 4")
    o = base(); o.offload_param = "disk"
    T.errors(function() p.plan(o) end, "offload_param must be \"none\", \"cpu\" or \"nvme\"")
    o = base(); o.sp_sizes = { 0 }
    T.errors(function() p.plan(o) end, "sp_sizes: sizes must be positive whole numbers")
    o = base(); o.nvme = "yes"
    T.errors(function() p.plan(o) end, "nvme must be a boolean")
    o = base(); o.activation_checkpointing = 1
    T.errors(function() p.plan(o) end, "activation_checkpointing must be a boolean")
    -- margin 0 uses the whole budget
    o = base(); o.margin = 0
    T.eq(p.plan(o).gpu_limit_bytes, 24 * GiB)
  end,

  fixed_choices_are_kept = function()
    local p = planner()
    local o = { model = model("llama-3.2-1b"), gpus_per_node = 1, gpu_mem_bytes = 24 * GiB,
      cpu_mem_bytes = 256 * GiB, seq_len = 2048, global_batch = 16 }
    local free = p.plan(o)
    T.truthy(free.fits)
    for stage = 1, 3 do
      o.stage = stage
      local r = p.plan(o)
      T.truthy(r.fits, "stage " .. stage)
      T.eq(r.stage, stage)
    end
    o.stage = nil
    o.offload_optimizer, o.offload_param = "cpu", "cpu"
    local r = p.plan(o)
    T.eq({ r.stage, r.offload_optimizer, r.offload_param }, { 3, "cpu", "cpu" })
    o.offload_optimizer, o.offload_param = nil, nil
    o.micro_batch = 2
    r = p.plan(o)
    T.eq({ r.micro_batch, r.gradient_accumulation }, { 2, 8 })
    o.micro_batch = 3
    r = p.plan(o)
    T.falsy(r.fits)
    T.truthy(r.reasons[1]:find("micro batch 3 does not divide", 1, true), r.reasons[1])
    o.micro_batch = nil
    o.activation_checkpointing = false
    r = p.plan(o)
    T.eq(r.activation_checkpointing, false)
    -- a stage-2 parameter offload does not exist
    o.activation_checkpointing = nil
    o.stage, o.offload_optimizer, o.offload_param = 2, "cpu", "cpu"
    r = p.plan(o)
    T.falsy(r.fits)
    T.truthy(r.reasons[1]:find("parameter offload ZeRO-3", 1, true), r.reasons[1])
  end,

  nothing_fits_lists_what_was_tried_and_fixes_that_fit = function()
    local p = planner()
    local o = { model = model("llama-2-13b"), gpus_per_node = 1, gpu_mem_bytes = 24 * GiB,
      cpu_mem_bytes = 64 * GiB, seq_len = 2048, global_batch = 16, suggest = true }
    local r = p.plan(o)
    T.falsy(r.fits)
    T.eq(#r.tried, #p.CANDIDATES)
    for _, t in ipairs(r.tried) do
      T.eq(t.gpu_over_bytes, math.max(0, t.gpu_bytes - r.tried[1].gpu_bytes + r.tried[1].gpu_over_bytes))
      T.truthy(t.gpu_over_bytes > 0 or t.cpu_over_bytes > 0, t.label .. " did not fit")
    end
    T.truthy(#r.fixes >= 2)
    for _, f in ipairs(r.fixes) do
      -- each fix, applied, really fits
      local o2 = {}
      for k, v in next, o do o2[k] = v end
      o2.suggest = nil
      for k, v in next, f.change do o2[k] = v end
      T.truthy(p.plan(o2).fits, f.what)
      T.truthy(f.plan.fits, f.what)
    end
    -- without suggest, no re-planning
    o.suggest = nil
    T.eq(p.plan(o).fixes, {})
  end,
}
