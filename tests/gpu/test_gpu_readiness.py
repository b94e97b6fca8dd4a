"""GPU readiness on a machine without a GPU (make gpu-test).

Without a GPU every GPU path must end at once with a one-line reason and exit status 4
(skipped). Over the host stand-in for CUDA and NCCL (tests/gpu/fake_cuda.c, a build in
$COMMLAB_FAKE_BUILD made with GPU_FAKE=1) the gpu backend's own logic runs: the smoke
program, lab05 on one GPU through the grader, and scripts/gpu-verify.sh from --prepare to
its record.
"""

import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, "build")
FAKE = os.path.join(REPO, os.environ.get("COMMLAB_FAKE_BUILD", "build-fake"))
FAKE_BIN = os.path.join(REPO, "tests", "gpu", "bin")       # a one-GPU nvidia-smi


def _fake_has_gpu_backend():
    """True when the stand-in build exists and has the gpu backend (nvcc was found)."""
    doctor = os.path.join(FAKE, "bin", "commlab")
    if not os.path.isfile(doctor):
        return False
    res = subprocess.run([doctor, "doctor", "--json"], capture_output=True, text=True)
    try:
        return json.loads(res.stdout)["build"]["gpu"]
    except (ValueError, KeyError):
        return False


HAVE_CUDA_BUILD = _fake_has_gpu_backend()


def run(argv, env=None, timeout=120):
    full = dict(os.environ)
    full.update(env or {})
    t0 = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True, env=full, cwd=REPO,
                         timeout=timeout)
    res.seconds = time.monotonic() - t0
    return res


class NoGpuHere(unittest.TestCase):
    """The real build on this machine: no GPU, so every GPU path skips at once."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gpu-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_smoke_program_skips_with_the_reason(self):
        path = os.path.join(self.tmp, "smoke.json")
        res = run([os.path.join(BUILD, "tests", "gpu_smoke"), "--json", path])
        self.assertEqual(res.returncode, 4, res.stdout + res.stderr)
        self.assertLess(res.seconds, 20)
        with open(path) as f:
            data = json.load(f)
        self.assertEqual(data["status"], "unsupported")
        self.assertRegex(data["error"], r"no usable GPU|no GPU backend")
        self.assertIn("# skipped: ", res.stdout)

    def test_lab_program_exits_4_and_says_why(self):
        program = os.path.join(BUILD, "solutions", "lab05", "lab05")
        if not os.path.isfile(program):
            self.skipTest("make solution-lab05 first")
        path = os.path.join(self.tmp, "r.json")
        res = run([program, "verify", "--backend", "gpu", "--json", path, "--deadline", "30"])
        self.assertEqual(res.returncode, 4, res.stderr)
        with open(path) as f:
            data = json.load(f)
        self.assertEqual(data["status"], "unsupported")
        last = res.stderr.strip().splitlines()[-1]
        self.assertIn("lab05 verify: not supported here: ", last)
        self.assertNotIn("unexpected", res.stderr)     # the student's program stops quietly

    def test_doctor_names_the_driver_and_nvcc(self):
        res = run([os.path.join(BUILD, "bin", "commlab"), "doctor"])
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertRegex(res.stdout, r"\n  gpu +no +(built, but no usable GPU here|NOT BUILT)")
        self.assertRegex(res.stdout, r"driver:\n  nvidia +\S")
        # nvcc is found where the build finds it, not only on PATH
        res = run([os.path.join(BUILD, "bin", "commlab"), "doctor", "--json"],
                  env={"PATH": "/usr/bin:/bin"})
        data = json.loads(res.stdout)
        self.assertIn("gpu", data["build"])
        if data["build"]["gpu"]:
            self.assertTrue(data["nvcc"] and data["nvcc"].endswith("/nvcc"), data)


@unittest.skipUnless(HAVE_CUDA_BUILD, "no build over the CUDA stand-in (make gpu-test makes it)")
class OverTheStandIn(unittest.TestCase):
    """The gpu backend's logic, one rank, over tests/gpu/fake_cuda.c."""

    def test_smoke_program_passes_every_step(self):
        res = run([os.path.join(FAKE, "tests", "gpu_smoke"), "--deadline", "60"])
        self.assertEqual(res.returncode, 0, res.stdout)
        self.assertRegex(res.stdout, r"# (\d+) of \1 steps passed")
        self.assertNotIn("FAIL", res.stdout)

    def test_no_device_is_a_skip(self):
        res = run([os.path.join(FAKE, "tests", "gpu_smoke")], env={"COMMLAB_FAKE_GPUS": "0"})
        self.assertEqual(res.returncode, 4, res.stdout)
        self.assertIn("no usable GPU (cudaErrorNoDevice)", res.stdout)

    def test_lab05_one_gpu_through_the_grader(self):
        env = {"COMMLAB_GRADE_BUILD": os.path.basename(FAKE),
               "COMMLAB_GRADE_BACKENDS": "sim,gpu=1", "COMMLAB_GRADE_CWD": REPO}
        path = os.path.join(tempfile.mkdtemp(prefix="gpu-test-"), "r.json")
        self.addCleanup(shutil.rmtree, os.path.dirname(path), True)
        res = run(["/usr/bin/python3", "grader/grade.py", "lab05", "gpu.one", "--solution",
                   "--no-install", "--no-build", "--json", path], env=env, timeout=300)
        with open(path) as f:
            tests = {t["id"]: t for t in json.load(f)["tests"]}
        self.assertEqual(tests["gpu.one"]["verdict"], "PASS", res.stdout + res.stderr)


