#!/bin/bash
# slurm.sh: a private Slurm cluster (munge, slurmctld, slurmd) on this machine, for tests.
#
#   slurm.sh start --dir DIR [--nodes N] [--gpus G] [--cpus C] [--rate RATE] [--port P]
#   slurm.sh stop  --dir DIR            stop every daemon and job of DIR's cluster, remove DIR
#   slurm.sh exec  --dir DIR -- CMD...  CMD as a client of DIR's cluster (SLURM_CONF set; with
#                                       several nodes, inside the switch namespace)
#   slurm.sh run   [start options] -- CMD...   start, exec CMD, always stop (EXIT/INT/TERM)
#
# --nodes 1 (default): one slurmd in this network namespace, node name = short hostname, at
#   127.0.0.1, ports P and P+1 (P = 16817, so a site's own Slurm on 6817 is left alone).
# --nodes N > 1: N slurmds, each in a namespace node of scripts/netns/netns.sh (links shaped
#   at RATE, default none), named node0..node<N-1>, slurmctld in the switch namespace at
#   10.77.0.254; clients (sbatch, squeue) must run there: use `slurm.sh exec`.
# --gpus G: G fake GPUs per node as gres/gpu (Type=fake, File= character devices 195:i made
#   with mknod under DIR/dev), so Slurm allocates them and sets CUDA_VISIBLE_DEVICES.
# Everything lives in DIR (config, munge key and socket, state, spool, logs, pid files); the
# daemons run as root with auth/munge through DIR's private munged. Needs slurm-wlm and munge
# (`apt-get install -y slurm-wlm munge`).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NETNS="$HERE/../netns/netns.sh"
DIR="" NODES=1 GPUS=0 CPUS="" RATE=none PORT=16817 ARGS=()

die() { echo "slurm.sh: $*" >&2; exit 2; }

parse() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --dir) DIR=${2:?}; shift 2 ;;
            --nodes) NODES=${2:?}; shift 2 ;;
            --gpus) GPUS=${2:?}; shift 2 ;;
            --cpus) CPUS=${2:?}; shift 2 ;;
            --rate) RATE=${2:?}; shift 2 ;;
            --port) PORT=${2:?}; shift 2 ;;
            --) shift; ARGS=("$@"); return ;;
            *) die "unknown option $1" ;;
        esac
    done
}

need() { command -v "$1" >/dev/null || die "$1 not found: apt-get install -y slurm-wlm munge"; }

write_conf() {
    local host=$1 ctl_addr=$2 nodeline=$3 partnodes=$4 mpi=$5
    cat > "$DIR/slurm.conf" <<EOF
# Private test cluster made by scripts/slurm/slurm.sh (state under $DIR).
ClusterName=commlab
SlurmctldHost=$host($ctl_addr)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
TmpFS=$DIR/tmp/%n
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=$mpi
ReturnToService=2
MinJobAge=600
SlurmdTimeout=30
GresTypes=gpu
$nodeline
PartitionName=lab Nodes=$partnodes Default=YES MaxTime=INFINITE State=UP
EOF
    if [ "$GPUS" -gt 0 ]; then
        echo "NodeName=$partnodes Name=gpu Type=fake File=$DIR/dev/nvidia[0-$((GPUS - 1))]" \
            > "$DIR/gres.conf"
    else
        : > "$DIR/gres.conf"
    fi
}

start_munge() {
    mkdir -p "$DIR/munge" && chmod 755 "$DIR" "$DIR/munge"
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$DIR/munge/munge.key"
    munged --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" \
        --pid-file="$DIR/run/munged.pid" --log-file="$DIR/log/munged.log" \
        --seed-file="$DIR/munge/munged.seed" || die "munged did not start (see $DIR/log/munged.log)"
}

wait_idle() {   # wait until every node answers (idle or mixed), at most 30 s
    local n
    for _ in $(seq 1 150); do
        n=$(client sinfo -h -o '%T %D' 2>/dev/null | awk '$1 ~ /^(idle|mixed|allocated)/ {s += $2} END {print s+0}')
        [ "$n" -ge "$NODES" ] && return 0
        sleep 0.2
    done
    echo "slurm.sh: nodes did not become idle:" >&2; client sinfo >&2; return 1
}

client() {      # client CMD...: run a Slurm client command against DIR's cluster
    if [ -f "$DIR/netns.tag" ]; then
        SLURM_CONF="$DIR/slurm.conf" nsenter --net="/run/netns/$(cat "$DIR/netns.tag")s" "$@"
    else
        SLURM_CONF="$DIR/slurm.conf" "$@"
    fi
}

