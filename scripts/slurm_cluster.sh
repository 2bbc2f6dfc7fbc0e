#!/usr/bin/env bash
# A real single-node SLURM on this machine, for trying and testing the sweep's submitit executor.
#
#   bash scripts/slurm_cluster.sh start [--accounting]   start munged, slurmctld, slurmd (+ mariadb and slurmdbd)
#   bash scripts/slurm_cluster.sh status                 the daemons it started and the node's state
#   bash scripts/slurm_cluster.sh stop                   stop exactly the daemons it started (their pid files)
#
# SLURM_CLUSTER_LOG_LEVEL sets how much the daemons log into $SLURM_CLUSTER_DIR/log (default info; debug for a
# requeue's every step). SLURM_CLUSTER_CRED_EXPIRE sets how long a requeued job is held back (default 120 s).
# Everything lives in one state folder, $SLURM_CLUSTER_DIR (default: ${TMPDIR:-/tmp}/nli-diagnostics-slurm): the
# munge key, slurm.conf (one node with this machine's cores and memory, one partition), spool, logs and pid files;
# with --accounting also a MariaDB data folder reached over a unix socket only (no TCP) and slurmdbd.conf.
# Clients find the cluster through SLURM_CONF: `start` prints the line to export, e.g.
#   eval "$(bash scripts/slurm_cluster.sh start | grep '^export')"
# Every daemon binds to 127.0.0.1 (CommunicationParameters=NoInAddrAny,NoCtldInAddrAny; this machine's host name
# must resolve to a loopback address); `start` checks with `ss -ltnp` that none of them listens anywhere else and
# stops them all and fails if one does. Debian's slurm-wlm and munge (and mariadb-server, slurmdbd for
# --accounting) are installed with apt-get when missing, which needs root; daemons run as root.
set -euo pipefail

DIR=${SLURM_CLUSTER_DIR:-${TMPDIR:-/tmp}/nli-diagnostics-slurm}
CTLD_PORT=${SLURM_CLUSTER_PORT:-6817}
SLURMD_PORT=$((CTLD_PORT + 1))
DBD_PORT=$((CTLD_PORT + 2))
CLUSTER=diagnostics
# how much slurmctld and slurmd log (SlurmctldDebug / SlurmdDebug: info, verbose, debug ...)
LOG_LEVEL=${SLURM_CLUSTER_LOG_LEVEL:-info}
# lifetime of a job's credential (AuthInfo cred_expire, SLURM's default 120 s): a requeued job is held back this long
# (its BeginTime), because slurmd refuses to start it again while its killed incarnation's credential is revoked
CRED_EXPIRE=${SLURM_CLUSTER_CRED_EXPIRE:-120}
HOST=$(hostname -s)
# the daemons of the cluster, in start order: name -> pid file (relative to $DIR)
DAEMONS=(munged mariadbd slurmdbd slurmctld slurmd)

die() { echo "slurm_cluster: $*" >&2; exit 1; }
say() { echo "slurm_cluster: $*" >&2; }
pidfile() { echo "$DIR/run/$1.pid"; }

# the pid in a pid file when it is a live process with the expected command name, else nothing
live_pid() {
  local file pid comm
  file=$(pidfile "$1")
  [ -s "$file" ] || return 0
  pid=$(tr -dc '0-9' < "$file")
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 0
  comm=$(cat "/proc/$pid/comm")
  case "$1:$comm" in
    munged:munged|mariadbd:mariadbd|mariadbd:mysqld|slurmdbd:slurmdbd|slurmctld:slurmctld|slurmd:slurmd) echo "$pid" ;;
  esac
}

install_packages() {
  local accounting=$1 missing=()
  command -v munged >/dev/null || missing+=(munge)
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null \
    || missing+=(slurm-wlm)
  command -v ss >/dev/null || missing+=(iproute2)
  if [ "$accounting" = 1 ]; then
    command -v slurmdbd >/dev/null || missing+=(slurmdbd)
    command -v mariadbd >/dev/null || missing+=(mariadb-server)
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "needs ${missing[*]} (Debian packages): run as root, or install them with apt-get"
  command -v apt-get >/dev/null || die "needs ${missing[*]} and there is no apt-get to install them"
  say "installing ${missing[*]} with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    apt-get update -q >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  }
}

