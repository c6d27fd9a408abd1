// Reference template for the dsforge benchmark (contrib/bench/gen.sh):
// the built-in 8xa100 profile (profiles/8xa100.lua over profiles/base.lua)
// at --target deepspeed, as one Jsonnet function and three tiers.
//
//   jsonnet -m OUTDIR contrib/bench/reference/8xa100.jsonnet
//
// writes OUTDIR/8xa100-{small,medium,large}.json, equal as JSON values to
// `dsforge gen 8xa100 -o OUTDIR`.
local hidden = 4096;  // llama-2-7b: resolves the "auto" bucket sizes

local config(micro, gas, world=8, stage=3, lr=1e-4) = {
  train_batch_size: micro * gas * world,
  train_micro_batch_size_per_gpu: micro,
  gradient_accumulation_steps: gas,
  gradient_clipping: 1.0,
  bf16: { enabled: true },
  fp16: { enabled: false },
  optimizer: {
    type: 'AdamW',
    params: { lr: lr, betas: [0.9, 0.95], eps: 1e-8, weight_decay: 0.0 },
  },
  scheduler: {
    type: 'WarmupDecayLR',
    params: {
      warmup_min_lr: 0,
      warmup_max_lr: lr,
      warmup_num_steps: 100,
      total_num_steps: 10000,
    },
  },
  zero_optimization: {
    stage: stage,
    overlap_comm: stage >= 2,
    contiguous_gradients: true,
    reduce_bucket_size: hidden * hidden,
  } + (if stage == 3 then {
         stage3_prefetch_bucket_size: std.floor(0.9 * hidden * hidden),
         stage3_param_persistence_threshold: 10 * hidden,
         stage3_max_live_parameters: 1e9,
         stage3_max_reuse_distance: 1e9,
         sub_group_size: 1e9,
         stage3_gather_16bit_weights_on_model_save: true,
       } else {}),
  steps_per_print: 50,
  wall_clock_breakdown: false,
};

{
  '8xa100-small.json': config(1, 8),
  '8xa100-medium.json': config(2, 8),
  '8xa100-large.json': config(4, 16),
}
