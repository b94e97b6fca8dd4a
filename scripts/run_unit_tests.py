#!/usr/bin/python3
"""run_unit_tests.py: run each cmocka test binary, show its outcome, total them.

cmocka prints its summary on stderr and exits with the number of failed
tests, so both streams are merged and the exit status is what counts.
"""
import subprocess
import sys


def main(binaries):
    passed = failed = 0
    for binary in binaries:
        proc = subprocess.run([binary], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=300)
        ok_lines = [l for l in proc.stdout.splitlines() if l.startswith("[       OK ]")]
        bad_lines = [l for l in proc.stdout.splitlines() if l.startswith("[  FAILED  ]")
                     or l.startswith("[  ERROR   ]") or l.startswith("[   LINE   ]")]
        if proc.returncode == 0:
            passed += len(ok_lines)
            print(f"  UNIT   {binary}: {len(ok_lines)} passed")
        else:
            nfail = proc.returncode if proc.returncode > 0 else 1
            failed += nfail
            passed += len(ok_lines)
            print(f"  UNIT   {binary}: FAILED (exit {proc.returncode})")
            print("\n".join(bad_lines or proc.stdout.splitlines()[-20:]))
    print(f"unit: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
