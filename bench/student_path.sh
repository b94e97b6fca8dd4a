#!/bin/sh
# student_path.sh: speed of the student-code path (p2p_sim): a ring AllReduce written as student
# code (lab05's reference), every rank a simulated coroutine, every send proxied from the student
# program. Usage: bench/student_path.sh BUILD RANKS...   Goal: 1,024 ranks in <= 10 s, <= 200 MB.
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
echo "| ranks | wall (s) | max RSS (MB) | goal |"
echo "|---|---|---|---|"
for n in "$@"; do
    out=$( { /usr/bin/time -f "%e %M" "$bin" bench --backend sim --nranks "$n" --coll allreduce \
        --bytes 64M >/dev/null; } 2>&1 | tail -1)
    set -- $out
    goal="-"
    [ "$n" = 1024 ] && goal="<= 10 s, <= 200 MB"
    echo "| $n | $1 | $(($2 / 1024)) | $goal |"
done
