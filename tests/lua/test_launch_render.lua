-- Tests for plugins/launch/quote.lua and render.lua. The emitted files are
-- also run through bash, fake launchers and PyYAML by
-- tests/cli/test_launch_render.py.

local variants = require("fixtures.launch.variants")

local function variant(i)
  local row = variants()[i or 1]
  return { config = row.hf, params = row.params, file = row.file,
    name = row.profile .. "-" .. row.variant }
end

local function find_plain(s, what) return string.find(s, what, 1, true) ~= nil end

return {
  sh_leaves_safe_words_bare = function()
    local q = require("launch.quote")
    T.eq(q.sh("train.py"), "train.py")
    T.eq(q.sh("--lr=1e-4"), "--lr=1e-4")
    T.eq(q.sh("/a/b_c@d%e+f:g,h"), "/a/b_c@d%e+f:g,h")
    T.eq(q.sh(8), "8")
  end,

  split_reads_sh_words_without_expanding = function()
    local q = require("launch.quote")
    T.eq(q.split("train.py --a 1"), { "train.py", "--a", "1" })
    T.eq(q.split("  t.py\t'a b'  \"c d\" e\\ f  "), { "t.py", "a b", "c d", "e f" })
    T.eq(q.split("t.py ''"), { "t.py", "" })
    T.eq(q.split("t.py 'it'\\''s' \"q\\\"x\\$y\""), { "t.py", "it's", 'q"x$y' })
    T.eq(q.split("t.py '$(x)' 'a\nb' données a#b a~b"), { "t.py", "$(x)", "a\nb", "données", "a#b", "a~b" })
    T.eq(q.split(""), {})
    -- round trip through quote.sh
    local words = { "a b", "it's", "$(x)", "`y`", "", "é\n", "*", "~" }
    T.eq(q.split(q.sh_words(words)), words)
    for _, bad in ipairs({ "t.py $HOME", "t.py `id`", "a;b", "a|b", "a&", "a>b", "a<b",
      "(a)", "a{b,c}", "*.py", "a?", "[a]", "~/x", "#c", "'open", '"open', "x\\",
      '"$(x)"', "a\0b" }) do
      local w, err = q.split(bad)
      T.eq(w, nil, bad)
      T.truthy(type(err) == "string" and #err > 0, bad)
    end
  end,

  sh_single_quotes_everything_else = function()
    local q = require("launch.quote")
    T.eq(q.sh(""), "''")
    T.eq(q.sh("a b"), "'a b'")
    T.eq(q.sh("it's"), "'it'\\''s'")
    T.eq(q.sh("'"), "''\\'''")
    T.eq(q.sh("$(rm -rf ~)"), "'$(rm -rf ~)'")
    T.eq(q.sh("`id`"), "'`id`'")
    T.eq(q.sh("a\nb"), "'a\nb'")
    T.eq(q.sh("données/é"), "'données/é'")
    T.eq(q.sh("*"), "'*'")
    T.eq(q.sh("~"), "'~'")
    T.eq(q.sh("a\\b"), "'a\\b'")
    T.eq(q.sh_words({ "x", "y z" }), "x 'y z'")
    T.errors(function() q.sh("a\0b") end, "NUL")
    T.errors(function() q.sh({}) end, "must be a string")
  end,

  yaml_double_quotes_with_escapes = function()
    local q = require("launch.quote")
    T.eq(q.yaml("plain"), '"plain"')
    T.eq(q.yaml('say "hi"'), '"say \\"hi\\""')
    T.eq(q.yaml("back\\slash"), '"back\\\\slash"')
    T.eq(q.yaml("a\nb\tc\rd"), '"a\\nb\\tc\\rd"')
    T.eq(q.yaml("\1\127"), '"\\x01\\x7F"')
    T.eq(q.yaml("é ü 日本"), '"é ü 日本"')
    T.eq(q.yaml(utf8.char(0x85, 0x2028, 0xfeff)), '"\\u0085\\u2028\\uFEFF"')
    T.eq(q.yaml("$(x) `y` 'z' #c: d"), '"$(x) `y` \'z\' #c: d"')
    T.errors(function() q.yaml("\xff") end, "not valid UTF%-8")
  end,

  layout_splits_world_size_into_nodes = function()
    local r = require("launch.render")
    local v = { config = {}, params = { world_size = 16, gpus_per_node = 8 } }
    T.eq({ r.layout(v) }, { 2, 8, 16 })
    v.params = { world_size = 4, gpus_per_node = 8 }
    T.eq({ r.layout(v) }, { 1, 4, 4 })
    T.eq({ r.layout(v, { num_nodes = 2, gpus_per_node = 2 }) }, { 2, 2, 4 })
    T.errors(function() r.layout(v, { num_nodes = 3, gpus_per_node = 2 }) end,
      "3 node%(s%) x 2 GPU%(s%) is 6 processes, but the config's world_size is 4")
    v.params = { world_size = 12, gpus_per_node = 8 }
    T.errors(function() r.layout(v) end, "world_size is 12")
  end,

  hf_args_words_and_json = function()
    local r = require("launch.render")
    local v = variant(1)
    local p = v.params
    local words = r.hf_args_words(v)
    T.eq(words, { "--deepspeed", v.file, "--per_device_train_batch_size", tostring(p.micro_batch_size),
      "--gradient_accumulation_steps", tostring(p.gradient_accumulation),
      "--learning_rate", "0.0001", "--weight_decay", "0", "--adam_beta1", "0.9",
      "--adam_beta2", "0.95", "--adam_epsilon", "1e-08", "--max_grad_norm", "1",
      "--max_steps", "10000", "--warmup_steps", "100", "--bf16", "--gradient_checkpointing" })
    T.eq(r.hf_args_cli(v), table.concat(words, " ") .. "\n")
    local j = r.hf_args_json(v)
    T.truthy(find_plain(j, '  "learning_rate": 0.0001,\n'), j)
    T.truthy(find_plain(j, '  "fp16": false,\n'), j)
    T.truthy(find_plain(j, '  "adam_epsilon": 1e-08,\n'), j)
  end,

  accelerate_yaml_has_no_mixed_precision = function()
    local r = require("launch.render")
    local y = r.accelerate_yaml(variant(1))
    T.truthy(find_plain(y, "distributed_type: \"DEEPSPEED\"\n"), y)
    T.truthy(find_plain(y, "  zero3_init_flag: true\n"), y)
    T.truthy(find_plain(y, "num_processes: 8\n"), y)
    T.falsy(find_plain(y, "mixed_precision"), y)
    T.falsy(find_plain(y, "main_process_ip"), y)
    local v = variant(1)
    v.params.world_size = 16
    T.errors(function() r.accelerate_yaml(v) end, "needs opts.master_addr")
    y = r.accelerate_yaml(v, { master_addr = "10.0.0.1" })
    T.truthy(find_plain(y, "num_machines: 2\n"), y)
    T.truthy(find_plain(y, "  deepspeed_multinode_launcher: \"standard\"\n"), y)
  end,

  scripts_quote_every_user_word = function()
    local r = require("launch.render")
    local v = variant(1)
    local opts = { train_cmd = { "train.py", "--out", "my dir/$(whoami)" }, hf_args = false }
    local s = r.deepspeed_sh(v, opts)
    T.truthy(find_plain(s, "deepspeed --num_nodes 1 --num_gpus 8 --master_port 29500 \\\n"
      .. "  train.py --out 'my dir/$(whoami)'\n"), s)
    T.truthy(find_plain(r.torchrun_sh(v, opts), "torchrun --standalone --nnodes 1 --nproc_per_node 8"))
    T.truthy(find_plain(r.accelerate_sh(v, opts), "accelerate launch --config_file accelerate.yaml"))
    T.errors(function() r.deepspeed_sh(v, {}) end, "train_cmd must be a non%-empty list")
    v.params.world_size = 16
    T.errors(function() r.deepspeed_sh(v, opts) end, "needs opts.hostfile")
  end,

  slurm_refuses_values_sbatch_cannot_read = function()
    local r = require("launch.render")
    local v = variant(1)
    local s = r.slurm_sh(v, { train_cmd = { "train.py" }, partition = "gpu", time = "01:00:00" })
    T.truthy(find_plain(s, "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"), s)
    T.truthy(find_plain(s, "#SBATCH --time=01:00:00\n#SBATCH --partition=gpu\n"), s)
    v.name = "base-medium model=a b"
    T.truthy(find_plain(r.slurm_sh(v, { train_cmd = { "t.py" } }),
      "#SBATCH --job-name=dsforge-base-medium_model=a_b\n"))
    T.errors(function() r.slurm_sh(v, { train_cmd = { "t.py" }, job_name = "a b" }) end,
      "sbatch reads #SBATCH lines without a shell")
    T.errors(function() r.slurm_sh(v, { train_cmd = { "t.py" }, partition = "x\n#SBATCH --y" }) end,
      "Slurm partition")
  end,

  launch_script_holds_the_four_launchers = function()
    local r = require("launch.render")
    local v = variant(1)
    local opts = { train_cmd = { "train.py", "--out", "my dir/$(whoami)" }, hf_args = false }
    local s = r.launch_sh(v, opts)
    T.truthy(find_plain(s, "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
      .. "set -euo pipefail\ncmd=(train.py --out 'my dir/$(whoami)')\n"), s)
    T.truthy(find_plain(s, "  deepspeed)\n    deepspeed --num_nodes 1 --num_gpus 8 --master_port 29500"
      .. ' "${cmd[@]}"\n    ;;\n'), s)
    T.truthy(find_plain(s, '    torchrun --standalone --nnodes 1 --nproc_per_node 8 "${cmd[@]}"\n'), s)
    T.truthy(find_plain(s, '    accelerate launch --config_file accelerate.yaml "${cmd[@]}"\n'), s)
    T.truthy(find_plain(s, '    srun torchrun --nnodes 1 --nproc_per_node 8 --rdzv_id "$SLURM_JOB_ID"'), s)
    -- the training command is written once, whatever the launcher
    local _, n = s:gsub("whoami", "")
    T.eq(n, 1)
    -- what the single scripts refuse, it refuses
    T.errors(function() r.launch_sh(v, {}) end, "train_cmd must be a non%-empty list")
    T.errors(function() r.launch_sh(v, { train_cmd = { "t.py" }, job_name = "a b" }) end,
      "sbatch reads #SBATCH lines without a shell")
    v.params.world_size = 16
    T.errors(function() r.launch_sh(v, opts) end, "needs opts.hostfile")
  end,

  output_is_deterministic = function()
    local r = require("launch.render")
    local opts = { train_cmd = { "train.py", "--a", "b" }, master_addr = "h", hostfile = "hf" }
    for _, f in ipairs({ "deepspeed_sh", "torchrun_sh", "accelerate_sh", "slurm_sh", "launch_sh",
      "accelerate_yaml" }) do
      T.eq(r[f](variant(2), opts), r[f](variant(2), opts), f)
    end
  end,
}
