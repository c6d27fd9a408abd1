-- Tests for plugins/results/throughput.lua and plugins/results/failures.lua,
-- on excerpts in the exact format the producing code prints.

local tp = require("results.throughput")
local fail = require("results.failures")
local at = require("results.autotuning")
local tr = require("results.trainer")
local fp = require("results.flops")
local stats = require("results.stats")
local csv = require("results.csvmon")
local record = require("results.record")
local calib = require("results.calibration")
local slurm = require("results.slurm")

-- deepspeed/utils/timer.py v0.19.5 lines 264-273 (ThroughputTimer.stop),
-- through the formatter of deepspeed/utils/logging.py lines 39-40.
local TIMER = {
  "[2026-01-05 10:00:01,100] [INFO] [timer.py:264:stop] epoch=0/micro_step=10/global_step=10, "
    .. "RunningAvgSamplesPerSec=40.5, CurrSamplesPerSec=41.25, MemAllocated=3.1GB, MaxMemAllocated=7.5GB",
  "[2026-01-05 10:00:11,100] [INFO] [timer.py:264:stop] epoch=0/micro_step=20/global_step=20, "
    .. "RunningAvgSamplesPerSec=41.0, CurrSamplesPerSec=41.5, MemAllocated=3.1GB, MaxMemAllocated=8.25GB",
  "[2026-01-05 10:00:21,100] [INFO] [timer.py:264:stop] epoch=0/micro_step=30/global_step=30, "
    .. "RunningAvgSamplesPerSec=41.25, CurrSamplesPerSec=41.75, MemAllocated=3.1GB, MaxMemAllocated=8.0GB",
}

