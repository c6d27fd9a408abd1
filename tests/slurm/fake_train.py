#!/usr/bin/env python3
"""A stand-in for a training script, run by the Slurm job-array test
(test_slurm_array.py) where no GPU and no torch exist. It takes the
Hugging Face Trainer's arguments (--deepspeed FILE and the others), reads
its DeepSpeed JSON, and prints what a real run prints, in the formats of
the code that prints them:

- DeepSpeed's throughput line: deepspeed/utils/timer.py (v0.19.5), line
  264, ThroughputTimer.stop -> logger.info with the logger's format of
  deepspeed/utils/logging.py line 39: "[%(asctime)s] [%(levelname)s]
  [%(filename)s:%(lineno)d:%(funcName)s] %(message)s", to stdout.
- the Trainer's log dicts (transformers/trainer_callback.py,
  ProgressCallback.on_log: str(logs)) and its trainer_state.json
  (TrainerState.save_to_json: log_history) and all_results.json
  (Trainer.save_metrics) in DSF_RESULTS_DIR.
- a CUDA out-of-memory failure (torch's OutOfMemoryError text, from
  c10/cuda/CUDACachingAllocator.cpp) when DSF_FAKE_OOM names the variant,
  and a plain failure when DSF_FAKE_FAIL does.

It also appends "<variant> <sha256 of the JSON it read> <start> <end>" to
DSF_FAKE_LOG (O_APPEND: one line per run, whatever runs at once) so the
test can check who ran, with which file, and when.
"""
import hashlib
import json
import os
import sys
import time


def arg(name, default=None):
    argv = sys.argv[1:]
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
    return default


def stamp():
    t = time.time()
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) + ",%03d" % (int(t * 1000) % 1000)


def main():
    start = time.time()
    path = arg("--deepspeed")
    with open(path, "rb") as f:
        data = f.read()
    cfg = json.loads(data)
    sha = hashlib.sha256(data).hexdigest()
    variant = os.environ["DSF_VARIANT"]
    results = os.environ["DSF_RESULTS_DIR"]
    if os.environ.get("DSF_CONFIG_SHA256") != sha:
        print("DSF_CONFIG_SHA256 is not the sha256 of " + path, file=sys.stderr)
        return 9
    micro = int(arg("--per_device_train_batch_size", "1"))
    gas = int(arg("--gradient_accumulation_steps", "1"))
    batch = cfg.get("train_batch_size", micro * gas)
    time.sleep(float(os.environ.get("DSF_FAKE_SECONDS", "1")))
    failed = 0
    if variant in os.environ.get("DSF_FAKE_OOM", "").split(","):
        print("Traceback (most recent call last):", file=sys.stderr)
        print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
              "has a total capacity of 79.15 GiB of which 1.05 GiB is free.", file=sys.stderr)
        failed = 1
    elif variant in os.environ.get("DSF_FAKE_FAIL", "").split(","):
        print("ValueError: the fake training failed on purpose", file=sys.stderr)
        failed = 2
    else:
        history = []
        for step in range(1, 11):
            sps = 100.0 * micro + step
            print("[%s] [INFO] [timer.py:264:stop] epoch=0/micro_step=%d/global_step=%d, "
                  "RunningAvgSamplesPerSec=%s, CurrSamplesPerSec=%s, MemAllocated=%sGB, "
                  "MaxMemAllocated=%sGB" % (stamp(), step * gas, step, sps, sps + 0.5,
                                            10.0 + micro, 12.5 + micro))
            logs = {"loss": round(2.0 - step * 0.1, 4), "learning_rate": 1e-4, "epoch": step / 10}
            print(str(logs))
            history.append(dict(logs, step=step))
        with open(os.path.join(results, "trainer_state.json"), "w") as f:
            json.dump({"global_step": 10, "log_history": history, "max_steps": 10}, f, indent=2)
        with open(os.path.join(results, "all_results.json"), "w") as f:
            json.dump({"train_runtime": time.time() - start, "train_samples_per_second": 100.0 * micro,
                       "train_loss": 1.45, "epoch": 1.0, "total_batch": batch}, f, indent=4)
    at = cfg.get("autotuning") or {}
    if not failed and at.get("enabled") is True:
        # runtime/engine.py _autotuning_exit (v0.19.5, 3517): the mean
        # timers, latency, FLOPS_per_gpu and throughput, print_json_dist to
        # autotuning.metric_path (relative to the working directory)
        msg = {"fwd": 0.05, "bwd": 0.1, "step": 0.01, "latency": 0.16 * gas,
               "FLOPS_per_gpu": 1.2e14, "throughput": batch * 1_000_000 / (0.16 * gas * 1e6),
               "rank": 0}
        with open(at.get("metric_path") or "autotuning_metric.json", "w") as f:
            json.dump(msg, f)
    end = time.time()
    line = "%s %s %.6f %.6f\n" % (variant, sha, start, end)
    fd = os.open(os.environ["DSF_FAKE_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, line.encode())
    os.close(fd)
    return failed


if __name__ == "__main__":
    sys.exit(main())
