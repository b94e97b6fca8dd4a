#!/usr/bin/env bash
# gpu-verify.sh: the prepared run for a machine with a GPU. It records what the machine has,
# which build ran, the gpu backend's smoke test and every GPU check of every lab's reference
# that the machine can run, each row with its verdict and reason, in one folder to copy back.
#
#   scripts/gpu-verify.sh --prepare    on a build machine, before: build-gpu/, the binaries
#                                      of a build without MPI (the GPU machine may have no
#                                      Open MPI, hwloc or mpicc), with its commit
#   scripts/gpu-verify.sh [OUTDIR]     on the GPU machine: OUTDIR (default build/gpu-verify)
#                                      and OUTDIR.tar.gz
#
# The build it uses: one made there where mpicc exists (several GPUs need mpirun), else the
# prepared build-gpu/ if its programs load, else one made there without MPI
# (GPU_VERIFY_BUILD=prepared or =here takes only that one). NCCL comes from
# NCCL_HOME, CUDA's own folder, or the pip wheel nvidia-nccl-cu13 of the machine's Python.
# Everything is bounded: GPU_VERIFY_BUDGET seconds in all (default 450), each step less.
# GPU_VERIFY_LABS="lab05 lab12" narrows the labs; GPU_VERIFY_PREPARED names another folder
# than build-gpu (tests prepare one over a stand-in for CUDA with GPU_FAKE=1).
# Exit status: 0 when nothing failed (skips included), 1 when a row failed, 2 bad usage.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
top=$PWD
start=$(date +%s)
budget=${GPU_VERIFY_BUDGET:-450}
jobs=$(nproc 2>/dev/null || echo 2)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

left() { echo $((budget - ($(date +%s) - start))); }
# bounded SECONDS CMD...: run CMD for at most SECONDS (and never past the budget)
bounded() {
    local s=$1 l
    shift
    l=$(($(left) - 10))
    [ "$s" -gt "$l" ] && s=$l
    [ "$s" -lt 5 ] && s=5
    timeout --kill-after=5 "$s" "$@"
}

prepared=${GPU_VERIFY_PREPARED:-build-gpu}
solution_labs() {
    if [ -n "${GPU_VERIFY_LABS:-}" ]; then
        echo "$GPU_VERIFY_LABS" | tr ' ,' '\n\n' | grep .
    else
        ls -d solutions/lab[0-9][0-9] 2>/dev/null | xargs -n1 basename 2>/dev/null
    fi
}

# --- prepare: a build without MPI, binaries only --------------------------------------------
if [ "${1:-}" = "--prepare" ]; then
    b=$prepared
    rm -rf "$b"
    mkdir -p "$b"
    echo "building $b (MPI=no) ..."
    if ! make -s -j"$jobs" BUILD=$b MPI=no lib cli gpu-smoke >"$b/build.log" 2>&1; then
        tail -20 "$b/build.log"
        echo "gpu-verify: the library did not build: see $b/build.log" >&2
        exit 1
    fi
    if ! grep -q '"build":{"gpu":true' <("$b/bin/commlab" doctor --json 2>/dev/null); then
        echo "gpu-verify: this build has no GPU backend (nvcc or NCCL missing here)" >&2
        exit 1
    fi
    : >"$b/BUILT"
    for lab in $(solution_labs); do
        if make -s -j"$jobs" BUILD=$b MPI=no "solution-$lab" >>"$b/build.log" 2>&1; then
            echo "$lab built" >>"$b/BUILT"
        else
            echo "$lab failed (build.log)" >>"$b/BUILT"
        fi
    done
    commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
    git diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
    echo "$commit" >"$b/COMMIT"
    # The harness links libseccomp dynamically: its library travels too, used only where
    # the machine has none.
    mkdir -p "$b/runtime"
    seccomp=$(ldd "$b/bin/commlab" | awk '/libseccomp/ {print $3}')
    [ -n "$seccomp" ] && cp -L "$seccomp" "$b/runtime/"
    rm -rf "$b/obj" "$b/lib"
    cat "$b/BUILT"
    echo "prepared $b: $(du -sh "$b" | cut -f1), commit $commit"
    exit 0
fi

