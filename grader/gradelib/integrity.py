"""Static checks of the student's compiled file that every lab gets: no symbol lookups, raw
system calls, code run before main, replaced library functions or clock tampering."""

import os
import re
import subprocess

# Calls no lab's student code needs, and what each would let it do.
DENIED_CALLS = {
    **dict.fromkeys(["dlopen", "dlmopen", "dlsym", "dlvsym", "dladdr", "dladdr1", "dlinfo",
                     "dl_iterate_phdr"], "look up functions by name, past the link check"),
    **dict.fromkeys(["syscall"], "make raw system calls"),
    **dict.fromkeys(["ptrace", "process_vm_readv", "process_vm_writev"],
                    "read or write another process's memory"),
    **dict.fromkeys(["execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
                     "fexecve", "system", "popen", "posix_spawn", "posix_spawnp"],
                    "run other programs"),
    **dict.fromkeys(["clock_settime", "settimeofday", "adjtime", "adjtimex", "clock_adjtime",
                     "ntp_adjtime", "stime"], "change the clock"),
    **dict.fromkeys(["mprotect", "pkey_mprotect"], "patch code in memory"),
}
DENIED_PREFIXES = {"PMPI_": "bypass MPI's profiling layer", "pnccl": "bypass NCCL's API"}
INIT_SECTIONS = (".init_array", ".fini_array", ".ctors", ".dtors", ".preinit_array")
_SYSCALL_INSN = re.compile(r"\t(syscall|sysenter|int\s+\$0x80)\b")


def student_object_for(program):
    """The object file of the student's source behind the binary program, in the
    layout of mk/labs.mk: build/labs/L/L -> build/obj/labs/L/L.o, build/solutions/L/L
    -> build/obj/solutions/L/L.o, OUT/L (--source) -> OUT/L.o."""
    program = os.path.abspath(program)
    lab_dir = os.path.dirname(program)
    kind_dir = os.path.dirname(lab_dir)
    build = os.path.dirname(kind_dir)
    name = os.path.basename(program)
    if os.path.basename(kind_dir) in ("labs", "solutions"):
        return os.path.join(build, "obj", os.path.basename(kind_dir), name, name + ".o")
    return program + ".o"


def _tool(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def _symbols(text):
    """(type, name) pairs of nm output."""
    out = []
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) >= 2 and len(parts[-2]) == 1:
            out.append((parts[-2], parts[-1]))
    return out


_LIB_CACHE = {}


def library_symbols(program, root):
    """Names defined by the shared libraries program links and by libcommlab.a."""
    key = (program, root)
    if key in _LIB_CACHE:
        return _LIB_CACHE[key]
    names = set()
    libs = []
    ldd = _tool(["ldd", program]) or ""
    for line in ldd.splitlines():
        m = re.search(r"=>\s+(/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if m and os.path.isfile(m.group(1)):
            libs.append(m.group(1))
    for lib in libs:
        names |= {n for t, n in _symbols(_tool(["nm", "-D", "--defined-only", lib]))}
    for bdir in ("build", "build-san"):
        archive = os.path.join(root, bdir, "lib", "libcommlab.a")
        if os.path.isfile(archive):
            names |= {n for t, n in _symbols(_tool(["nm", "-g", "--defined-only", archive]))}
            break
    names = {n.split("@")[0] for n in names}
    _LIB_CACHE[key] = names
    return names


def scan(program, root, allow=()):
    """Returns a list of problems with the student's object file behind program (empty when
    it is clean, or when there is no object file: a lab that is not built from C)."""
    obj = student_object_for(program)
    if not os.path.isfile(obj):
        return []
    allow = set(allow)
    problems = []
    undefined = [n for t, n in _symbols(_tool(["nm", "-u", obj])) if n not in allow]
    for name in sorted(set(undefined)):
        why = DENIED_CALLS.get(name) or next(
            (w for p, w in DENIED_PREFIXES.items() if name.startswith(p)), None)
        if why:
            problems.append(f"calls {name}() (it would {why})")
    defined = {n for t, n in _symbols(_tool(["nm", "-g", "--defined-only", obj]))
               if t in "TDBRWVCGS" and n not in allow}
    shadowed = sorted(defined & library_symbols(program, root))
    for name in shadowed:
        problems.append(f"defines {name}, which replaces the library's {name} for the whole "
                        f"program (make it static or rename it)")
    sections = _tool(["readelf", "-S", "-W", obj]) or ""
    if any(n.startswith("__asan_") for n in undefined):
        # ASan's own module constructor and destructor (a `make SAN=1` build)
        sections = re.sub(r"\.(init|fini)_array\.00099\b", "", sections)
    for sec in INIT_SECTIONS:
        if re.search(r"\s" + re.escape(sec) + r"(\.\S*)?\s", sections):
            problems.append(f"has a {sec} section: code that runs before main() or after exit")
            break
    disasm = _tool(["objdump", "-d", "--no-show-raw-insn", obj]) or ""
    m = _SYSCALL_INSN.search(disasm)
    if m:
        problems.append(f"contains a '{m.group(1)}' instruction (raw system call)")
    return problems
