#!/usr/bin/python3
"""same_algo_test.py: run one ring AllReduce program on MPI (4 processes) and on the
simulator (4 ranks) and require identical output: same data, same checksum."""
import os
import subprocess
import sys

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


def run(argv, env=None):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=120, env=dict(os.environ, **(env or {})))
    if proc.returncode != 0:
        print(f"same-algo: {' '.join(argv)} failed (exit {proc.returncode}):\n{proc.stderr}")
        sys.exit(1)
    return proc.stdout


def main(binary):
    cpu = run(["mpirun", "-np", "4", binary, "--backend", "cpu"], MPI_ENV)
    sim = run([binary, "--backend", "sim", "--nranks", "4", "--system", "dgx-a100"])
    if cpu != sim or "result ok" not in cpu:
        print(f"same-algo: MPI and sim differ\n--- cpu ---\n{cpu}--- sim ---\n{sim}")
        return 1
    print(f"same-algo: MPI and sim agree: {cpu.splitlines()[0]}")
    print("same-algo: 1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