case "${1:-}" in -*) echo "usage: $0 [--prepare | OUTDIR]" >&2; exit 2 ;; esac
out=${1:-build/gpu-verify}
case "$out" in /*) ;; *) out=$top/$out ;; esac
rm -rf "$out" "$out.tar.gz"
mkdir -p "$out"
: >"$out/rows.tsv"
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/progress.log" >&2; }
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$out/rows.tsv"; }

# --- CUDA and NCCL -----------------------------------------------------------------------------
export CUDA_HOME=${CUDA_HOME:-$(sh mk/find-cuda.sh)}
if [ -z "${NCCL_HOME:-}" ] && [ ! -f "$CUDA_HOME/include/nccl.h" ]; then
    NCCL_HOME=$(sh mk/find-nccl.sh)
fi
export NCCL_HOME=${NCCL_HOME:-}
[ -n "$NCCL_HOME" ] && export LD_LIBRARY_PATH="$NCCL_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CUDA_DEVICE_ORDER=PCI_BUS_ID

# --- inventory ---------------------------------------------------------------------------------
say "inventory"
inv=$out/inventory.txt
ngpus=$(bounded 20 nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
commit=$(git rev-parse HEAD 2>/dev/null || echo "")
[ -n "$commit" ] && ! git diff --quiet HEAD 2>/dev/null && commit="$commit (with uncommitted changes)"
[ -z "$commit" ] && [ -f "$prepared/COMMIT" ] && commit="$(cat "$prepared/COMMIT") (from $prepared)"
driver=$(bounded 20 nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
nvcc_line=$("$CUDA_HOME/bin/nvcc" --version 2>/dev/null | grep -i release)
nccl_ver=$(grep -hE '^#define NCCL_(MAJOR|MINOR|PATCH) ' "${NCCL_HOME:-$CUDA_HOME}/include/nccl.h" \
    2>/dev/null | awk '{printf "%s%s", sep, $3; sep="."}')
wheel=$("$PY" -c 'import importlib.metadata as m; print(m.version("nvidia-nccl-cu13"))' 2>/dev/null ||
    python3 -c 'import importlib.metadata as m; print(m.version("nvidia-nccl-cu13"))' 2>/dev/null)
{
    echo "# commit: ${commit:-unknown}"
    echo "# machine: $(uname -srm), $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(nproc) cores, $(free -g 2>/dev/null | awk '/^Mem:/ {print $2 " GiB"}')"
    echo "# gpus: $ngpus $(bounded 20 nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1)"
    echo "# driver: ${driver:-none}"
    echo "# cuda: ${nvcc_line:-no nvcc} at $CUDA_HOME"
    echo "# nccl: headers ${nccl_ver:-none} at ${NCCL_HOME:-$CUDA_HOME}${wheel:+, wheel nvidia-nccl-cu13 $wheel}"
    echo "# mpi: $(command -v mpirun || echo none); hwloc: $(command -v hwloc-info || echo none)"
    for c in "nvidia-smi -L" "nvidia-smi" "nvidia-smi topo -m" \
             "nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,compute_cap --format=csv" \
             "$CUDA_HOME/bin/nvcc --version" "ldd --version" "cat /etc/os-release" "lscpu"; do
        echo
        echo "\$ $c"
        bounded 20 $c 2>&1 | head -60
    done
} >"$inv" 2>&1

# --- the build ---------------------------------------------------------------------------------
loads() { [ -x "$1/bin/commlab" ] && "$1/bin/commlab" doctor >/dev/null 2>&1; }
has_gpu_backend() { "$1/bin/commlab" doctor --json 2>/dev/null | grep -q '"build":{"gpu":true'; }
build_here() { # DIR MPI
    say "building $1 here (MPI=$2)"
    {
        echo "\$ make BUILD=$1 MPI=$2 NCCL_HOME=$NCCL_HOME lib cli gpu-smoke solution-..."
        bounded 240 make -s -j"$jobs" BUILD="$1" MPI="$2" lib cli gpu-smoke &&
            bounded 240 make -s -k -j"$jobs" BUILD="$1" MPI="$2" \
                $(solution_labs | sed 's/^/solution-/')
    } >>"$out/build.log" 2>&1
    loads "$1" && has_gpu_backend "$1"
}
bdir=""
choice=${GPU_VERIFY_BUILD:-auto}
if [ "$choice" != prepared ] && command -v mpicc >/dev/null 2>&1 &&
    build_here build-gpu-here auto; then
    bdir=build-gpu-here
    how="built here with MPI"
fi
if [ -z "$bdir" ] && [ "$choice" != here ] && [ -f "$prepared/COMMIT" ]; then
    if ! loads "$prepared" && [ -d "$prepared/runtime" ]; then
        export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$top/$prepared/runtime"
    fi
    if loads "$prepared"; then
        bdir=$prepared
        how="prepared $prepared (commit $(cat "$prepared/COMMIT"), no MPI)"
    else
        echo "$prepared does not load here:" >>"$out/build.log"
        ldd "$prepared/bin/commlab" >>"$out/build.log" 2>&1
    fi
fi
if [ -z "$bdir" ] && [ "$choice" != prepared ] && build_here build-gpu-here no; then
    bdir=build-gpu-here
    how="built here without MPI"
fi
echo "# build: ${how:-none: see build.log}" >>"$inv"
if [ -n "$bdir" ]; then
    for f in "$bdir/bin/commlab" "$bdir/tests/gpu_smoke" "$bdir"/solutions/*/lab[0-9][0-9]; do
        [ -f "$f" ] && { echo "\$ ldd $f"; ldd "$f" 2>&1; echo; }
    done >"$out/ldd.txt"
    "$bdir/bin/commlab" doctor >"$out/doctor.txt" 2>&1
    cat "$bdir/BUILT" >>"$out/build.log" 2>/dev/null
