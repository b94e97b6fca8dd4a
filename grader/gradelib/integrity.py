"""An early look at the student's compiled file: calls the student's program may not make.

The defences are elsewhere (docs/integrity.md): the student's code runs in its own program,
linked with nothing but libcommlab-student.a and libc, under a system-call allow list, as
another user. A forbidden call there ends the program at run time with the call's name.
This scan says the same before anything runs, so that a student who reaches for fopen() or
fork() learns why at once. Symbol versions (dlsym@GLIBC_2.34) are stripped before names are
compared."""

import os
import subprocess

# Calls the student's program may not make, and what each would have done.
DENIED_CALLS = {
    **dict.fromkeys(["dlopen", "dlmopen", "dlsym", "dlvsym", "dl_iterate_phdr"],
                    "look up code by name (there is nothing to find: no MPI, no NCCL)"),
    **dict.fromkeys(["syscall"], "make raw system calls"),
    **dict.fromkeys(["ptrace", "process_vm_readv", "process_vm_writev"],
                    "read or write another process's memory"),
    **dict.fromkeys(["fork", "vfork", "clone", "execve", "execv", "execvp", "execvpe", "execl",
                     "execlp", "execle", "fexecve", "system", "popen", "posix_spawn",
                     "posix_spawnp"], "start other processes"),
    **dict.fromkeys(["clock_settime", "settimeofday", "adjtime", "adjtimex", "clock_adjtime",
                     "ntp_adjtime", "stime"], "change the clock"),
    **dict.fromkeys(["fopen", "fopen64", "open", "open64", "openat", "creat", "opendir"],
                    "open files (the harness gives your functions their inputs)"),
}


def normalize(name):
    """A symbol's name without its version: 'dlsym@GLIBC_2.34' -> 'dlsym'."""
    return name.split("@", 1)[0]


def student_object_for(program):
    """The object file of the student's source behind the harness program, in the layout of
    mk/labs.mk: build/labs/L/L -> build/obj/student-side/labs/L/L.o, build/solutions/L/L ->
    build/obj/student-side/solutions/L/L.o, OUT/L (--source) -> OUT/L-student.o."""
    program = os.path.abspath(program)
    lab_dir = os.path.dirname(program)
    kind_dir = os.path.dirname(lab_dir)
    build = os.path.dirname(kind_dir)
    name = os.path.basename(program)
    if os.path.basename(kind_dir) in ("labs", "solutions"):
        return os.path.join(build, "obj", "student-side", os.path.basename(kind_dir), name,
                            name + ".o")
    return program + "-student.o"


def undefined(obj):
    """The normalised names the object file needs from elsewhere (nm -u), or None when nm
    cannot read it."""
    try:
        r = subprocess.run(["nm", "-u", obj], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    return {normalize(line.split()[-1]) for line in r.stdout.splitlines() if line.strip()}


def scan(program, root, allow=()):
    """Returns a list of problems with the student's object file behind program (empty when
    it is clean, or when there is no object file)."""
    obj = student_object_for(program)
    if not os.path.isfile(obj):
        return []
    names = (undefined(obj) or set()) - set(allow)
    return [f"calls {n}() (it would {DENIED_CALLS[n]})" for n in sorted(names)
            if n in DENIED_CALLS]