return {
  throughput_line_fields = function()
    local r = tp.parse_line(TIMER[1])
    T.eq(r.epoch, 0)
    T.eq(r.micro_step, 10)
    T.eq(r.global_step, 10)
    T.eq(r.running_avg_samples_per_sec, 40.5)
    T.eq(r.samples_per_sec, 41.25)
    T.eq(r.mem_allocated_gib, 3.1)
    T.eq(r.max_mem_allocated_gib, 7.5)
    T.truthy(TIMER[1]:find(tp.marker, 1, true))
  end,

  throughput_read_takes_last_average_and_peak_memory = function()
    local m = tp.read(TIMER)
    T.eq(m.steps, 30)
    T.eq(m.samples_per_sec, 41.25)
    T.eq(m.peak_memory_bytes, math.floor(8.25 * 1024 ^ 3 + 0.5))
    T.eq(m.reports, 3)
  end,

  throughput_truncated_line_is_ignored = function()
    -- a killed run's last line, cut mid-write
    local cut = TIMER[3]:sub(1, #TIMER[3] - 12)
    T.eq(tp.parse_line(cut), nil)
    local m = tp.read({ TIMER[1], cut })
    T.eq(m.steps, 10)
    T.eq(m.reports, 1)
    T.eq(tp.read({ cut }), nil)
    T.eq(tp.read({}), nil)
  end,

  failures_oom_first_line = function()
    local lines = {
      "Traceback (most recent call last):",
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.06 GiB is free.",
      "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.",
    }
    local r = fail.classify(lines, 1)
    T.eq(r.status, "oom")
    T.eq(r.kind, "oom")
    T.eq(r.error, lines[2])
    -- older PyTorch: RuntimeError with the same text
    T.eq(fail.classify({ "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB" }, nil).status, "oom")
  end,

  failures_nccl = function()
    local line = "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error"
    local r = fail.classify({ "Traceback (most recent call last):", line }, 1)
    T.eq(r.status, "failed")
    T.eq(r.kind, "nccl")
    T.eq(r.error, line)
  end,

  failures_exit_code = function()
    local r = fail.classify({ "Traceback (most recent call last):", "ValueError: bad batch" }, 2)
    T.eq(r.status, "failed")
    T.eq(r.kind, "exit")
    T.eq(r.error, "ValueError: bad batch")
    T.eq(fail.classify({}, 137).error, "exit code 137")
    -- exit 0 and no OOM/NCCL line: not a failure
    T.eq(fail.classify({ "ValueError: caught and logged" }, 0), nil)
    T.eq(fail.classify({}, nil), nil)
  end,

  -- deepspeed/runtime/engine.py v0.19.5 lines 3517-3533 (_autotuning_exit):
  -- fwd/bwd/step in microseconds, latency = their sum * gas.
  autotuning_metric_file = function()
    local m = at.read({ fwd = 100000.0, bwd = 200000.0, step = 50000.0,
                        latency = 700000.0, FLOPS_per_gpu = 1.5e14,
                        throughput = 45.71 })
    T.eq(m.samples_per_sec, 45.71)
    T.eq(m.tflops_per_gpu, 150.0)
    T.eq(m.step_time_s, 0.7)
  end,

  autotuning_other_file_is_refused = function()
    local m, err = at.read({ loss = 1.0 })
    T.eq(m, nil)
    T.truthy(err:find("FLOPS_per_gpu", 1, true))
    T.eq((at.read("x")), nil)
  end,

  -- transformers trainer_utils.py speed_metrics / TrainerMemoryTracker keys
  trainer_all_results = function()
    local m = tr.read_all_results({
      epoch = 1.0, total_flos = 7.774481450954342e+16,
      train_runtime = 123.4567, train_samples_per_second = 2.598,
      train_steps_per_second = 0.325, train_tokens_per_second = 3421.164,
      train_loss = 1.292790667215983,
      train_mem_gpu_alloc_delta = 728138240, train_mem_gpu_peaked_delta = 14677017088,
    })
    T.eq(m.wall_time_s, 123.4567)
    T.eq(m.samples_per_sec, 2.598)
    T.eq(m.tokens_per_sec, 3421.164)
    T.eq(m.loss_mean, 1.292790667215983)
    T.eq(m.gpu_memory_delta_bytes, 728138240 + 14677017088)
    -- without include_tokens_per_second and with skip_memory_metrics
    local n = tr.read_all_results({ train_runtime = 10.0, train_samples_per_second = 5.0, train_loss = 2.0 })
    T.eq(n.tokens_per_sec, nil)
    T.eq(n.gpu_memory_delta_bytes, nil)
    local z, err = tr.read_all_results({ eval_loss = 1.0 })
    T.eq(z, nil)
    T.truthy(err:find("train_runtime", 1, true))
  end,

  trainer_state_log_history = function()
    local m = tr.read_state({
      global_step = 30,
      log_history = {
        { loss = 2.5, grad_norm = 1.2, learning_rate = 5e-05, epoch = 0.33, step = 10 },
        { loss = 2.0, grad_norm = 1.1, learning_rate = 4e-05, epoch = 0.67, step = 20 },
        { loss = 1.75, grad_norm = 0.9, learning_rate = 3e-05, epoch = 1.0, step = 30 },
        { train_runtime = 60.5, train_samples_per_second = 7.9, train_loss = 2.08, epoch = 1.0, step = 30 },
      },
    })
    T.eq(m.steps, 30)
    T.eq(m.loss_first, 2.5)
    T.eq(m.loss_last, 1.75)
    local z, err = tr.read_state({ global_step = 0 })
    T.eq(z, nil)
    T.truthy(err:find("log_history", 1, true))
  end,

  -- deepspeed/profiling/flops_profiler/profiler.py v0.19.5 lines 328-399,
  -- line_fmt '{:<70}  {:<8}', number_to_string's "%g unit"
  flops_profiler_summary = function()
    local function row(k, v) return string.format("%-70s  %-8s", k, v) end
    local lines = {
      "Profile Summary at step 10:",
      row("fwd latency: ", "402.17 ms"),
      row("fwd FLOPS per GPU = fwd flops per GPU / fwd latency: ", "120.5 TFLOPS"),
      row("iter latency: ", "1.21 s"),
      row("FLOPS per GPU = 3 * fwd flops per GPU / iter latency: ", "118.33 TFLOPS"),
      row("samples/second: ", "52.89"),
    }
    local m = fp.read(lines)
    T.eq(m.profile_step, 10)
    T.near(m.step_time_s, 1.21, 1e-12)
    T.near(m.tflops_per_gpu, 118.33, 1e-9)
    T.eq(m.samples_per_sec, 52.89)
    -- a millisecond iteration and GFLOPS
    local s = fp.read({ "Profile Summary at step 5:", row("iter latency: ", "850.5 ms"),
                        row("FLOPS per GPU = 3 * fwd flops per GPU / iter latency: ", "900 GFLOPS") })
    T.near(s.step_time_s, 0.8505, 1e-12)
    T.near(s.tflops_per_gpu, 0.9, 1e-12)
    T.eq(fp.read({ row("iter latency: ", "1.2 s") }), nil)
  end,

  stats_nearest_rank = function()
    T.eq(stats.percentile({ 5, 1, 4, 2, 3 }, 0.5), 3)
    T.eq(stats.percentile({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, 0.9), 9)
    T.eq(stats.percentile({}, 0.5), nil)
    local s = stats.summary({ 100, 1, 2, 3 }, 1)
    T.eq(s.median, 2)
    T.eq(s.p90, 3)
    T.eq(s.n, 3)
    T.eq(stats.summary({ 100 }, 1), nil)
  end,

  throughput_step_time_drops_warmup = function()
    -- train_batch_size 33: CurrSamplesPerSec 41.25, 41.5, 41.75; the first
    -- report is warm-up
    local m = tp.read(TIMER, 33)
    T.near(m.step_time_median_s, 33 / 41.75, 1e-12)
    T.near(m.step_time_p90_s, 33 / 41.5, 1e-12)
    T.eq(tp.read(TIMER).step_time_median_s, nil)
  end,

  -- deepspeed/monitor/csv_monitor.py v0.19.5 lines 58-67: csv.writer rows,
  -- "\r\n" terminated; the pipeline engine's Train/Samples/train_loss
  csv_monitor_train_loss = function()
    local text = "step,train_loss\r\n32,2.75\r\n64,2.5\r\n96,2.125\r\n128,2."
    local m = csv.read("Train_Samples_train_loss.csv", text)
    T.eq(m.loss_first, 2.75)
    -- the half-written last row "128,2." (no "\r\n") is not read as 2.0
    T.eq(m.loss_last, 2.125)
    T.eq(m.samples_seen, 96)
    local cut = csv.read("Train_Samples_train_loss.csv", "step,train_loss\r\n32,2.75\r\n64,")
    T.eq(cut.loss_last, 2.75)
    T.eq(cut.samples_seen, 32)
    -- another event's file: parsed, no measured value
    local lr = csv.parse("step,lr\r\n32,1e-05\r\n")
    T.eq(lr.header, "lr")
    T.eq(lr.values[1], 1e-05)
    T.eq(csv.read("Train_Samples_lr.csv", "step,lr\r\n32,1e-05\r\n"), nil)
    local z, err = csv.read("x.csv", "a,b\n1,2\n")
    T.eq(z, nil)
    T.truthy(err:find("header", 1, true))
  end,

  record_sha_mismatch_refused = function()
    local v = { name = "zero_stage=3", sha256 = "aa11" }
    local r = record.build(v, { variant = "zero_stage=3", config_sha256 = "bb22", exit_code = 0, start = 1, ["end"] = 2 },
                           { { reader = "throughput", file = "stdout.log", values = { samples_per_sec = 9 } } })
    T.eq(r.status, "mismatch")
    T.truthy(r.message:find("zero_stage=3", 1, true))
    T.truthy(r.message:find("aa11", 1, true))
    T.truthy(r.message:find("bb22", 1, true))
    T.eq(next(r.values), nil)
  end,

  record_status_and_sources = function()
    local v = { name = "a", sha256 = "h" }
    T.eq(record.build(v, nil, {}).status, "missing")
    local run = { config_sha256 = "h", start = 100, ["end"] = 160, exit_code = 0 }
    local r = record.build(v, run, {
      { reader = "autotuning", file = "metrics.json", values = { samples_per_sec = 50, tflops_per_gpu = 120 } },
      { reader = "throughput", file = "stdout.log", values = { samples_per_sec = 41, peak_memory_bytes = 8 } },
    })
    T.eq(r.status, "ok")
    T.eq(r.values.samples_per_sec, 50)
    T.eq(r.sources.samples_per_sec, "autotuning:metrics.json")
    T.eq(r.values.peak_memory_bytes, 8)
    T.eq(r.sources.peak_memory_bytes, "throughput:stdout.log")
    T.eq(r.values.wall_time_s, 60)
    T.eq(r.sources.wall_time_s, "run:dsf-run.json")
    -- killed: no end, no exit code
    T.eq(record.build(v, { config_sha256 = "h", start = 100 }, {}).status, "running")
    -- non-zero exit without a recognised line
    local f = record.build(v, { config_sha256 = "h", start = 1, ["end"] = 2, exit_code = 3 }, {})
    T.eq(f.status, "failed")
    T.eq(f.error, "exit code 3")
    -- OOM wins, with its line
    local lines = { "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB." }
    local o = record.build(v, { config_sha256 = "h", start = 1, ["end"] = 2, exit_code = 1 }, {}, fail.classify(lines, 1))
    T.eq(o.status, "oom")
    T.eq(o.error, lines[1])
  end,


  calibration_row = function()
    local v = { name = "a", params = { zero_stage = 3 }, summary = { gpu_bytes = 60 } }
    local rec = { status = "ok", values = { peak_memory_bytes = 50 },
                  sources = { peak_memory_bytes = "throughput:stdout.log" } }
    local r = calib.row(v, rec)
    T.eq(r.variant, "a")
    T.eq(r.params.zero_stage, 3)
    T.eq(r.estimate_gpu_bytes, 60)
    T.eq(r.measured_peak_bytes, 50)
    T.eq(r.error_ratio, 0.2)
    T.eq(r.source, "throughput:stdout.log")
    T.eq(calib.row(v, { status = "oom", values = { peak_memory_bytes = 50 }, sources = {} }), nil)
    T.eq(calib.row({ name = "b", summary = {} }, rec), nil)
  end,

  -- jobcomp/filetxt JOB_FORMAT (Slurm src/plugins/jobcomp/filetxt/
  -- jobcomp_filetxt.c), an array task's line and a plain job's
  slurm_jobcomp_lines = function()
    local lines = {
      "JobId=4243 UserId=root(0) GroupId=root(0) Name=dsf-ab JobState=TIMEOUT Partition=debug "
        .. "TimeLimit=1 StartTime=2026-01-05T10:00:00 EndTime=2026-01-05T10:01:00 NodeList=n1 "
        .. "NodeCnt=1 ProcCnt=2 WorkDir=/w ReservationName= Tres=cpu=2,node=1,billing=2 Account= "
        .. "QOS= WcKey= Cluster=c SubmitTime=2026-01-05T09:59:59 EligibleTime=2026-01-05T09:59:59 "
        .. "ArrayJobId=4240 ArrayTaskId=3 DerivedExitCode=0:0 ExitCode=0:15 ",
      "JobId=4250 UserId=root(0) GroupId=root(0) Name=x JobState=COMPLETED Partition=debug "
        .. "TimeLimit=UNLIMITED StartTime=Unknown EndTime=2026-01-05T10:02:00 NodeList=n1 NodeCnt=1 "
        .. "ProcCnt=1 WorkDir=/w ReservationName= Tres= Account= QOS= WcKey= Cluster=c "
        .. "SubmitTime=unknown EligibleTime=unknown DerivedExitCode=0:0 ExitCode=0:0 ",
      "JobId=4251 UserId=root(0) GroupId=root(0) Name=cut JobState=FAILED Partition=de",
    }
    local jobs = slurm.read_jobcomp(lines)
    T.eq(jobs["4240_3"].state, "TIMEOUT")
    T.eq(jobs["4240_3"].signal, 15)
    T.eq(jobs["4243"], jobs["4240_3"])
    T.eq(jobs["4250"].state, "COMPLETED")
    T.eq(jobs["4251"], nil) -- cut mid-write: no ExitCode
  end,

  -- sacct --parsable2 (src/sacct/print.c): header, job rows, step rows
  slurm_sacct_rows = function()
    local jobs = slurm.read_sacct({
      "JobID|JobName|State|ExitCode",
      "4240_0|dsf|COMPLETED|0:0",
      "4240_0.batch|batch|COMPLETED|0:0",
      "4240_1|dsf|CANCELLED by 0|0:0",
      "4240_1.batch|batch|CANCELLED|0:15",
      "4240_2|dsf|OUT_OF_MEMORY|0:125",
    })
    T.eq(jobs["4240_0"].state, "COMPLETED")
    T.eq(jobs["4240_1"].state, "CANCELLED")
    T.eq(jobs["4240_1"].source, "sacct")
    T.eq(jobs["4240_2"].exit_code, 0)
    T.eq(jobs["4240_0.batch"], nil)
    T.eq(slurm.read_sacct({ "no|header|here" }), nil)
  end,

  record_takes_the_job_systems_word = function()
    local v = { name = "a", sha256 = "h" }
    local running = record.build(v, { config_sha256 = "h", start = 1 }, {})
    local r = record.with_job(running, { state = "TIMEOUT", exit_code = 0, signal = 15,
                                         source = "jobcomp" }, slurm.ENDED)
    T.eq(r.status, "timeout")
    T.eq(r.error, "jobcomp: job TIMEOUT (exit 0, signal 15)")
    -- a failure the logs explain keeps its own status
    local oom = record.build(v, { config_sha256 = "h", start = 1, ["end"] = 2, exit_code = 1 }, {},
                             fail.classify({ "CUDA out of memory" }, 1))
    T.eq(record.with_job(oom, { state = "FAILED", source = "jobcomp" }, slurm.ENDED).status, "oom")
    local ok = record.build(v, { config_sha256 = "h", start = 1, ["end"] = 2, exit_code = 0 }, {})
    T.eq(record.with_job(ok, { state = "COMPLETED", source = "sacct" }, slurm.ENDED).status, "ok")
  end,
}
