#!/bin/bash
# netns.sh: N emulated "nodes" as network namespaces joined by tbf-shaped veth links.
#
#   netns.sh up      [options]            create the nodes; prints the tag (then: down --tag)
#   netns.sh down    --tag TAG            remove them (namespaces, processes in them, files)
#   netns.sh run     [options] -- CMD...  up, run CMD inside node 0, always down afterwards
#   netns.sh mpirun  [options] -- [MPIRUN-OPTIONS] PROGRAM ARGS...
#                                         up, mpirun across the nodes (no ssh), always down
#   netns.sh exec    --tag TAG NODE CMD   run CMD inside node NODE (0-based) of a live set
#   netns.sh cleanup [--all]              remove sets whose owner process is gone (--all: every set)
#   netns.sh list                         the sets that exist now
#
# options: --nodes N (2)  --rate RATE (1gbit; "none" = unshaped; R0,R1,... one per rail, the
#          last for the rails after it)  --rails K (1)
#          --ranks-per-node P (1, mpirun)  --burst B (256kb)
#          --red MIN:MAX:PROB  the switch's port to node 0 (rail 0) queues in RED with ECN marking
#          (bytes, bytes, probability at MAX) under its tbf: a congestion point (lab16)
#          --tag TAG (default $COMMLAB_NETNS_TAG, else clnet<pid>; COMMLAB_NETNS_OWNER names the
#          process whose end makes the set stale for `cleanup`, default this script)
#
# Layout of one set TAG (names are private to it, so several sets can coexist):
#   namespace TAGs        the switch: one bridge br<r> per rail r
#   namespace TAGn<i>     node i: lo, and eth<r> = 10.77.<r>.<i+1>/24 on rail r, UTS
#                         hostname TAG-node<i> (run/mpirun), TMPDIR $STATE/TAG/node<i>/tmp
# Each link is shaped in both directions with tbf: node egress on eth<r>, and switch egress on
# the node's port. The kernel of the course's CI has no netem, so no delay, jitter or loss can
# be added here; labs that need latency add it in user space.
# Open MPI between nodes: mpirun runs in node 0 and starts its daemons through netns-rsh
# (plm_rsh_agent) in the other namespaces; the btl is tcp over eth* (vader within a node).
# Needs root, iproute2 (ip, tc), util-linux (unshare). Teardown runs on EXIT, INT and TERM.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${COMMLAB_NETNS_DIR:-/tmp/commlab-netns}
NODES=2 RATE=1gbit RAILS=1 PPN=1 TAG="" BURST=256kb ALL=0 RED=""

die() { echo "netns.sh: $*" >&2; exit 2; }

parse() {   # sets the globals above; leaves the rest in ARGS
    ARGS=()
    while [ $# -gt 0 ]; do
        case "$1" in
            --nodes) NODES=${2:?}; shift 2 ;;
            --rate) RATE=${2:?}; shift 2 ;;
            --rails) RAILS=${2:?}; shift 2 ;;
            --ranks-per-node) PPN=${2:?}; shift 2 ;;
            --tag) TAG=${2:?}; shift 2 ;;
            --burst) BURST=${2:?}; shift 2 ;;
            --red) RED=${2:?}; shift 2 ;;
            --all) ALL=1; shift ;;
            --) shift; ARGS=("$@"); return ;;
            *) ARGS=("$@"); return ;;
        esac
    done
}

