"""GPU checks where the GPU is the only backend: gates of absent backends, exit status 4,
filters that pull parents in, and another build folder."""

import os
import unittest

from tests.grader.helpers import HAVE_MPI, REPO, grade_json, make_root  # puts grader/ on the path

from gradelib.build import plan  # noqa: E402
from gradelib.select import run_order, select  # noqa: E402
from gradelib.spec import load_lab  # noqa: E402


class NoCpuBackendTest(unittest.TestCase):
    """A GPU machine without MPI: the cpu gate is skipped, the GPU check still runs."""

    @classmethod
    def setUpClass(cls):
        cls.root = make_root(cls.addClassCleanup)
        cls.res, cls.data, cls.tests = grade_json(cls.root, "gpuready", "gpu.*",
                                                  backends="sim,gpu=1")

    def test_gate_of_an_absent_backend_does_not_block(self):
        self.assertNotIn("cpu.build", self.tests)      # run for the order, not scored
        self.assertEqual(self.tests["gpu.gated"]["verdict"], "PASS", self.res.stdout)
        self.assertEqual(self.tests["gpu.gated"]["score"], 2)

    def test_exit_status_4_of_the_lab_program_is_a_skip(self):
        t = self.tests["gpu.unsupported"]
        self.assertEqual(t["verdict"], "SKIP", self.res.stdout)
        self.assertIn("no usable GPU", t["output"])

    def test_exit_status_4_of_another_command_is_a_failure(self):
        self.assertEqual(self.tests["gpu.other_four"]["verdict"], "FAIL")


class SelectedBackendTest(unittest.TestCase):
    """--backend gpu is the user's choice: the gate is not run, and its child is skipped."""

    def test_backend_option_still_gates(self):
        root = make_root(self.addCleanup)
        _, _, tests = grade_json(root, "gpuready", "gpu.gated", "--backend", "gpu",
                                 backends="cpu,sim,gpu=1" if HAVE_MPI else "sim,gpu=1")
        self.assertEqual(tests["gpu.gated"]["verdict"], "SKIP")
        self.assertIn("parent cpu.build", tests["gpu.gated"]["output"])


class SelectionTest(unittest.TestCase):
    """gpu-verify.sh selects 'gpu.*': every lab's GPU checks come with their parents."""

    def test_gpu_filter_pulls_parents_in(self):
        root = os.path.join(REPO, "tests", "grader", "fixtures")
        lab = load_lab(root, "gpuready")
        ids = select(lab, ["gpu.*"])
        self.assertNotIn("cpu.build", ids)
        order = [c.id for c in run_order(lab, set(ids))]
        self.assertLess(order.index("cpu.build"), order.index("gpu.gated"))


class BuildFolderTest(unittest.TestCase):
    def test_another_build_folder(self):
        os.environ["COMMLAB_GRADE_BUILD"] = "build-gpu"
        self.addCleanup(os.environ.pop, "COMMLAB_GRADE_BUILD", None)
        argv, program = plan("/r", "lab05", "lab05", solution=True)
        self.assertIn("BUILD=build-gpu", argv)
        self.assertEqual(program, "/r/build-gpu/solutions/lab05/lab05")
        _, official = plan("/r", "lab05", "lab05", solution=True, official=True)
        self.assertEqual(official, "/r/build/solutions/lab05/lab05")


if __name__ == "__main__":
    unittest.main()
