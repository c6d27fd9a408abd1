-- deepspeed.estimate_terms: `estimate`'s rows when --finetune, --tp or
-- NVMe offload ask for dsforge's own terms (deepspeed.memory_terms) beyond
-- DeepSpeed's estimators. Loaded by estimate.lua only for those options:
-- an ordinary estimate does not load it.
--
-- M.rows(m, opts, n, nodes, tp, lora, nvme, out) -> rows, or nil and the
-- message of a usage error. m is the model (estimate.lua's model_of), n
-- the GPUs per node; out.inputs gets the fine-tuning inputs.

local memory = require("deepspeed.memory")
local terms = require("deepspeed.memory_terms")

local M = {}

function M.rows(m, opts, n, nodes, tp, lora, nvme, out)
  local trainable, bits
  if lora then
    local rank = opts.lora_rank or 16
    local ok, t = pcall(terms.lora_trainable, m, rank)
    if not ok then return nil, "--finetune: " .. (tostring(t):gsub("^[^:]*:%d+: ", ""):gsub("^deepspeed%.memory_terms: ", "")) end
    trainable, bits = t, opts.finetune == "qlora" and 4 or 16
    out.inputs.finetune, out.inputs.lora_rank = opts.finetune, rank
    out.inputs.trainable_params, out.inputs.base_bits = t, bits
  end
  local wanted = {}
  if opts.stage ~= nil then
    local zi = nil
    if opts.stage == 3 then zi = opts.zero_init ~= false end
    wanted[1] = { stage = opts.stage, offload_optimizer = opts.offload_optimizer or "none",
      offload_param = opts.offload_param or "none", zero_init = zi }
  else
    for _, w in ipairs(memory.ALL_COLD_ORDER) do
      -- LoRA: parameter offload is not modelled
      if not (lora and w.offload_param ~= "none") then wanted[#wanted + 1] = w end
    end
  end
  local rows = {}
  for _, w in ipairs(wanted) do
    local ok, est = pcall(terms.states, {
      stage = w.stage, params = m.params, largest_layer = m.largest_layer,
      gpus_per_node = n, nodes = nodes, offload_optimizer = w.offload_optimizer,
      offload_param = w.offload_param, zero_init = w.zero_init ~= false, tp = tp,
      trainable_params = trainable, base_bits = bits,
      nvme = nvme and { sub_group_size = terms.NVME_SUB_GROUP_SIZE,
        param_buffer_size = terms.param_buffer_size(m.largest_layer, n * nodes) } or nil,
    })
    if not ok then return nil, (tostring(est):gsub("^[^:]*:%d+: ", "")) end
    rows[#rows + 1] = { stage = w.stage, offload_optimizer = w.offload_optimizer,
      offload_param = w.offload_param, zero_init = w.zero_init, gpu = est.gpu, cpu = est.cpu,
      nvme = est.nvme > 0 and est.nvme or nil }
  end
  return rows
end

return M
