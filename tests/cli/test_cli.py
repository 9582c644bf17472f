#!/usr/bin/env python3
"""Integration tests of the `warpforge` binary: output formats, exit codes, .npy/.safetensors I/O,
and the model-package commands (validate, bench, run PKG) on tests/data/packages.

Usage: test_cli.py --warpforge PATH [--data DIR]   (run by ctest as cli.integration)
Outputs of `warpforge run` are compared with numpy computing the same function.
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

try:
    import ml_dtypes
except ImportError:  # bf16 cases are skipped without it
    ml_dtypes = None

WARPFORGE = None
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "cli")
PACKAGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "packages")


def wf(*args):
    return subprocess.run([WARPFORGE, *args], capture_output=True, text=True, timeout=120)


def data(name):
    return os.path.join(DATA, name)


def read_safetensors(path):
    """A minimal independent reader: 8-byte length, JSON header, raw little-endian data."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    body = raw[8 + n:]
    dtypes = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "BOOL": np.bool_, "I32": np.int32}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(body[b:e], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return out


def write_safetensors(path, tensors):
    codes = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64", np.dtype(np.int64): "I64"}
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        blob = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": codes[arr.dtype], "shape": list(arr.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


class CheckCommand(unittest.TestCase):
    def test_all_pass_exits_zero(self):
        r = wf("check", data("all_pass.mlir"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.strip().splitlines()[-1], "4 passed, 0 failed")

    def test_mixed_outcomes_human_output(self):
        r = wf("check", data("mixed.mlir"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertEqual(lines[-1], "2 passed, 2 failed, 1 skipped")
        fail = [l for l in lines if "@fails" in l]
        self.assertEqual(len(fail), 1)
        # file:line of the failing check, the status and the first mismatch.
        self.assertTrue(fail[0].startswith(data("mixed.mlir") + ":12: @fails: FAIL: "), fail[0])
        self.assertIn("index [1]", fail[0])
        self.assertIn("2.5", fail[0])
        self.assertTrue(any("@errors: ERROR: " in l and "dense_resource" in l for l in lines), lines)
        self.assertTrue(any("@unsupported: UNSUPPORTED: " in l for l in lines), lines)
        self.assertFalse(any("@passes" in l or "@no_checks" in l for l in lines), lines)
        self.assertFalse(any("takes_args" in l or "helper" in l for l in lines), lines)

    def test_json_output(self):
        r = wf("check", "--json", data("mixed.mlir"), data("all_pass.mlir"))
        self.assertEqual(r.returncode, 1, r.stderr)
        results = json.loads(r.stdout)
        status = {(os.path.basename(x["file"]), x["function"]): x["status"] for x in results}
        self.assertEqual(status[("mixed.mlir", "passes")], "pass")
        self.assertEqual(status[("mixed.mlir", "fails")], "fail")
        self.assertEqual(status[("mixed.mlir", "no_checks")], "pass")
        self.assertEqual(status[("mixed.mlir", "unsupported")], "unsupported")
        self.assertEqual(status[("mixed.mlir", "errors")], "error")
        self.assertEqual(status[("all_pass.mlir", "custom_call_spelling")], "pass")
        self.assertEqual(len(results), 9)
        for x in results:
            self.assertEqual(set(x), {"file", "line", "function", "status", "message"})

    def test_parse_error_in_one_chunk(self):
        r = wf("check", "--json", data("parse_error.mlir"))
        self.assertEqual(r.returncode, 2, r.stderr)
        results = {x["function"]: x for x in json.loads(r.stdout)}
        self.assertEqual(results["good"]["status"], "pass")
        self.assertEqual(results["broken"]["status"], "error")
        # file:line:col of the bad token, with the line counted from the start of the file.
        self.assertIn(data("parse_error.mlir") + ":11:", results["broken"]["message"])

    def test_missing_file_and_usage_errors(self):
        r = wf("check", data("no_such_file.mlir"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no_such_file.mlir", r.stdout)
        r = wf("check")
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.startswith("warpforge: error: "), r.stderr)
        r = wf("frobnicate")
        self.assertEqual(r.returncode, 2)
        r = wf("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("check", r.stdout)

    def test_timeout_costs_one_function(self):
        r = wf("check", "--timeout", "1", data("hang.mlir"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("hang.mlir:3: @spins_forever: ERROR: function timed out after 1 s", r.stdout)
        self.assertEqual(r.stdout.strip().splitlines()[-1], "1 passed, 1 failed")

    def test_in_process_mode_agrees(self):
        a = json.loads(wf("check", "--json", data("mixed.mlir")).stdout)
        b = json.loads(wf("check", "--json", "--no-isolate", data("mixed.mlir")).stdout)
        self.assertEqual(a, b)


class RunCommand(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((2, 3)).astype(np.float32)
        self.y = rng.standard_normal((2, 3)).astype(np.float32)
        np.save(self.path("x.npy"), self.x)
        np.save(self.path("y.npy"), self.y)

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_npy_inputs_and_outputs_match_numpy(self):
        out = self.path("out")
        r = wf("run", data("add_mul.mlir"), "--input", "0=" + self.path("x.npy"), "--input", "arg1=" + self.path("y.npy"),
               "--output-dir", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["out0.npy", "out1.npy"])
        np.testing.assert_array_equal(np.load(os.path.join(out, "out0.npy")), self.x + self.y)
        np.testing.assert_array_equal(np.load(os.path.join(out, "out1.npy")), self.x * self.y)

    def test_inputs_by_name_fortran_order_and_safetensors_output(self):
        np.save(self.path("xf.npy"), np.asfortranarray(self.x))
        out = self.path("st")
        r = wf("run", data("add_mul.mlir"), "-i", "x=" + self.path("xf.npy"), "-i", "y=" + self.path("y.npy"),
               "--output-dir", out, "--output-format", "safetensors")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = read_safetensors(os.path.join(out, "outputs.safetensors"))
        np.testing.assert_array_equal(got["out0"], self.x + self.y)
        np.testing.assert_array_equal(got["out1"], self.x * self.y)

    def test_safetensors_inputs_bound_by_name(self):
        write_safetensors(self.path("in.safetensors"), {"x": self.x, "y": self.y})
        r = wf("run", data("add_mul.mlir"), "--input", self.path("in.safetensors"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("out0 = tensor<2x3xf32>", r.stdout)

    @unittest.skipIf(ml_dtypes is None, "ml_dtypes not installed")
    def test_bf16_int64_bool(self):
        a = np.array([1.5, -2.25, 3.0, 0.125], dtype=ml_dtypes.bfloat16)
        b = np.array([1, -(2 ** 40), 7], dtype=np.int64)
        c = np.array([[True, False], [False, True]])
        for name, arr in (("a", a), ("b", b), ("c", c)):
            np.save(self.path(name + ".npy"), arr)
        out = self.path("o")
        r = wf("run", data("dtypes.mlir"), "-i", "0=" + self.path("a.npy"), "-i", "1=" + self.path("b.npy"),
               "-i", "2=" + self.path("c.npy"), "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        got0 = np.load(os.path.join(out, "out0.npy")).view(ml_dtypes.bfloat16)
        np.testing.assert_array_equal(got0.astype(np.float32), (a + a).astype(np.float32))
        np.testing.assert_array_equal(np.load(os.path.join(out, "out1.npy")), -b)
        np.testing.assert_array_equal(np.load(os.path.join(out, "out2.npy")), ~c)

    def expect_input_error(self, args, *needles):
        out = self.path("err_out")
        r = wf("run", data("add_mul.mlir"), *args, "--output-dir", out)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertTrue(r.stderr.startswith("warpforge: error: "), r.stderr)
        for n in needles:
            self.assertIn(n, r.stderr)
        self.assertFalse(os.path.exists(out) and os.listdir(out), "no output files after an error")

    def test_input_errors(self):
        x, y = self.path("x.npy"), self.path("y.npy")
        self.expect_input_error(["-i", "0=" + x], "missing inputs", "argument 1 ('y')")
        self.expect_input_error(["-i", "0=" + x, "-i", "1=" + y, "-i", "2=" + y], "input '2'", "has 2 arguments")
        self.expect_input_error(["-i", "0=" + x, "-i", "x=" + y], "given twice")
        self.expect_input_error(["-i", "0=" + x, "-i", "z=" + y], "names no argument", "0 ('x'), 1 ('y')")
        np.save(self.path("d.npy"), self.y.astype(np.float64))
        self.expect_input_error(["-i", "0=" + x, "-i", "1=" + self.path("d.npy")], "argument 1 ('y')", "f64")
        np.save(self.path("s.npy"), self.y.T.copy())
        self.expect_input_error(["-i", "0=" + x, "-i", "1=" + self.path("s.npy")], "argument 1 ('y')",
                                "expected tensor<2x3xf32>, got tensor<3x2xf32>")
        with open(self.path("junk.npy"), "wb") as f:
            f.write(b"\x93NUMPY\x01\x00\x05\x00{'a'")
        self.expect_input_error(["-i", "0=" + x, "-i", "1=" + self.path("junk.npy")], "junk.npy")
        self.expect_input_error(["-i", "0=" + x, "-i", "1=" + self.path("nope.npy")], "nope.npy")
        self.expect_input_error(["-i", "0=" + x, "-i", "1=" + self.path("y.txt")], "must end in .npy or .safetensors")
        self.expect_input_error(["-i", "0=" + x, "-i", "1=" + y, "--entry", "nope"], "no function @nope")

    def test_malformed_mlir_reports_file_line_col(self):
        for cmd in ("run", "inspect", "print"):
            r = wf(cmd, data("malformed.mlir"))
            self.assertEqual(r.returncode, 2, cmd + ": " + r.stderr)
            self.assertTrue(r.stderr.startswith("warpforge: error: " + data("malformed.mlir") + ":3:"), r.stderr)


class InspectCommand(unittest.TestCase):
    def test_functions_and_op_counts(self):
        r = wf("inspect", data("add_mul.mlir"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("@main (public", r.stdout)
        self.assertIn("(tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)", r.stdout)
        self.assertIn("@unused (private", r.stdout)
        r = wf("inspect", "--json", data("add_mul.mlir"))
        info = json.loads(r.stdout)
        self.assertEqual(info["op_counts"]["stablehlo.add"], 1)
        self.assertEqual(info["op_counts"]["stablehlo.multiply"], 1)
        self.assertEqual(info["op_counts"]["func.return"], 2)
        self.assertEqual([f["name"] for f in info["functions"]], ["main", "unused"])


def cuda_built():
    r = wf("validate", os.path.join(PACKAGES, "mlp"), "--device", "cuda")
    return "built without the cuda backend" not in r.stderr


class PackageCommands(unittest.TestCase):
    """validate, bench and run on the fixture packages (tests/data/packages/make_packages.py)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def copy(self, name):
        dst = self.path(name)
        shutil.copytree(os.path.join(PACKAGES, name), dst)
        return dst

    def test_validate_passes(self):
        pkg = os.path.join(PACKAGES, "mlp")
        r = wf("validate", pkg)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertTrue(lines[0].startswith("validate " + pkg + " (mlp) on cpu, tolerances rtol=0.001 atol=1e-05"), lines)
        row = [l for l in lines if " logits " in l]
        self.assertEqual(len(row), 1, lines)
        self.assertRegex(row[0], r"^  output +logits +tensor<2x3xf32>  max_abs \S+  max_rel \S+  ok$")
        self.assertFalse(any(" fc1 " in l for l in lines), "activations only with --activations")
        self.assertEqual(lines[-1], "PASS: 2 output(s) within rtol=0.001 atol=1e-05")

        r = wf("validate", pkg, "--activations", "--device", "cpu")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.strip().splitlines()
        names = [l.split()[1] for l in lines[1:-1]]
        self.assertEqual(names, ["logits", "probs", "fc1", "fc2"])
        self.assertRegex(lines[3], r"^  activation +fc1 +tensor<2x8xf32>  max_abs \S+  max_rel \S+  ok$")
        self.assertEqual(lines[-1], "PASS: 2 output(s) and 2 activation(s) within rtol=0.001 atol=1e-05")

        r = wf("validate", os.path.join(PACKAGES, "dyn"), "--activations")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("records no activations", r.stderr)

    def test_tf32_flags(self):
        # --allow-tf32 is both of PyTorch's switches; --allow-tf32-matmul and --allow-tf32-conv one
        # each (their effect on the GPU: tests/cuda dot_test and convolution_test). On the CPU
        # they change nothing: the package still validates.
        pkg = os.path.join(PACKAGES, "mlp")
        for cmd in ("validate", "bench", "run", "serve"):
            help_text = wf(cmd, "--help").stdout
            for flag in ("--allow-tf32 ", "--allow-tf32-matmul", "--allow-tf32-conv"):
                self.assertIn(flag, help_text, cmd)
        for flags in (["--allow-tf32"], ["--allow-tf32-matmul"], ["--allow-tf32-conv"],
                      ["--allow-tf32-matmul", "--allow-tf32-conv"]):
            r = wf("validate", pkg, *flags)
            self.assertEqual(r.returncode, 0, flags + [r.stdout, r.stderr])
            self.assertTrue(r.stdout.strip().endswith("within rtol=0.001 atol=1e-05"), r.stdout)

    def test_validate_json(self):
        r = wf("validate", os.path.join(PACKAGES, "mlp"), "--activations", "--json")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        j = json.loads(r.stdout)
        self.assertTrue(j["pass"])
        self.assertEqual(j["device"], "cpu")
        self.assertEqual(j["tolerances"], {"rtol": 1e-3, "atol": 1e-5})
        self.assertEqual([o["name"] for o in j["outputs"]], ["logits", "probs"])
        self.assertEqual([a["name"] for a in j["activations"]], ["fc1", "fc2"])
        self.assertEqual(j["activations"][0]["value"], "%h1")
        for row in j["outputs"] + j["activations"]:
            self.assertTrue(row["pass"])
            self.assertLess(row["max_abs_err"], 1e-5)
            self.assertEqual(row["nan_count"], 0)
        self.assertIsNone(j["first_diverging_activation"])

    def corrupt(self, pkg, file, name, fn):
        path = os.path.join(pkg, "golden", file)
        tensors = read_safetensors(path)
        tensors = {k: np.array(v) for k, v in tensors.items()}
        tensors[name] = fn(tensors[name]).astype(np.float32)
        write_safetensors(path, tensors)

    def test_validate_corrupted_golden_names_first_diverging_activation(self):
        pkg = self.copy("mlp")
        # As if layer fc2 computed something else: its activation and the outputs differ, fc1 matches.
        self.corrupt(pkg, "activations.safetensors", "fc2", lambda a: a + 0.5)
        self.corrupt(pkg, "outputs.safetensors", "logits", lambda a: a + 0.5)
        r = wf("validate", pkg, "--activations")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stdout.strip().splitlines()
        fc1 = [l for l in lines if " fc1 " in l]
        fc2 = [l for l in lines if " fc2 " in l]
        self.assertTrue(fc1[0].endswith("  ok"), fc1)
        self.assertTrue(fc2[0].endswith("FAIL"), fc2)
        self.assertIn("6 of 6 elements outside rtol=0.001 atol=1e-05", fc2[0])
        self.assertEqual(lines[-1], "FAIL: output 'logits' differs from the golden output; "
                                    "first diverging activation: 'fc2' (%logits)")
        # Without --activations the first diverging layer is still named.
        r = wf("validate", pkg)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("first diverging activation: 'fc2'", r.stdout.strip().splitlines()[-1])
        j = json.loads(wf("validate", pkg, "--json").stdout)
        self.assertFalse(j["pass"])
        self.assertEqual(j["first_failing_output"], "logits")
        self.assertEqual(j["first_diverging_activation"], "fc2")
        self.assertEqual(j["outputs"][0]["mismatches"], 6)

    def test_validate_activation_mismatch_alone_fails(self):
        pkg = self.copy("mlp")
        self.corrupt(pkg, "activations.safetensors", "fc1", lambda a: a * 2 + 1)
        self.assertEqual(wf("validate", pkg).returncode, 0)  # outputs match
        r = wf("validate", pkg, "--activations")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(r.stdout.strip().splitlines()[-1],
                         "FAIL: the outputs match; first diverging activation: 'fc1' (%h1)")

    def test_validate_nan_never_passes(self):
        pkg = self.copy("mlp")
        self.corrupt(pkg, "outputs.safetensors", "probs", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 4, np.nan, a))
        r = wf("validate", pkg)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        probs = [l for l in r.stdout.splitlines() if " probs " in l][0]
        self.assertIn("1 NaN element(s)", probs)
        self.assertIn("worst at [1, 1]", probs)
        self.assertIn("every recorded activation matches, so the difference arises after 'fc2'", r.stdout)

    def test_validate_rel_l2_tolerance(self):
        pkg = self.copy("mlp")
        with open(os.path.join(pkg, "manifest.json")) as f:
            m = json.load(f)
        m["tolerances"] = {"rel_l2": 1e-2}
        with open(os.path.join(pkg, "manifest.json"), "w") as f:
            json.dump(m, f)
        self.corrupt(pkg, "outputs.safetensors", "logits", lambda a: a * 1.001)  # rel L2 1e-3: passes
        r = wf("validate", pkg)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("tolerances rel_l2=0.01", r.stdout)
        self.corrupt(pkg, "outputs.safetensors", "logits", lambda a: a * 1.1)
        r = wf("validate", pkg)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("rel_l2 above 0.01", r.stdout)

    def test_bad_packages_name_the_tensor(self):
        pkg = self.copy("mlp")
        w = read_safetensors(os.path.join(pkg, "weights.safetensors"))
        w = {k: np.array(v) for k, v in w.items() if k != "fc2.bias"}
        write_safetensors(os.path.join(pkg, "weights.safetensors"), w)
        for cmd in (["validate", pkg], ["bench", pkg, "--iters", "1"], ["run", pkg]):
            r = wf(*cmd)
            self.assertEqual(r.returncode, 2, cmd[0] + ": " + r.stdout + r.stderr)
            self.assertIn("warpforge: error: weight 'fc2.bias' is missing from " + os.path.join(pkg, "weights.safetensors"),
                          r.stderr)
        w["fc2.bias"] = np.zeros(4, np.float32)
        write_safetensors(os.path.join(pkg, "weights.safetensors"), w)
        r = wf("validate", pkg)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("weight 'fc2.bias'", r.stderr)
        self.assertIn("expected shape [3], got tensor<4xf32>", r.stderr)

        pkg2 = self.copy("dyn")
        with open(os.path.join(pkg2, "manifest.json")) as f:
            m = json.load(f)
        m["inputs"][1]["dtype"] = "f64"
        with open(os.path.join(pkg2, "manifest.json"), "w") as f:
            json.dump(m, f)
        r = wf("validate", pkg2)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("manifest.json does not match " + os.path.join(pkg2, "model.mlir"), r.stderr)
        self.assertIn("input 'y'", r.stderr)
        r = wf("validate", self.path("nowhere"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("nowhere", r.stderr)

    def test_devices(self):
        pkg = os.path.join(PACKAGES, "mlp")
        for cmd in ("validate", "bench", "run"):
            r = wf(cmd, pkg, "--device", "tpu")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("unknown device kind 'tpu'", r.stderr)
            r = wf(cmd, pkg, "--device", "cuda:x")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--device: device 'cuda:x'", r.stderr)
        r = wf("check", "--device", "cpu", data("all_pass.mlir"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = wf("check", "--device", "tpu", data("all_pass.mlir"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("unknown device kind 'tpu'", r.stderr)
        if not cuda_built():
            r = wf("bench", pkg, "--device", "cuda:1")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("built without the cuda backend; devices available: cpu", r.stderr)

    def test_bench_output_format(self):
        pkg = os.path.join(PACKAGES, "mlp")
        r = wf("bench", pkg, "--iters", "7", "--warmup", "2", "--threads", "1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertEqual(lines[0], "bench " + pkg + " (mlp) on cpu, 1 thread(s), batch 2 (golden inputs): "
                                   "2 warm-up + 7 timed runs")
        num = r"([0-9.]+(?:e[-+]?[0-9]+)?)"
        # The cpu backend generates no kernels: the compile time alone.
        m = re.fullmatch(r"compile: {0} ms(; by phase: [^;]+)?; first run {0} ms".format(num), lines[1])
        self.assertIsNotNone(m, lines[1])
        m = re.fullmatch(r"latency: median {0} ms  p10 {0} ms  p90 {0} ms  min {0} ms  max {0} ms".format(num), lines[2])
        self.assertIsNotNone(m, lines[2])
        median, p10, p90, lo, hi = map(float, m.groups())
        self.assertTrue(lo <= p10 <= median <= p90 <= hi, lines[2])
        m = re.fullmatch(r"throughput: {0} samples/s".format(num), lines[3])
        self.assertIsNotNone(m, lines[3])

        r = wf("bench", os.path.join(PACKAGES, "dyn"), "--iters", "5", "--json", "--threads", "1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual(j["batch"], 3)
        self.assertEqual(j["iters"], 5)
        self.assertEqual(j["warmup"], 3)
        self.assertEqual(j["threads"], 1)
        self.assertEqual(len(j["samples_ms"]), 5)
        lat = j["latency_ms"]
        self.assertEqual(lat["median"], float(np.median(j["samples_ms"])))
        self.assertAlmostEqual(lat["p10"], float(np.percentile(j["samples_ms"], 10)), places=9)
        self.assertAlmostEqual(lat["p90"], float(np.percentile(j["samples_ms"], 90)), places=9)
        self.assertAlmostEqual(j["throughput_samples_per_s"], 3 * 1000.0 / lat["median"], places=6)
        self.assertGreater(j["compile_ms"], 0)
        self.assertGreater(j["first_run_ms"], 0)
        self.assertEqual(j["generated_kernels"], {"compiled": 0, "from_kernel_cache": 0, "nvrtc_ms": 0, "load_ms": 0,
                                                  "tuned_problems": 0, "tuning_ms": 0, "tuning_from_kernel_cache": 0})

        # The kernel cache flags (cuda; the cpu backend has nothing to cache): a directory, or
        # none, not both.
        with tempfile.TemporaryDirectory() as cache:
            r = wf("bench", pkg, "--iters", "1", "--kernel-cache", cache)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(os.listdir(cache), [])
        r = wf("bench", pkg, "--iters", "1", "--no-kernel-cache")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = wf("bench", pkg, "--iters", "1", "--no-kernel-cache", "--kernel-cache", "/tmp")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("excludes", r.stderr)

        r = wf("bench", pkg, "--iters", "0")
        self.assertEqual(r.returncode, 2, r.stderr)

    def test_bench_batch(self):
        dyn = os.path.join(PACKAGES, "dyn")
        r = wf("bench", dyn, "--batch", "5", "--iters", "2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(", batch 5 (golden inputs, rows repeated): 3 warm-up + 2 timed runs", r.stdout.splitlines()[0])
        j = json.loads(wf("bench", dyn, "--batch", "64", "--iters", "2", "--json").stdout)
        self.assertEqual(j["batch"], 64)
        r = wf("bench", dyn, "--batch", "65", "--iters", "1")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("dimension 0 ('batch') is 65, above its maximum 64", r.stderr)
        r = wf("bench", os.path.join(PACKAGES, "mlp"), "--batch", "4", "--iters", "1")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("has no dynamic dimension named 'batch'", r.stderr)

    def test_bench_profile(self):
        pkg = os.path.join(PACKAGES, "mlp")
        r = wf("bench", pkg, "--iters", "3", "--profile")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        start = lines.index("profile, per run (a step's time, an op's or a fused group's, runs from the end of the previous step):")
        rows = {l.split()[0]: l.split()[1:] for l in lines[start + 2:lines.index("slowest ops:")]}
        # Steps of the CPU plan, with their count per run: the two matrix products, and the bias
        # add + ReLU and bias add + sigmoid, each one fused loop.
        self.assertEqual(rows["stablehlo.dot_general"][0], "2")
        self.assertEqual(rows["fused_elementwise"][0], "2")
        self.assertNotIn("func.return", rows)
        self.assertTrue(any(os.path.join(pkg, "model.mlir") + ":" in l for l in lines[lines.index("slowest ops:"):]))
        j = json.loads(wf("bench", pkg, "--iters", "2", "--profile", "--json").stdout)
        by_op = {row["op"]: row for row in j["profile"]["by_op"]}
        self.assertEqual(by_op["fused_elementwise"]["calls_per_run"], 2)
        self.assertAlmostEqual(sum(row["share"] for row in j["profile"]["by_op"]), 1.0, places=6)
        # --no-fusion: one step per op of the entry body.
        j = json.loads(wf("bench", pkg, "--iters", "2", "--profile", "--json", "--no-fusion").stdout)
        by_op = {row["op"]: row for row in j["profile"]["by_op"]}
        self.assertEqual(by_op["stablehlo.add"]["calls_per_run"], 2)
        self.assertEqual(by_op["stablehlo.logistic"]["calls_per_run"], 1)
        self.assertEqual(by_op["stablehlo.maximum"]["calls_per_run"], 1)
        self.assertNotIn("profile", json.loads(wf("bench", pkg, "--iters", "1", "--json").stdout))

    def test_bench_without_golden_uses_synthetic_inputs(self):
        pkg = self.copy("dyn")
        with open(os.path.join(pkg, "manifest.json")) as f:
            m = json.load(f)
        del m["golden"]
        with open(os.path.join(pkg, "manifest.json"), "w") as f:
            json.dump(m, f)
        r = wf("bench", pkg, "--iters", "2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("batch 1 (synthetic inputs)", r.stdout)
        r = wf("validate", pkg)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no golden inputs and outputs", r.stderr)

    def test_run_package(self):
        pkg = os.path.join(PACKAGES, "mlp")
        golden_in = read_safetensors(os.path.join(pkg, "golden", "inputs.safetensors"))
        golden_out = read_safetensors(os.path.join(pkg, "golden", "outputs.safetensors"))
        np.save(self.path("x.npy"), golden_in["x"])
        out = self.path("out")
        r = wf("run", pkg, "--input", "x=" + self.path("x.npy"), "--output-dir", out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["logits.npy", "probs.npy"])
        np.testing.assert_allclose(np.load(os.path.join(out, "logits.npy")), golden_out["logits"], rtol=1e-3, atol=1e-5)
        np.testing.assert_allclose(np.load(os.path.join(out, "probs.npy")), golden_out["probs"], rtol=1e-3, atol=1e-5)

        r = wf("run", pkg, "-o", self.path("st"), "--output-format", "safetensors")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("running on the golden inputs", r.stderr)
        got = read_safetensors(os.path.join(self.path("st"), "outputs.safetensors"))
        self.assertEqual(sorted(got), ["logits", "probs"])

        # A dynamic batch of 5, inputs from one safetensors file; checked against numpy.
        dyn = os.path.join(PACKAGES, "dyn")
        w = read_safetensors(os.path.join(dyn, "weights.safetensors"))["w"]
        rng = np.random.default_rng(1)
        x = rng.standard_normal((5, 4)).astype(np.float32)
        y = rng.standard_normal((5, 3)).astype(np.float32)
        write_safetensors(self.path("in.safetensors"), {"x": x, "y": y})
        r = wf("run", dyn, "-i", self.path("in.safetensors"), "-o", self.path("dyn_out"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        got = np.load(os.path.join(self.path("dyn_out"), "out.npy"))
        self.assertEqual(got.shape, (5, 3))
        np.testing.assert_allclose(got, x.astype(np.float64) @ w + y, rtol=1e-5, atol=1e-6)

    def test_run_package_input_errors(self):
        pkg = os.path.join(PACKAGES, "mlp")
        dyn = os.path.join(PACKAGES, "dyn")
        rng = np.random.default_rng(2)

        def expect(package, arrays, *needles):
            args = []
            for name, arr in arrays.items():
                np.save(self.path(name + ".npy"), arr)
                args += ["-i", name + "=" + self.path(name + ".npy")]
            out = self.path("err_out")
            r = wf("run", package, *args, "-o", out)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertTrue(r.stderr.startswith("warpforge: error: "), r.stderr)
            for n in needles:
                self.assertIn(n, r.stderr)
            self.assertFalse(os.path.exists(out), "no output after an error")

        expect(pkg, {"x": rng.standard_normal((2, 4))}, "input 'x'", "f64")
        expect(pkg, {"x": rng.standard_normal((4, 2)).astype(np.float32)}, "input 'x': expected shape [2, 4], got tensor<4x2xf32>")
        expect(pkg, {"x": rng.standard_normal((2, 4)).astype(np.float32), "z": np.zeros(1, np.float32)},
               "input 'z' is not an input", "'x'")
        expect(dyn, {"x": np.zeros((2, 4), np.float32)}, "missing inputs: 'y' f32[batch, 3]")
        expect(dyn, {"x": np.zeros((2, 4), np.float32), "y": np.zeros((3, 3), np.float32)},
               "input 'y': dimension 0 ('batch') is 3, but another tensor already made 'batch' 2")
        r = wf("run", pkg, "--entry", "main")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--entry does not apply to a model package", r.stderr)

    def test_inspect_package(self):
        pkg = os.path.join(PACKAGES, "dyn")
        r = wf("inspect", pkg)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(lines[0].startswith(pkg + ": model package 'dyn' from "), lines[0])
        self.assertIn("  inputs: x f32[batch, 4], y f32[batch, 3]", lines)
        self.assertIn("  outputs: out f32[batch, 3]", lines)
        self.assertIn("  weights: 1 tensors, 12 elements, 48 bytes (1 parameter)", lines)
        self.assertIn("  dynamic dims: batch [1, 64]", lines)
        self.assertIn(os.path.join(pkg, "model.mlir") + ": 1 function", lines)
        j = json.loads(wf("inspect", "--json", os.path.join(PACKAGES, "mlp")).stdout)
        self.assertEqual([a["value"] for a in j["package"]["activations"]], ["%h1", "%logits"])
        self.assertEqual(j["op_counts"]["stablehlo.dot_general"], 2)
        bad = self.copy("mlp")
        with open(os.path.join(bad, "manifest.json"), "w") as f:
            f.write("{}")
        r = wf("inspect", bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn(os.path.join(bad, "manifest.json") + ": format: missing", r.stderr)

    def test_inspect_fusion_plan(self):
        # The CUDA backend's fusion plan needs no GPU; a build without the backend says so.
        pkg = os.path.join(PACKAGES, "mlp")
        r = wf("inspect", pkg, "--fusion")
        if r.returncode == 2 and "CUDA backend, which this build does not have" in r.stderr:
            self.skipTest("no CUDA backend in this build")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        # The logits' bias add is written beside the sigmoid that reads it (a side output).
        self.assertIn("fusion plan of @main: 2 generated kernels for 7 ops (1 of them also writing side outputs)", lines)
        self.assertTrue(any(l.startswith("  loop stablehlo.logistic at ") and
                            l.endswith("-> tensor<2x3xf32> + tensor<2x3xf32>") for l in lines), lines)
        self.assertTrue(any(l.startswith("  loop stablehlo.maximum at ") and "1 stablehlo.broadcast_in_dim" in l
                            for l in lines), lines)
        self.assertIn("  ops with a step of their own (constants and reshapes cost none): stablehlo.dot_general x2", lines)
        j = json.loads(wf("inspect", pkg, "--fusion", "--json").stdout)
        self.assertEqual(len(j["fusion"][0]["kernels"]), 2)
        self.assertEqual(j["fusion"][0]["ops_with_their_own_step"], {"stablehlo.dot_general": 2})
        # --kernel-source: each kernel's CUDA source under its line, as NVRTC compiles it.
        r = wf("inspect", pkg, "--kernel-source")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count('extern "C" __global__ void __launch_bounds__(256) wf_fused_'), 2, r.stdout)
        self.assertIn("blocks of 256 threads", r.stdout)
        j = json.loads(wf("inspect", pkg, "--kernel-source", "--json").stdout)
        self.assertTrue(all("__global__" in k["source"] for k in j["fusion"][0]["kernels"]))
        # A norm whose result is returned and read again by the work after it: one row kernel,
        # writing the norm beside its root (a side output).
        prenorm = os.path.join(self.dir, "prenorm.mlir")
        with open(prenorm, "w") as f:
            f.write("""func.func @main(%h: tensor<4x64xf32>, %x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %r = "stablehlo.add"(%h, %x) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %sq = "stablehlo.multiply"(%r, %r) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %s = "stablehlo.reduce"(%sq, %zero) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %a = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%a) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<4x64xf32>, tensor<f32>) -> tensor<4xf32>
  %rs = "stablehlo.rsqrt"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "stablehlo.broadcast_in_dim"(%rs) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x64xf32>
  %y = "stablehlo.multiply"(%r, %b) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %t = "stablehlo.tanh"(%y) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %z = "stablehlo.add"(%t, %r) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  func.return %y, %z : tensor<4x64xf32>, tensor<4x64xf32>
}
""")
        r = wf("inspect", prenorm, "--fusion")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("fusion plan of @main: 1 generated kernels for 9 ops (1 of them also writing side outputs)",
                      r.stdout.splitlines())
        self.assertTrue(any(l.startswith("  row stablehlo.add at ") and
                            l.endswith("-> tensor<4x64xf32> + tensor<4x64xf32>") for l in r.stdout.splitlines()),
                        r.stdout)
        j = json.loads(wf("inspect", prenorm, "--fusion", "--json").stdout)
        self.assertEqual([k.get("side_outputs") for k in j["fusion"][0]["kernels"]], [["tensor<4x64xf32>"]])
        # Products of one activation by two weights: merged into one product (transforms/merge_products.h)
        # unless --no-merge-products, which shows the plan that flag runs.
        qk = os.path.join(self.dir, "qk.mlir")
        with open(qk, "w") as f:
            f.write("""func.func @main(%x: tensor<6x12xf32>, %wq: tensor<12x8xf32>, %wk: tensor<12x4xf32>) -> (tensor<6x8xf32>, tensor<6x4xf32>) {
  %q = "stablehlo.dot_general"(%x, %wq) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<6x12xf32>, tensor<12x8xf32>) -> tensor<6x8xf32>
  %k = "stablehlo.dot_general"(%x, %wk) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<6x12xf32>, tensor<12x4xf32>) -> tensor<6x4xf32>
  %qt = "stablehlo.tanh"(%q) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %kt = "stablehlo.tanh"(%k) : (tensor<6x4xf32>) -> tensor<6x4xf32>
  func.return %qt, %kt : tensor<6x8xf32>, tensor<6x4xf32>
}
""")
        merged = json.loads(wf("inspect", qk, "--fusion", "--json").stdout)["fusion"][0]
        self.assertEqual((merged["products_merged"], merged["ops_with_their_own_step"].get("stablehlo.dot_general")),
                         (1, 1), merged)
        self.assertIn("(1 products by weights merged into a sibling product of the same activation)",
                      wf("inspect", qk, "--fusion").stdout)
        apart = json.loads(wf("inspect", qk, "--fusion", "--json", "--no-merge-products").stdout)["fusion"][0]
        self.assertEqual((apart["products_merged"], apart["ops_with_their_own_step"].get("stablehlo.dot_general")),
                         (0, 2), apart)
        # Dynamic shapes: planned per input shapes when run, nothing to show here.
        r = wf("inspect", os.path.join(PACKAGES, "dyn"), "--fusion")
        self.assertEqual(r.returncode, 0)
        self.assertIn("fusion plan: no function with static shapes", r.stdout)

    def test_help_lists_package_commands(self):
        r = wf("--help")
        self.assertEqual(r.returncode, 0)
        for cmd in ("validate", "bench"):
            self.assertIn(cmd, r.stdout)
        r = wf("validate", "--help")
        self.assertIn("--activations", r.stdout)
        self.assertIn("--device", r.stdout)
        r = wf("bench", "--help")
        for flag in ("--iters", "--warmup", "--threads", "--json", "--device"):
            self.assertIn(flag, r.stdout)


def main():
    global WARPFORGE, DATA
    parser = argparse.ArgumentParser()
    parser.add_argument("--warpforge", required=True)
    parser.add_argument("--data", default=DATA)
    args, rest = parser.parse_known_args()
    WARPFORGE = os.path.abspath(args.warpforge)
    DATA = os.path.abspath(args.data)
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
