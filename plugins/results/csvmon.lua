-- plugins/results/csvmon.lua -- DeepSpeed's csv_monitor files.
--
-- Pure module (no I/O). csvMonitor.write_events in
-- deepspeed/monitor/csv_monitor.py (DeepSpeed v0.19.5, lines 40-67) writes
-- one file per event name: the name with "/" and " " replaced by "_" plus
-- ".csv" (line 58), a header row ['step', <last component of the name>]
-- (line 66) and one row [step, value] per event (line 67), through Python's
-- csv.writer, whose default line terminator is "\r\n". The engine's events
-- (deepspeed/runtime/engine.py) are "Train/Samples/lr", "Train/Samples/
-- loss_scale", "Train/Samples/elapsed_time_ms_*" and, in the pipeline
-- engine (runtime/pipe/engine.py line 415), "Train/Samples/train_loss";
-- their step is the engine's global_samples.

local M = {}

-- text: one file's contents -> { header = NAME, steps = {...}, values = {...} },
-- or nil plus a message. Every row csv.writer writes ends with "\r\n": a
-- last row without its terminator was cut mid-write (a killed run) and is
-- ignored, so "128,2.375" cut to "128,2." is never read as 2.0.
function M.parse(text)
  local header, steps, values = nil, {}, {}
  local cut = text:find("[^\n]+$")
  if cut then text = text:sub(1, cut - 1) end
  for line in text:gmatch("[^\n]*") do
    line = line:gsub("\r$", "")
    if line ~= "" then
      if header == nil then
        header = line:match("^step,(.+)$")
        if not header then return nil, "no 'step,<name>' header row" end
      else
        local s, v = line:match("^([^,]+),([^,]+)$")
        s, v = tonumber(s), tonumber(v)
        if s and v then
          steps[#steps + 1] = s
          values[#values + 1] = v
        end
      end
    end
  end
  if header == nil then return nil, "empty file" end
  return { header = header, steps = steps, values = values }
end

-- name: the file's base name; text: its contents -> measured values (for the
-- train_loss file: loss_first, loss_last, samples_seen), or nil when the
-- file holds none of them (plus a message when it is not a monitor file).
function M.read(name, text)
  local t, err = M.parse(text)
  if not t then return nil, err end
  if t.header == "train_loss" and name:match("train_loss%.csv$") and #t.values > 0 then
    return {
      loss_first = t.values[1],
      loss_last = t.values[#t.values],
      samples_seen = t.steps[#t.steps],
    }
  end
  return nil
end

return M
