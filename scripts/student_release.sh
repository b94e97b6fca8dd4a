#!/bin/bash
# student_release.sh: the student copy of the course: tracked files minus solutions and
# hidden material, with a labs/ tree that builds and grades the skeletons.
#
#   scripts/student_release.sh [OUT]        (default OUT: build/student-release)
#
# Left out: solutions/ (the references), tests/labs/ and tests/exploits/ (tests built on
# the references),
# .ci/, grader/cluster.conf (the site's own settings) and anything listed in
# .release-exclude (one git pathspec per line). Grader data such as tests/topo/expected/
# stays: specs read it, and the sandbox hides it from the student's program.
# The release's Makefile still works: solution-* targets simply have no labs to build.
# Exits non-zero when OUT already exists or a solution file would leak.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/student-release}
[ -e "$OUT" ] && { echo "student_release.sh: $OUT exists; remove it first" >&2; exit 2; }
command -v git >/dev/null || { echo "student_release.sh: needs git" >&2; exit 2; }

EXCLUDE=(':!solutions' ':!tests/labs' ':!tests/exploits' ':!.ci' ':!grader/cluster.conf')
if [ -f .release-exclude ]; then
    while IFS= read -r line; do
        [ -n "$line" ] && [ "${line#\#}" = "$line" ] && EXCLUDE+=(":!$line")
    done < .release-exclude
fi

mkdir -p "$OUT"
# Tracked files plus new ones not ignored (the working tree as the course stands).
git ls-files -z --cached --others --exclude-standard -- . "${EXCLUDE[@]}" \
    | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
    | tar --null -T - -cf - | tar -xf - -C "$OUT"

if [ -d "$OUT/solutions" ] || grep -rl "BEGIN SOLUTION" "$OUT/labs" >/dev/null 2>&1; then
    echo "student_release.sh: solution material leaked into $OUT" >&2
    exit 1
fi
echo "student release in $OUT ($(find "$OUT" -type f | wc -l) files)"
