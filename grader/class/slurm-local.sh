#!/usr/bin/env bash
# slurm-local.sh start|stop DIR - a single-node Slurm cluster on this machine, for make test (needs root and
# Debian's slurm-wlm and munge). start writes DIR/slurm.conf, starts munged (unless one answers), slurmctld and
# slurmd, and waits until the node is idle; then `export SLURM_CONF=DIR/slurm.conf` reaches it. stop ends them.
set -u
case "$#:${1:-}" in 2:start | 2:stop) ;; *) echo "usage: grader/class/slurm-local.sh start|stop DIR" >&2; exit 2 ;; esac
what=$1 dir=$2
export SLURM_CONF=$dir/slurm.conf
if [ "$what" = stop ]; then
    for d in slurmd slurmctld munged; do
        [ -f "$dir/$d.pid" ] && kill "$(cat "$dir/$d.pid")" 2>/dev/null
    done
    for _ in $(seq 1 40); do # each removes its pid file when it has ended
        [ -f "$dir/slurmd.pid" ] || [ -f "$dir/slurmctld.pid" ] || exit 0
        sleep 0.25
    done
    echo "slurm-local: slurmd or slurmctld still running after 10 s"
    exit 1
fi
[ "$(id -u)" = 0 ] || { echo "slurm-local: needs root"; exit 2; }
for c in slurmctld slurmd sbatch munged munge; do
    command -v $c >/dev/null 2>&1 || { echo "slurm-local: no $c (sudo apt-get install slurm-wlm munge)"; exit 2; }
done
mkdir -p "$dir/state" "$dir/spool" "$dir/log"
host=$(hostname -s)
mem=$(awk '/MemTotal/ { print int($2 / 1024) - 512 }' /proc/meminfo)
cat >"$SLURM_CONF" <<CONF
ClusterName=xferlab-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=${XL_SLURM_PORT:-16817}
SlurmdPort=$((${XL_SLURM_PORT:-16817} + 1))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null
    [ -s /etc/munge/munge.key ] || mungekey --create 2>/dev/null || { echo "slurm-local: no munge key"; exit 1; }
    munged --force --pid-file="$dir/munged.pid" 2>"$dir/log/munged.log" || { echo "slurm-local: munged did not start"; exit 1; }
fi
slurmctld -c >"$dir/log/slurmctld.out" 2>&1 || { echo "slurm-local: slurmctld did not start (log: $dir/log)"; exit 1; }
slurmd -c >"$dir/log/slurmd.out" 2>&1 || { echo "slurm-local: slurmd did not start (log: $dir/log)"; exit 1; }
for _ in $(seq 1 60); do
    sinfo -h -o %t 2>/dev/null | grep -q idle && { echo "slurm-local: node $host idle (SLURM_CONF=$SLURM_CONF)"; exit 0; }
    sleep 0.5
done
echo "slurm-local: the node did not come up (log: $dir/log)"
exit 1
