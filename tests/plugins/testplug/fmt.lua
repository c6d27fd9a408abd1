local M = {}
function M.num(x) return x and string.format("%d", x) or nil end
return M
