#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for tests: munged, slurmctld
# and slurmd from Debian's slurm-wlm and munge, all state in DIR.
#   contrib/slurm/cluster.sh start DIR   prints the environment to use:
#                                        eval "$(... start DIR)"
#   contrib/slurm/cluster.sh stop DIR
# The node has 8 CPUs (more than this machine may have: slurmd takes the
# configured count, config_overrides) and 8 placeholder GPUs (gres files
# under DIR/dev: Slurm reports a gres without device files as 0 GPUs and
# drains the node), so up to 8 one-GPU tasks run at once. Jobs run as root; the job completion log is DIR/jobcomp.log.
# Needs root. Nothing outside DIR is written but munge's key directory is
# not used: munged gets DIR's key and socket.
set -euo pipefail
cmd=${1:?usage: cluster.sh start|stop DIR}
dir=$(realpath -m "${2:?usage: cluster.sh start|stop DIR}")
conf=$dir/slurm.conf
case $cmd in
start)
  mkdir -p "$dir"/{state,spool,log,dev,munge}
  chmod 700 "$dir/munge"
  if [ ! -f "$dir/munge/munge.key" ]; then
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$dir/munge/munge.key"
  fi
  for i in 0 1 2 3 4 5 6 7; do : > "$dir/dev/gpu$i"; done
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  port2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  host=$(hostname -s)
  cat > "$conf" <<CONF
ClusterName=dsftest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$port2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munged.sock
CryptoType=crypto/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
GresTypes=gpu
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
SlurmdParameters=config_overrides
DefMemPerCPU=100
MaxArraySize=100001
MaxJobCount=200000
InactiveLimit=0
KillWait=5
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 Gres=gpu:8 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
  {
    for i in 0 1 2 3 4 5 6 7; do echo "Name=gpu File=$dir/dev/gpu$i"; done
  } > "$dir/gres.conf"
  munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munged.sock" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" --force
  export SLURM_CONF=$conf
  slurmctld -f "$conf"
  slurmd -f "$conf"
  for _ in $(seq 1 100); do
    if sinfo -h -o '%T' 2>/dev/null | grep -q -E '^(idle|mixed|allocated)'; then
      echo "export SLURM_CONF=$conf"
      exit 0
    fi
    sleep 0.2
  done
  echo "slurm did not come up; logs in $dir/log" >&2
  sinfo >&2 || true
  exit 1
  ;;
stop)
  # Jobs still queued or running go first: a slurmstepd outlives slurmd.
  if [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    SLURM_CONF=$conf scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 1 100); do
      [ -z "$(SLURM_CONF=$conf squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  for p in slurmd slurmctld munge/munged; do
    f=$dir/$p.pid
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  ;;
*) echo "usage: cluster.sh start|stop DIR" >&2; exit 2 ;;
esac
