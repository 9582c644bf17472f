"""The release tarball (`cmake --build build --target package`, cmake/release.cmake), extracted into
a temporary directory: bin/warpforge finds every library it needs in lib/ through its $ORIGIN
RPATH and runs a package with an empty environment (`env -i`) on the CPU backend, with the
build tree's binary's outputs (to summation order); the exporter wheel and the licences are there."""

from __future__ import annotations

import glob
import os
import subprocess
import tarfile

import numpy as np
import pytest

from conftest import ROOT, warpforge_binary


def release_tarball():
    path = os.environ.get("WARPFORGE_RELEASE")
    if not path:
        build = os.path.dirname(warpforge_binary())
        found = sorted(glob.glob(os.path.join(build, "warpforge-*-linux-x86_64.tar.gz")))
        path = found[-1] if found else None
    if not path or not os.path.exists(path):
        pytest.skip("no release tarball (cmake --build build --target package, or set WARPFORGE_RELEASE)")
    return path


def test_release_runs_with_an_empty_environment(packages, tmp_path):
    with tarfile.open(release_tarball()) as tar:
        tar.extractall(tmp_path)
    (root,) = [p for p in tmp_path.iterdir() if p.name.startswith("warpforge-")]
    exe = root / "bin" / "warpforge"
    assert exe.exists() and list((root / "python").glob("warpforge-*.whl"))
    assert list((root / "licenses").iterdir())
    rpath = subprocess.run(["readelf", "-d", str(exe)], capture_output=True, text=True, check=True).stdout
    assert "[$ORIGIN/../lib]" in rpath

    # Every library but glibc's and the GPU driver's resolves inside the tarball.
    ldd = subprocess.run(["env", "-i", "ldd", str(exe)], capture_output=True, text=True, check=True).stdout
    system = ("libc.so", "libm.so", "ld-linux", "libdl.so", "libpthread.so", "librt.so", "linux-vdso", "libcuda.so")
    for line in ldd.splitlines():
        if "=>" not in line or any(s in line for s in system):
            continue
        resolved = line.split("=>", 1)[1].split("(")[0].strip()
        assert os.path.realpath(resolved).startswith(str((root / "lib").resolve())), line

    x = np.random.default_rng(0).standard_normal((3, 64), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    outputs = {}
    for name, binary, env in (("release", str(exe), ["env", "-i"]), ("build", warpforge_binary(), [])):
        out = tmp_path / name
        subprocess.run([*env, binary, "run", str(packages["mlp"]), "--device", "cpu", "--input", f"x={tmp_path / 'x.npy'}",
                        "-o", str(out)], check=True, capture_output=True)
        outputs[name] = np.load(out / "output.npy")
    # The environment can change the kernels' thread count and so the summation order.
    np.testing.assert_allclose(outputs["release"], outputs["build"], rtol=1e-5, atol=1e-6)
    check = subprocess.run(["env", "-i", str(exe), "validate", str(packages["mlp"])], capture_output=True, text=True)
    assert check.returncode == 0 and "PASS" in check.stdout, check.stdout + check.stderr


C_PROGRAM = r"""
#include <stdio.h>
#include <warpforge/warpforge.h>

int main(int argc, char** argv) {
  float x[3 * 64];
  for (int i = 0; i < 3 * 64; ++i) x[i] = (float)((i * 37) % 11) / 7.0f - 0.7f;
  wf_session_options options;
  wf_session_options_init(&options);
  wf_session* session = NULL;
  if (wf_session_open(argv[1], &options, &session) != WF_OK) {
    fprintf(stderr, "open: %s\n", wf_last_error_message());
    return 1;
  }
  int64_t shape[2] = {3, 64};
  wf_input in = {"x", 0, x, sizeof x, shape, 2};
  wf_result* result = NULL;
  if (wf_session_run(session, &in, 1, &result) != WF_OK) {
    fprintf(stderr, "run: %s\n", wf_last_error_message());
    return 1;
  }
  wf_tensor_view out;
  if (wf_result_output(result, 0, &out) != WF_OK) return 1;
  const float* y = (const float*)out.data;
  for (size_t i = 0; i < out.size_bytes / sizeof(float); ++i) printf("%.9g\n", y[i]);
  wf_result_free(result);
  wf_session_close(session);
  /* A bad package is an error with a message, not a crash. */
  if (wf_session_open("/nonexistent", &options, &session) == WF_OK) return 1;
  fprintf(stderr, "expected error: %s\n", wf_last_error_message());
  return 0;
}
"""


def test_release_c_api_runs_with_an_empty_environment(packages, tmp_path):
    with tarfile.open(release_tarball()) as tar:
        tar.extractall(tmp_path)
    (root,) = [p for p in tmp_path.iterdir() if p.name.startswith("warpforge-")]
    assert (root / "include" / "warpforge" / "warpforge.h").exists()
    assert (root / "lib" / "libwarpforge.so").exists()
    src = tmp_path / "main.c"
    src.write_text(C_PROGRAM)
    prog = tmp_path / "main"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", f"-I{root / 'include'}", str(src), "-o", str(prog),
                    f"-L{root / 'lib'}", "-lwarpforge", f"-Wl,-rpath,{root / 'lib'}"], check=True)
    run = subprocess.run(["env", "-i", str(prog), str(packages["mlp"])], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "expected error:" in run.stderr and "/nonexistent" in run.stderr
    got = np.array([float(v) for v in run.stdout.split()], dtype=np.float32)
    # The same input through the build tree's `warpforge run`.
    x = np.array([((i * 37) % 11) / 7.0 - 0.7 for i in range(3 * 64)], dtype=np.float32).reshape(3, 64)
    np.save(tmp_path / "x.npy", x)
    subprocess.run([warpforge_binary(), "run", str(packages["mlp"]), "--device", "cpu", "--input",
                    f"x={tmp_path / 'x.npy'}", "-o", str(tmp_path / "out")], check=True, capture_output=True)
    want = np.load(tmp_path / "out" / "output.npy").ravel()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
