#!/usr/bin/env python3
"""Integration tests of the `warpforge` binary: output formats, exit codes, .npy/.safetensors I/O.

Usage: test_cli.py --warpforge PATH [--data DIR]   (run by ctest as cli.integration)
Outputs of `warpforge run` are compared with numpy computing the same function.
"""
import argparse
import json
import os
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
