-- cluster.variant: what every cluster emitter needs of a variant, made
-- once per variant (ctx.cache is shared by this plugin's emitters for
-- one variant: slurm-array, k8s and skypilot together pay for it once).
--
--   M.of(v, ctx) -> { nodes =, gpus =, words = { Trainer arguments but
--                     --deepspeed FILE } }; a layout the params cannot
--                     make, or Trainer arguments they cannot give, is the
--                     user's error (dsforge.fail, exit 3)

local render = require("launch.render")
local trainer = require("launch.trainer")

local dsforge, pcall, tostring = dsforge, pcall, tostring

local M = {}

function M.of(v, ctx, who)
  local c = ctx.cache
  if c.cluster then return c.cluster end
  local p = v.params or {}
  local ok, n, g = pcall(render.layout, { params = p })
  if not ok then dsforge.fail(who .. ": " .. (tostring(n):gsub("^.-launch%.render: ", "")), 0) end
  local args, err = trainer.training_args({ config = v.config, params = p, deepspeed_file = v.file })
  if not args then dsforge.fail(who .. ": " .. err, 0) end
  local words = render.hf_args_words({ args = args })
  local out = {}
  for i = 1, #words do
    if not (words[i] == "--deepspeed" or words[i - 1] == "--deepspeed") then
      out[#out + 1] = words[i]
    end
  end
  c.cluster = { nodes = n, gpus = g, words = out }
  return c.cluster
end

return M
