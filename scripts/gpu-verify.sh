#!/usr/bin/env bash
# gpu-verify.sh: run every lab's GPU checks (reference solutions) on a GPU machine
# and write a Markdown summary, the material of docs/verification.md.
#
#   scripts/gpu-verify.sh [OUTDIR]      (default: build/gpu-verify)
#
# It builds with nvcc and NCCL, prints what the machine has (commlab doctor,
# nvidia-smi topo -m), then grades each lab's reference with --backend gpu.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/gpu-verify}
mkdir -p "$out"
summary="$out/summary.md"

make -s -j"$(nproc)" all >"$out/build.log" 2>&1 || { echo "build failed: see $out/build.log"; exit 1; }
{
    echo "# GPU verification, $(date -u +%Y-%m-%d)"
    echo
    echo '```'
    build/bin/commlab doctor
    nvidia-smi -L 2>&1
    nvidia-smi topo -m 2>&1
    echo '```'
    echo
    echo "| lab | check | verdict | points | metrics |"
    echo "|---|---|---|---|---|"
} >"$summary"

for spec in grader/labs/lab[0-9][0-9].py; do
    lab=$(basename "$spec" .py)
    /usr/bin/python3 grader/grade.py "$lab" --solution --no-install --backend gpu \
        --json "$out/$lab.json" >"$out/$lab.log" 2>&1
    /usr/bin/python3 - "$out/$lab.json" "$lab" >>"$summary" <<'PY'
import json, sys
path, lab = sys.argv[1], sys.argv[2]
try:
    res = json.load(open(path))
except (OSError, ValueError):
    print(f"| {lab} | - | no result | - | see {lab}.log |")
    sys.exit()
for t in res["tests"]:
    metrics = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in t.get("metrics", {}).items() if not isinstance(v, list))
    print(f"| {lab} | {t['id']} | {t.get('verdict', t['status'])} | "
          f"{t['score']}/{t.get('points', t['max_score'])} | {metrics} |")
PY
done
echo "summary: $summary"
