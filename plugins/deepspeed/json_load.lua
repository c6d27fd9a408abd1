-- plugins/deepspeed/json_load.lua -- the hf-json-load rule: at --target
-- hf the Hugging Face Trainer (and Accelerate) load the config with
-- Python's json.load, which rejects the comments and trailing commas
-- DeepSpeed's hjson reader (and dsforge) accept. `check` only: the core
-- hands a rule the file's text as ctx.json_extension (plugins.md, Rules);
-- gen writes plain JSON, so it has none.
return {
  id = "hf-json-load",
  severity = "error",
  summary = "at --target hf, the file must be plain JSON (json.load)",
  fix = "remove comments and trailing commas: the file must be plain JSON for the Trainer",
  check = function(_, ctx)
    if ctx.target ~= "hf" or not ctx.json_extension then return end
    local what, line, col = ctx.json_extension()
    if not what then return end
    ctx.report{
      at = { line, col },
      message = what .. ": the Hugging Face Trainer (and Accelerate) load the " ..
        "DeepSpeed config with Python's json.load, which rejects it " ..
        "(json.decoder.JSONDecodeError), though DeepSpeed's own hjson " ..
        "reader accepts it",
    }
  end,
}
