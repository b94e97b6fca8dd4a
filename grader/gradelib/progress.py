"""Progress lines on stderr: '[3/7] cpu.fit ........ PASS 10/10 (0.4 s)'."""

from .verdicts import PASS


def fmt_points(x):
    """Returns x without trailing zeros: 10, 7.5, 3.33."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


class Progress:
    """Writes one line per check. Without -v the start and end share one line (the end is
    appended when the check finishes); with -v each gets its own line, because the
    commands' output comes in between."""

    def __init__(self, stream, total, width, verbose=False):
        self.stream = stream
        self.total = total
        self.width = max(width, 8) + 2
        self.verbose = verbose

    def _head(self, i, chk):
        n = len(str(self.total))
        return f"[{i:>{n}}/{self.total}] {chk.id} " + "." * (self.width - len(chk.id))

    def start(self, i, chk):
        if self.verbose:
            self.stream.write(f"{self._head(i, chk)} running ({chk.title})\n")
        else:
            self.stream.write(self._head(i, chk) + " ")
        self.stream.flush()

    def queued(self, position):
        """Says, on the check's line, that it waits for the machine (admission.py)."""
        ahead = f"{position} ahead" if position else "the machine is busy"
        self.stream.write(f"queued ({ahead}) ")
        self.stream.flush()

    def end(self, i, out):
        pts = ""
        if out.check.points or out.verdict == PASS:
            pts = f" {fmt_points(out.score)}/{fmt_points(out.check.points)}"
        if out.verdict == "SKIP":
            pts = ""
        note = "" if out.scored else " [dependency, not scored]"
        waited = f", queued {out.waited:.1f} s" if getattr(out, "waited", 0) >= 0.5 else ""
        line = f"{out.verdict}{pts} ({out.elapsed:.1f} s{waited}){note}\n"
        if self.verbose:
            line = f"{self._head(i, out.check)} {line}"
        self.stream.write(line)
        self.stream.flush()
