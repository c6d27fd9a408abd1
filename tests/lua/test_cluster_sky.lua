-- Tests for plugins/cluster/sky.lua's pure helpers: the task name and the
-- accelerators the memory estimate allows (the emitter itself:
-- tests/cli/test_skypilot.py; its output against SkyPilot's schema:
-- tests/cluster/sky_run.sh).

local sky = require("cluster.sky")
local GIB = 1024 * 1024 * 1024

-- sky/task.py _VALID_NAME_REGEX: [a-z0-9]+ joined by one or two of . _ -
local function valid(name)
  local rest = name:match("^[a-z0-9]+(.*)$")
  if not rest then return false end
  while rest ~= "" do
    local sep, after = rest:match("^([._%-]+)([a-z0-9]+)(.*)$")
    if not sep or #sep > 2 then return false end
    rest = name.sub(rest, #sep + #after + 1)
  end
  return true
end

return {
  task_names_are_names_skypilot_takes = function()
    -- (the checker refuses what the regex refuses)
    for _, bad in ipairs({ "x___y", "Ab", "a-", "-a", "a b", "", "a.-_b" }) do
      T.falsy(valid(bad), bad)
    end
    T.truthy(valid("a.-b__c"))
    for _, s in ipairs({ "8xa100-small", "8xa100-small.micro_batch_size-2.zero_stage-3",
        "Big-Tier", "p-a=b,c", "p-x___y", "p-x.-_y", "p--", "-p", "P Q\nR", "ü", "" }) do
      local n = sky.task_name(s)
      T.truthy(valid(n), string.format("%q -> %q", s, n))
    end
    T.eq(sky.task_name("8xa100-small.micro_batch_size-2"), "8xa100-small.micro_batch_size-2")
    T.eq(sky.task_name("Big-Tier"), "big-tier")
    T.eq(sky.task_name("p-a=b,c"), "p-a-b-c")
    T.eq(sky.task_name("p-x___y"), "p-x-y")
    T.eq(sky.task_name("p--"), "p")
    T.eq(sky.task_name("ü"), "dsforge")
  end,

  accelerators_hold_the_estimate_with_the_margin = function()
    local bf16 = { bf16 = { enabled = true } }
    -- 72 GiB is 80 * 0.9: the 80 GiB cards hold it, just
    T.eq(sky.accelerators({ gpu_bytes = 72 * GIB, fit_margin = 0.1 }, bf16, 8),
      '{"B200": 8, "H200": 8, "A100-80GB": 8, "H100": 8}')
    T.eq(sky.accelerators({ gpu_bytes = 72 * GIB + 1, fit_margin = 0.1 }, bf16, 8),
      '{"B200": 8, "H200": 8}')
    -- without bf16 the older cards count; the margin read from the summary
    T.eq(sky.accelerators({ gpu_bytes = 14 * GIB, fit_margin = 0.1 }, {}, 1),
      '{"B200": 1, "H200": 1, "A100-80GB": 1, "H100": 1, "L40S": 1, "A100": 1,'
        .. ' "V100-32GB": 1, "A10": 1, "A10G": 1, "L4": 1, "T4": 1, "V100": 1}')
    T.eq(select(2, sky.accelerators({ gpu_bytes = 14 * GIB, fit_margin = 0.5 }, bf16, 1)) == nil,
      true)
    local none, why = sky.accelerators({ gpu_bytes = 200 * GIB }, bf16, 8)
    T.eq(none, nil)
    T.truthy(why:find("no accelerator SkyPilot knows holds this variant", 1, true), why)
    none, why = sky.accelerators({}, bf16, 8)
    T.eq(none, nil)
    T.truthy(why:find("declare the model param", 1, true), why)
  end,
}