else
    row build - ERROR "" "no build of the GPU backend could be made or loaded here (build.log)"
fi

# --- the smoke test: every entry point of the backend on one GPU ------------------------------
if [ -n "$bdir" ] && [ -x "$bdir/tests/gpu_smoke" ]; then
    say "gpu smoke test"
    bounded 150 "$bdir/tests/gpu_smoke" --json "$out/smoke.json" --deadline 120 >"$out/smoke.txt" 2>&1
    rc=$?
    [ $rc -eq 124 ] && row smoke gpu_smoke TIMEOUT "" "did not finish in 150 s (smoke.txt)"
    [ ! -f "$out/smoke.json" ] && [ $rc -ne 124 ] &&
        row smoke gpu_smoke ERROR "" "exit $rc without a record: $(tail -1 "$out/smoke.txt")"
fi

# --- every lab's GPU checks (the reference solutions) ------------------------------------------
if [ -n "$bdir" ]; then
    say "planning the GPU checks for $ngpus GPU(s)"
    "$PY" scripts/gpu_verify.py plan "$ngpus" "$out" $(solution_labs) >"$out/plan.txt" \
        2>>"$out/progress.log"
    while read -r lab limit checks; do
        if [ ! -x "$bdir/solutions/$lab/$lab" ]; then
            for c in $checks; do row "$lab" "$c" ERROR "" "the reference did not build (build.log)"; done
            continue
        fi
        if [ "$(left)" -lt 40 ]; then
            for c in $checks; do row "$lab" "$c" SKIP "" "not run: the run's time budget was spent"; done
            continue
        fi
        say "grading $lab: $checks"
        COMMLAB_GRADE_BUILD=$bdir bounded "$limit" "$PY" grader/grade.py "$lab" $checks \
            --solution --no-install --no-build --json "$out/$lab.json" >"$out/$lab.log" 2>&1
        rc=$?
        if [ ! -f "$out/$lab.json" ]; then
            why="the grader stopped (exit $rc$([ $rc -eq 124 ] && echo ", over $limit s")): $lab.log"
            for c in $checks; do row "$lab" "$c" ERROR "" "$why"; done
        fi
    done <"$out/plan.txt"
fi

say "summary"
"$PY" scripts/gpu_verify.py summarize "$out" >/dev/null
tar czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
cat "$out/summary.md"
echo "record: $out (and $out.tar.gz), $(($(date +%s) - start)) s"
! grep -qE '^\| [^|]+ \| [^|]+ \| (FAIL|ERROR|TIMEOUT|CRASH|BUILD-ERROR)' "$out/summary.md"