cmd_start() {
    need munged; need slurmctld; need slurmd
    [ -n "$DIR" ] || die "start: --dir DIR"
    [ "$(id -u)" = 0 ] || die "the private cluster needs root"
    [ -e "$DIR/slurm.conf" ] && die "$DIR already holds a cluster (stop it first)"
    DIR=$(mkdir -p "$DIR" && cd "$DIR" && pwd) || die "cannot create $DIR"
    mkdir -p "$DIR"/{state,spool,run,log,tmp,dev}
    local i host tag cpus
    for i in $(seq 0 $((GPUS - 1))); do mknod "$DIR/dev/nvidia$i" c 195 "$i"; done
    start_munge
    export SLURM_CONF="$DIR/slurm.conf"
    if [ "$NODES" -le 1 ]; then
        host=$(hostname -s)
        cpus=${CPUS:-$(nproc)}
        write_conf "$host" 127.0.0.1 \
            "NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 Gres=gpu:fake:$GPUS State=UNKNOWN" \
            "$host" none
        mkdir -p "$DIR/spool/$host" "$DIR/tmp/$host"
        slurmctld -f "$SLURM_CONF" || die "slurmctld did not start (see $DIR/log)"
        slurmd -f "$SLURM_CONF" || die "slurmd did not start (see $DIR/log)"
    else
        tag="clnet$$s"
        COMMLAB_NETNS_OWNER=$$ "$NETNS" up --tag "$tag" --nodes "$NODES" --rate "$RATE" >/dev/null \
            || die "could not create the namespace nodes"
        echo "$tag" > "$DIR/netns.tag"
        ip -n "${tag}s" addr add 10.77.0.254/24 dev br0
        host=$(hostname -s)
        cpus=${CPUS:-2}
        write_conf "$host" 10.77.0.254 \
            "NodeName=node[0-$((NODES - 1))] NodeAddr=10.77.0.[1-$NODES] CPUs=$cpus RealMemory=1000 Gres=gpu:fake:$GPUS State=UNKNOWN" \
            "node[0-$((NODES - 1))]" pmix
        nsenter --net="/run/netns/${tag}s" slurmctld -f "$SLURM_CONF" \
            || die "slurmctld did not start (see $DIR/log)"
        for i in $(seq 0 $((NODES - 1))); do
            mkdir -p "$DIR/spool/node$i" "$DIR/tmp/node$i"
            # nsenter switches only the network namespace (ip netns exec would remount /sys and
            # break slurmd's cgroup probe); a UTS namespace gives each slurmd its node name.
            nsenter --net="/run/netns/${tag}n$i" unshare --uts /bin/sh -c \
                "hostname node$i && exec slurmd -f '$SLURM_CONF' -N node$i" \
                || die "slurmd node$i did not start (see $DIR/log)"
        done
        # The set now lives as long as slurmctld: netns.sh cleanup leaves it alone until then.
        cat "$DIR/run/slurmctld.pid" > "$COMMLAB_NETNS_DIR_EFF/$tag/owner" 2>/dev/null
    fi
    wait_idle || return 1
    echo "slurm.sh: cluster up in $DIR ($NODES node(s), $GPUS fake GPU(s) each)" >&2
}

# Kills every process started against DIR's cluster: they all carry SLURM_CONF=DIR/slurm.conf.
kill_clients() {
    local sig=$1 pid
    for pid in $(grep -lzx "SLURM_CONF=$DIR/slurm.conf" /proc/[0-9]*/environ 2>/dev/null \
                 | cut -d/ -f3); do
        [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] || kill "-$sig" "$pid" 2>/dev/null
    done
}

cmd_stop() {
    [ -n "$DIR" ] || die "stop: --dir DIR"
    [ -d "$DIR" ] || return 0
    DIR=$(cd "$DIR" && pwd)
    local f pid
    if [ -f "$DIR/slurm.conf" ]; then
        client timeout 5 scancel --full --quiet --partition lab 2>/dev/null
        kill_clients TERM
    fi
    for f in "$DIR"/run/slurmd-*.pid "$DIR/run/slurmctld.pid" "$DIR/run/munged.pid"; do
        [ -f "$f" ] || continue
        pid=$(cat "$f" 2>/dev/null) || continue
        kill "$pid" 2>/dev/null
        for _ in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$pid" 2>/dev/null
    done
    kill_clients KILL
    [ -f "$DIR/netns.tag" ] && "$NETNS" down --tag "$(cat "$DIR/netns.tag")"
    rm -rf "$DIR"
}

sub=${1:-}; [ $# -gt 0 ] && shift
parse "$@"
COMMLAB_NETNS_DIR_EFF=${COMMLAB_NETNS_DIR:-/tmp/commlab-netns}
case "$sub" in
    start) cmd_start || { cmd_stop; exit 1; } ;;
    stop) cmd_stop ;;
    exec) [ -n "$DIR" ] && [ -f "$DIR/slurm.conf" ] || die "exec: --dir DIR of a running cluster"
          [ ${#ARGS[@]} -gt 0 ] || die "exec: give a command after --"
          DIR=$(cd "$DIR" && pwd); client "${ARGS[@]}" ;;
    run) [ -n "$DIR" ] || DIR=$(mktemp -d /tmp/commlab-slurm.XXXXXX)
         [ ${#ARGS[@]} -gt 0 ] || die "run: give a command after --"
         trap cmd_stop EXIT; trap 'exit 130' INT; trap 'exit 143' TERM
         cmd_start || exit 1
         client "${ARGS[@]}"; exit $? ;;
    *) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
