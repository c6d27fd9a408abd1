"""Writes the results a sweep leaves behind, in the layout of
contrib/docs/results.md and in the formats of the code that prints them,
for `collect` tests and contrib/bench/collect.sh (no GPU here):

- dsf-run.json as the slurm-array job script writes it
  (plugins/cluster/slurm.lua);
- DeepSpeed's throughput timer line: deepspeed/utils/timer.py (v0.19.5)
  lines 264-273, ThroughputTimer.stop, with the logger format of
  deepspeed/utils/logging.py lines 39-40;
- the Trainer's trainer_state.json (TrainerState.save_to_json) and
  all_results.json (Trainer.save_metrics, speed_metrics);
- torch's CUDA out-of-memory text (c10/cuda/CUDACachingAllocator.cpp).

    python3 results_tree.py DIR [--log-bytes N] [--link] [--replicate N]
writes results for every variant of DIR/manifest.json; with --link every
stdout.log is a hard link to one log of N bytes (a benchmark's 10,000
variants then take N bytes of disk, and each is still read whole); with
--replicate N the manifest first becomes N copies of its first variant,
named v00000... (a sweep of N variants without generating N configs)."""
import json
import os
import sys

TIMER = ("[2026-01-05 10:00:%02d,123] [INFO] [timer.py:264:stop] "
         "epoch=0/micro_step=%d/global_step=%d, RunningAvgSamplesPerSec=%s, "
         "CurrSamplesPerSec=%s, MemAllocated=%sGB, MaxMemAllocated=%sGB\n")
FILLER = ("[2026-01-05 10:00:00,000] [INFO] [logging.py:128:log_dist] "
          "[Rank 0] step=%d, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]\n")
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
       " GPU 0 has a total capacity of 79.15 GiB of which 1.05 GiB is free.\n")


def timer_lines(steps, base_sps, peak_gib):
    out = []
    for s in range(1, steps + 1):
        sps = base_sps + (s % 3) * 0.5
        out.append(TIMER % (s % 60, s, s, base_sps, sps, 10.0, peak_gib))
    return "".join(out)


def log_text(nbytes, steps=20, base_sps=40.0, peak_gib=12.5):
    """A stdout.log of about nbytes: filler lines, then the timer lines."""
    timer = timer_lines(steps, base_sps, peak_gib)
    parts, size, i = [], len(timer), 0
    while size < nbytes:
        line = FILLER % i
        parts.append(line)
        size += len(line)
        i += 1
    return "".join(parts) + timer


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)


def variant_dir(out, v):
    return os.path.join(out, "results", v["file"][:-len(".json")])


def write_variant(out, v, kind="ok", sps=40.0, peak_gib=12.5, log=None,
                  sha=None):
    """kind: ok, oom, failed, running, mismatch, none (no directory)."""
    if kind == "none":
        return
    d = variant_dir(out, v)
    os.makedirs(d, exist_ok=True)
    run = {"variant": v["name"], "config_sha256": sha or v["sha256"],
           "start": 1767607200, "host": "node001", "job_id": "4242"}
    if kind == "mismatch":
        run["config_sha256"] = "0" * 64
    if kind != "running":
        run["end"] = 1767607260
        run["exit_code"] = {"oom": 1, "failed": 2}.get(kind, 0)
    write_json(os.path.join(d, "dsf-run.json"), run)
    if log is not None:
        os.link(log, os.path.join(d, "stdout.log"))
    else:
        with open(os.path.join(d, "stdout.log"), "w") as f:
            f.write(timer_lines(10 if kind != "oom" else 2, sps, peak_gib))
    if kind == "oom":
        with open(os.path.join(d, "stderr.log"), "w") as f:
            f.write("Traceback (most recent call last):\n" + OOM)
    elif kind == "failed":
        with open(os.path.join(d, "stderr.log"), "w") as f:
            f.write("ValueError: the training script failed on purpose\n")
    elif kind == "ok":
        write_json(os.path.join(d, "trainer_state.json"), {
            "global_step": 10, "max_steps": 10,
            "log_history": [{"loss": round(2.0 - s * 0.1, 4), "step": s}
                            for s in range(1, 11)]})


def replicate(out, m, n):
    base = m["variants"][0]
    m["variants"] = [dict(base, name="v%05d" % i,
                          file="%s-v%05d.json" % (base["profile"], i))
                     for i in range(n)]
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(m, f)


def main(argv):
    out = argv[0]
    nbytes = int(argv[argv.index("--log-bytes") + 1]) \
        if "--log-bytes" in argv else 0
    with open(os.path.join(out, "manifest.json")) as f:
        m = json.load(f)
    if "--replicate" in argv:
        replicate(out, m, int(argv[argv.index("--replicate") + 1]))
    log = None
    if "--link" in argv:
        log = os.path.join(out, "template.log")
        with open(log, "w") as f:
            f.write(log_text(nbytes))
    for v in m["variants"]:
        write_variant(out, v, log=log)


if __name__ == "__main__":
    main(sys.argv[1:])