@unittest.skipUnless(HAVE_CUDA_BUILD, "no build over the CUDA stand-in (make gpu-test makes it)")
class VerifyScript(unittest.TestCase):
    """scripts/gpu-verify.sh end to end: prepared here, run as on a one-GPU machine."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gpu-verify-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.prepared = "build-gpu-test"
        cls.addClassCleanup(shutil.rmtree, os.path.join(REPO, cls.prepared), True)
        cls.env = {"GPU_FAKE": "1", "GPU_VERIFY_PREPARED": cls.prepared,
                   "GPU_VERIFY_LABS": "lab05", "GPU_VERIFY_BUILD": "prepared"}
        prep = run(["scripts/gpu-verify.sh", "--prepare"], env=cls.env, timeout=600)
        if prep.returncode != 0:
            raise AssertionError(f"--prepare failed:\n{prep.stdout}\n{prep.stderr}")

    def verify(self, name, env):
        out = os.path.join(self.tmp, name)
        res = run(["scripts/gpu-verify.sh", out], env=dict(self.env, **env), timeout=600)
        with open(os.path.join(out, "record.json")) as f:
            return res, json.load(f), out

    def test_one_gpu_machine(self):
        res, rec, out = self.verify("one", {"PATH": FAKE_BIN + ":" + os.environ["PATH"]})
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        rows = {(r["lab"], r["check"]): r for r in rec["rows"]}
        self.assertEqual(rows[("lab05", "gpu.one")]["verdict"], "PASS")
        self.assertIn("needs 2 GPUs, this machine has 1", rows[("lab05", "gpu.verify")]["reason"])
        smoke = [r for r in rec["rows"] if r["lab"] == "smoke"]
        self.assertGreater(len(smoke), 20)
        self.assertTrue(all(r["verdict"] == "PASS" for r in smoke), smoke)
        self.assertTrue(rec["facts"]["commit"])
        self.assertIn("prepared build-gpu-test", rec["facts"]["build"])
        for name in ("summary.md", "inventory.txt", "ldd.txt", "doctor.txt", "lab05.json"):
            self.assertTrue(os.path.isfile(os.path.join(out, name)), name)
        self.assertTrue(os.path.isfile(out + ".tar.gz"))

    def test_no_gpu_fails_fast_with_reasons(self):
        t0 = time.monotonic()
        res, rec, _ = self.verify("none", {"COMMLAB_FAKE_GPUS": "0"})
        self.assertLess(time.monotonic() - t0, 60)
        self.assertEqual(res.returncode, 0, res.stdout)  # nothing failed: everything skipped
        verdicts = {r["verdict"] for r in rec["rows"]}
        self.assertEqual(verdicts, {"SKIP"}, rec["rows"])
        self.assertTrue(all(r["reason"] for r in rec["rows"]), rec["rows"])


if __name__ == "__main__":
    unittest.main()
