#!/usr/bin/env bash
# fuzz.sh: build the parsers' libFuzzer targets (tests/fuzz) and run each for a while.
#
#   scripts/fuzz.sh [SECONDS] [TARGET ...]     default: 20 s each, every target
#   scripts/fuzz.sh --build-only
#
# Targets: topo_smi (nvidia-smi topo -m), topo_nccl (NCCL XML), sim_system
# (datasets/systems/*.conf); the lab specs' fuzzer is tests/fuzz/fuzz_spec.py.
# Needs Debian's clang (apt-get install clang libclang-rt-14-dev). Builds into
# build/fuzz/ with ASan and UBSan; seeds come from the recorded datasets and
# tests/topo; a crash or a broken "file:line: reason" contract leaves the input
# in build/fuzz/findings/TARGET/ and makes the script exit 1. Runs niced, one
# target at a time, with one job. -timeout is wall time: niced on a busy machine a
# target can be starved, so it is generous (60 s).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${FUZZ_OUT:-build/fuzz}
CLANG=${CLANG:-clang}
SECONDS_EACH=20
BUILD_ONLY=0
if [ "${1:-}" = "--build-only" ]; then BUILD_ONLY=1; shift; fi
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then SECONDS_EACH=$1; shift; fi
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(topo_smi topo_nccl sim_system)

if ! command -v "$CLANG" >/dev/null; then
    echo "fuzz.sh: $CLANG not found (apt-get install clang libclang-rt-14-dev)" >&2
    exit 2
fi
FLAGS=(-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -Icommon)
TOPO_SRCS=(common/topo.c common/topo_smi.c common/topo_xml.c common/json.c common/result.c)
mkdir -p "$OUT"

build() {   # build TARGET SOURCES...
    local t=$1; shift
    echo "  FUZZCC $OUT/fuzz_$t"
    "$CLANG" "${FLAGS[@]}" -o "$OUT/fuzz_$t" "tests/fuzz/fuzz_$t.c" "$@" -lm
}

seed() {    # seed TARGET FILES...
    local t=$1; shift
    mkdir -p "$OUT/corpus/$t"
    for f in "$@"; do [ -f "$f" ] && cp -n "$f" "$OUT/corpus/$t/" || true; done
}

for t in "${TARGETS[@]}"; do
    case $t in
    topo_smi)
        build topo_smi "${TOPO_SRCS[@]}"
        seed topo_smi datasets/topologies/*.topo.txt tests/topo/real/* tests/topo/bad/* ;;
    topo_nccl)
        build topo_nccl "${TOPO_SRCS[@]}"
        seed topo_nccl datasets/topologies/*.xml tests/topo/real/*.xml tests/topo/bad/*.xml ;;
    sim_system)
        build sim_system common/sim/sim_system.c common/result.c
        seed sim_system datasets/systems/*.conf ;;
    *) echo "fuzz.sh: unknown target $t" >&2; exit 2 ;;
    esac
done
[ $BUILD_ONLY = 1 ] && exit 0

status=0
for t in "${TARGETS[@]}"; do
    mkdir -p "$OUT/findings/$t"
    echo "== fuzz_$t: ${SECONDS_EACH} s"
    if ! nice -n 19 "$OUT/fuzz_$t" -max_total_time="$SECONDS_EACH" -max_len=16384 \
            -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="$OUT/findings/$t/" "$OUT/corpus/$t" \
            >"$OUT/fuzz_$t.log" 2>&1; then
        echo "fuzz_$t: FAILED (see $OUT/fuzz_$t.log and $OUT/findings/$t/)"
        tail -n 30 "$OUT/fuzz_$t.log"
        status=1
    else
        grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$OUT/fuzz_$t.log" | tr '\n' ' '
        echo "corpus $(ls "$OUT/corpus/$t" | wc -l) files: ok"
    fi
done
exit $status
