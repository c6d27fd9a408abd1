-- tests/lsp/nvim.lua -- `dsforge lsp` in Neovim's built-in LSP client
-- (Debian's neovim, headless): start it, open a config with an error,
-- wait for the diagnostics, edit the error away (incremental sync), wait
-- for them to clear, hover, complete, edit into a mistyped key and apply
-- its quick fix, inlay hints, go to definition in a gen -o output, a
-- profile's diagnostics (opened, then edited and written), close, then
-- quit: status 0 when every check held.
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

  local uri = vim.uri_from_bufnr(buf)
  -- completion: the values of stage
  res = client.request_sync("textDocument/completion", {
    textDocument = { uri = uri }, position = { line = 2, character = col - 1 },
  }, 10000, buf)
  local labels = {}
  for _, it in ipairs(res and res.result and (res.result.items or res.result) or {}) do
    labels[#labels + 1] = it.label
  end
  check(table.concat(labels, ",") == "0,1,2,3", "complete the values of stage (" .. table.concat(labels, ",") .. ")")

  -- edit into a mistyped key, then apply its quick fix as Neovim applies a
  -- WorkspaceEdit (the buffer changes, the client sends didChange)
  local l3 = vim.api.nvim_buf_get_lines(buf, 3, 4, false)[1]
  local k = l3:find("gradient_clipping", 1, true)
  vim.api.nvim_buf_set_text(buf, 3, k - 1, 3, k - 1 + #"gradient_clipping", { "gradient_cliping" })
  local function typo()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      local lsp = d.user_data and d.user_data.lsp or d
      if (d.code or lsp.code) == "unknown-key" then return d, lsp end
    end
  end
  check(vim.wait(20000, function() return typo() ~= nil end, 20), "a mistyped key: unknown-key")
  local d, lspd = typo()
  res = client.request_sync("textDocument/codeAction", {
    textDocument = { uri = uri },
    range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
    context = { diagnostics = { lspd } },
  }, 10000, buf)
  local action
  for _, a in ipairs(res and res.result or {}) do
    if a.title == 'Rename "gradient_cliping" to "gradient_clipping"' then action = a end
  end
  check(action ~= nil and action.kind == "quickfix", "code action: the rename")
  if action then vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding) end
  check(vim.api.nvim_buf_get_lines(buf, 3, 4, false)[1] == l3, "the fixed line is the original one: "
        .. tostring(vim.api.nvim_buf_get_lines(buf, 3, 4, false)[1]))
  check(vim.wait(20000, function() return typo() == nil end, 20), "after the fix: no unknown-key")

  -- an fp16 key in bf16: the quick fix is two edits (out of bf16, into a
  -- new fp16 section), applied by Neovim in one go
  vim.api.nvim_buf_set_lines(buf, 1, 1, false, { '  "bf16": {"enabled": true, "loss_scale": 0},' })
  check(vim.wait(20000, function() return typo() ~= nil end, 20), "loss_scale in bf16: unknown-key")
  d, lspd = typo()
  res = client.request_sync("textDocument/codeAction", {
    textDocument = { uri = uri },
    range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
    context = { diagnostics = { lspd } },
  }, 10000, buf)
  action = nil
  for _, a in ipairs(res and res.result or {}) do
    if a.title == "Move bf16.loss_scale to fp16.loss_scale" then action = a end
  end
  check(action ~= nil, "code action: the move")
  if action then vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding) end
  local want = {
    "{",
    '  "bf16": {"enabled": true},',
    '  "train_micro_batch_size_per_gpu": 4,',
    '  "zero_optimization": {"stage": 3},',
    '  "gradient_clipping": 1.0,',
    '  "gradient_accumulation_steps": 2,',
    '  "fp16": {"loss_scale": 0}',
    "}",
  }
  local got = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  check(table.concat(got, "\n") == table.concat(want, "\n"), "the moved text:\n" .. table.concat(got, "\n"))
  check(vim.wait(20000, function() return typo() == nil end, 20), "after the move: no unknown-key")
  -- (back to the config the checks below expect)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {
    "{", '  "train_micro_batch_size_per_gpu": 4,', '  "zero_optimization": {"stage": 3},',
    '  "gradient_clipping": 1.0,', '  "gradient_accumulation_steps": 2', "}" })

  -- inlay hints: the global batch at the world size in use (1)
  res = client.request_sync("textDocument/inlayHint", {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = 99, character = 0 } },
  }, 10000, buf)
  local hint = res and res.result and res.result[1] and res.result[1].label or ""
  check(hint:find("data-parallel world 1 = 8", 1, true) ~= nil, "inlay hint: global batch 8 (" .. hint .. ")")

  -- go to definition in a gen -o output: the -f file's line; null for an
  -- edit on the command line
  local out = os.getenv("DEF_OUT")
  vim.cmd("edit " .. vim.fn.fnameescape(out .. "/defp-default.json"))
  local vbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(vbuf, client_id)
  local vlines = vim.api.nvim_buf_get_lines(vbuf, 0, -1, false)
  local function def_at(needle)
    for i, l in ipairs(vlines) do
      local c = l:find(needle, 1, true)
      if c then
        return client.request_sync("textDocument/definition", {
          textDocument = { uri = vim.uri_from_bufnr(vbuf) }, position = { line = i - 1, character = c },
        }, 20000, vbuf)
      end
    end
  end
  res = def_at('"gradient_clipping"')
  local loc = res and res.result
  check(type(loc) == "table" and loc.uri ~= nil, "definition: a location")
  if type(loc) == "table" and loc.uri then
    vim.lsp.util.jump_to_location(loc, client.offset_encoding)
    check(vim.api.nvim_buf_get_name(0) == vim.loop.fs_realpath(os.getenv("DEF_TEAM")),
          "jumped to the -f file (" .. vim.api.nvim_buf_get_name(0) .. ")")
    check(vim.api.nvim_win_get_cursor(0)[1] == 3, "at the line that set it (3)")
  end
  res = def_at('"stage"')
  check(res ~= nil and res.err == nil and (res.result == nil or res.result == vim.NIL),
        "definition of a command-line argument's value: null")

  -- a profile: its variant's error when opened; edited and written
  -- (didSave), the error goes
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("DEF_BROKEN")))
  local pbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(pbuf, client_id)
  local function perrors()
    local n, at = 0, nil
    for _, d in ipairs(vim.diagnostic.get(pbuf)) do
      if d.severity == vim.diagnostic.severity.ERROR then n, at = n + 1, d end
    end
    return n, at
  end
  check(vim.wait(20000, function() return perrors() > 0 end, 20), "a profile opened: its error arrives")
  local _, perr = perrors()
  check(perr and perr.lnum == 4 and perr.message:find("zero_optimization.stage: 7", 1, true) ~= nil,
        "the variant's error at the build's line (" .. tostring(perr and perr.lnum) .. ")")
  local plines = vim.api.nvim_buf_get_lines(pbuf, 0, -1, false)
  for i, l in ipairs(plines) do
    local c = l:find("stage = 7", 1, true)
    if c then vim.api.nvim_buf_set_text(pbuf, i - 1, c + 7, i - 1, c + 8, { "2" }) end
  end
  vim.cmd("silent write")
  check(vim.wait(20000, function() return perrors() == 0 end, 20), "written fixed: the error goes")

  -- close the output's file (didClose): the server answers on
  res = client.request_sync("textDocument/hover", {
    textDocument = { uri = uri }, position = { line = 2, character = kcol },
  }, 10000, buf)
  check(res and res.result ~= nil, "hover before closing")
  vim.cmd("bwipeout! " .. vbuf)
  res = client.request_sync("textDocument/hover", {
    textDocument = { uri = uri }, position = { line = 2, character = kcol },
  }, 10000, buf)
  check(res and res.result and res.result.contents.value:find("zero_optimization.stage", 1, true) ~= nil,
        "a document closed: the server answers for the others")

  vim.lsp.stop_client(client_id)
  check(vim.wait(10000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20),
        "the client stops the server (shutdown, exit)")
end)
if not ok then check(false, "error: " .. tostring(err)) end
finish()
