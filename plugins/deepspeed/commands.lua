-- plugins/deepspeed/commands.lua -- the commands the deepspeed plugin
-- declares: estimate, explain, schema (see "Commands" in
-- contrib/docs/plugins.md). Each run(opts, args, ctx) returns the text
-- to print (or a table, printed as JSON), or nil and an error table.

local M = {}

-- The commands' work, loaded when one runs: estimate in commands_run.lua,
-- explain and schema in commands_doc.lua.
local function runner(name, module)
  return function(...) return require(module)[name](...) end
end

-- A count such as a model's parameters (commands_run.lua's parse_count).
function M.parse_count(...) return require("deepspeed.commands_run").parse_count(...) end

local estimate = {
  name = "estimate",
  summary = "estimate memory per GPU and CPU",
  usage = "estimate (--model NAME|FILE | --params N [--largest-layer N]) [options]",
  description = "Without --stage: a table of every ZeRO stage and offload choice, like "
    .. "DeepSpeed's estimate_zero3_model_states_mem_needs_all_cold (bytes / 2^30, "
    .. "printed as GB). With --stage: that one row. --seq-len adds the activation "
    .. "memory per GPU (Korthikanti et al. 2022), with and without activation "
    .. "checkpointing; --flash-attention 0 counts the s x s attention scores of "
    .. "eager attention (default 1: FlashAttention/SDPA). --finetune, --tp, --sp and "
    .. "NVMe offload use dsforge's own terms (README: Memory model and planner).",
  options = {
    { name = "model", arg = "NAME|FILE", complete = "file",
      help = "a model `dsforge models` lists (e.g. llama-2-7b, mixtral-8x7b) or a "
        .. "Hugging Face config.json" },
    { name = "params", arg = "N",
      help = "total parameters (instead of --model): 7000000000, 7e9, 7B, 1.3B, 350M" },
    { name = "largest-layer", arg = "N", help = "parameters of the largest layer (same spellings)" },
    { name = "gpus", arg = "N", help = "GPUs per node (default 1)" },
    { name = "nodes", arg = "N", help = "nodes (default 1)" },
    { name = "stage", arg = "0|1|2|3", help = "only this ZeRO stage's row" },
    { name = "offload-optimizer", arg = "none|cpu|nvme",
      help = "with --stage: optimizer offload (nvme: ZeRO-Infinity, --stage 3)" },
    { name = "offload-param", arg = "none|cpu|nvme",
      help = "with --stage 3: parameter offload (nvme with --offload-optimizer nvme)" },
    { name = "zero-init", arg = "0|1", help = "with --stage 3: zero.Init (default 1)" },
    { name = "seq-len", arg = "N", help = "add the activation memory for this sequence length" },
    { name = "micro-batch", arg = "N", help = "micro batch per GPU for the activations (default 1)" },
    { name = "flash-attention", arg = "0|1",
      help = "0 counts the s x s attention scores of eager attention (default 1)" },
    { name = "ep-size", arg = "N",
      help = "expert parallel size of an MoE model (DeepSpeed MoE ep_size; default 1): "
        .. "expert parameters and their states divided over N GPUs; not with stage 3" },
    { name = "finetune", arg = "full|lora|qlora",
      help = "LoRA: optimizer states for the adapters only (qlora: 4-bit base weights)" },
    { name = "lora-rank", arg = "N", help = "LoRA rank on every linear projection (default 16)" },
    { name = "tp", arg = "N", help = "AutoTP tensor-parallel size (divides --gpus)" },
    { name = "sp", arg = "N", help = "Ulysses sequence-parallel size (divides the activations)" },
    { name = "json", help = "bytes as JSON, with the inputs echoed" },
  },
  run = runner("estimate", "deepspeed.commands_run"),
}

-- as check's (options.lua): checked by options_check.lua, ctx.ds_version
local DS_VERSION_OPT = { name = "ds-version", arg = "X.Y[.Z]",
  env = "DSFORGE_DS_VERSION", ctx = true,
  check = function(v) return require("deepspeed.options_check").release(v) end,
  help = "DeepSpeed release (default: $DSFORGE_DS_VERSION, else the newest covered)" }

local explain = {
  name = "explain",
  summary = "explain every key of a config",
  usage = "explain FILE|KEY [--lang en|zh] [--ds-version X.Y[.Z]]",
  description = "Walks through every key of a DeepSpeed config FILE: its meaning, its "
    .. "default, and whether the file changes it (from the deepspeed plugin's schema). "
    .. "With --ds-version, the defaults are that release's and keys it does not read "
    .. "are marked.\n\n"
    .. "KEY (a dotted path such as zero_optimization.stage) explains one key: its "
    .. "meaning, type and default in the chosen release, which covered releases read it "
    .. "(since, until, renamed from) and its default in each. A KEY the chosen release "
    .. "does not read is an error naming the first (or last) release that does.",
  positional = "file",
  options = {
    { name = "lang", arg = "en|zh", help = "language of the explanations (default en)" },
    DS_VERSION_OPT,
  },
  run = runner("explain", "deepspeed.commands_doc"),
}

local schema = {
  name = "schema",
  summary = "print a JSON Schema of DeepSpeed's config",
  usage = "schema [--draft 2020-12|07] [--ds-version X.Y[.Z]]",
  description = "Prints a JSON Schema (draft 2020-12) of DeepSpeed's config, generated "
    .. "from the deepspeed plugin's schema, for editors and CI validators. With "
    .. "--ds-version (or $DSFORGE_DS_VERSION), the schema of that release: only the keys "
    .. "it reads, its defaults, and its sections that reject unknown keys.\n\n"
    .. "--draft 07 prints draft-07 (what VS Code's JSON language service and SchemaStore "
    .. "read) with the annotations VS Code shows: markdownDescription, enumDescriptions, "
    .. "deprecationMessage for deprecated keys, and defaultSnippets for common blocks "
    .. "(ZeRO stage 2/3, bf16, AdamW, WarmupDecayLR).",
  options = {
    { name = "draft", arg = "2020-12|07", help = "JSON Schema draft (default 2020-12)" },
    DS_VERSION_OPT,
  },
  run = runner("schema", "deepspeed.commands_doc"),
}

local models = {
  name = "models",
  summary = "list the model catalog (estimate --model, --param model=)",
  usage = "models [--json]",
  description = "The models the memory estimate and the planner know by name: their "
    .. "parameter count as published, the parameters one token goes through (active), "
    .. "experts per layer and per token for a mixture-of-experts model, hidden size, "
    .. "layers, attention and key/value heads, vocabulary and Hugging Face id. A Hugging "
    .. "Face config.json path works wherever a name does.",
  options = {
    { name = "json", help = "the catalog as JSON, with the computed count and sources" },
  },
  run = runner("models", "deepspeed.commands_models"),
}

M.commands = { estimate, explain, schema, models }

return M
