-- The whole DeepSpeed JSON config as data (DeepSpeed 0.19.6).
--
-- A node is a table:
--   type      "object" | "map" | "array" | "int" | "float" | "bool" | "string" | "any",
--             or a list of these (a union, tried in order)
--   doc       { en = "...", zh = "..." }
--   objects:  fields = { key = node }, strict (true = pydantic model with
--             extra="forbid"), open (lenient section whose keys are not all
--             modelled: no unknown-key findings inside), pydantic_root (the
--             model is built as Model(**dict): "auto" values directly inside are
--             silently dropped), legacy_bool (a bool is accepted instead of the
--             object), unknown_hints = { key = { en =, zh = } } (extra advice
--             when that unknown key appears)
--   map:      free-form object, optional values = node
--   array:    optional items = node
--   scalars:  enum (values of the same Lua type are checked), case_insensitive,
--             enum_severity (severity of a value outside enum, default error),
--             min, max, exclusive_min, exclusive_max, no_bool (bools rejected)
--   any node: nullable (JSON null allowed), default (omitted for None),
--             default_text (string or {en=,zh=}) when the default is not a
--             plain value, aliases = { "alias" }, deprecated = { replacement =,
--             note = {en=,zh=}, copies = false when DeepSpeed only warns,
--             both = "error" | "ignored", same_value = true when the value
--             means the same under the replacement (a rename fixes it) },
--             hf_auto = true (Hugging Face fills
--             "auto" here), hf_auto_key = "name" (only that spelling is filled),
--             auto_dropped = true ("auto" as this value is dropped by the
--             pydantic model that contains it), rejected = { en =, zh = }
--             (DeepSpeed raises when the key is present), str_to_list = true
--             (array: a mode="before" validator wraps a string into a list),
--             py_float_since = "X.Y.Z" (float: from that release a
--             mode="before" validator calls Python's float() on a string),
--             py_float = true (float read with dict.get: the code that uses
--             it calls Python's float() first, so a number string works),
--             no_bool_since = "X.Y.Z" (no_bool and the finite check are a
--             validator's from that release; pydantic's lax coercion before),
--             range_since = "X.Y.Z" (the bounds are DeepSpeed's check from
--             that release on: an older one gets a warning, not an error;
--             range_before = { en =, zh = } says what it does with the value),
--             checked_when = "dotted.flag" (DeepSpeed reads the value, and
--             checks its type and bounds, only when that key is true in
--             Python; otherwise a wrong value is a warning, not an error)

local A = dsforge.array
local O = dsforge.object

local function doc(en, zh) return { en = en, zh = zh } end

local function with(t, opts)
  if opts then
    -- (assignment order does not matter: plain next is enough)
    for k, v in next, opts do t[k] = v end
  end
  return t
end

local function B(default, en, zh, opts)
  return with({ type = "bool", default = default, doc = doc(en, zh) }, opts)
end
local function I(default, en, zh, opts)
  return with({ type = "int", default = default, doc = doc(en, zh) }, opts)
end
local function F(default, en, zh, opts)
  return with({ type = "float", default = default, doc = doc(en, zh) }, opts)
end
local function S(default, en, zh, opts)
  return with({ type = "string", default = default, doc = doc(en, zh) }, opts)
end
local function Obj(fields, en, zh, opts)
  return with({ type = "object", fields = fields, doc = doc(en, zh) }, opts)
end
local function Map(en, zh, opts)
  return with({ type = "map", doc = doc(en, zh) }, opts)
end
local function Arr(items, en, zh, opts)
  return with({ type = "array", items = items, doc = doc(en, zh) }, opts)
end
local function Any(en, zh, opts)
  return with({ type = "any", doc = doc(en, zh) }, opts)
end

local DTYPES = { "torch.float16", "fp16", "float16", "half",
                 "torch.float32", "fp32", "float32", "float",
                 "torch.bfloat16", "bf16", "bfloat16",
                 "torch.int8", "int8" }

local function str_item(en, zh) return S(nil, en, zh) end

---------------------------------------------------------------------------
-- zero_optimization
---------------------------------------------------------------------------

local OFFLOAD_DEVICE_EN = "Where to offload: \"none\" (no offload), \"cpu\" or \"nvme\"; lower-case only. An empty {} means no offload."
local OFFLOAD_DEVICE_ZH = "卸载目标：\"none\"（不卸载）、\"cpu\" 或 \"nvme\"，只接受小写。空的 {} 表示不卸载（默认值是 none，不是文档所说的 cpu）。"

local offload_param = Obj({
  device = S("none", OFFLOAD_DEVICE_EN, OFFLOAD_DEVICE_ZH, { enum = { "none", "cpu", "nvme" } }),
  nvme_path = S(nil, "Filesystem path of the NVMe device used for parameter offload (not required by validation).",
    "参数卸载到 NVMe 时使用的文件系统路径（校验时并不强制要求）。", { nullable = true }),
  buffer_count = I(5, "Number of buffers in the pool for parameter offload to NVMe.",
    "参数卸载到 NVMe 时缓冲池中的缓冲区个数。", { min = 0 }),
  buffer_size = I(100000000, "Size (elements) of each buffer for parameter offload to NVMe.",
    "参数卸载到 NVMe 时每个缓冲区的大小（元素个数）。", { min = 0 }),
  max_in_cpu = I(1000000000, "Number of parameter elements kept in CPU memory when offloading to NVMe.",
    "卸载到 NVMe 时保留在 CPU 内存中的参数元素个数。", { min = 0 }),
  pin_memory = B(true, "Use page-locked (pinned) host memory; faster transfers, but can exhaust RAM or the memlock limit. Default true since v0.19.5.",
    "使用锁页（pinned）主机内存：传输更快，但可能耗尽内存或 memlock 限制。自 v0.19.5 起默认 true。"),
}, "Offload model parameters to CPU or NVMe. Only used by ZeRO stage 3; with stage 0/1/2 it is accepted and silently ignored.",
   "把模型参数卸载到 CPU 或 NVMe。只有 ZeRO-3 使用；stage 0/1/2 下会被接受但静默忽略（ZeRO-2 不切分参数）。",
   { strict = true, nullable = true })

local offload_optimizer = Obj({
  device = S("none", OFFLOAD_DEVICE_EN, OFFLOAD_DEVICE_ZH, { enum = { "none", "cpu", "nvme" } }),
  nvme_path = S(nil, "Filesystem path of the NVMe device used for optimizer-state offload (not required by validation).",
    "优化器状态卸载到 NVMe 时使用的文件系统路径（校验时并不强制要求）。", { nullable = true }),
  buffer_count = I(4, "Number of buffers for optimizer-state offload to NVMe (at least the number of states per parameter, e.g. 4 for Adam).",
    "优化器状态卸载到 NVMe 的缓冲区个数（至少为每个参数的状态数，Adam 为 4）。", { min = 0 }),
  pin_memory = B(true, "Use page-locked (pinned) host memory; faster transfers, but can exhaust RAM or the memlock limit. Default true since v0.19.5.",
    "使用锁页（pinned）主机内存：传输更快，但可能耗尽内存或 memlock 限制。自 v0.19.5 起默认 true。"),
  pipeline_read = B(false, "Overlap reading the next tile with computing the current one (ZeRO-Infinity, NVMe).",
    "分块优化器步骤中，读取下一块与计算当前块重叠（ZeRO-Infinity，NVMe）。"),
  pipeline_write = B(false, "Overlap writing the previous tile with computing the current one (NVMe).",
    "分块优化器步骤中，写回上一块与计算当前块重叠（NVMe）。"),
  fast_init = B(false, "Fast optimizer initialisation when offloading to NVMe.",
    "卸载到 NVMe 时启用快速优化器初始化。"),
  ratio = F(1.0, "Fraction of optimizer states offloaded to the CPU; values below 1 (partial offload) need ZeRO stage 3.",
    "卸载到 CPU 的优化器状态比例；小于 1（部分卸载）只支持 ZeRO-3。", { min = 0, max = 1 }),
  super_offload = B(false, "High-performance CPU offload for Superchips (ZeRO stage 3 only).",
    "面向 Superchip 的高性能 CPU 卸载（仅 ZeRO-3）。"),
  convert_grad_on_cpu = B(true, "Convert gradients on the CPU (true) or on the GPU (false).",
    "梯度类型转换在 CPU（true）还是 GPU（false）上进行。", { unreleased = true }),
  cpuadam_cores_perc = F(0.8, "Fraction of CPU cores used by CPU Adam (ZeRO stage 3 with super_offload).",
    "CPU Adam 使用的 CPU 核心比例（ZeRO-3 且 super_offload 时）。", { min = 0, max = 1 }),
}, "Offload optimizer states (and the optimizer step) to CPU or NVMe. Valid with ZeRO stages 1, 2 and 3.",
   "把优化器状态（以及优化器计算）卸载到 CPU 或 NVMe。ZeRO-1、2、3 都可以使用。",
   { strict = true, nullable = true })

local zenflow = Obj({
  topk_ratio = F(0.1, "Ratio of the most important gradient columns kept on the GPU (strictly between 0 and 1).",
    "保留的最重要梯度列的比例（严格介于 0 和 1 之间）。", { exclusive_min = 0, exclusive_max = 1 }),
  select_strategy = S("auto", "How important gradient indices are re-selected: \"auto\", \"step\" or \"epoch\".",
    "重新选择重要梯度索引的策略：\"auto\"、\"step\" 或 \"epoch\"。", { enum = { "auto", "step", "epoch" } }),
  select_interval = { type = { "int", "string" }, enum = { "auto" }, default = "auto",
    doc = doc("Interval for re-selecting important gradient indices: \"auto\" or an integer.",
              "重新选择重要梯度索引的间隔：\"auto\" 或整数。") },
  update_interval = { type = { "int", "string" }, enum = { "auto" }, default = "auto",
    doc = doc("Interval for applying the accumulated unimportant gradients: \"auto\" or an integer.",
              "应用累积的非重要梯度的间隔：\"auto\" 或整数。") },
  overlap_step = B(false, "Overlap the CPU optimizer step with forward/backward.",
    "让 CPU 侧优化器步骤与前向/反向计算重叠。"),
  offload = B(false, "Offload the selective optimizer states to the CPU.",
    "把选择性优化器状态卸载到 CPU。"),
  auto_ratio = F(0.99, "Threshold used by the \"auto\" strategy to choose update_interval.",
    "\"auto\" 策略确定 update_interval 时使用的阈值。", { min = 0, max = 1 }),
  full_warm_up_rounds = I(0, "Initial rounds in which all gradients are updated (no selection).",
    "开始阶段全部梯度都更新（不做选择）的轮数。"),
  pt_reserved_cores_perc = F(0.5, "Fraction of CPU cores reserved for PyTorch threads; the rest run ZenFlow workers.",
    "为 PyTorch 线程保留的 CPU 核心比例，其余用于 ZenFlow 工作线程。", { min = 0, max = 1 }),
  steps_per_epoch = I(nil, "Set by DeepSpeed at run time; do not set it in the config.",
    "由 DeepSpeed 运行时设置，不应在配置中填写。", { nullable = true }),
}, "ZenFlow: keep the important gradients on the GPU and update the rest asynchronously on the CPU. Incompatible with gradient_allreduce_op \"sum\".",
   "ZenFlow：重要梯度留在 GPU 上，其余在 CPU 上异步更新。与 gradient_allreduce_op 为 \"sum\" 不兼容。",
   { strict = true, nullable = true })

-- DeepSpeedZeroLeafModuleConfig._coerce_container_types (mode="before",
-- runtime/zero/leaf_module_config.py, every release reading leaf_module):
-- null is {} and a string in classes, names or name_suffixes is a list of it.
local leaf_module = Obj({
  classes = Arr(str_item("Fully qualified class name.", "完整的类名。"),
    "Module classes treated as ZeRO-3 leaf modules (fetched as one unit).",
    "作为 ZeRO-3 叶子模块（整体获取参数）的模块类。",
    { str_to_list = true, default = {
      "transformers.models.mixtral.modeling_mixtral.MixtralSparseMoeBlock",
      "transformers.models.qwen2_moe.modeling_qwen2_moe.Qwen2MoeSparseMoeBlock",
      "transformers.models.qwen3_moe.modeling_qwen3_moe.Qwen3MoeSparseMoeBlock",
    } }),
  names = Arr(str_item("Module name.", "模块名。"), "Module names treated as ZeRO-3 leaf modules.",
    "作为 ZeRO-3 叶子模块的模块名。", { str_to_list = true, default = A {} }),
  name_suffixes = Arr(str_item("Module name suffix.", "模块名后缀。"),
    "Module name suffixes treated as ZeRO-3 leaf modules.", "作为 ZeRO-3 叶子模块的模块名后缀。",
    { str_to_list = true, default = A {} }),
}, "Modules ZeRO-3 treats as leaves (their parameters are gathered together, e.g. MoE blocks).",
   "ZeRO-3 视为叶子的模块（其参数一起收集，例如 MoE 块）。", { strict = true, nullable = true })

local zero_optimization = Obj({
  stage = I(0, "ZeRO stage: 0 off, 1 partitions optimizer states, 2 also gradients, 3 also parameters. Only stage 3 partitions parameters.",
    "ZeRO 阶段：0 关闭，1 切分优化器状态，2 再切分梯度，3 再切分模型参数。只有 ZeRO-3 切分参数，ZeRO-2 不切分参数。",
    { enum = { 0, 1, 2, 3 } }),
  contiguous_gradients = B(true, "Copy gradients into a contiguous buffer as they are produced (less fragmentation).",
    "反向传播时把梯度复制到连续缓冲区，减少内存碎片。"),
  reduce_scatter = B(true, "Use reduce or reduce-scatter instead of all-reduce to average gradients.",
    "用 reduce 或 reduce-scatter 代替 all-reduce 来平均梯度。"),
  reduce_bucket_size = I(500000000, "Number of elements reduced at a time (bucket size); larger is faster but uses more memory. 0 passes validation but crashes.",
    "每次归约的元素个数（桶大小，单位是元素而非字节）；越大通信越高效但占用更多显存。0 能通过校验但会崩溃。",
    { min = 0, hf_auto = true }),
  use_multi_rank_bucket_allreduce = B(true, "Combine the reduce buckets of different ranks into one all-reduce.",
    "把不同 rank 的归约桶合并为一次 all-reduce。"),
  allgather_partitions = B(true, "Gather updated parameters with all-gather (true) or a series of broadcasts (false) after each step.",
    "每步结束时用 all-gather（true）还是一系列 broadcast（false）收集更新后的参数。"),
  allgather_bucket_size = I(500000000, "Number of elements all-gathered at a time (bucket size).",
    "每次 all-gather 的元素个数（桶大小，单位是元素）。", { min = 0 }),
  overlap_comm = B(nil, "Overlap gradient reduction with the backward pass. Default depends on the stage: true for stage 3, false otherwise.",
    "让梯度归约与反向计算重叠。默认值取决于阶段：ZeRO-3 为 true，其他为 false。",
    { nullable = true, default_text = { en = "stage == 3 (true for stage 3, false otherwise)", zh = "stage == 3（ZeRO-3 为 true，其他为 false）" } }),
  load_from_fp32_weights = B(true, "Initialise fp32 master weights from the fp32 copies in the checkpoint.",
    "从检查点中的 fp32 副本初始化 fp32 主权重（无精度损失）。"),
  elastic_checkpoint = B(false, "Legacy elastic checkpoint support (warns with stage 3; use universal checkpointing).",
    "旧的弹性检查点支持（ZeRO-3 下会警告，请改用通用检查点）。"),
  offload_param = offload_param,
  offload_optimizer = offload_optimizer,
  zenflow = zenflow,
  sub_group_size = I(1000000000, "Tile size for processing parameters in the optimizer step (ZeRO-3 offload / ZeRO-Infinity).",
    "优化器步骤中处理参数的分块大小（ZeRO-3 卸载 / ZeRO-Infinity 使用）。", { min = 0 }),
  cpu_offload_param = B(nil, "Deprecated: use offload_param = {\"device\": \"cpu\"}.",
    "已弃用：请改用 offload_param = {\"device\": \"cpu\"}。",
    { nullable = true, deprecated = { replacement = "offload_param",
      note = doc("true is copied into offload_param as {\"device\": \"cpu\"}", "true 会被转换为 offload_param = {\"device\": \"cpu\"}") } }),
  cpu_offload_use_pin_memory = B(nil, "Deprecated and ignored: set pin_memory inside offload_param / offload_optimizer.",
    "已弃用且不再生效：请在 offload_param / offload_optimizer 中设置 pin_memory。",
    { nullable = true, deprecated = { replacement = "offload_param.pin_memory / offload_optimizer.pin_memory", copies = false,
      note = doc("DeepSpeed only warns; the value is not used", "DeepSpeed 只给出警告，该值不会被使用") } }),
  cpu_offload = B(nil, "Deprecated: use offload_optimizer = {\"device\": \"cpu\"}.",
    "已弃用：请改用 offload_optimizer = {\"device\": \"cpu\"}。",
    { nullable = true, deprecated = { replacement = "offload_optimizer",
      note = doc("true is copied into offload_optimizer as {\"device\": \"cpu\"}", "true 会被转换为 offload_optimizer = {\"device\": \"cpu\"}") } }),
  prefetch_bucket_size = I(50000000, "ZeRO-3: maximum number of parameter elements prefetched ahead of use. Default 5e7 (the docs' 5e8 is wrong).",
    "ZeRO-3：提前预取的参数元素最大个数。默认 5e7（文档写的 5e8 有误）。",
    { min = 0, aliases = { "stage3_prefetch_bucket_size" }, hf_auto = true, hf_auto_key = "stage3_prefetch_bucket_size" }),
  param_persistence_threshold = I(100000, "ZeRO-3: parameters smaller than this are not partitioned (kept on every GPU).",
    "ZeRO-3：小于该阈值的参数不切分（每张卡都保留完整副本）。",
    { min = 0, aliases = { "stage3_param_persistence_threshold" }, hf_auto = true, hf_auto_key = "stage3_param_persistence_threshold" }),
  model_persistence_threshold = I(math.maxinteger, "ZeRO-3: upper bound on the total unpartitioned (persistent) parameter elements.",
    "ZeRO-3：不切分（常驻）参数元素总数的上限。",
    { min = 0, aliases = { "stage3_model_persistence_threshold" }, default_text = "sys.maxsize" }),
  max_live_parameters = I(1000000000, "ZeRO-3: maximum number of parameter elements resident per GPU before releasing (elements, not bytes).",
    "ZeRO-3：每张卡在释放前可常驻的参数元素个数上限（单位是元素，不是字节）。",
    { min = 0, aliases = { "stage3_max_live_parameters" } }),
  max_reuse_distance = I(1000000000, "ZeRO-3: do not release a parameter that will be reused within this many parameter elements.",
    "ZeRO-3：若参数将在这么多个参数元素之内被再次使用，则不释放它。",
    { min = 0, aliases = { "stage3_max_reuse_distance" } }),
  gather_16bit_weights_on_model_save = B(false, "ZeRO-3: gather the partitioned weights into a full 16-bit state_dict when saving the model.",
    "ZeRO-3：保存模型时把切分的权重收集为完整的 16 位 state_dict。",
    { aliases = { "stage3_gather_16bit_weights_on_model_save" }, hf_auto = true, hf_auto_key = "stage3_gather_16bit_weights_on_model_save" }),
  module_granularity_threshold = I(0, "ZeRO-3: modules whose parameters-per-descendant ratio is below this are fetched as one unit.",
    "ZeRO-3：参数量/子模块数比值低于该阈值的细粒度模块作为整体获取。",
    { aliases = { "stage3_module_granularity_threshold" } }),
  use_all_reduce_for_fetch_params = B(false, "ZeRO-3: fetch module parameters with all-reduce instead of all-gather.",
    "ZeRO-3：获取模块参数时使用 all-reduce 代替 all-gather。",
    { aliases = { "stage3_use_all_reduce_for_fetch_params" } }),
  allgather_sequential = B(false, "ZeRO-3: all-gather parameters one by one, bypassing bucketing (lower peak memory).",
    "ZeRO-3：逐个参数执行 all-gather，不使用分桶（降低峰值显存）。",
    { aliases = { "stage3_allgather_sequential" } }),
  partition_stream_chunk_size = I(0, "ZeRO-3: stream very large parameters through chunks of this many elements during zero.Init (0 = off).",
    "ZeRO-3：zero.Init 时把超大参数按该元素数分块流式切分（0 表示关闭）。",
    { min = 0, aliases = { "stage3_partition_stream_chunk_size" }, unreleased = true }),
  stage3_gather_fp16_weights_on_model_save = B(false, "Deprecated: use stage3_gather_16bit_weights_on_model_save.",
    "已弃用：请改用 stage3_gather_16bit_weights_on_model_save。",
    { deprecated = { replacement = "gather_16bit_weights_on_model_save", same_value = true,
      note = doc("the value is copied into gather_16bit_weights_on_model_save", "该值会被复制到 gather_16bit_weights_on_model_save") } }),
  ignore_unused_parameters = B(true, "Do not fail when some parameters receive no gradient (stage 1/2).",
    "存在未参与计算（无梯度）的参数时不报错（ZeRO-1/2）。"),
  legacy_stage1 = B(false, "Use the old ZeRO stage 1 implementation.", "使用旧版 ZeRO-1 实现。"),
  round_robin_gradients = B(false, "Stage 1/2 with CPU offload: parallelise gradient copies to CPU across ranks.",
    "ZeRO-1/2 + CPU 卸载时，按 rank 细粒度并行地把梯度复制到 CPU。"),
  zero_hpz_partition_size = I(1, "ZeRO++ hpZ: ranks in the secondary parameter partition group (1 = off).",
    "ZeRO++ hpZ：二级参数切分组中的 rank 数（1 表示关闭）。", { min = 0 }),
  zero_quantized_weights = B(false, "ZeRO++ qwZ: quantize weights for all-gather.", "ZeRO++ qwZ：all-gather 时量化权重。"),
  zero_quantized_nontrainable_weights = B(false, "Store non-trainable weights quantized (useful for LoRA).",
    "以量化形式存储不可训练的权重（适合 LoRA）。"),
  zero_quantized_gradients = B(false, "ZeRO++ qgZ: quantize gradients for the reduce.", "ZeRO++ qgZ：归约时量化梯度。"),
  zeropp_loco_param = Map("LoCo-ZeRO++ parameters, e.g. {\"err_beta\": 0.8, \"reset_T\": 1024}.",
    "LoCo-ZeRO++ 参数，例如 {\"err_beta\": 0.8, \"reset_T\": 1024}。", { nullable = true }),
  mics_shard_size = I(-1, "MiCS: shard group size (-1 = MiCS off).", "MiCS：分片组大小（-1 表示不使用 MiCS）。"),
  mics_hierarchical_params_gather = B(false, "MiCS: hierarchical all-gather of parameters.", "MiCS：分层 all-gather 参数。"),
  memory_efficient_linear = B(true, "ZeRO-3: use the memory-efficient linear implementation.", "ZeRO-3：使用省显存的 linear 实现。"),
  pipeline_loading_checkpoint = B(false, "ZeRO-3: force checkpoint loading in pipeline mode.", "ZeRO-3：强制以流水线模式加载检查点。"),
  override_module_apply = B(true, "ZeRO-3: override nn.Module.apply to gather parameters.", "ZeRO-3：重写 nn.Module.apply 以收集参数。"),
  log_trace_cache_warnings = B(false, "ZeRO-3: log trace-cache warnings (e.g. invalidations).", "ZeRO-3：记录 trace cache 的警告（如失效）。"),
  enable_sanity_checks = B(false, "Enable internal sanity checks (debugging).", "启用内部一致性检查（调试用）。"),
  save_muon_momentum_buffer_in_memory = B(false, "Muon + ZeRO-3 with NVMe: keep the momentum buffer in memory instead of swapping it.",
    "Muon + ZeRO-3 + NVMe 时，把动量缓冲保留在内存中而不交换到 NVMe。"),
  leaf_module = leaf_module,
}, "ZeRO memory optimisation (pydantic model: unknown keys are rejected).",
   "ZeRO 显存优化设置（pydantic 模型：未知键会被拒绝）。",
   { strict = true, pydantic_root = true, legacy_bool = true,
     unknown_hints = {
       aio = doc("aio is a top-level section, not part of zero_optimization (DeepSpeed issue #2721)",
                 "aio 是顶层配置段，不属于 zero_optimization（DeepSpeed issue #2721）"),
       grad_hooks = doc("grad_hooks is still in the docs but DeepSpeed rejects it; remove it",
                        "grad_hooks 仍出现在文档中，但 DeepSpeed 会拒绝它，请删除"),
     } })

---------------------------------------------------------------------------
-- precision
---------------------------------------------------------------------------

local fp16 = Obj({
  enabled = B(false, "Enable fp16 mixed-precision training (cannot be combined with bf16).",
    "启用 fp16 混合精度训练（不能与 bf16 同时启用）。", { hf_auto = true }),
  auto_cast = B(false, "Automatically cast inputs to fp16.", "自动把输入转换为 fp16。"),
  -- DeepSpeedFP16Config._validate_loss_scale (mode="before", since
  -- 0.18.8, runtime/precision_config.py): float(v) before pydantic
  loss_scale = F(0, "Static loss scale; 0 means dynamic loss scaling. Finite, >= 0, not a bool.",
    "静态损失缩放值；0 表示动态损失缩放。必须是有限数、>= 0，不能是布尔值。",
    -- (the >= 0 bound is that validator's too: precision_config.py:129-130
    -- at 0.18.8; 0.17.6's `loss_scale: float = 0` has no bound)
    { min = 0, no_bool = true, no_bool_since = "0.18.8", py_float_since = "0.18.8", range_since = "0.18.8",
      range_before = doc("a negative static scale multiplies the loss by it", "负的静态缩放值会直接乘到损失上") }),
  initial_scale_power = I(16, "Dynamic loss scaling starts at 2^initial_scale_power.",
    "动态损失缩放的初始值为 2^initial_scale_power。"),
  loss_scale_window = I(1000, "Steps without overflow before the dynamic loss scale is raised (integer, > 0 with dynamic scaling).",
    "动态损失缩放在无溢出多少步后增大（整数；动态缩放时须 > 0）。",
    -- _reject_non_integer_scale_params (mode="before", from 0.19.3:
    -- precision_config.py:165-179 at v0.19.5; absent at v0.19.2)
    { no_bool = true, no_bool_since = "0.19.3" }),
  hysteresis = I(2, "Overflows tolerated before the dynamic loss scale is lowered (delayed shift).",
    "动态损失缩放降低前允许的溢出次数（延迟位移）。"),
  consecutive_hysteresis = B(false, "Refill hysteresis after every step without overflow.",
    "每个未溢出的步骤后重新填满 hysteresis。"),
  min_loss_scale = I(1, "Minimum dynamic loss scale (integer, > 0 with dynamic scaling).",
    "动态损失缩放的最小值（整数；动态缩放时须 > 0）。", { no_bool = true, no_bool_since = "0.19.3" }),
  fp16_master_weights_and_grads = B(false, "Keep master weights and gradients in fp16 (needs ZeRO stage 1-3).",
    "以 fp16 保存主权重和梯度（需要 ZeRO 1-3）。"),
}, "fp16 mixed precision (pydantic model since v0.17.1: unknown keys are rejected).",
   "fp16 混合精度（自 v0.17.1 起为 pydantic 模型：未知键会被拒绝）。",
   { strict = true, pydantic_root = true })

local function bf16_section(is_old)
  return Obj({
    enabled = B(false, "Enable bf16 mixed-precision training (cannot be combined with fp16).",
      "启用 bf16 混合精度训练（不能与 fp16 同时启用）。", { hf_auto = not is_old or nil }),
    immediate_grad_update = B(false, "Apply gradient updates immediately instead of delayed.",
      "立即应用梯度更新，而不是延迟应用。"),
    check_grad_overflow = B(true, "Check gradients for overflow/underflow (default true since v0.19.3).",
      "检查梯度溢出/下溢（自 v0.19.3 起默认 true）。"),
    bf16_master_weights_and_grads = B(false, "Keep master weights and gradients in bf16 (needs ZeRO stage 1-3).",
      "以 bf16 保存主权重和梯度（需要 ZeRO 1-3）。"),
    bf16_optimizer_states = B(false, "Keep optimizer states in bf16 (needs ZeRO 1-3 and bf16_master_weights_and_grads).",
      "以 bf16 保存优化器状态（需要 ZeRO 1-3 且开启 bf16_master_weights_and_grads）。"),
  }, is_old and "Old name of the bf16 section (still read; bf16 wins if both are present)."
             or "bf16 mixed precision (pydantic model since v0.17.1: unknown keys such as loss_scale are rejected).",
     is_old and "bf16 配置段的旧名称（仍会读取；两者都存在时以 bf16 为准）。"
             or "bf16 混合精度（自 v0.17.1 起为 pydantic 模型：loss_scale 等未知键会被拒绝）。",
     { strict = true, pydantic_root = true,
       deprecated = is_old and { replacement = "bf16", both = "ignored", same_value = true,
         note = doc("if both are present bf16 wins and bfloat16 is ignored", "两者都存在时以 bf16 为准，bfloat16 被忽略") } or nil })
end

local amp = Obj({
  enabled = B(false, "Enable NVIDIA apex AMP (not compatible with ZeRO).", "启用 NVIDIA apex AMP（与 ZeRO 不兼容）。",
    { hf_auto = true }),
  opt_level = S(nil, "apex AMP optimisation level, passed to amp.initialize (\"O0\"..\"O3\").",
    "apex AMP 优化级别，传给 amp.initialize（\"O0\"..\"O3\"）。",
    { enum = { "O0", "O1", "O2", "O3" }, hf_auto = true }),
}, "NVIDIA apex AMP; every key other than enabled is passed to apex amp.initialize.",
   "NVIDIA apex AMP；除 enabled 外的键都会传给 apex 的 amp.initialize。",
   { open = true })

local torch_autocast = Obj({
  enabled = B(false, "Enable torch.autocast mixed precision.", "启用 torch.autocast 混合精度。"),
  dtype = S(nil, "Autocast dtype, e.g. \"bf16\", \"fp16\", \"torch.bfloat16\" (case-sensitive).",
    "autocast 使用的数据类型，例如 \"bf16\"、\"fp16\"、\"torch.bfloat16\"（区分大小写）。",
    { nullable = true, enum = DTYPES }),
  lower_precision_safe_modules = Arr(str_item("Module class name with package.", "带包名的模块类名。"),
    "Module classes whose parameters may be kept in lower precision.",
    "可以保持低精度参数的模块类列表。", { nullable = true }),
}, "torch.autocast based mixed precision.", "基于 torch.autocast 的混合精度。")

---------------------------------------------------------------------------
-- optimizer / scheduler
---------------------------------------------------------------------------

local optimizer = Obj({
  type = S(nil, "Optimizer name. Built-ins (any case): Adam, AdamW, Lamb, OneBitAdam, ZeroOneAdam, OneBitLamb, Adagrad, Lion, MuAdam, MuAdamW, MuSGD, Muon; otherwise a torch.optim class name (case-sensitive).",
    "优化器名称。内置（不区分大小写）：Adam、AdamW、Lamb、OneBitAdam、ZeroOneAdam、OneBitLamb、Adagrad、Lion、MuAdam、MuAdamW、MuSGD、Muon；其他名称按 torch.optim 类名查找（区分大小写）。"),
  params = Obj({
    lr = F(nil, "Learning rate.", "学习率。", { hf_auto = true,
      default_text = { en = "optimizer-specific (1e-3 for Adam/AdamW)", zh = "取决于优化器（Adam/AdamW 为 1e-3）" } }),
    betas = Arr(F(nil, "Decay rate.", "衰减率。"), "Adam coefficients [beta1, beta2] for the running averages of the gradient and its square.",
      "Adam 的 [beta1, beta2]，分别为梯度一阶矩和二阶矩移动平均的衰减率。",
      { hf_auto = true, default = { 0.9, 0.999 } }),
    eps = F(1e-8, "Term added to the denominator for numerical stability.", "加到分母上以保证数值稳定的小常数。",
      { hf_auto = true }),
    weight_decay = F(0, "Weight decay (decoupled, AdamW-style, for Adam/AdamW since adam_w_mode defaults to true).",
      "权重衰减（Adam/AdamW 默认 adam_w_mode=true，即 AdamW 式解耦衰减）。", { hf_auto = true }),
    bias_correction = B(true, "Apply Adam bias correction.", "使用 Adam 偏差修正。"),
    adam_w_mode = B(true, "Adam/AdamW: decoupled weight decay; true by default, so \"Adam\" behaves like AdamW.",
      "Adam/AdamW：解耦权重衰减；默认为 true，所以 \"Adam\" 实际表现为 AdamW。"),
    torch_adam = B(false, "Adam/AdamW: use torch.optim Adam(W) instead of FusedAdam.",
      "Adam/AdamW：使用 torch.optim 的 Adam(W) 而不是 FusedAdam。"),
    max_coeff = F(10.0, "Lamb: maximum trust-ratio coefficient.", "Lamb：信任比系数上限。"),
    min_coeff = F(0.01, "Lamb: minimum trust-ratio coefficient.", "Lamb：信任比系数下限。"),
    freeze_step = I(100000, "1-bit optimizers: warm-up steps before compression starts.", "1-bit 优化器：开始压缩前的预热步数。"),
    comm_backend_name = S("nccl", "1-bit optimizers: communication backend.", "1-bit 优化器：通信后端。"),
    max_grad_norm = F(nil, "Not supported by DeepSpeed: use the top-level gradient_clipping.",
      "DeepSpeed 不支持：请使用顶层的 gradient_clipping。",
      { rejected = doc("DeepSpeed raises a ValueError for max_grad_norm in optimizer.params; use the top-level gradient_clipping instead",
                       "optimizer.params 中的 max_grad_norm 会让 DeepSpeed 抛出 ValueError；请改用顶层的 gradient_clipping") }),
  }, "Keyword arguments passed to the optimizer's constructor (an argument the optimizer does not take raises TypeError).",
     "传给优化器构造函数的关键字参数（优化器不接受的参数会导致 TypeError）。", { open = true }),
  legacy_fusion = B(false, "Use the legacy fused fp16 optimizer path.", "使用旧的融合 fp16 优化器路径。"),
}, "Optimizer created by DeepSpeed. Without it the client (e.g. Hugging Face) supplies its own optimizer.",
   "由 DeepSpeed 创建的优化器。不配置时由调用方（例如 Hugging Face）自己创建优化器。", { nullable = true })

local scheduler = Obj({
  type = S(nil, "Scheduler name: LRRangeTest, OneCycle, WarmupLR, WarmupDecayLR, WarmupCosineLR, or a torch.optim.lr_scheduler class (case-sensitive).",
    "学习率调度器名称：LRRangeTest、OneCycle、WarmupLR、WarmupDecayLR、WarmupCosineLR，或 torch.optim.lr_scheduler 中的类名（区分大小写）。"),
  params = Obj({
    last_batch_iteration = I(-1, "Index of the last batch; -1 starts from the beginning.", "上一次迭代的批次索引；-1 表示从头开始训练。"),
    -- WarmupLR._format_param takes a number or a list, one value per param
    -- group (its length: the scheduler-param-groups rule)
    warmup_min_lr = F(0, "WarmupLR/WarmupDecayLR: learning rate at the start of warm-up (or one per param group).",
      "WarmupLR/WarmupDecayLR：预热开始时的学习率（或每个参数组一个）。",
      { hf_auto = true, type = { "float", "array" }, items = F(nil, "Learning rate of a param group.", "一个参数组的学习率。") }),
    warmup_max_lr = F(nil, "WarmupLR/WarmupDecayLR: learning rate at the end of warm-up (or one per param group).",
      "WarmupLR/WarmupDecayLR：预热结束时的学习率（或每个参数组一个）。",
      { hf_auto = true, type = { "float", "array" }, items = F(nil, "Learning rate of a param group.", "一个参数组的学习率。"), default_text = { en = "the optimizer's lr (WarmupLR); 0.001 (WarmupDecayLR)", zh = "优化器的 lr（WarmupLR）；0.001（WarmupDecayLR）" } }),
    warmup_num_steps = I(1000, "Number of warm-up steps (a positive integer; effectively at least 2).",
      "预热步数（正整数；实际至少为 2）。", { hf_auto = true, min = 1,
        -- WarmupLR.__init__ raises ValueError for a value that is not an
        -- int > 0 from 0.19.3 (lr_schedules.py:667-668 at v0.19.3, 695-696
        -- at v0.19.5; WarmupCosineLR 844-845); before, it only takes
        -- max(2, warmup_num_steps) (lr_schedules.py:675 at v0.19.2)
        range_since = "0.19.3",
        range_before = doc("WarmupLR uses max(2, warmup_num_steps), so the warm-up takes 2 steps",
          "WarmupLR 取 max(2, warmup_num_steps)，预热为 2 步") }),
    warmup_type = S("log", "Warm-up curve: \"log\" or \"linear\" (anything else falls back to log with a warning).",
      "预热曲线：\"log\" 或 \"linear\"（其他值会警告并回退为 log）。",
      { enum = { "log", "linear" }, enum_severity = "warning" }),
    total_num_steps = I(nil, "WarmupDecayLR/WarmupCosineLR: total training steps (required by those schedulers).",
      "WarmupDecayLR/WarmupCosineLR：总训练步数（这两种调度器必填）。", { hf_auto = true, min = 1 }),
    warmup_min_ratio = F(0, "WarmupCosineLR: starting ratio of the optimizer's lr.", "WarmupCosineLR：预热起始学习率相对优化器 lr 的比例。"),
    cos_min_ratio = F(0.0001, "WarmupCosineLR: final ratio of the optimizer's lr.", "WarmupCosineLR：余弦衰减结束时相对优化器 lr 的比例。"),
    lr_range_test_min_lr = F(0.001, "LRRangeTest: starting learning rate (or one per param group).",
      "LRRangeTest：起始学习率（或每个参数组一个）。",
      { type = { "float", "array" }, items = F(nil, "Learning rate of a param group.", "一个参数组的学习率。") }),
    lr_range_test_step_size = I(2000, "LRRangeTest: steps per learning-rate increase.", "LRRangeTest：每次提升学习率的步数间隔。"),
    lr_range_test_step_rate = F(1.0, "LRRangeTest: increase rate.", "LRRangeTest：学习率提升速率。"),
    lr_range_test_staircase = B(false, "LRRangeTest: staircase instead of continuous increase.", "LRRangeTest：阶梯式而非连续提升。"),
    cycle_min_lr = F(nil, "OneCycle: minimum learning rate (required).", "OneCycle：最小学习率（必填）。"),
    cycle_max_lr = F(nil, "OneCycle: maximum learning rate (required).", "OneCycle：最大学习率（必填）。"),
    decay_lr_rate = F(0, "OneCycle: learning-rate decay rate.", "OneCycle：学习率衰减率。"),
    cycle_first_step_size = I(2000, "OneCycle: steps in the first half of the cycle.", "OneCycle：周期前半段的步数。"),
    cycle_second_step_size = I(nil, "OneCycle: steps in the second half (None = same as the first).", "OneCycle：周期后半段的步数（None 表示与前半段相同）。",
      { nullable = true }),
    cycle_first_stair_count = I(0, "OneCycle: stairs in the first half.", "OneCycle：前半段的阶梯数。"),
    cycle_second_stair_count = I(nil, "OneCycle: stairs in the second half.", "OneCycle：后半段的阶梯数。", { nullable = true }),
    decay_step_size = I(0, "OneCycle: steps between decays after the cycle.", "OneCycle：周期结束后每次衰减的步数间隔。"),
    cycle_momentum = B(true, "OneCycle: cycle the momentum too.", "OneCycle：同时循环调整动量。"),
    cycle_min_mom = F(0.8, "OneCycle: minimum momentum.", "OneCycle：最小动量。"),
    cycle_max_mom = F(0.9, "OneCycle: maximum momentum.", "OneCycle：最大动量。"),
    decay_mom_rate = F(0, "OneCycle: momentum decay rate.", "OneCycle：动量衰减率。"),
  }, "Keyword arguments of the scheduler (which ones apply depends on the type).",
     "调度器的关键字参数（适用哪些取决于 type）。", { open = true }),
}, "Learning-rate scheduler created by DeepSpeed.", "由 DeepSpeed 创建的学习率调度器。", { nullable = true })

---------------------------------------------------------------------------
-- monitors and logging
---------------------------------------------------------------------------

local function path_monitor(name_en, name_zh)
  return Obj({
    enabled = B(false, "Enable logging to " .. name_en .. ".", "启用 " .. name_zh .. " 日志。"),
    output_path = S("", "Directory for the logs (empty = under the launch directory).", "日志输出目录（为空时写到启动目录下）。"),
    job_name = S("DeepSpeedJobName", "Job name; becomes a sub-directory of output_path.", "任务名；会成为 output_path 下的子目录。"),
  }, name_en .. " monitor (pydantic model: unknown keys are rejected).",
     name_zh .. " 监控（pydantic 模型：未知键会被拒绝）。", { strict = true, auto_dropped = true })
end

local tensorboard = path_monitor("TensorBoard", "TensorBoard")
local csv_monitor = path_monitor("local CSV files", "本地 CSV 文件")

local wandb = Obj({
  enabled = B(false, "Enable logging to Weights & Biases.", "启用 Weights & Biases 日志。"),
  group = S(nil, "W&B group name.", "W&B 分组名。", { nullable = true }),
  team = S(nil, "W&B team name.", "W&B 团队名。", { nullable = true }),
  project = S("deepspeed", "W&B project name.", "W&B 项目名。"),
}, "Weights & Biases monitor (pydantic model: unknown keys are rejected).",
   "Weights & Biases 监控（pydantic 模型：未知键会被拒绝）。", { strict = true, auto_dropped = true })

local comet = Obj({
  enabled = B(false, "Enable logging to Comet.", "启用 Comet 日志。"),
  samples_log_interval = I(100, "Submit metrics every this many samples.", "每处理这么多样本提交一次指标。"),
  project = S(nil, "Comet project name.", "Comet 项目名。", { nullable = true }),
  workspace = S(nil, "Comet workspace.", "Comet 工作区。", { nullable = true }),
  api_key = S(nil, "Comet API key (better set via COMET_API_KEY).", "Comet API 密钥（建议通过 COMET_API_KEY 环境变量设置）。", { nullable = true }),
  experiment_name = S(nil, "Comet experiment name.", "Comet 实验名。", { nullable = true }),
  experiment_key = S(nil, "Key of an existing Comet experiment (32-50 alphanumeric characters).", "已有 Comet 实验的键（32-50 个字母数字）。", { nullable = true }),
  online = B(nil, "Log to the Comet server (true) or offline (false).", "记录到 Comet 服务器（true）或离线（false）。", { nullable = true }),
  mode = S(nil, "How the experiment is started: \"get\", \"create\" or \"get_or_create\".", "实验的启动方式：\"get\"、\"create\" 或 \"get_or_create\"。", { nullable = true }),
}, "Comet monitor (pydantic model: unknown keys are rejected).", "Comet 监控（pydantic 模型：未知键会被拒绝）。",
   { strict = true, auto_dropped = true })

local trackio = Obj({
  enabled = B(false, "Enable logging to Trackio.", "启用 Trackio 日志。"),
  project = S("deepspeed", "Trackio project name.", "Trackio 项目名。"),
}, "Trackio monitor (pydantic model: unknown keys are rejected).", "Trackio 监控（pydantic 模型：未知键会被拒绝）。",
   { strict = true, auto_dropped = true, unreleased = true })

local comms_logger = Obj({
  enabled = B(false, "Enable the communication logger.", "启用通信日志。"),
  prof_all = B(true, "Profile all communication operations.", "分析所有通信操作。"),
  prof_ops = Arr(str_item("Operation name, e.g. \"all_reduce\".", "操作名，例如 \"all_reduce\"。"),
    "Only profile these operations.", "只分析这些通信操作。", { default = A {} }),
  verbose = B(false, "Print every communication operation immediately.", "立即打印每个通信操作。"),
  debug = B(false, "Add the caller function to each log entry.", "在日志中附带调用者函数名。"),
}, "Communication logging (pydantic model: unknown keys are rejected).", "通信日志（pydantic 模型：未知键会被拒绝）。",
   { strict = true, pydantic_root = true })

local flops_profiler = Obj({
  enabled = B(false, "Enable the FLOPS profiler (also forces wall_clock_breakdown).", "启用 FLOPS 分析器（同时会强制开启 wall_clock_breakdown）。"),
  recompute_fwd_factor = F(0.0, "Extra forward passes due to activation recomputation (0.0 none, 1.0 full).", "激活重计算带来的额外前向比例（0.0 无，1.0 全部）。"),
  profile_step = I(1, "Training step at which to profile.", "在第几个训练步进行分析。"),
  module_depth = I(-1, "Depth of the module tree to print (-1 = all).", "打印的模块树深度（-1 表示全部）。"),
  top_modules = I(1, "Number of top modules to print.", "打印耗时最多的模块个数。"),
  detailed = B(true, "Print the detailed per-module profile.", "打印每个模块的详细分析。"),
  output_file = S(nil, "File for the profile output (None = stdout).", "分析结果输出文件（None 表示标准输出）。", { nullable = true }),
}, "FLOPS profiler.", "FLOPS 分析器。")

local activation_checkpointing = Obj({
  partition_activations = B(false, "Partition activation checkpoints across model-parallel GPUs.", "在模型并行的 GPU 间切分激活检查点。"),
  number_checkpoints = I(nil, "Number of activation checkpoints (used with contiguous_memory_optimization).", "激活检查点的数量（配合 contiguous_memory_optimization 使用）。",
    { nullable = true }),
  contiguous_memory_optimization = B(false, "Copy partitioned activations into a contiguous buffer.", "把切分后的激活复制到连续缓冲区。"),
  cpu_checkpointing = B(false, "Offload partitioned activations to the CPU (needs partition_activations).", "把切分后的激活卸载到 CPU（需要 partition_activations）。"),
  synchronize_checkpoint_boundary = B(false, "Synchronize the device at each checkpoint boundary.", "在每个检查点边界同步设备。"),
  profile = B(false, "Log forward/backward time of each checkpoint function.", "记录每个检查点函数的前向/反向耗时。"),
}, "DeepSpeed activation checkpointing (only affects code that uses deepspeed.checkpointing).",
   "DeepSpeed 激活检查点（只影响使用 deepspeed.checkpointing 的代码）。")

local aio = Obj({
  block_size = I(1048576, "I/O block size in bytes.", "I/O 块大小（字节）。"),
  queue_depth = I(8, "I/O queue depth.", "I/O 队列深度。"),
  intra_op_parallelism = I(1, "Number of I/O threads per operation.", "每个操作的 I/O 线程数。"),
  single_submit = B(false, "Submit requests one by one instead of in batches.", "逐个提交请求而不是批量提交。"),
  overlap_events = B(true, "Overlap submission and completion of requests.", "重叠请求的提交与完成。"),
  use_gds = B(false, "Use NVIDIA GPUDirect Storage.", "使用 NVIDIA GPUDirect Storage。"),
}, "Async I/O for NVMe offload. This is a top-level section, not part of zero_optimization.",
   "NVMe 卸载使用的异步 I/O。它是顶层配置段，不属于 zero_optimization。",
   { nullable = true, unknown_hints = {
       thread_count = doc("thread_count was renamed to intra_op_parallelism", "thread_count 已改名为 intra_op_parallelism"),
   } })

local data_types = Obj({
  grad_accum_dtype = S(nil, "Data type for gradient accumulation, e.g. \"fp32\" or \"bf16\".", "梯度累积使用的数据类型，例如 \"fp32\" 或 \"bf16\"。",
    { nullable = true, enum = DTYPES }),
  param_dtype = S(nil, "Data type for parameters, e.g. \"bf16\".", "参数使用的数据类型，例如 \"bf16\"。", { nullable = true, enum = DTYPES }),
  buffer_dtype = S(nil, "Data type for buffers (None keeps the loaded dtype).", "缓冲区使用的数据类型（None 表示保持加载时的类型）。",
    { nullable = true, enum = DTYPES }),
}, "Data types used for gradient accumulation, parameters and buffers.", "梯度累积、参数和缓冲区使用的数据类型。")

local checkpoint = Obj({
  tag_validation = S("WARN", "Check that checkpoint tags match across ranks: \"WARN\", \"IGNORE\" or \"FAIL\" (any case).",
    "检查各 rank 的检查点 tag 是否一致：\"WARN\"、\"IGNORE\" 或 \"FAIL\"（不区分大小写）。",
    { enum = { "WARN", "IGNORE", "FAIL" }, case_insensitive = true }),
  load_universal = B(false, "Load a universal checkpoint.", "加载通用（universal）检查点。"),
  use_node_local_storage = B(false, "Each node saves checkpoints to its own local storage.", "每个节点把检查点保存到各自的本地存储。",
    { hf_auto = true }),
  parallel_write = Obj({
    pipeline_stage = B(false, "Write checkpoints in parallel per pipeline stage (must be true or false).", "按流水线阶段并行写检查点（必须是 true 或 false）。"),
  }, "Parallel checkpoint writing.", "并行写检查点。", { read_by = "runtime/checkpoint_engine (the checkpoint section is passed on)" }),
  checkpoint_serialization = B(true, "Use torch serialization for checkpoints.", "检查点使用 torch 序列化。"),
  writer = Obj({
    type = S("FAST", "Checkpoint writer: \"MOCK\", \"PYTHON\" or \"FAST\" (any case).", "检查点写入器：\"MOCK\"、\"PYTHON\" 或 \"FAST\"（不区分大小写）。",
      { enum = { "MOCK", "PYTHON", "FAST" }, case_insensitive = true }),
    io_buffer_size = I(67108864, "I/O buffer size in bytes.", "I/O 缓冲区大小（字节）。"),
    io_buffer_double = B(true, "Use double buffering.", "使用双缓冲。"),
    show_statistics = B(false, "Print I/O statistics.", "打印 I/O 统计信息。"),
    data_parallel = S(nil, "Data-parallel write unit: \"REPLICA\", \"SOCKET\" or \"MACHINE\" (any case).", "数据并行写入单位：\"REPLICA\"、\"SOCKET\" 或 \"MACHINE\"（不区分大小写）。",
      { nullable = true, enum = { "REPLICA", "SOCKET", "MACHINE" }, case_insensitive = true }),
    decoupled = B(false, "Decouple checkpoint writing from training.", "检查点写入与训练解耦。"),
    io_multiplier = I(1, "I/O multiplier.", "I/O 倍数。"),
  }, "Fast checkpoint writer settings.", "快速检查点写入器设置。", { nullable = true, read_by = "runtime/checkpoint_engine (the checkpoint section is passed on)" }),
}, "Checkpoint saving and loading.", "检查点保存与加载。")

local pipeline = Obj({
  stages = { type = { "int", "string" }, enum = { "auto" }, default = "auto",
    doc = doc("Number of pipeline stages, or \"auto\" (a real DeepSpeed value here, not a Hugging Face placeholder).",
              "流水线阶段数，或 \"auto\"（这里是 DeepSpeed 自己支持的值，不是 Hugging Face 占位符）。") },
  partition = S("best", "Layer partitioning method, e.g. \"parameters\", \"uniform\", \"type:<regex>\".", "层划分方法，例如 \"parameters\"、\"uniform\"、\"type:<正则>\"。"),
  seed_layers = B(false, "Use a different random seed for each layer.", "每层使用不同的随机种子。"),
  activation_checkpoint_interval = I(0, "Checkpoint activations every this many layers (0 = off).", "每隔多少层做一次激活检查点（0 表示关闭）。"),
  pipe_partitioned = B(true, "Partition activations sent between stages.", "切分阶段之间传递的激活。"),
  grad_partitioned = B(true, "Partition gradients sent between stages.", "切分阶段之间传递的梯度。"),
}, "Pipeline-parallel engine settings.", "流水线并行引擎设置。")

local hybrid_engine = Obj({
  enabled = B(false, "Enable the hybrid (training + inference) engine used by DeepSpeed-Chat.", "启用 DeepSpeed-Chat 使用的混合（训练+推理）引擎。"),
  max_out_tokens = I(512, "Maximum tokens for generation (> 0).", "生成时的最大 token 数（> 0）。", { exclusive_min = 0 }),
  inference_tp_size = I(1, "Tensor-parallel size used for inference.", "推理时的张量并行大小。"),
  release_inference_cache = B(false, "Release the inference cache after generation.", "生成后释放推理缓存。"),
  pin_parameters = B(true, "Pin parameters in memory.", "把参数固定在内存中。"),
  tp_gather_partition_size = I(8, "Partition size for tensor-parallel gathers.", "张量并行 gather 的分块大小。"),
  enable_cuda_graph = B(false, "Capture CUDA graphs for generation.", "生成时捕获 CUDA Graph。", { since = "0.19.6" }),
}, "Hybrid engine (pydantic model: unknown keys are rejected).", "混合引擎（pydantic 模型：未知键会被拒绝）。",
   { strict = true, pydantic_root = true })

local progressive_layer_drop = Obj({
  enabled = B(false, "Enable progressive layer dropping.", "启用渐进式层丢弃。"),
  theta = F(1.0, "Controls the dropping rate (lower keeps fewer layers).", "控制丢弃率（越小保留的层越少）。"),
  gamma = F(0.001, "Controls how fast the dropping rate changes.", "控制丢弃率变化的速度。"),
}, "Progressive layer drop.", "渐进式层丢弃。")

local autotuning = Obj({
  enabled = B(false, "Enable the autotuner.", "启用自动调优。"),
  fast = B(true, "Only tune the micro batch size (skip ZeRO knobs).", "只调优微批大小（不调 ZeRO 参数）。"),
  results_dir = S("autotuning_results", "Directory for the tuning results.", "调优结果目录。"),
  exps_dir = S("autotuning_exps", "Directory for the experiment configs.", "实验配置目录。"),
  overwrite = B(true, "Overwrite existing results.", "覆盖已有结果。"),
  start_profile_step = I(3, "Step at which profiling starts.", "开始分析的步数。"),
  end_profile_step = I(5, "Step at which profiling ends.", "结束分析的步数。"),
  metric_path = S(nil, "Path of the metric output file.", "指标输出文件路径。", { nullable = true }),
  metric = S("throughput", "Metric to optimise: \"throughput\", \"latency\" or \"flops\".", "优化目标：\"throughput\"、\"latency\" 或 \"flops\"。"),
  tuner_type = S("gridsearch", "Search strategy: \"gridsearch\", \"random\" or \"model_based\".", "搜索策略：\"gridsearch\"、\"random\" 或 \"model_based\"。"),
  tuner_early_stopping = I(5, "Stop after this many experiments without improvement.", "连续多少个实验无提升后停止。"),
  tuner_num_trials = I(50, "Maximum number of experiments.", "最多实验次数。"),
  arg_mappings = Map("Map from DeepSpeed config keys to training-script arguments.", "DeepSpeed 配置键到训练脚本参数的映射。", { nullable = true }),
  model_info = Obj({
    profile = B(false, "Only profile the model and exit.", "只分析模型信息后退出。"),
    num_params = I(nil, "Number of model parameters.", "模型参数量。", { nullable = true }),
    hidden_size = I(nil, "Model hidden size.", "模型隐藏层维度。", { nullable = true }),
    num_layers = I(nil, "Number of model layers.", "模型层数。", { nullable = true }),
  }, "Model information used by the autotuner.", "自动调优使用的模型信息。", { read_by = "autotuning/config.py (the autotuner, not DeepSpeedConfig)" }),
  model_info_path = S(nil, "Path of a model-info JSON file.", "模型信息 JSON 文件路径。", { nullable = true }),
  mp_size = I(1, "Model-parallel size.", "模型并行大小。"),
  max_train_batch_size = I(nil, "Upper bound on the global batch size.", "全局批大小上限。", { nullable = true }),
  min_train_batch_size = I(1, "Lower bound on the global batch size.", "全局批大小下限。"),
  max_train_micro_batch_size_per_gpu = I(1024, "Upper bound on the micro batch size.", "微批大小上限。"),
  min_train_micro_batch_size_per_gpu = I(1, "Lower bound on the micro batch size.", "微批大小下限。"),
  num_tuning_micro_batch_sizes = I(3, "Number of micro batch sizes to try.", "尝试的微批大小个数。"),
}, "DeepSpeed autotuner.", "DeepSpeed 自动调优。")

local elasticity = Obj({
  enabled = B(false, "Enable elastic training (DeepSpeed then chooses the batch sizes itself).", "启用弹性训练（批大小由 DeepSpeed 自行决定）。"),
  max_train_batch_size = I(2000, "Largest acceptable global batch size.", "可接受的最大全局批大小。"),
  micro_batch_sizes = Arr(I(nil, "Micro batch size.", "微批大小。"), "Acceptable micro batch sizes.", "可接受的微批大小列表。",
    { default = { 2, 4, 6 }, checked_when = "elasticity.enabled" }),
  min_gpus = I(1, "Minimum number of GPUs.", "最少 GPU 数。", { checked_when = "elasticity.enabled" }),
  max_gpus = I(10000, "Maximum number of GPUs.", "最多 GPU 数。", { checked_when = "elasticity.enabled" }),
  min_time = I(0, "Minimum running time (minutes) before rescaling; 0 = unknown.", "重新伸缩前的最短运行时间（分钟）；0 表示未知。",
    { checked_when = "elasticity.enabled" }),
  prefer_larger_batch = B(true, "Prefer the batch size closest to max_train_batch_size.", "优先选择最接近 max_train_batch_size 的批大小。"),
  ignore_non_elastic_batch_info = B(false, "Ignore (instead of rejecting) top-level batch keys when elasticity is enabled.", "启用弹性时忽略（而不是报错）顶层的批大小键。"),
  -- compute_elastic_config uses float(elasticity_config.version) only
  -- (elasticity/elasticity.py:291-343 in every covered release): "0.2" works
  version = F(0.2, "Version of the elasticity logic.", "弹性算法版本。", { checked_when = "elasticity.enabled", py_float = true }),
  -- ElasticityConfig runs only with elasticity enabled (elasticity/config.py:89
  -- and :94 for these bounds; the others are the elasticity-config rule's)
  model_parallel_size = I(1, "Model-parallel size (>= 1).", "模型并行大小（>= 1）。", { min = 1, checked_when = "elasticity.enabled" }),
  num_gpus_per_node = I(1, "GPUs per node (>= 1).", "每个节点的 GPU 数（>= 1）。", { min = 1, checked_when = "elasticity.enabled" }),
}, "Elastic training: when enabled it overwrites the three batch keys.", "弹性训练：启用后会覆盖三个批大小键。", { read_by = "elasticity/config.py (compute_elastic_config)" })

local compile = Obj({
  deepcompile = B(false, "Enable DeepCompile (compiler-based ZeRO optimisations). Incompatible with gradient_allreduce_op \"sum\".",
    "启用 DeepCompile（基于编译器的 ZeRO 优化）。与 gradient_allreduce_op 为 \"sum\" 不兼容。"),
  free_activation = B(false, "Eagerly free activations.", "尽早释放激活。"),
  free_activation_threshold = I(10485760, "Activations of at least this many bytes are freed eagerly.", "不小于该字节数的激活会被尽早释放。"),
  offload_activation = B(false, "Offload saved activations to pinned host memory.", "把保存的激活卸载到锁页主机内存。"),
  offload_opt_states = B(false, "Offload optimizer states to host memory during forward/backward.", "前向/反向期间把优化器状态卸载到主机内存。"),
  double_buffer = B(true, "Use double buffering.", "使用双缓冲。"),
  symmetric_memory = B(false, "Use symmetric memory.", "使用对称内存。"),
  debug_log = B(false, "Enable debug logging / graph dumps.", "启用调试日志 / 计算图转储。"),
  offload_parameters = B(false, "Offload parameters.", "卸载参数。"),
  sync_before_reduce = B(false, "Synchronize before reduce.", "归约前同步。"),
  sync_after_reduce = B(false, "Synchronize after reduce.", "归约后同步。"),
  sync_before_allgather = B(false, "Synchronize before all-gather.", "all-gather 前同步。"),
  sync_after_allgather = B(false, "Synchronize after all-gather.", "all-gather 后同步。"),
  keep_int_input_tensors = B(true, "Keep real values of integer input tensors.", "保留整数输入张量的真实值。"),
  keep_all_input_tensors = B(false, "Keep real values of all input tensors.", "保留所有输入张量的真实值。"),
  passes = Arr(S(nil, "Pass name.", "pass 名称。", { enum = { "z1", "z3", "autosp" } }),
    "Compiler passes to compose: \"z1\", \"z3\", \"autosp\".", "要组合的编译 pass：\"z1\"、\"z3\"、\"autosp\"。", { nullable = true }),
}, "torch.compile / DeepCompile settings (pydantic model: unknown keys are rejected).",
   "torch.compile / DeepCompile 设置（pydantic 模型：未知键会被拒绝）。", { strict = true, pydantic_root = true })

local tensor_parallel = Obj({
  autotp_size = I(0, "AutoTP training: tensor-parallel size (0 = AutoTP off).", "AutoTP 训练：张量并行大小（0 表示关闭）。"),
  tp_overlap_comm = B(false, "Overlap tensor-parallel all-reduce with computation.", "让张量并行的 all-reduce 与计算重叠。"),
  dtype = Any("Model dtype for AutoTP (a torch.dtype set from Python; default torch.float16).",
    "AutoTP 的模型数据类型（在 Python 中以 torch.dtype 设置；默认 torch.float16）。", { default_text = "torch.float16" }),
  tensor_parallel = Obj({
    tp_size = I(1, "Number of devices the model is split across.", "模型切分到的设备数。"),
    tp_grain_size = I(1, "Granularity of MLP/lm_head partitioning.", "MLP/lm_head 切分粒度。"),
    mpu = Any("Model-parallel unit object (set from Python).", "模型并行单元对象（在 Python 中设置）。", { nullable = true }),
    tp_group = Any("Tensor-parallel process group (set from Python).", "张量并行进程组（在 Python 中设置）。", { nullable = true }),
  }, "Tensor-parallel group settings.", "张量并行组设置。", { strict = true, aliases = { "tp" } }),
  injection_policy_tuple = Any("Injection policy tuple (set from Python).", "注入策略元组（在 Python 中设置）。", { nullable = true }),
  partition_config = Map("Custom AutoTP layer partitioning rules (use_default_specs, layer_specs).", "自定义 AutoTP 层切分规则（use_default_specs、layer_specs）。",
    { nullable = true }),
  preset_model = S(nil, "Built-in AutoTP preset: llama, bloom, chatglm, mixtral, deepseek_v2, qwen2, phi3.", "内置 AutoTP 预设：llama、bloom、chatglm、mixtral、deepseek_v2、qwen2、phi3。",
    { nullable = true }),
  keep_module_on_host = B(false, "Keep loaded checkpoint weights on the host instead of moving them to the device.", "加载检查点时把权重留在主机上而不是移到设备。"),
  replace_with_kernel_inject = B(false, "Inject DeepSpeed inference kernels.", "注入 DeepSpeed 推理内核。", { aliases = { "kernel_inject" } }),
}, "Automatic tensor parallelism for training (pydantic model: unknown keys are rejected).",
   "训练用的自动张量并行（pydantic 模型：未知键会被拒绝）。", { strict = true, pydantic_root = true })

local timers = Obj({
  throughput = Obj({
    enabled = B(true, "Enable the throughput timer.", "启用吞吐量计时器。"),
    synchronized = B(true, "Synchronize the device before reading the timer.", "读取计时器前同步设备。"),
  }, "Throughput timer (pydantic model: unknown keys are rejected).", "吞吐量计时器（pydantic 模型：未知键会被拒绝）。",
     { strict = true, pydantic_root = true }),
}, "Timers.", "计时器。")

local weight_quantization = Obj({
  enabled = B(true, "Enable weight quantization.", "启用权重量化。"),
  num_bits = I(8, "Quantization bits.", "量化位数。"),
  q_type = S("symmetric", "Quantization type: \"symmetric\" or \"asymmetric\".", "量化类型：\"symmetric\" 或 \"asymmetric\"。",
    { enum = { "symmetric", "asymmetric" } }),
  q_groups = I(1, "Number of quantization groups.", "量化分组数。"),
  quantized_initialization = Map("Settings for quantized initialization.", "量化初始化设置。", { default = O {} }),
  post_init_quant = Map("Settings for post-initialization quantization.", "初始化后量化设置。", { default = O {} }),
}, "Weight quantization (pydantic model: unknown keys are rejected).", "权重量化（pydantic 模型：未知键会被拒绝）。",
   { strict = true, pydantic_root = true })

local sparse_attention = Obj({
  mode = S("fixed", "Sparsity mode: dense, fixed, variable, bigbird or bslongformer.", "稀疏模式：dense、fixed、variable、bigbird 或 bslongformer。",
    { enum = { "dense", "fixed", "variable", "bigbird", "bslongformer" } }),
  block = I(16, "Block size.", "块大小。"),
  different_layout_per_head = B(false, "Use a different layout per attention head.", "每个注意力头使用不同的布局。"),
  num_local_blocks = I(4, "Number of local blocks (fixed mode).", "局部块数量（fixed 模式）。"),
  num_global_blocks = I(1, "Number of global blocks.", "全局块数量。"),
  attention = S("bidirectional", "Attention type: \"bidirectional\" or \"unidirectional\".", "注意力类型：\"bidirectional\" 或 \"unidirectional\"。"),
  horizontal_global_attention = B(false, "Global blocks also attend horizontally.", "全局块也做横向注意力。"),
  num_different_global_patterns = I(1, "Number of different global patterns.", "不同全局模式的数量。"),
  num_random_blocks = I(0, "Number of random blocks.", "随机块数量。"),
  local_window_blocks = Arr(I(nil, "Blocks.", "块数。"), "Local window sizes in blocks (variable mode).", "局部窗口大小（以块计，variable 模式）。",
    { default = { 4 } }),
  global_block_indices = Arr(I(nil, "Index.", "索引。"), "Indices of global blocks.", "全局块的索引。", { default = { 0 } }),
  global_block_end_indices = Arr(I(nil, "Index.", "索引。"), "End indices of global blocks.", "全局块的结束索引。", { nullable = true }),
  num_sliding_window_blocks = I(3, "Sliding window size in blocks.", "滑动窗口大小（以块计）。"),
}, "Sparse attention kernels.", "稀疏注意力内核。", { open = true, read_by = "runtime/config.py get_sparse_attention, per mode" })

local function open_section(en, zh, opts)
  return Obj(O {}, en, zh, with({ open = true }, opts))
end

---------------------------------------------------------------------------
-- top level
---------------------------------------------------------------------------

local BATCH_EN = " Must be > 0; train_batch_size = micro batch x gradient_accumulation_steps x data-parallel world size."
local BATCH_ZH = "必须 > 0；train_batch_size = 微批大小 × 梯度累积步数 × 数据并行进程数。"

local root = Obj({
  train_batch_size = I(nil, "Global batch size per optimizer step." .. BATCH_EN, "每个优化器步骤的全局批大小。" .. BATCH_ZH,
    { nullable = true, min = 1, hf_auto = true }),
  train_micro_batch_size_per_gpu = I(nil, "Batch size of one forward/backward pass on one GPU." .. BATCH_EN,
    "单张 GPU 一次前向/反向的批大小。" .. BATCH_ZH, { nullable = true, min = 1, hf_auto = true }),
  gradient_accumulation_steps = I(nil, "Micro batches accumulated before each optimizer step (derived from the other two when absent)." .. BATCH_EN,
    "每次优化器步骤前累积的微批数（未给出时由另外两个键推导）。" .. BATCH_ZH,
    { nullable = true, min = 1, hf_auto = true,
      default_text = { en = "derived from the other batch keys (1 if only one is given)", zh = "由其他批大小键推导（只给出一个时为 1）" } }),
  managed_gradient_accumulation = B(true, "DeepSpeed manages gradient accumulation boundaries.", "由 DeepSpeed 管理梯度累积边界。"),
  steps_per_print = I(nil, "Print training progress every this many steps (None = no periodic print, since v0.15.2).",
    "每隔多少步打印训练进度（None 表示不周期打印；自 v0.15.2 起默认 None）。", { nullable = true }),
  dump_state = B(false, "Print the DeepSpeed state after initialisation.", "初始化后打印 DeepSpeed 状态。"),
  disable_allgather = B(false, "Disable all-gather (legacy).", "禁用 all-gather（旧选项）。"),
  prescale_gradients = B(false, "Scale gradients before all-reduce.", "在 all-reduce 之前缩放梯度。"),
  gradient_predivide_factor = F(1.0, "Divide gradients by this factor before all-reduce.", "all-reduce 之前把梯度除以该系数。"),
  sparse_gradients = B(false, "Use sparse (CSR) gradients for embedding layers.", "对 embedding 层使用稀疏（CSR）梯度。"),
  wall_clock_breakdown = B(false, "Time forward/backward/step and print the breakdown (adds synchronisation).", "统计前向/反向/step 的耗时分解（会增加同步开销）。"),
  memory_breakdown = B(false, "Print memory usage breakdown.", "打印显存使用分解。"),
  dataloader_drop_last = B(false, "Drop the last incomplete batch in the DeepSpeed data loader.", "DeepSpeed 数据加载器丢弃最后一个不完整的批次。"),
  log_level = S(nil, "DeepSpeed log level, e.g. \"info\" or \"warning\".", "DeepSpeed 日志级别，例如 \"info\" 或 \"warning\"。", { nullable = true }),
  graph_harvesting = B(false, "Capture CUDA graphs for short kernel sequences.", "为短内核序列捕获 CUDA Graph。"),
  communication_data_type = S(nil, "Data type for gradient communication: \"fp16\", \"bf16\" or \"fp32\" (any case); None = follow the training dtype.",
    "梯度通信使用的数据类型：\"fp16\"、\"bf16\" 或 \"fp32\"（不区分大小写）；None 表示跟随训练精度。",
    { nullable = true, enum = { "fp16", "bf16", "fp32" }, case_insensitive = true }),
  seq_parallel_communication_data_type = S("fp32", "Data type for sequence-parallel communication: \"fp16\", \"bf16\" or \"fp32\" (any case).",
    "序列并行通信使用的数据类型：\"fp16\"、\"bf16\" 或 \"fp32\"（不区分大小写）。",
    { enum = { "fp16", "bf16", "fp32" }, case_insensitive = true,
      renamed_from = { key = "seq_parallel_comm_data_type", since = "0.16.5 (PR #7175)" } }),
  gradient_allreduce_op = S("mean", "Gradient all-reduce operation: \"mean\" or \"sum\" (any case); \"sum\" is rejected with ZeRO-3, ZenFlow and DeepCompile.",
    "梯度 all-reduce 操作：\"mean\" 或 \"sum\"（不区分大小写）；\"sum\" 不能与 ZeRO-3、ZenFlow、DeepCompile 一起使用。",
    { enum = { "mean", "sum" }, case_insensitive = true, since = "0.19.6" }),
  gradient_clipping = F(1.0, "Clip gradients to this global norm; 0 disables clipping. Default 1.0 since v0.19.3 (was 0.0).",
    "按该全局范数裁剪梯度；0 表示不裁剪。自 v0.19.3 起默认 1.0（之前为 0.0）。", { hf_auto = true }),
  zero_allow_untested_optimizer = B(false, "Allow ZeRO with an optimizer DeepSpeed has not tested (e.g. Lamb or a client optimizer).",
    "允许 ZeRO 与 DeepSpeed 未测试过的优化器（如 Lamb 或自定义优化器）一起使用。"),
  zero_force_ds_cpu_optimizer = B(true, "With ZeRO-Offload, require DeepSpeed's CPU optimizer (a client optimizer raises ZeRORuntimeException).",
    "ZeRO-Offload 时要求使用 DeepSpeed 的 CPU 优化器（使用自定义优化器会抛出 ZeRORuntimeException）。"),
  vocabulary_size = I(nil, "Vocabulary size; only used to warn when it is not a multiple of 8.", "词表大小；只用于在不是 8 的倍数时给出警告。",
    { nullable = true }),
  sequence_parallel_size = I(nil, "Sequence-parallel size; the world size is divided by it for the batch equation.",
    "序列并行大小；计算批大小等式时 world size 会除以它。", { min = 1, read_by = "runtime/config.py without an mpu" }),
  use_data_before_expert_parallelism = B(false, "Order data-parallel before expert-parallel groups in the topology.", "拓扑中先排数据并行组再排专家并行组。"),
  allgather_size = I(500000000, "Legacy: with \"zero_optimization\": true, sets allgather_bucket_size.",
    "旧选项：配合 \"zero_optimization\": true 使用，设置 allgather_bucket_size。",
    { deprecated = { replacement = "zero_optimization.allgather_bucket_size", copies = false,
      note = doc("only read together with the bool form \"zero_optimization\": true", "只在 \"zero_optimization\": true 这种布尔写法下才会读取") } }),
  optimizer = optimizer,
  scheduler = scheduler,
  zero_optimization = zero_optimization,
  fp16 = fp16,
  bf16 = bf16_section(false),
  bfloat16 = bf16_section(true),
  amp = amp,
  torch_autocast = torch_autocast,
  activation_checkpointing = activation_checkpointing,
  flops_profiler = flops_profiler,
  tensorboard = tensorboard,
  wandb = wandb,
  csv_monitor = csv_monitor,
  comet = comet,
  trackio = trackio,
  comms_logger = comms_logger,
  aio = aio,
  data_types = data_types,
  checkpoint = checkpoint,
  pipeline = pipeline,
  hybrid_engine = hybrid_engine,
  progressive_layer_drop = progressive_layer_drop,
  autotuning = autotuning,
  elasticity = elasticity,
  compile = compile,
  tensor_parallel = tensor_parallel,
  timers = timers,
  weight_quantization = weight_quantization,
  sparse_attention = sparse_attention,
  compression_training = open_section("Model compression (quantization, pruning, layer reduction) settings.", "模型压缩（量化、剪枝、层裁剪）设置。"),
  data_efficiency = open_section("Data efficiency (data sampling and routing) settings.", "数据效率（数据采样与路由）设置。"),
  curriculum_learning = open_section("Legacy curriculum learning settings.", "旧版课程学习设置。"),
  nebula = open_section("Nebula asynchronous checkpointing service.", "Nebula 异步检查点服务。"),
  datastates_ckpt = open_section("DataStates asynchronous checkpointing (runtime/config.py reads \"datastates_ckpt\").", "DataStates 异步检查点（runtime/config.py 读取 \"datastates_ckpt\"）。"),
  quantize_training = open_section("MoQ quantize-aware training (includes eigenvalue settings).", "MoQ 量化感知训练（包含 eigenvalue 设置）。",
    { read_by = "runtime/engine.py" }),
  expert_parallel = Any("Automatic expert parallelism (AutoEP) settings.", "自动专家并行（AutoEP）设置。"),
}, "DeepSpeed configuration. Top-level keys are read with dict.get: unknown keys are silently ignored and values are not type-checked.",
   "DeepSpeed 配置。顶层键用 dict.get 读取：未知键会被静默忽略，值不做类型检查。")

-- Exactly the keys Hugging Face Trainer / Accelerate fill when they hold "auto".
local hf_auto_paths = {
  { "train_batch_size" }, { "train_micro_batch_size_per_gpu" }, { "gradient_accumulation_steps" }, { "gradient_clipping" },
  { "optimizer", "params", "lr" }, { "optimizer", "params", "betas" }, { "optimizer", "params", "eps" },
  { "optimizer", "params", "weight_decay" },
  { "scheduler", "params", "warmup_min_lr" }, { "scheduler", "params", "warmup_max_lr" },
  { "scheduler", "params", "warmup_num_steps" }, { "scheduler", "params", "total_num_steps" },
  { "fp16", "enabled" }, { "bf16", "enabled" },
  { "zero_optimization", "reduce_bucket_size" }, { "zero_optimization", "stage3_prefetch_bucket_size" },
  { "zero_optimization", "stage3_param_persistence_threshold" },
  { "zero_optimization", "stage3_gather_16bit_weights_on_model_save" },
  { "amp", "enabled" }, { "amp", "opt_level" },
  { "checkpoint", "use_node_local_storage" },
}

return {
  deepspeed_version = "0.19.6", -- also in init.lua's ds_version hook
  root = root,
  hf_auto_paths = hf_auto_paths,
}