check_args() {
    [[ $NODES =~ ^[0-9]+$ ]] && [ "$NODES" -ge 1 ] && [ "$NODES" -le 250 ] \
        || die "--nodes must be 1..250"
    [[ $RAILS =~ ^[0-9]+$ ]] && [ "$RAILS" -ge 1 ] && [ "$RAILS" -le 8 ] || die "--rails must be 1..8"
    [[ $PPN =~ ^[0-9]+$ ]] && [ "$PPN" -ge 1 ] || die "--ranks-per-node must be >= 1"
    [[ $TAG =~ ^clnet[0-9A-Za-z]*$ ]] && [ ${#TAG} -le 40 ] \
        || die "--tag must look like clnet<letters/digits>"
    [ -z "$RED" ] || [[ $RED =~ ^[0-9]+:[0-9]+:[0-9.]+$ ]] || die "--red must be MIN:MAX:PROB"
    [ -z "$RED" ] || [ "$RATE" != none ] || die "--red needs a shaped --rate"
    [ "$(id -u)" = 0 ] || die "network namespaces need root"
}

# red_port PORT: tbf at RATE with a RED child that marks ECN (instead of the plain tbf).
red_port() {
    local port=$1 min max prob burst rate
    rate=$(rail_rate 0)
    IFS=: read -r min max prob <<< "$RED"
    burst=$(( (2 * min + max) / 3072 + 1 ))
    ip netns exec "${TAG}s" tc qdisc add dev "$port" root handle 1: tbf rate "$rate" \
        burst "$BURST" latency 50ms &&
    ip netns exec "${TAG}s" tc qdisc add dev "$port" parent 1:1 handle 10: red \
        limit $(( 4 * max )) min "$min" max "$max" avpkt 1024 burst "$burst" \
        probability "$prob" bandwidth "$rate" ecn
}

# down TAG: kill what runs in the set's namespaces, delete them, remove its files. Never fails.
down() {
    local tag=$1 ns pid
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${tag}(s|n[0-9]+)$"); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    rm -rf "${STATE:?}/$tag" 2>/dev/null
    rm -f /dev/shm/*"$tag"-node* 2>/dev/null
    return 0
}

# rail_rate R: rail R's rate, the R-th of a comma list (the last one for the rails after it).
rail_rate() {
    local -a rates
    IFS=, read -r -a rates <<< "$RATE"
    local n=${#rates[@]}
    echo "${rates[$(( $1 < n ? $1 : n - 1 ))]}"
}

up() {
    local i r ns port rate
    mkdir -p "$STATE/$TAG" || die "cannot create $STATE/$TAG"
    echo "$OWNER" > "$STATE/$TAG/owner"
    echo "$NODES $RAILS $RATE" > "$STATE/$TAG/shape"
    ip netns add "${TAG}s" || return 1
    ip -n "${TAG}s" link set lo up
    for r in $(seq 0 $((RAILS - 1))); do
        ip -n "${TAG}s" link add "br$r" type bridge && ip -n "${TAG}s" link set "br$r" up || return 1
    done
    for i in $(seq 0 $((NODES - 1))); do
        ns="${TAG}n$i"
        ip netns add "$ns" && ip -n "$ns" link set lo up || return 1
        mkdir -p "$STATE/$TAG/node$i/tmp"
        for r in $(seq 0 $((RAILS - 1))); do
            port="p${i}r$r"
            ip link add "eth$r" netns "$ns" type veth peer name "$port" netns "${TAG}s" || return 1
            ip -n "${TAG}s" link set "$port" master "br$r" && ip -n "${TAG}s" link set "$port" up &&
                ip -n "$ns" addr add "10.77.$r.$((i + 1))/24" dev "eth$r" &&
                ip -n "$ns" link set "eth$r" up || return 1
            rate=$(rail_rate "$r")
            if [ "$rate" != none ]; then
                ip netns exec "$ns" tc qdisc add dev "eth$r" root tbf rate "$rate" \
                    burst "$BURST" latency 50ms &&
                if [ -n "$RED" ] && [ "$i" = 0 ] && [ "$r" = 0 ]; then
                    red_port "$port" || return 1
                else
                    ip netns exec "${TAG}s" tc qdisc add dev "$port" root tbf rate "$rate" \
                        burst "$BURST" latency 50ms || return 1
                fi
            fi
        done
    done
}

# in_node I CMD...: CMD inside node I with its hostname and TMPDIR (the rsh agent uses this).
in_node() {
    local i=$1; shift
    local tmp="$STATE/$TAG/node$i/tmp"
    [ -d "$tmp" ] || die "no node $i in set $TAG"
    exec ip netns exec "${TAG}n$i" unshare --uts env TMPDIR="$tmp" COMMLAB_NETNS_TAG="$TAG" \
        COMMLAB_NETNS_NODE="$i" /bin/sh -c 'hostname "$0"; exec "$@"' "$TAG-node$i" "$@"
}

on_signal() { trap - EXIT INT TERM; [ -n "${CHILD:-}" ] && kill -TERM "$CHILD" 2>/dev/null
              down "$TAG"; exit "$1"; }

# guarded CMD...: up, CMD in node 0 (in the background so that signals reach the trap), down.
guarded() {
    trap 'down "$TAG"' EXIT
    trap 'on_signal 130' INT
    trap 'on_signal 143' TERM
    up || { echo "netns.sh: could not create the nodes" >&2; exit 3; }
    CHILD=""
    ( in_node 0 "$@" ) &
    CHILD=$!
    wait "$CHILD"
    local rc=$?
    CHILD=""
    return $rc
}

cmd_mpirun() {
    local hostfile="$STATE/$TAG/hostfile" ifs="" btl="tcp,self" i r
    for r in $(seq 0 $((RAILS - 1))); do ifs="${ifs:+$ifs,}eth$r"; done
    [ "$PPN" -gt 1 ] && btl="tcp,vader,self"
    [ ${#ARGS[@]} -gt 0 ] || die "mpirun: give the program to run after --"
    mkdir -p "$STATE/$TAG"
    : > "$hostfile"
    for i in $(seq 0 $((NODES - 1))); do echo "10.77.0.$((i + 1)) slots=$PPN" >> "$hostfile"; done
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export COMMLAB_NETNS_DIR="$STATE"
    guarded mpirun --hostfile "$hostfile" -np $((NODES * PPN)) \
        --mca plm_rsh_agent "$HERE/netns-rsh" --mca btl "$btl" \
        --mca btl_tcp_if_include "$ifs" --mca oob_tcp_if_include eth0 "${ARGS[@]}"
}

owner_alive() {   # owner_alive TAG: true while the process that made the set is running
    local pid
    pid=$(cat "$STATE/$1/owner" 2>/dev/null) || pid=${1#clnet}
    pid=${pid%%x*}
    [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

cmd_cleanup() {
    local tags tag
    tags=$( { ip netns list 2>/dev/null | awk '{print $1}' | sed -nE 's/^(clnet[0-9A-Za-z]*)(s|n[0-9]+)$/\1/p'
              ls "$STATE" 2>/dev/null | grep -E '^clnet'; } | sort -u)
    for tag in $tags; do
        if [ "$ALL" = 1 ] || ! owner_alive "$tag"; then
            echo "netns.sh: removing stale set $tag" >&2
            down "$tag"
        fi
    done
}

sub=${1:-}; [ $# -gt 0 ] && shift
parse "$@"
OWNER=${COMMLAB_NETNS_OWNER:-$$}
[ -n "$TAG" ] || TAG=${COMMLAB_NETNS_TAG:-clnet$$}
case "$sub" in
    up) check_args; up || { down "$TAG"; die "could not create the nodes"; }; echo "$TAG" ;;
    down) [ -n "$TAG" ] || die "down: --tag TAG"; down "$TAG" ;;
    run) check_args; [ ${#ARGS[@]} -gt 0 ] || die "run: give a command after --"
         export COMMLAB_NETNS_DIR="$STATE"; guarded "${ARGS[@]}"; exit $? ;;
    mpirun) check_args; cmd_mpirun; exit $? ;;
    exec) [ ${#ARGS[@]} -ge 2 ] || die "exec: --tag TAG NODE CMD..."
          node=${ARGS[0]}; ARGS=("${ARGS[@]:1}"); in_node "$node" "${ARGS[@]}" ;;
    cleanup) cmd_cleanup ;;
    list) ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^clnet' ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
