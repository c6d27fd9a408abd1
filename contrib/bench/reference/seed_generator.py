#!/usr/bin/env python3
"""Reference generator for the dsforge benchmark (contrib/bench/gen.sh).

What seed 004 describes -- a `ZeroConfig` dataclass, `build_config(cfg) ->
dict` and `save_config` writing JSON with indent=2 -- extended just enough
that its three configs are equal, as JSON values, to

    dsforge gen 8xa100 -o DIR     (DIR/8xa100-{small,medium,large}.json)

i.e. the built-in 8xa100 profile (profiles/8xa100.lua over profiles/base.lua)
at --target deepspeed, where the "auto" values are resolved from the params
and from the hidden size of the default model (llama-2-7b, hidden 4096).

Standard library only.  Usage: seed_generator.py OUTDIR
"""
import json
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ZeroConfig:
    micro_batch_size: int
    gradient_accumulation: int
    world_size: int = 8
    stage: int = 3
    offload: bool = False
    bf16: bool = True
    hidden_size: int = 4096          # llama-2-7b
    learning_rate: float = 1e-4
    weight_decay: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.95
    adam_epsilon: float = 1e-8
    max_grad_norm: float = 1.0
    warmup_steps: int = 100
    num_training_steps: int = 10000
    output_path: Path = Path("./ds_zero3.json")


def build_config(cfg: ZeroConfig) -> dict:
    h = cfg.hidden_size
    zero = {
        "stage": cfg.stage,
        "overlap_comm": cfg.stage >= 2,
        "contiguous_gradients": True,
        "reduce_bucket_size": h * h,
    }
    if cfg.stage == 3:
        zero.update({
            "stage3_prefetch_bucket_size": int(0.9 * h * h),
            "stage3_param_persistence_threshold": 10 * h,
            "stage3_max_live_parameters": 1_000_000_000,
            "stage3_max_reuse_distance": 1_000_000_000,
            "sub_group_size": 1_000_000_000,
            "stage3_gather_16bit_weights_on_model_save": True,
        })
    if cfg.offload:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
        zero["offload_param"] = {"device": "cpu", "pin_memory": True}
    return {
        "train_batch_size": cfg.micro_batch_size * cfg.gradient_accumulation
                            * cfg.world_size,
        "train_micro_batch_size_per_gpu": cfg.micro_batch_size,
        "gradient_accumulation_steps": cfg.gradient_accumulation,
        "gradient_clipping": cfg.max_grad_norm,
        "bf16": {"enabled": cfg.bf16},
        "fp16": {"enabled": False},
        "optimizer": {
            "type": "AdamW",
            "params": {
                "lr": cfg.learning_rate,
                "betas": [cfg.adam_beta1, cfg.adam_beta2],
                "eps": cfg.adam_epsilon,
                "weight_decay": cfg.weight_decay,
            },
        },
        "scheduler": {
            "type": "WarmupDecayLR",
            "params": {
                "warmup_min_lr": 0,
                "warmup_max_lr": cfg.learning_rate,
                "warmup_num_steps": cfg.warmup_steps,
                "total_num_steps": cfg.num_training_steps,
            },
        },
        "zero_optimization": zero,
        "steps_per_print": 50,
        "wall_clock_breakdown": False,
    }


def save_config(config: dict, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: seed_generator.py OUTDIR")
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    tiers = {"small": (1, 8), "medium": (2, 8), "large": (4, 16)}
    for name, (micro, gas) in tiers.items():
        cfg = ZeroConfig(micro, gas, output_path=out / f"8xa100-{name}.json")
        save_config(build_config(cfg), cfg.output_path)


if __name__ == "__main__":
    main()
