#!/usr/bin/env bash
# A private one-node Slurm for the srun tests (run as root), everything under DIR and on
# loopback; nothing under /etc is read or changed.
#
#   slurm_cluster.sh up DIR     start munged (own key and socket), slurmctld and slurmd with
#                               DIR/slurm.conf; returns once the node is idle (bounded poll)
#   slurm_cluster.sh down DIR   scontrol shutdown, stop munged and every daemon left (by the
#                               pids they wrote under DIR), remove DIR
#
# srun needs SLURM_CONF=DIR/slurm.conf in its environment.
set -euo pipefail

cmd=${1:?usage: slurm_cluster.sh up|down DIR}
dir=${2:?usage: slurm_cluster.sh up|down DIR}
node=ompdbgnode

# A pid file's process, if it is still alive.
pid_of() {
  local f=$1 p
  [[ -s $f ]] || return 1
  p=$(<"$f")
  [[ $p =~ ^[0-9]+$ ]] && kill -0 "$p" 2>/dev/null && echo "$p"
}

# Waits up to 10 s for the processes of pid files $@ to end, then SIGKILLs what is left.
reap() {
  local f p i
  for ((i = 0; i < 100; i++)); do
    local alive=0
    for f in "$@"; do pid_of "$f" >/dev/null && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  for f in "$@"; do p=$(pid_of "$f") && kill -KILL "$p" 2>/dev/null; done
  return 0
}

# Processes this cluster started that outlive its daemons: a step's tasks (their environment
# names this cluster's SLURM_CONF) and slurmstepd (it holds files under DIR open). A test that
# fails while its step runs would otherwise leave both behind.
kill_leftovers() {
  local p f
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [[ $p == "$$" ]] && continue
    if grep -qzxF "SLURM_CONF=$dir/slurm.conf" "/proc/$p/environ" 2>/dev/null; then
      kill -KILL "$p" 2>/dev/null || true
    elif [[ $(cat "/proc/$p/comm" 2>/dev/null) == slurmstepd ]]; then
      for f in /proc/"$p"/fd/*; do
        if [[ $(readlink "$f" 2>/dev/null) == "$dir"/* ]]; then
          kill -KILL "$p" 2>/dev/null || true
          break
        fi
      done
    fi
  done
}

# Waits up to 10 s for processes $@ to end, then SIGKILLs what is left. A daemon removes
# its pid file before it has ended (munged writes its seed file after): wait on the pid.
wait_gone() {
  local p i
  for ((i = 0; i < 100; i++)); do
    local alive=0
    for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  for p in "$@"; do kill -KILL "$p" 2>/dev/null || true; done
  return 0
}

down() {
  [[ -d $dir ]] || return 0
  local daemons=() p
  for p in slurmctld slurmd; do
    p=$(pid_of "$dir/$p.pid") && daemons+=("$p")
  done
  local munged_pid=""
  munged_pid=$(pid_of "$dir/munged.pid") || munged_pid=""
  if [[ -f $dir/slurm.conf ]]; then
    SLURM_CONF=$dir/slurm.conf timeout 10 scancel --quiet --signal=KILL --full --user=root >/dev/null 2>&1 || true
    SLURM_CONF=$dir/slurm.conf timeout 10 scontrol shutdown >/dev/null 2>&1 || true
  fi
  reap "$dir/slurmctld.pid" "$dir/slurmd.pid"
  ((${#daemons[@]} == 0)) || wait_gone "${daemons[@]}"
  kill_leftovers
  if [[ -n $munged_pid ]]; then
    kill -TERM "$munged_pid" 2>/dev/null || true
    wait_gone "$munged_pid"
  fi
  reap "$dir/munged.pid"
  rm -rf "$dir"
}

fail() {
  echo "slurm_cluster: $*" >&2
  for log in munged slurmctld slurmd; do
    [[ -f $dir/$log.log ]] && { echo "--- $log.log:" >&2; tail -20 "$dir/$log.log" >&2; }
  done
  down
  exit 1
}

# A TCP port nobody listens on (ss lists the ones in use).
free_port() {
  local p
  for ((p = $1; p < $1 + 200; p++)); do
    ss -Htan "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
  done
  echo "$1"
}

up() {
  for b in munged slurmctld slurmd slurmstepd scontrol srun sinfo; do
    command -v "$b" >/dev/null || [[ -x /usr/sbin/$b ]] || { echo "slurm_cluster: $b is not installed" >&2; exit 2; }
  done
  export PATH=$PATH:/usr/sbin
  mkdir -p "$dir"/{state,spool}
  chmod 700 "$dir"
  dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
  chmod 600 "$dir/munge.key"
  munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" || fail "munged did not start"

  local base=$((20000 + ($$ % 20000)))
  local ctld_port d_port
  ctld_port=$(free_port "$base")
  d_port=$(free_port $((ctld_port + 1)))
  local cpus host
  cpus=$(nproc)
  host=$(hostname -s)
  # BatchStartTimeout: srun gives up on a launch after MessageTimeout + BatchStartTimeout
  # (20 s by default), and a test holds the step in the Prolog while ompdbg attaches to srun,
  # which on a loaded machine may take long; the Prolog's own hold ends after 60 s.
  cat >"$dir/slurm.conf" <<EOF
ClusterName=ompdbgtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
BatchStartTimeout=60
NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ompdbg Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
  # A test may hold a step's start (the tasks not yet launched, srun's MPIR_proctable with
  # entries without pids): it makes the FIFO spawn-gate, reads "reached" from the FIFO
  # prolog-reached, and writes a line to spawn-gate to let the step go on. Each wait is
  # bounded, so a failed test leaves no prolog behind.
  cat >"$dir/prolog" <<EOF
#!/bin/sh
if [ -p "$dir/spawn-gate" ]; then
  [ -p "$dir/prolog-reached" ] && timeout 60 sh -c 'echo reached > "$dir/prolog-reached"'
  timeout 60 sh -c 'read -r line < "$dir/spawn-gate"'
fi
exit 0
EOF
  chmod 755 "$dir/prolog"
  echo "Prolog=$dir/prolog" >>"$dir/slurm.conf"
  # A test may also hold each task between its fork and its execve (srun has its pid in
  # MPIR_proctable by then) until a debugger traces it: it makes the file exec-when-traced.
  # The TaskProlog runs in a child of the task ($PPID), which executes the program once the
  # TaskProlog has ended. Bounded: a task nobody attaches goes on after 60 s.
  cat >"$dir/task-prolog" <<'EOF'
#!/bin/sh
if [ -e "$(dirname "$0")/exec-when-traced" ]; then
  timeout 60 sh -c 'while grep -q "^TracerPid:[[:space:]]*0$" "/proc/$1/status"; do sleep 0.05; done' sh "$PPID"
fi
exit 0
EOF
  chmod 755 "$dir/task-prolog"
  echo "TaskProlog=$dir/task-prolog" >>"$dir/slurm.conf"
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -i || fail "slurmctld did not start"
  slurmd -N "$node" || fail "slurmd did not start"
  local i state=""
  for ((i = 0; i < 300; i++)); do
    state=$(sinfo -h -N -n "$node" -o %t 2>/dev/null || true)
    [[ $state == idle ]] && return 0
    sleep 0.1
  done
  fail "node $node not idle after 30 s (state: ${state:-none})"
}

case $cmd in
up) up ;;
down) down ;;
*) echo "usage: slurm_cluster.sh up|down DIR" >&2; exit 2 ;;
esac