write_slurm_conf() {
  local accounting=$1 cpus mem_mb
  cpus=$(nproc)
  mem_mb=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 * 9 / 10 ))
  cat > "$DIR/slurm.conf" <<EOF
ClusterName=$CLUSTER
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$DIR/run/munge.socket,cred_expire=$CRED_EXPIRE
CredType=cred/munge
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/slurmd
SlurmctldPidFile=$(pidfile slurmctld)
SlurmdPidFile=$(pidfile slurmd)
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=$LOG_LEVEL
SlurmdDebug=$LOG_LEVEL
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=10
MinJobAge=300
SlurmdTimeout=60
EOF
  if [ "$accounting" = 1 ]; then
    cat >> "$DIR/slurm.conf" <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$DIR/run/munge.socket
JobCompType=jobcomp/none
EOF
  else
    echo "AccountingStorageType=accounting_storage/none" >> "$DIR/slurm.conf"
  fi
  cat >> "$DIR/slurm.conf" <<EOF
NodeName=$HOST NodeAddr=127.0.0.1 NodeHostname=$HOST CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

write_slurmdbd_conf() {
  cat > "$DIR/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$DIR/run/munge.socket
DbdHost=$HOST
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
CommunicationParameters=NoInAddrAny
SlurmUser=root
PidFile=$(pidfile slurmdbd)
LogFile=$DIR/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$DIR/slurmdbd.conf"
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND... (each try of COMMAND must end by itself)
  local seconds=$1 what=$2
  shift 2
  for _ in $(seq $((seconds * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  die "$what did not come up within ${seconds}s (logs in $DIR/log)"
}

start_munge() {
  [ -s "$DIR/munge.key" ] || { head -c 1024 /dev/urandom > "$DIR/munge.key"; chmod 400 "$DIR/munge.key"; }
  munged --force --key-file="$DIR/munge.key" --socket="$DIR/run/munge.socket" --pid-file="$(pidfile munged)" \
         --log-file="$DIR/log/munged.log" --seed-file="$DIR/munged.seed"
  wait_for 10 munged timeout 10 munge --socket="$DIR/run/munge.socket" -n
}

start_mariadb() {
  if [ ! -d "$DIR/mysql/mysql" ]; then
    mariadb-install-db --user=root --datadir="$DIR/mysql" --auth-root-authentication-method=socket \
                       --skip-test-db >"$DIR/log/mariadb-install.log" 2>&1 || die "mariadb-install-db failed"
  fi
  # --skip-networking: the server listens on its unix socket only
  setsid nohup mariadbd --no-defaults --user=root --datadir="$DIR/mysql" --socket="$DIR/run/mysqld.sock" \
        --skip-networking --pid-file="$(pidfile mariadbd)" --log-error="$DIR/log/mariadb.log" \
        </dev/null >/dev/null 2>&1 &
  wait_for 60 mariadb timeout 10 mariadb --no-defaults --socket="$DIR/run/mysqld.sock" -e "select 1"
}

start_slurmdbd() {
  # slurmdbd reaches MariaDB at "localhost", i.e. through the socket that MYSQL_UNIX_PORT names
  # (slurmdbd reads slurmdbd.conf from the folder of SLURM_CONF)
  MYSQL_UNIX_PORT="$DIR/run/mysqld.sock" SLURM_CONF="$DIR/slurm.conf" slurmdbd
  wait_for 60 slurmdbd timeout 10 sacctmgr -n list cluster
  timeout 30 sacctmgr -i add cluster "$CLUSTER" >/dev/null 2>&1 || true
}

check_listeners() {
  # every TCP listener of the daemons we started must be on a loopback address
  local pids=() pid name bad
  for name in "${DAEMONS[@]}"; do
    pid=$(live_pid "$name")
    [ -n "$pid" ] && pids+=("$pid")
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  bad=$(ss -H -ltnp | while read -r _ _ _ local _ users; do
          for pid in "${pids[@]}"; do
            if [[ "$users" == *"pid=$pid,"* ]] && [[ "$local" != 127.* ]] && [[ "$local" != "[::1]:"* ]]; then
              echo "$local $users"
            fi
          done
        done)
  if [ -n "$bad" ]; then
    echo "$bad" >&2
    return 1
  fi
}

node_idle() { timeout 10 sinfo -h -n "$HOST" -o %T | grep -qx idle; }

start() {
  local accounting=0
  started=0
  for arg in "$@"; do
    case "$arg" in
      --accounting) accounting=1 ;;
      *) die "unknown option $arg (expected --accounting)" ;;
    esac
  done
  if [ -n "$(live_pid slurmctld)$(live_pid slurmd)" ]; then
    die "a cluster started from $DIR is running; stop it first: bash $0 stop"
  fi
  install_packages "$accounting"
  [ "$(id -u)" = 0 ] || die "the daemons run as root here: run as root"
  getent hosts "$HOST" | grep -qE '^(127\.|::1)' \
    || die "host name $HOST does not resolve to a loopback address; the daemons would listen on the network"
  mkdir -p "$DIR"/{run,log,state,spool/slurmd}
  chmod 700 "$DIR"
  export SLURM_CONF="$DIR/slurm.conf"
  write_slurm_conf "$accounting"
  trap 'if [ "$started" != 1 ]; then say "start failed; stopping what was started"; stop >/dev/null 2>&1; fi' EXIT
  start_munge
  if [ "$accounting" = 1 ]; then
    write_slurmdbd_conf
    start_mariadb
    start_slurmdbd
  fi
  slurmctld
  wait_for 30 slurmctld timeout 10 scontrol ping
  slurmd
  wait_for 60 "node $HOST (idle)" node_idle
  check_listeners || die "a daemon listens on a non-loopback address (above)"
  started=1
  say "cluster $CLUSTER up: node $HOST idle, accounting $([ "$accounting" = 1 ] && echo on || echo off)"
  echo "export SLURM_CONF=$DIR/slurm.conf"
}

drain() {
  # cancel the cluster's jobs (all of them are ours) and wait until their steps have ended, so that no step is left
  # behind without its slurmd
  [ -n "$(live_pid slurmctld)" ] && [ -n "$(live_pid slurmd)" ] || return 0
  export SLURM_CONF="$DIR/slurm.conf"
  local jobs
  jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ') || return 0
  [ -n "${jobs// }" ] || return 0
  say "cancelling the cluster's jobs: $jobs"
  # shellcheck disable=SC2086
  timeout 30 scancel $jobs >/dev/null 2>&1 || true
  for _ in $(seq 120); do
    [ -z "$(timeout 10 squeue -h -t all -o '%A %T' 2>/dev/null | grep -vE ' (COMPLETED|CANCELLED|FAILED|TIMEOUT)$')" ] \
      && return 0
    sleep 0.5
  done
  say "jobs still ending after 60 s; stopping the daemons anyway"
}

stop() {
  local name pid i stopped=0
  drain
  for (( i=${#DAEMONS[@]}-1; i>=0; i-- )); do
    name=${DAEMONS[$i]}
    pid=$(live_pid "$name")
    [ -n "$pid" ] || { rm -f "$(pidfile "$name")"; continue; }
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
      [ -d "/proc/$pid" ] || break
      sleep 0.1
    done
    [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null || true
    rm -f "$(pidfile "$name")"
    stopped=$((stopped + 1))
    say "stopped $name (pid $pid)"
  done
  [ "$stopped" -gt 0 ] || say "nothing to stop in $DIR"
}

status() {
  local name pid running=0
  for name in "${DAEMONS[@]}"; do
    pid=$(live_pid "$name")
    if [ -n "$pid" ]; then
      echo "$name running (pid $pid)"
      running=1
    fi
  done
  [ "$running" = 1 ] || { echo "not running ($DIR)"; return 3; }
  if [ -n "$(live_pid slurmctld)" ]; then
    SLURM_CONF="$DIR/slurm.conf" sinfo -h -o "node %n: %T, %c CPUs, %m MB" || true
  fi
  check_listeners || { echo "a daemon listens on a non-loopback address (above)"; return 1; }
  echo "export SLURM_CONF=$DIR/slurm.conf"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start [--accounting] | stop | status" >&2; exit 2 ;;
esac
