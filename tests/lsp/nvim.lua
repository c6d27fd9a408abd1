-- tests/lsp/nvim.lua -- `dsforge lsp` in Neovim's built-in LSP client
-- (Debian's neovim, headless): start it, open a config with an error,
-- wait for the diagnostics, edit the error away (incremental sync), wait
-- for them to clear, hover, then quit: status 0 when every check held.
--   DSFORGE=... CONFIG=... nvim --headless -u NONE -i NONE -c 'luafile nvim.lua'
local failures = 0
local function check(ok, what)
  io.stdout:write((ok and "ok   " or "FAIL ") .. what .. "\n")
  if not ok then failures = failures + 1 end
end
local function finish()
  io.stdout:write(failures == 0 and "all passed\n" or (failures .. " failed\n"))
  if failures == 0 then vim.cmd("qall!") else vim.cmd("cquit 1") end
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("CONFIG")))
  local buf = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = "dsforge",
    cmd = { os.getenv("DSFORGE"), "lsp" },
    root_dir = vim.fn.getcwd(),
    init_options = { dsforge = { dsVersion = "0.16.9", target = "deepspeed" } },
  })
  check(client_id ~= nil, "start_client")
  vim.lsp.buf_attach_client(buf, client_id)

  local function errors()
    local n = 0
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.severity == vim.diagnostic.severity.ERROR then n = n + 1 end
    end
    return n
  end
  check(vim.wait(20000, function() return errors() > 0 end, 20), "diagnostics arrive")
  local diag
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.severity == vim.diagnostic.severity.ERROR then diag = d end
  end
  local code = diag and (diag.code or (diag.user_data and diag.user_data.lsp and diag.user_data.lsp.code))
  check(code == "invalid-value", "the error is the rule invalid-value (" .. tostring(code) .. ")")
  check(diag and diag.lnum == 2, "on its line (0-based 2, got " .. tostring(diag and diag.lnum) .. ")")
  check(diag and diag.message:find("zero_optimization.stage: 7", 1, true) ~= nil, "with check's message")

  -- edit the 7 into a 3: an incremental didChange
  local line = vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1]
  local col = line:find("7", 1, true)
  vim.api.nvim_buf_set_text(buf, 2, col - 1, 2, col, { "3" })
  check(vim.wait(20000, function() return errors() == 0 end, 20), "the error clears after the edit")

  local client = vim.lsp.get_client_by_id(client_id)
  local kcol = line:find("stage", 1, true)
  local res = client.request_sync("textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = 2, character = kcol },
  }, 10000, buf)
  local value = res and res.result and res.result.contents and res.result.contents.value or ""
  check(value:find("zero_optimization.stage", 1, true) ~= nil, "hover: the explain text")

  vim.lsp.stop_client(client_id)
  check(vim.wait(10000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20),
        "the client stops the server (shutdown, exit)")
end)
if not ok then check(false, "error: " .. tostring(err)) end
finish()
