-- Tests for plugins/deepspeed/commands.lua: the parameter-count parser
-- (the one place sizes such as 7B are read) and the declarations.

local function cmds() return require("deepspeed.commands") end

local MAX = 1000000000000000

local ACCEPTED = {
  ["1"] = 1, ["7000000000"] = 7000000000, ["7e9"] = 7000000000, ["7E9"] = 7000000000,
  ["7e+9"] = 7000000000, ["7B"] = 7000000000, ["7b"] = 7000000000,
  ["1.3B"] = 1300000000, ["1.3b"] = 1300000000, ["350M"] = 350000000,
  ["350m"] = 350000000, ["125k"] = 125000, ["125K"] = 125000, ["0.5T"] = 500000000000,
  ["13.0B"] = 13000000000, ["2.5e9"] = 2500000000, ["1.5e3"] = 1500,
  ["70B"] = 70000000000, ["405B"] = 405000000000, ["1e15"] = MAX,
  ["0.125k"] = 125, [".5k"] = 500, ["6.738415616B"] = 6738415616,
}

local REFUSED = {
  "", "ten", "B", "1.35", "7GB", "7BB", "-7B", "+7", "0x10", "inf", "nan", "1e", "1e-3",
  "0", "0B", "1e16", "7B7", "7 B", " 7B", "1.3.5B", "1..3", "1e99999", "1.0000000001",
  "1234567890123456789", "2T1", "1,000",
}

return {
  accepted_spellings = function()
    local m = cmds()
    for s, want in pairs(ACCEPTED) do
      local got = m.parse_count(s, 1, MAX)
      T.eq(got, want, s)
      T.eq(math.type(got), "integer", s)
    end
  end,

  refused_spellings = function()
    local m = cmds()
    for _, s in ipairs(REFUSED) do
      T.eq(m.parse_count(s, 1, MAX), nil, s)
    end
    T.eq(m.parse_count(7, 1, MAX), nil)
  end,

  bounds = function()
    local m = cmds()
    T.eq(m.parse_count("0", 0, 10), 0)
    T.eq(m.parse_count("11", 0, 10), nil)
    T.eq(m.parse_count("1k", 0, 999), nil)
  end,

  declarations_have_what_the_core_reads = function()
    local names = {}
    for _, c in ipairs(cmds().commands) do
      names[#names + 1] = c.name
      T.eq(type(c.summary), "string")
      T.eq(type(c.run), "function")
      for _, o in ipairs(c.options or {}) do
        T.eq(type(o.name), "string")
        T.eq(type(o.help), "string")
      end
    end
    T.eq(table.concat(names, ","), "estimate,explain,schema,models")
  end,
}
