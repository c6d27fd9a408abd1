-- plugins/results/trainer.lua -- the Hugging Face Trainer's result files.
--
-- Pure module (no I/O): takes the files' decoded JSON objects. Formats read
-- in transformers' src/transformers/trainer_utils.py (commit 007360d):
--   all_results.json   Trainer.save_metrics("train", metrics): the keys of
--     speed_metrics("train", ...): train_runtime (seconds, 4 decimals),
--     train_samples_per_second, train_steps_per_second and, with
--     include_tokens_per_second, train_tokens_per_second (3 decimals);
--     train_loss; and TrainerMemoryTracker's deltas when
--     skip_memory_metrics=False: train_mem_gpu_alloc_delta (end - start of
--     train) and train_mem_gpu_peaked_delta (peak - end), in bytes: their
--     sum is what training consumed on the GPU above its start.
--   trainer_state.json TrainerState.save_to_json: global_step and
--     log_history, one object per Trainer.log call ({"loss", "grad_norm",
--     "learning_rate", "epoch", "step"}; the final one holds train_runtime...).

local M = {}

local function num(v)
  if math.type(v) then return v end
  return nil
end

-- all_results.json -> measured values, or nil plus a message.
function M.read_all_results(obj)
  if type(obj) ~= "table" then return nil, "not a JSON object" end
  local out = {
    wall_time_s = num(obj.train_runtime),
    samples_per_sec = num(obj.train_samples_per_second),
    tokens_per_sec = num(obj.train_tokens_per_second),
    loss_mean = num(obj.train_loss),
  }
  local a, p = num(obj.train_mem_gpu_alloc_delta), num(obj.train_mem_gpu_peaked_delta)
  if a and p then out.gpu_memory_delta_bytes = a + p end
  if next(out) == nil then
    return nil, "no train_runtime, train_samples_per_second or train_loss key"
  end
  return out
end

-- trainer_state.json -> steps, the first and last logged loss; or nil plus
-- a message.
function M.read_state(obj)
  if type(obj) ~= "table" then return nil, "not a JSON object" end
  local hist = obj.log_history
  if type(hist) ~= "table" then return nil, "no log_history list" end
  local first, last, steps = nil, nil, num(obj.global_step)
  for _, e in ipairs(hist) do
    if type(e) == "table" then
      local l = num(e.loss)
      if l then
        if first == nil then first = l end
        last = l
      end
      local s = num(e.step)
      if s and (steps == nil or s > steps) then steps = s end
    end
  end
  if first == nil and steps == nil then return nil, "log_history holds no loss and no step" end
  return { steps = steps, loss_first = first, loss_last = last }
end

return M
