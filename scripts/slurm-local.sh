#!/usr/bin/env bash
# A one-node Slurm on localhost, for trying `hbmsim sweep --shard` as a real
# job array without a cluster (and for tests/slurm). Debian 12's packages:
#   apt-get install slurmctld slurmd slurm-client munge
# Runs as root (both daemons and munged), everything under DIR: the munge key
# and socket, slurm.conf, state, spool, logs. No systemd, no cgroups
# (proctrack/linuxproc, task/none), ports picked free.
#
#   scripts/slurm-local.sh start DIR    # then: export SLURM_CONF=DIR/slurm.conf
#   sbatch --array=0-2 --wait job.sh
#   scripts/slurm-local.sh stop DIR
set -euo pipefail
cmd=${1:?usage: slurm-local.sh start|stop DIR}
dir=$(realpath -m "${2:?usage: slurm-local.sh start|stop DIR}")

stop() {
  for pid_file in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [[ -s $pid_file ]] && kill "$(cat "$pid_file")" 2> /dev/null || true
  done
  # Wait for them to go, so a restart in the same DIR finds its ports free.
  for _ in $(seq 50); do
    pgrep -f "$dir/slurm.conf|$dir/munge" > /dev/null || return 0
    sleep 0.1
  done
  pkill -9 -f "$dir/slurm.conf|$dir/munge" || true
}

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  for tool in munged slurmctld slurmd sbatch; do
    command -v "$tool" > /dev/null || { echo "slurm-local: $tool is not installed" >&2; exit 77; }
  done
  [[ $(id -u) == 0 ]] || { echo "slurm-local: the daemons run as root here" >&2; exit 77; }
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
  head -c 1024 /dev/urandom > "$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --log-file="$dir/log/munged.log" --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munge.seed"
  local ctld_port slurmd_port
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  cat > "$dir/slurm.conf" << CONF
ClusterName=hbmsimlocal
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SwitchType=switch/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  slurmctld -f "$dir/slurm.conf"
  slurmd -f "$dir/slurm.conf" -N localhost
  # Ready when the node is idle (up to 30 s: slurmd registers, ctld accepts).
  for _ in $(seq 300); do
    if SLURM_CONF="$dir/slurm.conf" sinfo -h -o %T 2> /dev/null | grep -qx idle; then
      echo "export SLURM_CONF=$dir/slurm.conf"
      return 0
    fi
    sleep 0.1
  done
  echo "slurm-local: the node did not come up; logs in $dir/log" >&2
  stop
  exit 1
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) echo "usage: slurm-local.sh start|stop DIR" >&2; exit 2 ;;
esac
