#!/bin/sh
# student_path.sh: speed of the student-code path (p2p_sim): a ring AllReduce written as student
# code (lab05's reference), every rank a simulated coroutine in the harness, every operation
# proxied from the student program. Usage: bench/student_path.sh BUILD RANKS...
# One run = 4 collective calls (a checked warm-up and one timed call, for the library's ring
# and for the student's). Goal: a 1,024-rank ring in <= 10 s and <= 200 MB.
build=$1
shift
bin=$build/solutions/lab05/lab05
if [ ! -x "$bin" ]; then
    echo "student path: $bin is not built (make solution-lab05)"
    exit 0
fi
echo
echo "Student-code path: lab05 ring AllReduce, 64 MiB, dgx-a100, measured in this run"
echo
echo "| ranks | run of 4 calls (s) | per call (s) | max RSS (MB) | goal (1,024 ranks) |"
echo "|---|---|---|---|---|"
for n in "$@"; do
    out=$({ /usr/bin/time -f "%e %M" "$bin" bench --backend sim --nranks "$n" --coll allreduce \
        --bytes 64M -r 1 -i 1 >/dev/null; } 2>&1 | tail -1)
    set -- $out
    per=$(echo "$1" | awk '{printf "%.2f", $1 / 4}')
    goal="-"
    if [ "$n" = 1024 ]; then
        goal=$(awk -v s="$per" -v m="$2" 'BEGIN {printf "%s s, %s MB", \
            (s <= 10 ? "met" : "MISSED"), (m / 1024 <= 200 ? "met" : "MISSED")}')
    fi
    echo "| $n | $1 | $per | $(($2 / 1024)) | $goal |"
done
