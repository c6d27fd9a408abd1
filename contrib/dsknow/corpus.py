#!/usr/bin/env python3
"""Writes the generated part of the conformance corpus (deterministic).

    contrib/dsknow/corpus.py [OUT_DIR]   # default tests/conformance/configs

Every file is named CATEGORY__WHAT.json; the name says what it tests.
Files named hand__*.json (and probe__*.json, written by gen --probe) in
OUT_DIR are left alone; every
other *.json there is rewritten, and generated files no longer produced are
removed. Files listed in tests/conformance/todo/todo.json (known
disagreements dsforge does not fix yet) go to OUT_DIR/../todo instead.
The verdicts come from contrib/dsknow/record.py (README.md).
The replay assumes a data-parallel world size of 8.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "..", "tests", "conformance", "configs")

BASE = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1}
ABSENT = object()


def slug(v):
    if v is ABSENT:
        return "absent"
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return "str_" + (re.sub(r"[^A-Za-z0-9]+", "_", v) or "empty")
    if isinstance(v, float):
        return "float_" + repr(v).replace(".", "p").replace("-", "neg")
    if isinstance(v, list):
        return "list%d" % len(v)
    if isinstance(v, dict):
        return "obj%d" % len(v)
    return str(v).replace("-", "neg")


def put(cfg, path, value):
    """Sets a dotted path in cfg (creating objects), or removes it (ABSENT)."""
    parts = path.split(".")
    d = cfg
    for p in parts[:-1]:
        d = d.setdefault(p, {})
    if value is ABSENT:
        d.pop(parts[-1], None)
    else:
        d[parts[-1]] = value


def with_(base, **paths):
    cfg = json.loads(json.dumps(base))
    for path, value in paths.items():
        put(cfg, path.replace("__", "."), value)
    return cfg


def corpus():
    out = {}

    def add(name, cfg):
        assert name not in out, name
        out[name] = cfg

    # Batch triangle: given/missing/consistent/inconsistent, world size 8.
    for tb in (ABSENT, 16, 32, 24, 12, 7, "auto"):
        for mb in (ABSENT, 1, 2, 3, "auto"):
            for gas in (ABSENT, 1, 2, "auto"):
                cfg = {}
                for k, v in (("train_batch_size", tb),
                             ("train_micro_batch_size_per_gpu", mb),
                             ("gradient_accumulation_steps", gas)):
                    if v is not ABSENT:
                        cfg[k] = v
                add("batch__tb_%s__mb_%s__gas_%s" % (slug(tb), slug(mb), slug(gas)), cfg)

    # Type edge cases for the batch numbers and other top-level scalars.
    edge = ("4", "x", 4.0, 2.5, True, False, 0, -2, None, [], {})
    for key in ("train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        for v in edge:
            add("type__%s__%s" % (key, slug(v)), with_(BASE, **{key: v}))
    for v in edge:
        add("type__train_batch_size__%s" % slug(v),
            {"train_batch_size": v, "train_micro_batch_size_per_gpu": 2})
    for key, values in (
            ("gradient_clipping", (1, "1.0", -1.0, True, None, "auto")),
            ("steps_per_print", (10, "10", 1.5, -1, True, None)),
            ("wall_clock_breakdown", (True, 1, "yes", None)),
            ("prescale_gradients", (True, 0, "true")),
            ("gradient_predivide_factor", (2, "2", 0)),
            ("communication_data_type", ("fp16", "bf16", "fp32", "int8", None, 16)),
            ("seq_parallel_communication_data_type", ("fp32", "bf16", "fp8")),
            ("dump_state", (True, "no")),
            ("zero_allow_untested_optimizer", (True, "yes")),
            ("zero_force_ds_cpu_optimizer", (False, 0)),
            ("memory_breakdown", (True, 2)),
            ("sparse_gradients", (True, "x")),
            ("disable_allgather", (True,)),
            ("graph_harvesting", (True, "x")),
    ):
        for v in values:
            add("scalar__%s__%s" % (key, slug(v)), with_(BASE, **{key: v}))

    # Sections given as something other than an object.
    sections = ("fp16", "bf16", "bfloat16", "amp", "zero_optimization", "optimizer",
                "scheduler", "activation_checkpointing", "flops_profiler",
                "tensorboard", "wandb", "csv_monitor", "comms_logger", "aio",
                "elasticity", "checkpoint", "data_types", "pipeline",
                "compression_training", "data_efficiency", "autotuning",
                "hybrid_engine", "compile", "tensor_parallel", "nebula",
                "curriculum_learning", "sparse_attention", "timers")
    for s in sections:
        for v in ([], {}, None, True, "x", 1):
            add("section__%s__%s" % (s, slug(v)), with_(BASE, **{s: v}))

    # Unknown keys in strict and lenient sections.
    add("unknown__top_level", with_(BASE, no_such_key=1))
    for s in ("fp16", "bf16", "zero_optimization", "optimizer", "scheduler",
              "activation_checkpointing", "flops_profiler", "tensorboard",
              "wandb", "csv_monitor", "comms_logger", "aio", "elasticity",
              "checkpoint", "hybrid_engine", "compile", "tensor_parallel",
              "data_types", "timers", "autotuning", "pipeline"):
        add("unknown__%s__bogus_key" % s, with_(BASE, **{s: {"bogus_key": 1}}))
    add("unknown__offload_optimizer__bogus_key",
        with_(BASE, zero_optimization={"stage": 2, "offload_optimizer": {"device": "cpu", "bogus_key": 1}}))
    add("unknown__offload_param__bogus_key",
        with_(BASE, zero_optimization={"stage": 3, "offload_param": {"device": "cpu", "bogus_key": 1}}))
    add("unknown__optimizer_params__bogus_key",
        with_(BASE, optimizer={"type": "AdamW", "params": {"lr": 1e-4, "bogus_key": 1}}))
    add("unknown__scheduler_params__bogus_key",
        with_(BASE, scheduler={"type": "WarmupLR", "params": {"warmup_num_steps": 10, "bogus_key": 1}}))

    # ZeRO stage x offload devices.
    for stage in (0, 1, 2, 3):
        for od in (ABSENT, "none", "cpu", "nvme", "gpu"):
            for pd in (ABSENT, "none", "cpu", "nvme"):
                z = {"stage": stage}
                if od is not ABSENT:
                    z["offload_optimizer"] = {"device": od}
                    if od == "nvme":
                        z["offload_optimizer"]["nvme_path"] = "/local_nvme"
                if pd is not ABSENT:
                    z["offload_param"] = {"device": pd}
                    if pd == "nvme":
                        z["offload_param"]["nvme_path"] = "/local_nvme"
                add("zero__stage%d__optdev_%s__paramdev_%s" % (stage, slug(od), slug(pd)),
                    with_(BASE, zero_optimization=z))
    for v in (4, -1, "2", 2.0, 1.5, None, True, "auto"):
        add("zero__stage_%s" % slug(v), with_(BASE, zero_optimization={"stage": v}))
    for key, v in (("reduce_bucket_size", "auto"), ("reduce_bucket_size", 5e8),
                   ("reduce_bucket_size", -1), ("reduce_bucket_size", "5e8"),
                   ("allgather_bucket_size", 5e8), ("overlap_comm", "yes"),
                   ("contiguous_gradients", 1), ("sub_group_size", 1e9),
                   ("stage3_prefetch_bucket_size", "auto"),
                   ("stage3_param_persistence_threshold", "auto"),
                   ("stage3_max_live_parameters", 1e9),
                   ("stage3_max_reuse_distance", "auto"),
                   ("stage3_gather_16bit_weights_on_model_save", True),
                   ("stage3_gather_16bit_weights_on_model_save", "auto"),
                   ("round_robin_gradients", True), ("mics_shard_size", 8),
                   ("zero_hpz_partition_size", 2), ("zero_quantized_weights", True),
                   ("ignore_unused_parameters", "no")):
        for stage in (2, 3):
            add("zero__stage%d__%s__%s" % (stage, key, slug(v)),
                with_(BASE, zero_optimization={"stage": stage, key: v}))

    # Deprecated and renamed keys.
    for stage, z, what in (
            (2, {"cpu_offload": True}, "cpu_offload_true"),
            (2, {"cpu_offload": False}, "cpu_offload_false"),
            (3, {"cpu_offload_param": True}, "cpu_offload_param_true"),
            (3, {"cpu_offload_use_pin_memory": True}, "cpu_offload_use_pin_memory"),
            (3, {"stage3_gather_fp16_weights_on_model_save": True}, "gather_fp16_weights"),
            (3, {"stage3_gather_fp16_weights_on_model_save": True,
                 "stage3_gather_16bit_weights_on_model_save": True}, "gather_fp16_and_16bit"),
            (3, {"gather_16bit_weights_on_model_save": True}, "gather_16bit_alias"),
            (3, {"prefetch_bucket_size": 1000}, "prefetch_bucket_size_alias"),
            (3, {"param_persistence_threshold": 1000}, "param_persistence_threshold_alias"),
            (3, {"max_live_parameters": 1000}, "max_live_parameters_alias"),
            (2, {"cpu_offload": True, "offload_optimizer": {"device": "cpu"}}, "cpu_offload_and_offload_optimizer"),
            (1, {"legacy_stage1": True}, "legacy_stage1"),
    ):
        z = dict({"stage": stage}, **z)
        add("deprecated__zero__%s" % what, with_(BASE, zero_optimization=z))
    add("deprecated__seq_parallel_comm_data_type", with_(BASE, seq_parallel_comm_data_type="bf16"))
    add("deprecated__datastates", with_(BASE, datastates={}))
    add("deprecated__datastates_ckpt", with_(BASE, datastates_ckpt={}))
    add("deprecated__fp16_type_field", with_(BASE, fp16={"enabled": True, "type": "fp16"}))
    add("deprecated__bfloat16_section", with_(BASE, bfloat16={"enabled": True}))
    add("deprecated__bf16_and_bfloat16", with_(BASE, bf16={"enabled": True}, bfloat16={"enabled": True}))

    # Precision combinations.
    for f in (ABSENT, True, False, "auto"):
        for b in (ABSENT, True, False, "auto"):
            for amp in (ABSENT, True):
                cfg = dict(BASE)
                if f is not ABSENT:
                    cfg["fp16"] = {"enabled": f}
                if b is not ABSENT:
                    cfg["bf16"] = {"enabled": b}
                if amp is not ABSENT:
                    cfg["amp"] = {"enabled": amp}
                add("precision__fp16_%s__bf16_%s__amp_%s" % (slug(f), slug(b), slug(amp)), cfg)
    for key, v in (("loss_scale", 0), ("loss_scale", 128), ("loss_scale", -1),
                   ("loss_scale", "auto"), ("initial_scale_power", 16),
                   ("initial_scale_power", "16"), ("initial_scale_power", 2.5),
                   ("loss_scale_window", 1000), ("loss_scale_window", "auto"),
                   ("hysteresis", 2), ("hysteresis", -1), ("min_loss_scale", 1),
                   ("min_loss_scale", 0), ("consecutive_hysteresis", "yes"),
                   ("auto_cast", True), ("fp16_master_weights_and_grads", True)):
        add("precision__fp16__%s__%s" % (key, slug(v)),
            with_(BASE, fp16={"enabled": True, key: v}))
    add("precision__fp16_enabled_str_true", with_(BASE, fp16={"enabled": "true"}))
    add("precision__fp16_enabled_int_1", with_(BASE, fp16={"enabled": 1}))
    add("precision__bf16_enabled_int_0", with_(BASE, bf16={"enabled": 0}))
    add("precision__bf16_immediate_grad_update", with_(BASE, bf16={"enabled": True, "immediate_grad_update": True}))
    add("precision__bf16_optimizer_states", with_(BASE, bf16={"enabled": True, "bf16_optimizer_states": True}))

    # Optimizer and scheduler sections (DeepSpeedConfig reads type and params).
    for t in ("Adam", "AdamW", "adam", "Lamb", "OneBitAdam", "SGD", "NoSuchOpt", None, 3):
        add("optimizer__type_%s" % slug(t), with_(BASE, optimizer={"type": t, "params": {"lr": 1e-4}}))
    add("optimizer__no_type", with_(BASE, optimizer={"params": {"lr": 1e-4}}))
    add("optimizer__params_list", with_(BASE, optimizer={"type": "AdamW", "params": []}))
    add("optimizer__params_auto", with_(BASE, optimizer={"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}}))
    add("optimizer__legacy_fusion", with_(BASE, optimizer={"type": "Adam", "legacy_fusion": True, "params": {"lr": 1e-4}}))
    for t in ("WarmupLR", "WarmupDecayLR", "OneCycle", "LRRangeTest", "WarmupCosineLR", "NoSuchLR", "warmuplr"):
        add("scheduler__type_%s" % slug(t), with_(BASE, scheduler={"type": t, "params": {}}))
    # Schedulers DeepSpeedEngine builds from the config (their constructors,
    # lr_schedules.py; engine.json says where those that fail do).
    oc = {"cycle_min_lr": 1e-5, "cycle_max_lr": 1e-3, "cycle_first_step_size": 100}
    for name, t, params in (
            ("OneCycle_valid", "OneCycle", oc),
            ("OneCycle_first_step_0", "OneCycle", dict(oc, cycle_first_step_size=0)),
            ("OneCycle_second_step_negative", "OneCycle", dict(oc, cycle_second_step_size=-5)),
            ("OneCycle_no_momentum", "OneCycle", dict(oc, cycle_momentum=False)),
            ("WarmupLR_valid", "WarmupLR", {"warmup_num_steps": 100}),
            ("WarmupLR_float_steps", "WarmupLR", {"warmup_num_steps": 2.5}),
            ("WarmupDecayLR_valid", "WarmupDecayLR", {"total_num_steps": 1000, "warmup_num_steps": 100}),
            ("WarmupCosineLR_valid", "WarmupCosineLR", {"total_num_steps": 1000, "warmup_num_steps": 100}),
            ("LRRangeTest_valid", "LRRangeTest", {"lr_range_test_min_lr": 1e-5, "lr_range_test_step_size": 100}),
            ("LRRangeTest_step_size_0", "LRRangeTest", {"lr_range_test_min_lr": 1e-5, "lr_range_test_step_size": 0}),
            ("LRRangeTest_min_lr_list2", "LRRangeTest", {"lr_range_test_min_lr": [1e-5, 1e-4]}),
            ("WarmupLR_min_lr_list1", "WarmupLR", {"warmup_min_lr": [0]}),
            ("WarmupLR_min_lr_list2", "WarmupLR", {"warmup_min_lr": [0, 0]}),
            ("WarmupCosineLR_float_steps", "WarmupCosineLR", {"total_num_steps": 1000, "warmup_num_steps": 2.5})):
        add("scheduler__%s" % name, with_(BASE, scheduler={"type": t, "params": params}))
    add("scheduler__no_type", with_(BASE, scheduler={"params": {"warmup_num_steps": 10}}))
    add("scheduler__params_auto", with_(BASE, scheduler={"type": "WarmupLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto", "warmup_num_steps": "auto"}}))

    # "auto" in places other than the batch and precision (outside the HF Trainer).
    for path in ("steps_per_print", "wall_clock_breakdown", "prescale_gradients",
                 "gradient_predivide_factor", "communication_data_type",
                 "zero_optimization.stage", "zero_optimization.overlap_comm",
                 "zero_optimization.contiguous_gradients", "zero_optimization.sub_group_size",
                 "zero_optimization.offload_optimizer.device", "zero_optimization.offload_param.device",
                 "zero_optimization.offload_optimizer.pin_memory",
                 "activation_checkpointing.partition_activations",
                 "activation_checkpointing.number_checkpoints",
                 "flops_profiler.enabled", "tensorboard.enabled", "wandb.enabled",
                 "comms_logger.enabled", "aio.block_size", "fp16.enabled", "bf16.enabled",
                 "fp16.initial_scale_power", "checkpoint.tag_validation",
                 "data_types.grad_accum_dtype", "elasticity.enabled"):
        cfg = with_(BASE)
        if path.startswith("zero_optimization.") and path != "zero_optimization.stage":
            put(cfg, "zero_optimization.stage", 3)
        put(cfg, path, "auto")
        add("auto__%s" % path.replace(".", "_"), cfg)

    # Other sections with values of the right and wrong type.
    for path, values in (
            ("activation_checkpointing.partition_activations", (True, "yes")),
            ("activation_checkpointing.number_checkpoints", (4, "4", -1)),
            ("activation_checkpointing.cpu_checkpointing", (True,)),
            ("flops_profiler.enabled", (True, 1)),
            ("flops_profiler.profile_step", (1, 0, "x")),
            ("flops_profiler.top_modules", (1, "x")),
            ("tensorboard.enabled", (True, "x")),
            ("tensorboard.output_path", ("/tmp/tb", 3)),
            ("wandb.enabled", (True,)),
            ("wandb.project", ("p", 3)),
            ("csv_monitor.enabled", (True,)),
            ("comms_logger.enabled", (True,)),
            ("comms_logger.prof_ops", (["all_reduce"], "all_reduce")),
            ("aio.block_size", (1048576, "x")),
            ("aio.queue_depth", (8, -1)),
            ("checkpoint.tag_validation", ("Warn", "Ignore", "Fail", "bogus")),
            ("checkpoint.use_node_local_storage", (True,)),
            ("checkpoint.load_universal", (True,)),
            ("data_types.grad_accum_dtype", ("fp32", "bf16", "fp8")),
            ("elasticity.enabled", (False,)),
            ("pipeline.stages", ("auto", 2)),
            ("hybrid_engine.enabled", (True, "x")),
            ("hybrid_engine.inference_tp_size", (2, -1)),
            ("compile.deepcompile", (True, "x")),
            ("tensor_parallel.autotp_size", (2, "x")),
            ("timers.throughput.enabled", (True, "x")),
            ("nebula.enabled", (True,)),
    ):
        for v in values:
            add("field__%s__%s" % (path.replace(".", "_"), slug(v)), with_(BASE, **{path.replace(".", "__"): v}))

    # compression_training (compression/config.py, the same in every covered
    # release): each technique's shared_parameters, its different_groups and
    # their params, layer_reduction.
    groups = {"weight_quantization": {"start_bits": 8, "target_bits": 8},
              "activation_quantization": {"bits": 8},
              "sparse_pruning": {"dense_ratio": 0.5},
              "row_pruning": {"dense_ratio": 0.5},
              "head_pruning": {"dense_ratio": 0.5},
              "channel_pruning": {"dense_ratio": 0.5}}
    choices = {"weight_quantization": ("quantization_type", "rounding"),
               "activation_quantization": ("quantization_type", "range_calibration"),
               "sparse_pruning": ("method",), "row_pruning": ("method",),
               "head_pruning": ("method",), "channel_pruning": ("method",)}
    for tech, params in sorted(groups.items()):
        shared = {"enabled": True}
        if tech == "head_pruning":
            shared["num_heads"] = 12
        one_group = {"g1": {"params": params, "modules": ["attention.self"]}}
        for what, sec in (
                ("enabled_with_groups", {"shared_parameters": shared, "different_groups": one_group}),
                ("enabled_no_groups", {"shared_parameters": shared}),
                ("disabled_no_groups", {"shared_parameters": {"enabled": False}}),
                ("enabled_str_false_no_groups", {"shared_parameters": {"enabled": "false"}}),
                ("disabled_empty_groups", {"shared_parameters": {"enabled": False}, "different_groups": {}}),
                ("groups_only", {"different_groups": one_group}),
                ("group_without_params", {"shared_parameters": shared,
                                          "different_groups": {"g1": {"modules": ["*"]}}}),
                ("group_params_first_key_only", {"shared_parameters": shared, "different_groups": {
                    "g1": {"params": dict(list(params.items())[:1])}}}),
                ("group_params_empty", {"shared_parameters": shared,
                                        "different_groups": {"g1": {"params": {}}}}),
                ("list", []),
                ("shared_list", {"shared_parameters": [], "different_groups": {}})):
            if what == "group_params_first_key_only" and len(params) == 1:
                continue   # the same as enabled_with_groups
            add("compression__%s__%s" % (tech, what), with_(BASE, compression_training={tech: sec}))
        for key in choices[tech]:
            for v in ("bogus", None):
                add("compression__%s__%s_%s" % (tech, key, slug(v)), with_(
                    BASE, compression_training={tech: {"shared_parameters": dict(shared, **{key: v}),
                                                       "different_groups": one_group}}))
    head = {"shared_parameters": {"enabled": True}, "different_groups": {"g1": {"params": {"dense_ratio": 0.5}}}}
    add("compression__head_pruning__enabled_no_num_heads", with_(BASE, compression_training={"head_pruning": head}))
    add("compression__head_pruning__disabled_no_num_heads", with_(
        BASE, compression_training={"head_pruning": dict(head, shared_parameters={"enabled": False})}))
    for what, extra in (("dense_ratio_0p5", {"dense_ratio": 0.5}), ("dense_ratio_1", {"dense_ratio": 1}),
                        ("dense_ratio_0", {"dense_ratio": 0}), ("dense_ratio_str", {"dense_ratio": "0.5"}),
                        ("default_dense_ratio", {}),
                        ("offset_after_end", {"schedule_offset": 100, "schedule_offset_end": 10}),
                        ("offset_before_end", {"schedule_offset": 10, "schedule_offset_end": 100}),
                        ("offset_end_default", {"schedule_offset": 10})):
        add("compression__sparse_pruning__snip_momentum_%s" % what, with_(
            BASE, compression_training={"sparse_pruning": {
                "shared_parameters": dict({"enabled": True, "method": "snip_momentum"}, **extra),
                "different_groups": {}}}))
    add("compression__sparse_pruning__snip_momentum_no_groups", with_(
        BASE, compression_training={"sparse_pruning": {
            "shared_parameters": {"enabled": True, "method": "snip_momentum"}}}))
    for what, sec in (("enabled", {"enabled": True, "keep_number_layer": 6}),
                      ("disabled", {"enabled": False}), ("no_enabled", {"keep_number_layer": 6}),
                      ("list", [])):
        add("compression__layer_reduction__%s" % what, with_(BASE, compression_training={"layer_reduction": sec}))

    # A shared_parameters right under compression_training: get_quantize_enabled
    # reads it for get_eigenvalue_config (runtime/config.py).
    wq = {"shared_parameters": {"enabled": True}, "different_groups": {}}
    for what, ct, extra in (
            ("enabled", {"shared_parameters": {"enabled": True}}, {}),
            ("enabled_eigenvalue_on", {"shared_parameters": {"enabled": True}},
             {"quantize_training": {"eigenvalue": {"enabled": True}}}),
            ("enabled_eigenvalue_off", {"shared_parameters": {"enabled": True}},
             {"quantize_training": {"eigenvalue": {"enabled": False}}}),
            ("disabled_eigenvalue_on", {"shared_parameters": {"enabled": False}},
             {"quantize_training": {"eigenvalue": {"enabled": True}}}),
            ("type_bogus", {"shared_parameters": {"quantization_type": "bogus"}}, {})):
        ct = dict(ct, weight_quantization=wq)
        add("compression__top_shared_parameters__%s" % what, with_(BASE, compression_training=ct, **extra))

    # data_efficiency (runtime/data_pipeline/config.py): curriculum learning
    # and, from 0.16.5 on, dynamic batching inside data_sampling.
    for what, cl in (("enabled_no_metrics", {"enabled": True}),
                     ("enabled_with_metrics", {"enabled": True, "curriculum_metrics": {"seqlen": {}}}),
                     ("enabled_metrics_misnamed", {"enabled": True, "metrics": {"seqlen": {}}}),
                     ("disabled_no_metrics", {"enabled": False}),
                     ("enabled_str_no_metrics", {"enabled": "no"}),
                     ("no_enabled", {"metrics": {}})):
        add("data_efficiency__curriculum_learning__%s" % what, with_(
            BASE, data_efficiency={"enabled": True, "data_sampling": {"enabled": True, "curriculum_learning": cl}}))
    for what, db in (("enabled_no_max_tokens", {"enabled": True}),
                     ("enabled_with_max_tokens", {"enabled": True, "max_tokens": 4096}),
                     ("disabled_no_max_tokens", {"enabled": False}),
                     ("enabled_int_no_max_tokens", {"enabled": 1}),
                     ("max_tokens_str_4k", {"enabled": True, "max_tokens": "4k"}),
                     ("max_tokens_str_4096", {"enabled": True, "max_tokens": " 4096 "}),
                     ("max_tokens_underscores", {"enabled": True, "max_tokens": "4_096"}),
                     ("disabled_max_tokens_str_x", {"enabled": False, "max_tokens": "x"}),
                     ("min_batch_size_str_x", {"min_batch_size": "x"}),
                     ("min_batch_size_null", {"min_batch_size": None}),
                     ("max_batch_size_float", {"max_batch_size": 2.5}),
                     ("list", [])):
        add("data_efficiency__dynamic_batching__%s" % what, with_(
            BASE, data_efficiency={"enabled": True, "data_sampling": {"enabled": True, "dynamic_batching": db}}))
    add("data_efficiency__data_sampling_disabled_curriculum_no_metrics", with_(
        BASE, data_efficiency={"data_sampling": {"enabled": False, "curriculum_learning": {"enabled": True}}}))
    add("data_efficiency__random_ltd_enabled", with_(
        BASE, data_efficiency={"enabled": True, "data_routing": {"enabled": True, "random_ltd": {
            "enabled": True, "total_layer_num": 24}}}))

    # Whole sections DeepSpeedConfig validates with raise/assert in plain
    # code (found by contrib/dsknow/coverage.py): elasticity when enabled
    # (elasticity/config.py, elasticity/elasticity.py), autotuning's
    # directories, checkpoint.parallel_write, torch_autocast,
    # sparse_attention's mode, bf16 master weights, partial offload,
    # leaf_module and fp16's own validators.
    el = {"enabled": True, "max_train_batch_size": 64, "micro_batch_sizes": [2, 4],
          "min_gpus": 1, "max_gpus": 64, "ignore_non_elastic_batch_info": True}
    for what, extra in (("valid", {}), ("micro_not_list", {"micro_batch_sizes": 4}),
                        ("micro_float", {"micro_batch_sizes": [2.5]}),
                        ("micro_float_whole", {"micro_batch_sizes": [2.0]}),
                        ("micro_zero", {"micro_batch_sizes": [0, 2]}),
                        ("min_gpus_0", {"min_gpus": 0}), ("max_gpus_0", {"max_gpus": 0}),
                        ("min_gt_max", {"min_gpus": 16, "max_gpus": 8}),
                        ("model_parallel_size_0", {"model_parallel_size": 0}),
                        ("num_gpus_per_node_0", {"num_gpus_per_node": 0}),
                        ("min_time_neg", {"min_time": -1}), ("version_0p3", {"version": 0.3}),
                        ("version_0p1", {"version": 0.1}), ("version_0p15", {"version": 0.15}),
                        ("version_str", {"version": "0.2"}),
                        ("version_0p1_model_parallel", {"version": 0.1, "model_parallel_size": 2}),
                        ("world_size_invalid", {"max_train_batch_size": 6, "micro_batch_sizes": [3],
                                                "max_gpus": 2}),
                        ("v0p1_world_size_invalid", {"version": 0.1, "max_train_batch_size": 6,
                                                     "micro_batch_sizes": [3], "max_gpus": 2}),
                        ("v0p1_no_valid_gpus", {"version": 0.1, "max_train_batch_size": 6,
                                                "micro_batch_sizes": [4], "min_gpus": 2}),
                        ("v0p2_no_valid_gpus", {"max_train_batch_size": 6, "micro_batch_sizes": [5],
                                                "min_gpus": 2}),
                        ("v0p2_batch_zero_prefer_smaller", {"max_train_batch_size": 6,
                                                            "micro_batch_sizes": [4, 2, 3],
                                                            "prefer_larger_batch": False}),
                        ("prefer_smaller", {"max_train_batch_size": 96, "prefer_larger_batch": False}),
                        ("v0p2_nodes", {"max_train_batch_size": 512, "num_gpus_per_node": 4,
                                        "model_parallel_size": 2, "max_gpus": 64}),
                        ("no_micro", {"micro_batch_sizes": ABSENT}),
                        ("micro_above_max_batch", {"micro_batch_sizes": [2, 128]}),
                        ("v0p2_gpus_per_node_not_multiple", {"model_parallel_size": 2, "num_gpus_per_node": 3}),
                        ("v0p2_model_parallel", {"model_parallel_size": 2, "num_gpus_per_node": 4})):
        e = dict(el)
        for k, v in extra.items():
            if v is ABSENT:
                e.pop(k)
            else:
                e[k] = v
        add("elasticity__%s" % what, {"elasticity": e})
    add("elasticity__with_batch_keys", with_(BASE, elasticity=dict(el, ignore_non_elastic_batch_info=False)))
    add("elasticity__with_batch_keys_ignored", with_(BASE, elasticity=el))
    for what, e in (("disabled_model_parallel_size_0", {"enabled": False, "model_parallel_size": 0}),
                    ("disabled_min_gpus_0", {"enabled": False, "min_gpus": 0}),
                    ("disabled_micro_not_list", {"enabled": False, "micro_batch_sizes": 4})):
        add("elasticity__%s" % what, with_(BASE, elasticity=e))
    for key in ("results_dir", "exps_dir"):
        for v in ("", None, "dir"):
            add("section_values__autotuning_%s_%s" % (key, slug(v)), with_(BASE, autotuning={key: v}))
    for v in ("yes", True, 1, 0.5):
        add("section_values__checkpoint_parallel_write_pipeline_stage_%s" % slug(v),
            with_(BASE, checkpoint={"parallel_write": {"pipeline_stage": v}}))
    for what, ta in (("dtype_bogus", {"enabled": True, "dtype": "bogus"}),
                     ("dtype_bfloat16", {"enabled": True, "dtype": "bfloat16"}),
                     ("modules_int", {"enabled": True, "lower_precision_safe_modules": [1]}),
                     ("modules_names", {"enabled": True, "lower_precision_safe_modules": ["torch.nn.Linear"]})):
        add("section_values__torch_autocast_%s" % what, with_(BASE, torch_autocast=ta))
    for v in ("bogus", "FAST"):
        add("section_values__checkpoint_writer_type_%s" % slug(v), with_(BASE, checkpoint={"writer": {"type": v}}))
    for mode in ("bogus", "fixed", "dense"):
        add("section_values__sparse_attention_mode_%s" % mode, with_(BASE, sparse_attention={"mode": mode}))
    add("section_values__bf16_master_weights_stage0", with_(
        BASE, bf16={"enabled": True, "bf16_master_weights_and_grads": True}))
    add("section_values__bf16_optimizer_states_stage2_no_master", with_(
        BASE, bf16={"enabled": True, "bf16_optimizer_states": True}, zero_optimization={"stage": 2}))
    add("section_values__bf16_optimizer_states_stage2_master", with_(
        BASE, bf16={"enabled": True, "bf16_optimizer_states": True, "bf16_master_weights_and_grads": True},
        zero_optimization={"stage": 2}))
    for stage in (2, 3):
        add("section_values__offload_ratio_stage%d" % stage, with_(
            BASE, zero_optimization={"stage": stage, "offload_optimizer": {"device": "cpu", "ratio": 0.5}}))
    add("section_values__leaf_module_list", with_(BASE, zero_optimization={"stage": 3, "leaf_module": []}))
    for key, v in (("loss_scale", True), ("loss_scale", "x"), ("loss_scale", "inf"),
                   ("hysteresis", True), ("hysteresis", 2.0),
                   ("loss_scale_window", 2.5), ("loss_scale_window", 0), ("loss_scale_window", True),
                   ("loss_scale_window", "x"), ("loss_scale_window", None), ("min_loss_scale", True)):
        add("section_values__fp16_%s_%s" % (key, slug(v)), with_(BASE, fp16={"enabled": True, key: v}))

    # gradient_allreduce_op: read from DeepSpeed's master ("next",
    # runtime/config.py get_gradient_allreduce_op and _do_error_check);
    # the tagged releases ignore the key
    for what, op, extra in (("sum_stage3", "sum", {"zero_optimization": {"stage": 3}}),
                            ("SUM_stage2", "SUM", {"zero_optimization": {"stage": 2}}),
                            ("sum_zenflow", "sum", {"zero_optimization": {"stage": 2, "zenflow": {}}}),
                            ("sum_deepcompile", "sum", {"compile": {"deepcompile": True}}),
                            ("mean_stage3", "mean", {"zero_optimization": {"stage": 3}}),
                            ("bogus", "bogus", {})):
        add("allreduce_op__%s" % what, dict(BASE, gradient_allreduce_op=op, **extra))
    # ZenFlow (zero_optimization.zenflow, from 0.17): its model's after
    # validator (runtime/zenflow/zenflow_config.py validate_fields)
    for what, zf in (("select_strategy_bogus", {"select_strategy": "bogus"}),
                     ("select_interval_str_x", {"select_interval": "x"}),
                     ("update_interval_str_x", {"update_interval": "x"}),
                     ("intervals_int", {"select_interval": 4, "update_interval": 2,
                                        "select_strategy": "step"})):
        add("section_values__zenflow_%s" % what, with_(BASE, zero_optimization={"stage": 2, "zenflow": zf}))

    return out


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT
    os.makedirs(out_dir, exist_ok=True)
    todo_dir = os.path.join(out_dir, "..", "todo")
    with open(os.path.join(todo_dir, "todo.json"), encoding="utf-8") as f:
        todo = json.load(f)
    files = {name + ".json": cfg for name, cfg in corpus().items()}
    for d in (out_dir, todo_dir):
        for old in sorted(os.listdir(d)):
            if (old.endswith(".json") and old not in ("todo.json", "verdicts.json")
                    and not old.startswith(("hand__", "probe__")) and old not in files):
                os.remove(os.path.join(d, old))
    for name in sorted(files):
        other = out_dir if name in todo else todo_dir
        if os.path.exists(os.path.join(other, name)):
            os.remove(os.path.join(other, name))
        dest = todo_dir if name in todo else out_dir
        with open(os.path.join(dest, name), "w", encoding="utf-8") as f:
            f.write(json.dumps(files[name], indent=2, sort_keys=True) + "\n")
    n_todo = sum(1 for n in files if n in todo)
    print("%d generated files: %d in %s, %d in %s" % (
        len(files), len(files) - n_todo, os.path.normpath(out_dir), n_todo,
        os.path.normpath(todo_dir)))


if __name__ == "__main__":
    main()
