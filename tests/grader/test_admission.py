"""The admission queue: shares of the machine, growing a share, and the stopped clock."""

import os
import tempfile
import threading
import time
import types
import unittest

from tests.grader import helpers  # noqa: F401  (puts gradelib on the path)
from gradelib import admission
from gradelib.timer import CheckTimer


def check(kind, backend, timed=False):
    return types.SimpleNamespace(kind=kind, backend=backend, timed=timed)


class AdmissionTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.saved = {k: os.environ.get(k) for k in ("COMMLAB_ADMISSION_DIR",
                                                      "COMMLAB_ADMISSION_CPUS")}
        os.environ["COMMLAB_ADMISSION_DIR"] = self.dir.name
        os.environ["COMMLAB_ADMISSION_CPUS"] = "2"

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.dir.cleanup()

    def test_units_by_kind(self):
        self.assertEqual(admission.units_for(check("performance", "cpu")), (2, True))
        self.assertEqual(admission.units_for(check("performance", "sim")), (1, False))
        self.assertEqual(admission.units_for(check("correctness", "cpu")), (1, False))
        # A check whose measurements a performance check scores is timed alone too.
        self.assertEqual(admission.units_for(check("correctness", "cpu", timed=True)), (2, True))
        self.assertEqual(admission.units_for(check("correctness", "sim", timed=True)), (1, False))
        self.assertEqual(admission.units_for(check("decision", "cpu")), (2, False))
        self.assertEqual(admission.units_for(check("correctness", "net")), (2, False))

    def test_grow_waits_for_the_other_share_and_blocks_no_one(self):
        a, b = admission.Ticket(1, False, "a"), admission.Ticket(1, False, "b")
        self.assertLess(a.acquire(), 0.5)
        b.acquire()          # two one-unit checks side by side
        done = []
        t = threading.Thread(target=lambda: done.append(a.grow(admission.MPI_UNITS)))
        t.start()
        time.sleep(0.6)
        self.assertEqual(done, [], "a grew while b still held its unit")
        b.release()
        t.join(5)
        self.assertEqual(len(done), 1)
        self.assertGreater(done[0], 0.3)
        self.assertEqual(a.units, 2)
        # Now a holds the machine: a newcomer waits until it is given back.
        c = admission.Ticket(1, False, "c")
        late = []
        t = threading.Thread(target=lambda: late.append(c.acquire()))
        t.start()
        time.sleep(0.6)
        self.assertEqual(late, [])
        a.release()
        t.join(5)
        self.assertEqual(len(late), 1)
        c.release()

    def test_grow_is_free_when_the_share_is_enough(self):
        a = admission.Ticket(2, False, "a")
        a.acquire()
        self.assertEqual(a.grow(2), 0.0)
        a.release()
        self.assertEqual(admission.Ticket(1, False).grow(2), 0.0)   # never acquired


class StoppedClockTest(unittest.TestCase):
    def test_deadline_moves_on_by_the_stopped_time(self):
        timer = CheckTimer()
        timer.deadline, timer.limit = time.monotonic() + 10, 10   # no alarm: not armed
        with timer.stopped():
            time.sleep(0.3)
        self.assertGreater(timer.remaining(), 9.8)
        self.assertEqual(timer.limit, 10)
        timer.disarm()


if __name__ == "__main__":
    unittest.main()
