#!/usr/bin/env python3
"""WarpForge beside PyTorch eager, torch.compile and XLA on the same models and inputs, in one
Python process: WarpForge through libwarpforge.so's C API (ctypes), XLA compiling the very same
model.mlir that WarpForge runs. Prints a markdown table last and writes --json FILE.

    python3 bench/gpu_models.py --build build                       # every row, on cuda
    python3 bench/gpu_models.py --rows bert-base-b1-s128-fp32 --iters 100
    python3 bench/gpu_models.py --device cpu --small --skip compile # tiny configs, no GPU needed

Rows: BERT-base (b1 s128 fp32), BERT-large (b8 s384 bf16), ResNet-50 (b32 224x224, fp32 and
bf16), a 1.1B Llama (b1 s512 prefill bf16); random weights (seeded), models in eval mode,
random inputs (token ids drawn from [1, vocab)). Each is exported with warpforge.export; every
column's output is compared with PyTorch eager in fp32 (TF32 off) by relative L2 error.

Timing: medians of --iters timed runs after --warmup runs, inputs already resident.
  WarpForge: the run report's device time (CUDA events from the program's first launch to its
    last; inputs are copied in before and outputs out after it) and the wall time of the call.
  eager, compile: CUDA events around each call (device), and the host clock with a synchronize.
  XLA: the host clock around execute + block_until_ready (its stream is not PyTorch's, so no
    events); on the device this is the device time plus one launch.
On --device cpu every column is host wall time.

Compile (WarpForge): the package opened twice in fresh processes (`warpforge bench --json --iters 1
--warmup 0` beside libwarpforge.so, which counts NVRTC programs, timed algorithm problems and kernel
cache hits) with WARPFORGE_CACHE_DIR
set to one new folder: cold (the folder empty: every generated kernel compiled by NVRTC, every
library algorithm problem timed), then warm (the same folder: a warm start, which should compile
and time nothing). Fresh processes, because a process reuses from memory what it compiled or timed
before and never reads the cache for it. The column's run and bench then open the package in this
process with that (warm) cache; the folder is removed after. --no-cold-warm leaves this out.
"""

from __future__ import annotations

import argparse
import copy
import ctypes
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from pathlib import Path

# Before jax is imported: allocate on demand, so that XLA shares the GPU with PyTorch and
# WarpForge and its memory statistics mean something.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

COLUMNS = ("warpforge", "eager", "compile", "xla")
FP32_REL_L2 = 1e-4  # fp32 rows: reported against this (TF32 would be ~1e-3)
LOW_REL_L2 = 1e-2  # bf16 rows, against the fp32 model (DESIGN.md)
LOW_EAGER_FACTOR = 1.25  # ... or within this factor of PyTorch's own bf16 error where that exceeds it
BERT_BASE_FLOOR_MS = 2.0

# ---- the roofline -------------------------------------------------------------------------------------
# Ceilings per GPU, measured on the device machines (see the device notes): cuBLAS bf16 8192^3 ran
# at 769-798 TFLOP/s on random data on both Hopper parts (same SMs and clocks); a device-to-device
# copy moved about 3.0 TB/s on the H100 80GB HBM3 and about 4.3 TB/s on the H200, counting bytes
# read and written. The fp32 and TF32 ceilings are NVIDIA's nominal dense figures (not measured
# here). A row's floor is the larger of its matrix work at the compute ceiling and its weights read
# once at the bandwidth ceiling. A GPU not listed takes the H100's figures, and the table says so.
CEILINGS = {
    "bf16": dict(tflops=798.0, nominal_tflops=989.0, what="bf16 tensor cores, measured; 989 nominal"),
    "fp32": dict(tflops=67.0, nominal_tflops=67.0, what="fp32 CUDA cores, nominal"),
    "tf32": dict(tflops=494.0, nominal_tflops=494.0, what="TF32 tensor cores, nominal"),
}
HBM = {  # GPU name contains -> (measured TB/s, nominal TB/s)
    "H200": (4.3, 4.8),
    "H100": (3.0, 3.35),
}


def hbm_ceiling(device_name: str) -> tuple[float, float, str]:
    """(measured, nominal) TB/s of the GPU's memory, and the name they were measured on."""
    for key, (measured, nominal) in HBM.items():
        if key in device_name:
            return measured, nominal, key
    return HBM["H100"][0], HBM["H100"][1], "H100 (not measured on this GPU)"


_SIGNATURE = re.compile(r"\} : \((tensor<[^>]*>), (tensor<[^>]*>)\) -> (tensor<[^>]*>)")
_CONTRACT = re.compile(r"lhs_contracting_dimensions = \[([0-9, ]*)\]")
_KERNEL_SPEC = re.compile(r"x\[([a-z0-9, ]+)\]->")


def _dims(tensor_type: str) -> list[int]:
    body = tensor_type[len("tensor<"):-1]
    return [int(d) for d in body.split("x")[:-1]]


def model_work(pkg: Path) -> dict:
    """The floating-point work of a package's matrix products and convolutions (2 x multiply-adds,
    from model.mlir's shapes) and the bytes of its weights: what the roofline divides by."""
    flops = 0
    for line in (pkg / "model.mlir").read_text().splitlines():
        is_dot, is_conv = '"stablehlo.dot_general"' in line, '"stablehlo.convolution"' in line
        if not (is_dot or is_conv):
            continue
        sig = _SIGNATURE.search(line)
        if not sig:
            continue
        lhs, rhs, out = (_dims(t) for t in sig.groups())
        out_elems = math.prod(out)
        if is_dot:
            contract = _CONTRACT.search(line)
            dims = [int(d) for d in contract.group(1).split(",") if d.strip()] if contract else []
            flops += 2 * out_elems * math.prod(lhs[d] for d in dims)
        else:
            spec = _KERNEL_SPEC.search(line)
            names = [n.strip() for n in spec.group(1).split(",")] if spec else []
            o = names.index("o") if "o" in names else 0
            flops += 2 * out_elems * (math.prod(rhs) // max(rhs[o], 1))
    weights = pkg / "weights.safetensors"
    return {"flops": flops, "weight_bytes": weights.stat().st_size if weights.exists() else 0}


def roofline(row: dict, meta: dict) -> dict | None:
    """Floor, achieved TFLOP/s and fractions for a row's WarpForge cell (None without the work or a time)."""
    work = row.get("work")
    t = timing(row.get("columns", {}).get("warpforge", {}), True)
    if not work or not t:
        return None
    precision = row["spec"]["dtype"] if row["spec"]["dtype"] == "bf16" else ("tf32" if meta.get("allow_tf32") else "fp32")
    ceiling = CEILINGS[precision]
    compute_ms = work["flops"] / (ceiling["tflops"] * 1e12) * 1e3
    memory_ms = work["weight_bytes"] / (hbm_ceiling(meta.get("device_name", ""))[0] * 1e12) * 1e3
    floor_ms = max(compute_ms, memory_ms)
    achieved = work["flops"] / (t * 1e-3) / 1e12
    return {"precision": precision, "ceiling": ceiling, "compute_ms": compute_ms, "memory_ms": memory_ms,
            "floor_ms": floor_ms, "achieved_tflops": achieved, "of_ceiling": achieved / ceiling["tflops"],
            "of_nominal": achieved / ceiling["nominal_tflops"], "floor_ratio": t / floor_ms}


# ---- rows ---------------------------------------------------------------------------------------
BERT_LARGE = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
LLAMA_1B = dict(hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                intermediate_size=5632, vocab_size=32000)
ROWS = {
    "bert-base-b1-s128-fp32": dict(family="bert", config={}, batch=1, seq=128, dtype="fp32"),
    "bert-large-b8-s384-bf16": dict(family="bert", config=BERT_LARGE, batch=8, seq=384, dtype="bf16"),
    "resnet50-b32-fp32": dict(family="resnet50", batch=32, image=224, dtype="fp32"),
    "resnet50-b32-bf16": dict(family="resnet50", batch=32, image=224, dtype="bf16"),
    "llama-b1-s512-bf16": dict(family="llama", config=LLAMA_1B, batch=1, seq=512, dtype="bf16"),
}
# --small: the same families and op mix at toy sizes, for machines without a GPU.
TINY_BERT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=1000)
SMALL = {
    "bert-base-b1-s128-fp32": dict(config=TINY_BERT, batch=1, seq=32),
    "bert-large-b8-s384-bf16": dict(config=dict(TINY_BERT, hidden_size=128, intermediate_size=256), batch=2, seq=48),
    "resnet50-b32-fp32": dict(batch=2, image=64, blocks=[1, 1, 1, 1]),
    "resnet50-b32-bf16": dict(batch=2, image=64, blocks=[1, 1, 1, 1]),
    "llama-b1-s512-bf16": dict(config=dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=8,
                                           num_key_value_heads=2, intermediate_size=256, vocab_size=1000),
                               batch=1, seq=32),
}


def row_spec(name: str, small: bool) -> dict:
    spec = dict(ROWS[name])
    if small:
        spec.update(SMALL[name])
    return spec


def build_model(spec: dict):
    """(fp32 model in eval mode on the host, inputs on the host), seeded."""
    import torch
    torch.manual_seed(0)
    family = spec["family"]
    if family == "bert":
        from transformers import BertConfig, BertModel
        cfg = BertConfig(**spec["config"])
        model = BertModel(cfg)
        vocab = cfg.vocab_size
    elif family == "llama":
        from transformers import LlamaConfig, LlamaModel
        cfg = LlamaConfig(**spec["config"], use_cache=False)
        model = LlamaModel(cfg)
        vocab = cfg.vocab_size
    else:
        import torchvision
        from torch import nn
        if "blocks" in spec:
            from torchvision.models.resnet import Bottleneck, ResNet
            model = ResNet(Bottleneck, spec["blocks"])
        else:
            model = torchvision.models.resnet50()
        # Random batch-norm statistics, so that inference normalisation is not the identity.
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
        vocab = None
    model.eval()
    torch.manual_seed(1)
    if vocab is not None:
        inputs = (torch.randint(1, vocab, (spec["batch"], spec["seq"])),)
    else:
        inputs = (torch.randn(spec["batch"], 3, spec["image"], spec["image"]),)
    return model, inputs


# ---- libwarpforge.so ----------------------------------------------------------------------------
class _Input(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("index", ctypes.c_size_t), ("data", ctypes.c_void_p),
                ("size_bytes", ctypes.c_size_t), ("shape", ctypes.POINTER(ctypes.c_int64)), ("rank", ctypes.c_size_t)]


class _Options(ctypes.Structure):
    _fields_ = [("device", ctypes.c_char_p), ("allow_tf32", ctypes.c_int), ("allow_cpu_fallback", ctypes.c_int),
                ("threads", ctypes.c_int)]


class _TensorView(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_char_p), ("element_size", ctypes.c_size_t),
                ("rank", ctypes.c_size_t), ("shape", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p),
                ("size_bytes", ctypes.c_size_t)]


class _RunReport(ctypes.Structure):
    _fields_ = [("wall_ms", ctypes.c_double), ("device_ms", ctypes.c_double), ("num_host_fallback_ops", ctypes.c_size_t)]


def _preload_carried_libs(carry: Path):
    """A carry folder (scripts/gpu-check.sh WF_GPU_PACK=1) holds hostlibs.tar.xz: host libraries
    the GPU machine may lack. Load each one the system does not have, globally, so that the
    dynamic linker finds it when libwarpforge.so asks for its soname."""
    archive = carry / "hostlibs.tar.xz"
    if not archive.exists():
        return
    dest = Path(tempfile.gettempdir()) / "wf-hostlibs"
    if not dest.exists():
        with tarfile.open(archive) as tar:
            tar.extractall(dest.parent / "wf-hostlibs-tmp")
        shutil.move(str(dest.parent / "wf-hostlibs-tmp" / "libs"), str(dest))
        shutil.rmtree(dest.parent / "wf-hostlibs-tmp", ignore_errors=True)
    pending = sorted(dest.iterdir())
    for _ in range(len(pending) + 1):  # dependencies among them: retry until nothing changes
        left = []
        for lib in pending:
            try:
                ctypes.CDLL(lib.name, mode=ctypes.RTLD_GLOBAL)  # the system's, when it has one
            except OSError:
                try:
                    ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
                except OSError:
                    left.append(lib)
        if len(left) == len(pending):
            break
        pending = left


def find_library(build: str, explicit: str | None) -> Path:
    candidates = [Path(explicit)] if explicit else []
    b = Path(build)
    if not b.is_absolute() and not b.exists():
        b = ROOT / build
    candidates += [b / "libwarpforge.so", b / "carry" / "libwarpforge.so", b / "src" / "capi" / "libwarpforge.so"]
    if os.environ.get("WF_LIB"):
        candidates.insert(0, Path(os.environ["WF_LIB"]))
    for c in candidates:
        if c.is_file():
            return c
    raise SystemExit("libwarpforge.so not found (looked at " + ", ".join(map(str, candidates)) +
                     "): build it with `ninja -C BUILD warpforge_c`, or pass --build / --lib")


class WarpForge:
    """The C API (include/warpforge/warpforge.h) through ctypes."""

    def __init__(self, path: Path):
        if path.parent.name == "carry":
            _preload_carried_libs(path.parent)
        self.path = path
        lib = self.lib = ctypes.CDLL(str(path))
        P, sz, st = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
        dbl_p = ctypes.POINTER(ctypes.c_double)
        sig = {
            "wf_api_version": (ctypes.c_int, []),
            "wf_version": (ctypes.c_char_p, []),
            "wf_device_kinds": (ctypes.c_char_p, []),
            "wf_last_error_message": (ctypes.c_char_p, []),
            "wf_status_name": (ctypes.c_char_p, [st]),
            "wf_session_options_init": (None, [ctypes.POINTER(_Options)]),
            "wf_session_open": (st, [ctypes.c_char_p, ctypes.POINTER(_Options), ctypes.POINTER(P)]),
            "wf_session_close": (None, [P]),
            "wf_session_device_name": (ctypes.c_char_p, [P]),
            "wf_session_device_bytes_in_use": (sz, [P]),
            "wf_session_num_outputs": (sz, [P]),
            "wf_session_run": (st, [P, ctypes.POINTER(_Input), sz, ctypes.POINTER(P)]),
            "wf_result_num_outputs": (sz, [P]),
            "wf_result_output": (st, [P, sz, ctypes.POINTER(_TensorView)]),
            "wf_result_report": (st, [P, ctypes.POINTER(_RunReport)]),
            "wf_result_host_fallback_op": (ctypes.c_char_p, [P, sz]),
            "wf_result_free": (None, [P]),
            "wf_session_bench_inputs": (st, [P, ctypes.POINTER(_Input), sz, ctypes.c_int, ctypes.c_int, dbl_p, dbl_p]),
        }
        for name, (res, args) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        self.version = lib.wf_version().decode()
        self.device_kinds = lib.wf_device_kinds().decode()

    def check(self, status: int, what: str):
        if status != 0:
            raise RuntimeError(f"{what}: {self.lib.wf_status_name(status).decode()}: "
                               f"{self.lib.wf_last_error_message().decode()}")

    def open(self, pkg: Path, device: str, threads: int = 0, allow_tf32: bool = False) -> "WfSession":
        options = _Options()
        self.lib.wf_session_options_init(ctypes.byref(options))
        options.device = device.encode()
        options.allow_tf32 = int(allow_tf32)
        options.threads = threads
        handle = ctypes.c_void_p()
        self.check(self.lib.wf_session_open(str(pkg).encode(), ctypes.byref(options), ctypes.byref(handle)),
                   f"opening {pkg} on {device}")
        return WfSession(self, handle)


_TORCH_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f64": "float64", "i64": "int64",
                 "i32": "int32", "i1": "bool", "ui8": "uint8", "i8": "int8"}


class WfSession:
    def __init__(self, wf: WarpForge, handle):
        self.wf, self.lib, self.handle = wf, wf.lib, handle

    def close(self):
        if self.handle:
            self.lib.wf_session_close(self.handle)
            self.handle = None

    def device_name(self) -> str:
        return self.lib.wf_session_device_name(self.handle).decode()

    def device_bytes(self) -> int:
        return int(self.lib.wf_session_device_bytes_in_use(self.handle))

    @staticmethod
    def _inputs(tensors):
        """wf_input array for host tensors, in manifest input order; returns (array, keep-alive)."""
        keep = []
        arr = (_Input * len(tensors))()
        for i, t in enumerate(tensors):
            t = t.detach().cpu().contiguous()
            shape = (ctypes.c_int64 * t.dim())(*t.shape)
            keep += [t, shape]
            arr[i] = _Input(None, i, ctypes.c_void_p(t.data_ptr()), t.numel() * t.element_size(), shape, t.dim())
        return arr, keep

    def run(self, tensors):
        """Outputs (host torch tensors, manifest order) and the run report."""
        import torch
        arr, keep = self._inputs(tensors)
        result = ctypes.c_void_p()
        self.wf.check(self.lib.wf_session_run(self.handle, arr, len(tensors), ctypes.byref(result)), "run")
        try:
            outputs = []
            for i in range(self.lib.wf_result_num_outputs(result)):
                v = _TensorView()
                self.wf.check(self.lib.wf_result_output(result, i, ctypes.byref(v)), "output")
                dtype = getattr(torch, _TORCH_DTYPES[v.dtype.decode()])
                out = torch.empty([v.shape[d] for d in range(v.rank)], dtype=dtype)
                ctypes.memmove(out.data_ptr(), v.data, v.size_bytes)
                outputs.append(out)
            report = _RunReport()
            self.wf.check(self.lib.wf_result_report(result, ctypes.byref(report)), "report")
            fallback = [self.lib.wf_result_host_fallback_op(result, i).decode()
                        for i in range(report.num_host_fallback_ops)]
            return outputs, {"wall_ms": report.wall_ms, "device_ms": report.device_ms, "host_fallback_ops": fallback}
        finally:
            self.lib.wf_result_free(result)

    def bench(self, tensors, warmup: int, iters: int):
        arr, keep = self._inputs(tensors)
        wall = (ctypes.c_double * iters)()
        device = (ctypes.c_double * iters)()
        self.wf.check(self.lib.wf_session_bench_inputs(self.handle, arr, len(tensors), warmup, iters, wall, device),
                      "bench")
        return list(wall), [d for d in device if d >= 0]


# ---- measuring ------------------------------------------------------------------------------------
def rel_l2(actual, expected) -> float:
    a = actual.detach().double().cpu().flatten()
    e = expected.detach().double().cpu().flatten()
    if a.shape != e.shape:
        return float("inf")
    denom = float(e.norm())
    err = float((a - e).norm())
    return err / denom if denom > 0 else err


def worst_rel_l2(outputs, reference) -> float:
    if len(outputs) != len(reference):
        return float("inf")
    return max(rel_l2(a, e) for a, e in zip(outputs, reference))


def flatten(out):
    try:
        from warpforge.export import _flatten_outputs
        return _flatten_outputs(out)[1]
    except ImportError:
        import torch
        leaves = torch.utils._pytree.tree_leaves(out)
        return [t.detach() for t in leaves if isinstance(t, torch.Tensor)]


def median(xs):
    return statistics.median(xs) if xs else None


def time_torch(fn, warmup: int, iters: int, cuda: bool):
    """(wall samples, device samples) in ms; device samples from CUDA events around each call."""
    import torch
    for _ in range(warmup):
        fn()
    if cuda:
        torch.cuda.synchronize()
    wall, device = [], []
    start = torch.cuda.Event(enable_timing=True) if cuda else None
    end = torch.cuda.Event(enable_timing=True) if cuda else None
    for _ in range(iters):
        t0 = time.perf_counter()
        if cuda:
            start.record()
        fn()
        if cuda:
            end.record()
            end.synchronize()
        wall.append((time.perf_counter() - t0) * 1e3)
        if cuda:
            device.append(start.elapsed_time(end))
    return wall, device


def torch_dtype(row_dtype: str):
    import torch
    return torch.bfloat16 if row_dtype == "bf16" else torch.float32


def cast_inputs(inputs, dtype, device):
    return tuple((x.to(dtype) if x.is_floating_point() else x).to(device) for x in inputs)


# ---- columns --------------------------------------------------------------------------------------
KERNEL_CACHE_ENV = "WARPFORGE_CACHE_DIR"
# What a compile probe's counts are called in the cell, from `warpforge bench --json`'s generated_kernels.
_PROBE_COUNTS = {"compiled": "nvrtc_programs", "from_kernel_cache": "kernel_cache_hits", "nvrtc_ms": "nvrtc_ms",
                 "load_ms": "load_ms", "tuned_problems": "tuned_problems", "tuning_ms": "tuning_ms",
                 "tuning_from_kernel_cache": "tuning_cache_hits"}


def _probe_env(wf: WarpForge, cache_dir: Path) -> dict:
    env = dict(os.environ, **{KERNEL_CACHE_ENV: str(cache_dir)})
    hostlibs = Path(tempfile.gettempdir()) / "wf-hostlibs"
    if wf.path.parent.name == "carry" and hostlibs.is_dir():  # the carried host libraries fill gaps only
        env["LD_LIBRARY_PATH"] = os.pathsep.join(x for x in (env.get("LD_LIBRARY_PATH"), str(hostlibs)) if x)
    return env


def _first_json(text: str) -> dict:
    start = text.find("{")
    if start < 0:
        raise ValueError(f"no JSON object in the output: {text[-400:]!r}")
    return json.JSONDecoder().raw_decode(text[start:])[0]


def compile_probe(wf: WarpForge, pkg: Path, args, cache_dir: Path) -> dict:
    """Opens `pkg` in a fresh process with the kernel cache in `cache_dir`: `warpforge bench --json
    --iters 1 --warmup 0` (the binary beside libwarpforge.so) gives the compile time and the
    generated kernels and library algorithms behind it. A fresh process each time, because a
    process that compiled a program or timed a problem before reuses it from memory and never reads
    the cache for it."""
    cli = wf.path.parent / "warpforge"
    if not (cli.is_file() and os.access(cli, os.X_OK)):
        raise FileNotFoundError(f"no warpforge binary beside {wf.path}")
    cmd = [str(cli), "bench", str(pkg), "--device", args.wf_device, "--iters", "1", "--warmup", "0", "--json"]
    if args.device == "cpu":
        cmd += ["--threads", str(args.threads)]
    if args.allow_tf32:
        cmd.append("--allow-tf32")
    proc = subprocess.run(cmd, env=_probe_env(wf, cache_dir), capture_output=True, text=True,
                          timeout=args.compile_timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{cli.name} bench exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    out = _first_json(proc.stdout)
    probe = {"s": out["compile_ms"] / 1e3}
    probe.update({_PROBE_COUNTS.get(k, k): v for k, v in out.get("generated_kernels", {}).items()})
    return probe


def compile_cold_warm(wf: WarpForge, pkg: Path, args, cache_dir: Path) -> dict:
    """The cell's compile figures: cold (an empty kernel cache folder) and warm (the same folder again)."""
    cell = {}
    for when in ("cold", "warm"):
        try:
            probe = compile_probe(wf, pkg, args, cache_dir)
        except Exception as e:  # noqa: BLE001 - the compile figures say why; the run still goes on
            cell[f"compile_{when}"] = {"error": f"{type(e).__name__}: {e}".strip().replace("\n", " ")}
            break
        cell[f"compile_{when}"] = probe
        cell[f"compile_{when}_s"] = probe["s"]
    return cell


def column_warpforge(wf: WarpForge, pkg: Path, inputs, reference, args) -> dict:
    """Compile cold and warm (each in a fresh process, one fresh kernel cache folder for both; see
    compile_cold_warm), then this process opens the package with that (now warm) cache, runs and
    benches it. The folder is removed afterwards and the environment restored."""
    cell = {}
    saved = os.environ.get(KERNEL_CACHE_ENV)
    cache_dir = None
    try:
        if args.cold_warm:
            Path(args.workdir).mkdir(parents=True, exist_ok=True)
            cache_dir = Path(tempfile.mkdtemp(prefix="kernel-cache-", dir=args.workdir))
            os.environ[KERNEL_CACHE_ENV] = str(cache_dir)
            cell.update(compile_cold_warm(wf, pkg, args, cache_dir))
        t0 = time.perf_counter()
        session = wf.open(pkg, args.wf_device, threads=args.threads if args.device == "cpu" else 0,
                          allow_tf32=args.allow_tf32)
        cell["open_s"] = time.perf_counter() - t0
        try:
            outputs, report = session.run(inputs)
            err = worst_rel_l2(outputs, reference)
            wall, device = session.bench(inputs, args.warmup, args.iters)
            cell.update({"wall_ms": median(wall), "device_ms": median(device), "rel_l2": err,
                         "memory_bytes": session.device_bytes(), "device_name": session.device_name(),
                         "host_fallback_ops": report["host_fallback_ops"], "wall_samples_ms": wall,
                         "device_samples_ms": device})
        finally:
            session.close()
    finally:
        if saved is None:
            os.environ.pop(KERNEL_CACHE_ENV, None)
        else:
            os.environ[KERNEL_CACHE_ENV] = saved
        if cache_dir is not None:
            shutil.rmtree(cache_dir, ignore_errors=True)
    return cell


def column_torch(model, inputs, reference, args, compiled: bool) -> dict:
    import torch
    cuda = args.device == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    fn_model = torch.compile(model) if compiled else model
    with torch.no_grad():
        t0 = time.perf_counter()
        out = fn_model(*inputs)
        first_ms = (time.perf_counter() - t0) * 1e3
        err = worst_rel_l2([t.float() for t in flatten(out)], reference)
        del out
        wall, device = time_torch(lambda: fn_model(*inputs), args.warmup, args.iters, cuda)
    cell = {"wall_ms": median(wall), "device_ms": median(device), "rel_l2": err, "first_call_ms": first_ms,
            "wall_samples_ms": wall, "device_samples_ms": device}
    if cuda:
        torch.cuda.synchronize()
        cell["memory_bytes"] = torch.cuda.max_memory_allocated()
    return cell


def _force_highest_precision(text: str) -> str:
    """Every dot_general and convolution with precision_config [HIGHEST, HIGHEST]: what JAX emits
    under jax_default_matmul_precision='highest' (true fp32 on GPUs), written into the text."""
    highest = "precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]"
    out, n = [], 0
    for line in text.splitlines(keepends=True):
        m = re.search(r'"?stablehlo\.(dot_general|convolution|dot)"?', line)
        if m and "precision" not in line:
            brace = line.find("{", m.end())
            if brace >= 0:
                line = line[:brace + 1] + highest + ", " + line[brace + 1:]
                n += 1
            elif "stablehlo.dot_general" in line and " : " in line:
                # pretty form: `stablehlo.dot_general %a, %b, contracting_dims = ... : (...)`
                i = line.index(" : ")
                line = line[:i] + ", precision = [HIGHEST, HIGHEST]" + line[i:]
                n += 1
        out.append(line)
    return "".join(out)


def _xla_runtime(device: str):
    """(jax, backend, device, compile function, execute function) with the names this jax has."""
    import jax
    # The packages take i64 arguments (token ids, batch-norm counters): keep them 64-bit.
    jax.config.update("jax_enable_x64", True)
    from jax._src import xla_bridge
    try:
        from jax._src.lib import xla_client
    except ImportError as e:
        raise RuntimeError(f"jax {jax.__version__}: no jax._src.lib.xla_client ({e})")
    platforms = ["cuda", "gpu"] if device == "cuda" else ["cpu"]
    backend, errors = None, []
    for p in platforms:
        try:
            backend = xla_bridge.get_backend(p)
            break
        except Exception as e:  # noqa: BLE001 - the next name, then a clear message
            errors.append(f"{p}: {e}")
    if backend is None:
        raise RuntimeError(f"jax {jax.__version__}: no XLA backend for {device} ({'; '.join(errors)})")
    dev = backend.local_devices()[0]

    options_cls = getattr(xla_client, "CompileOptions", None)
    if options_cls is None:
        raise RuntimeError(f"jax {jax.__version__}: xla_client has no CompileOptions")

    def compile_text(text: str):
        options = options_cls()
        devices = []
        if hasattr(xla_client, "DeviceList"):
            devices.append(xla_client.DeviceList((dev,)))
        devices.append([dev])
        methods = [m for m in ("compile_and_load", "compile") if hasattr(backend, m)]
        if not methods:
            raise RuntimeError(f"jax {jax.__version__}: the XLA client has neither compile_and_load nor compile")
        errors = []
        for m in methods:
            for d in devices:
                try:
                    return getattr(backend, m)(text, d, options)
                except TypeError as e:  # another signature: try the next form
                    errors.append(f"{m}({type(d).__name__}): {e}")
            try:
                return getattr(backend, m)(text, options)  # older clients: (computation, options)
            except TypeError as e:
                errors.append(f"{m}(text, options): {e}")
        raise RuntimeError(f"jax {jax.__version__}: no compile signature fits: " + "; ".join(errors))

    def execute(exe, arrays):
        if hasattr(exe, "execute_sharded"):
            res = exe.execute_sharded(arrays)
            if hasattr(res, "disassemble_into_single_device_arrays"):
                return [a[0] for a in res.disassemble_into_single_device_arrays()]
            return [a[0] for a in res]
        if hasattr(exe, "execute"):
            return exe.execute(arrays)
        raise RuntimeError(f"jax {jax.__version__}: the loaded executable has no execute_sharded/execute")

    return jax, backend, dev, compile_text, execute


def _device_peak(dev):
    try:
        stats = dev.memory_stats()
    except Exception:  # noqa: BLE001 - not every backend keeps statistics
        return None
    return int(stats["peak_bytes_in_use"]) if stats and "peak_bytes_in_use" in stats else None


def _to_numpy(t):
    """A host torch tensor as a numpy array (bf16 through ml_dtypes, which jax ships)."""
    import torch
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        import ml_dtypes
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def column_xla(pkg: Path, manifest: dict, inputs, reference, args) -> dict:
    import torch
    from safetensors.torch import load_file
    jax, backend, dev, compile_text, execute = _xla_runtime(args.device)
    text = (pkg / "model.mlir").read_text()
    fp32 = manifest.get("dtype", "f32") == "f32"
    if args.xla_precision == "highest":
        text = _force_highest_precision(text)
    peak_before = _device_peak(dev)
    t0 = time.perf_counter()
    exe = compile_text(text)
    compile_ms = (time.perf_counter() - t0) * 1e3
    weights = load_file(str(pkg / "weights.safetensors"))
    nargs = len(manifest["inputs"]) + len(manifest["weights"])
    arrays = [None] * nargs
    for spec, x in zip(manifest["inputs"], inputs):
        arrays[spec["argument"]] = jax.device_put(_to_numpy(x), dev)
    for spec in manifest["weights"]:
        arrays[spec["argument"]] = jax.device_put(_to_numpy(weights[spec["name"]]), dev)
    del weights
    outs = execute(exe, arrays)
    jax.block_until_ready(outs)
    import numpy as np
    host = [torch.from_numpy(np.asarray(o).astype(np.float32)) for o in outs]
    err = worst_rel_l2(host, reference)
    for _ in range(args.warmup):
        jax.block_until_ready(execute(exe, arrays))
    wall = []
    for _ in range(args.iters):
        t0 = time.perf_counter()
        jax.block_until_ready(execute(exe, arrays))
        wall.append((time.perf_counter() - t0) * 1e3)
    cell = {"wall_ms": median(wall), "device_ms": None, "rel_l2": err, "compile_ms": compile_ms,
            "wall_samples_ms": wall, "jax": jax.__version__,
            "precision": ("HIGHEST (precision_config in the text)" if args.xla_precision == "highest"
                          else "XLA default") if fp32 else "bf16"}
    try:
        stats = exe.get_compiled_memory_stats()
        cell["compiled_bytes"] = int(stats.argument_size_in_bytes + stats.output_size_in_bytes +
                                     stats.temp_size_in_bytes - stats.alias_size_in_bytes)
    except Exception:  # noqa: BLE001 - optional
        pass
    # The device's peak_bytes_in_use is a high-water mark for the whole process, never reset:
    # it is this column's peak only when this column raised it. Otherwise the compiled
    # executable's own figure (arguments + outputs + temporaries) stands in.
    peak_after = _device_peak(dev)
    cell["process_peak_bytes"] = peak_after
    if peak_after is not None and (peak_before is None or peak_after > peak_before):
        cell["memory_bytes"] = peak_after
        cell["memory_note"] = "device peak_bytes_in_use (raised by this column)"
    elif "compiled_bytes" in cell:
        cell["memory_bytes"] = cell["compiled_bytes"]
        cell["memory_note"] = "compiled executable: arguments + outputs + temporaries"
    del arrays, outs
    return cell


# ---- one row ----------------------------------------------------------------------------------------
def export_row(name: str, spec: dict, model, inputs, workdir: Path, reexport: bool) -> Path:
    import torch
    import warpforge
    pkg = workdir / name
    # "mlir": 2 marks packages whose float literals upstream MLIR parses (`1.0e-12`, not `1e-12`):
    # packages exported before that are exported again.
    stamp = json.dumps({**{k: spec[k] for k in sorted(spec)}, "mlir": 2}, sort_keys=True)
    stamp_file = pkg / "bench_row.json"
    if not reexport and stamp_file.exists() and stamp_file.read_text() == stamp and (pkg / "manifest.json").exists():
        return pkg
    if pkg.exists():
        shutil.rmtree(pkg)
    dtype = torch.bfloat16 if spec["dtype"] == "bf16" else None
    warpforge.export(model, inputs, str(pkg), dtype=dtype, activations=None, name=name)
    stamp_file.write_text(stamp)
    return pkg


def run_row(name: str, args, wf: WarpForge | None) -> dict:
    import torch
    spec = row_spec(name, args.small)
    row = {"row": name, "spec": spec, "columns": {}}
    log = lambda msg: print(f"[{name}] {msg}", file=sys.stderr, flush=True)  # noqa: E731
    t0 = time.perf_counter()
    model, inputs = build_model(spec)
    dtype = torch_dtype(spec["dtype"])
    device = "cuda" if args.device == "cuda" else "cpu"

    # The reference: the model in fp32 on the device, TF32 off whatever --allow-tf32 says.
    ref_model = model.to(device)
    tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        with torch.no_grad():
            reference = [t.float().cpu() for t in flatten(ref_model(*[x.to(device) for x in inputs]))]
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
    model = ref_model.to("cpu")
    del ref_model
    if device == "cuda":
        torch.cuda.empty_cache()
    log(f"model and fp32 reference ({time.perf_counter() - t0:.1f} s)")

    t0 = time.perf_counter()
    try:
        pkg = export_row(name, spec, model, inputs, Path(args.workdir), args.reexport)
        manifest = json.loads((pkg / "manifest.json").read_text())
        row["package"] = str(pkg)
        row["work"] = model_work(pkg)
        row["export_s"] = time.perf_counter() - t0
        log(f"exported to {pkg} ({row['export_s']:.1f} s)")
    except Exception as e:  # noqa: BLE001 - the row reports it
        row["error"] = f"export failed: {type(e).__name__}: {e}"
        log(row["error"])
        traceback.print_exc()
        return row
    # The package's inputs are exactly these (floating ones cast to the row's dtype).
    wf_inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)

    def attempt(column, fn):
        if column in args.skip:
            row["columns"][column] = {"skipped": True}
            return
        t = time.perf_counter()
        try:
            row["columns"][column] = fn()
            log(f"{column}: {fmt_ms(row['columns'][column])} ({time.perf_counter() - t:.1f} s)")
        except Exception as e:  # noqa: BLE001 - one column's failure is that cell's text
            msg = f"{type(e).__name__}: {e}".strip().replace("\n", " ")
            row["columns"][column] = {"error": msg}
            log(f"{column} failed: {msg[:2000]}")
            if args.verbose:
                traceback.print_exc()
        finally:
            if device == "cuda":
                torch.cuda.synchronize()
                torch.cuda.empty_cache()

    attempt("warpforge", lambda: column_warpforge(wf, pkg, wf_inputs, reference, args))
    run_model = copy.deepcopy(model).to(dtype).to(device)
    run_inputs = cast_inputs(inputs, dtype, device)
    attempt("eager", lambda: column_torch(run_model, run_inputs, reference, args, compiled=False))
    attempt("compile", lambda: column_torch(run_model, run_inputs, reference, args, compiled=True))
    if device == "cuda":
        import torch._dynamo
        torch._dynamo.reset()
    del run_model, run_inputs
    if device == "cuda":
        torch.cuda.empty_cache()
    attempt("xla", lambda: column_xla(pkg, manifest, wf_inputs, reference, args))
    return row


# ---- the table --------------------------------------------------------------------------------------
def timing(cell: dict, cuda: bool):
    """The figure a column is judged by: device time on cuda (XLA: wall), wall time on cpu."""
    if not cell or "error" in cell or cell.get("skipped"):
        return None
    if cuda and cell.get("device_ms") is not None:
        return cell["device_ms"]
    return cell.get("wall_ms")


def fmt_ms(cell: dict) -> str:
    if cell.get("skipped"):
        return "skipped"
    if "error" in cell:
        return "error"
    d, w = cell.get("device_ms"), cell.get("wall_ms")
    if d is not None:
        return f"{d:.3f} ms (wall {w:.3f})"
    return f"{w:.3f} ms"


def fmt_cell(cell: dict, cuda: bool) -> str:
    if cell.get("skipped"):
        return "skipped"
    if "error" in cell:
        msg = cell["error"].replace("|", "/")
        return "error: " + (msg if len(msg) <= 160 else msg[:157] + "...")
    t = timing(cell, cuda)
    parts = [f"{t:.3f}"]
    if cuda and cell.get("device_ms") is not None and cell.get("wall_ms") is not None:
        parts[0] += f" (wall {cell['wall_ms']:.3f})"
    parts.append(f"err {cell['rel_l2']:.1e}")
    if cell.get("memory_bytes") is not None:
        parts.append(f"{cell['memory_bytes'] / 2**20:.0f} MiB")
    return ", ".join(parts)


def warm_work(cell: dict) -> list[str]:
    """What a warm start still compiled or timed (it should do neither), in words; [] when nothing or unknown."""
    warm = cell.get("compile_warm") or {}
    if "error" in warm:
        return []
    out = []
    if warm.get("nvrtc_programs"):
        out.append(f"warm compiled {warm['nvrtc_programs']} kernel{'s' if warm['nvrtc_programs'] != 1 else ''}")
    if warm.get("tuned_problems"):
        out.append(f"warm timed {warm['tuned_problems']} algorithm problem{'s' if warm['tuned_problems'] != 1 else ''}")
    return out


def fmt_s(seconds: float) -> str:
    """Seconds to three significant digits or whole from 100 (a small package opens in milliseconds)."""
    return f"{seconds:.0f}" if seconds >= 100 else f"{seconds:.3g}"


def fmt_compile(cell: dict) -> str:
    """The WarpForge compile cell: seconds cold / warm, NVRTC programs and timed algorithm problems
    cold / warm (with the warm start's cache hits), and what the warm start should not have done, in bold."""
    if not cell or cell.get("skipped"):
        return "skipped"
    cold, warm = cell.get("compile_cold"), cell.get("compile_warm")
    if not cold:
        return "-"
    for probe in (cold, warm or {}):
        if "error" in probe:
            msg = probe["error"].replace("|", "/")
            return "error: " + (msg if len(msg) <= 160 else msg[:157] + "...")
    warm = warm or {}
    text = f"{fmt_s(cold['s'])} / {fmt_s(warm['s']) if 's' in warm else '-'} s"
    counts = [cold.get(k, 0) + warm.get(k, 0) for k in ("nvrtc_programs", "kernel_cache_hits", "tuned_problems",
                                                         "tuning_cache_hits")]
    if any(counts):  # cpu: no generated kernels, nothing timed
        text += (f"; NVRTC {cold.get('nvrtc_programs', 0)} / {warm.get('nvrtc_programs', '-')} "
                 f"({warm.get('kernel_cache_hits', 0)} hits)"
                 f"; timed {cold.get('tuned_problems', 0)} / {warm.get('tuned_problems', '-')} "
                 f"({warm.get('tuning_cache_hits', 0)} hits)")
    flagged = warm_work(cell)
    if flagged:
        text += "; " + "; ".join(f"**{w}**" for w in flagged)
    return text


def floors(row: dict, cuda: bool) -> tuple[str, list[str]]:
    """pass/FAIL against the floors, and why (notes that do not fail start with "note:")."""
    if "error" in row:
        return "FAIL", [row["error"]]
    cols = row["columns"]
    wf, eager = cols.get("warpforge", {}), cols.get("eager", {})
    why, notes = [], []
    t_wf, t_eager = timing(wf, cuda), timing(eager, cuda)
    if t_wf is None:
        why.append("no WarpForge time")
    else:
        if t_eager is not None and t_wf > t_eager:
            why.append(f"WarpForge {t_wf:.3f} > eager {t_eager:.3f} ms")
        if row["row"].startswith("bert-base-b1") and t_wf > BERT_BASE_FLOOR_MS:
            why.append(f"bert-base b1 {t_wf:.3f} > {BERT_BASE_FLOOR_MS} ms")
        low = row["spec"]["dtype"] == "bf16"
        limit = LOW_REL_L2 if low else FP32_REL_L2
        err = wf.get("rel_l2", math.inf)
        eager_err = eager.get("rel_l2") if "rel_l2" in eager else None
        if err > limit:
            # A bf16 model whose PyTorch bf16 run is itself beyond the limit (random weights can
            # amplify rounding through the layers): WarpForge passes within 1.25x of that error.
            if low and eager_err is not None and eager_err > limit and err <= LOW_EAGER_FACTOR * eager_err:
                notes.append(f"note: err {err:.1e} > {limit:g}, within {LOW_EAGER_FACTOR}x eager bf16's own {eager_err:.1e}")
            else:
                why.append(f"WarpForge error {err:.1e} > {limit:g}")
        if wf.get("host_fallback_ops"):
            why.append(f"{len(wf['host_fallback_ops'])} ops on the host")
        notes += [f"note: {w}" for w in warm_work(wf)]
    return ("pass" if not why else "FAIL"), why + notes


def table(results: list[dict], meta: dict) -> str:
    cuda = meta["device"] == "cuda"
    unit = "median device ms (wall ms)" if cuda else "median wall ms"
    lines = [
        f"### WarpForge vs PyTorch and XLA: {meta['device_name']}{' (small configs)' if meta['small'] else ''}",
        "",
        f"{unit} over {meta['iters']} runs after {meta['warmup']} warm-up; err = relative L2 vs PyTorch eager fp32 "
        f"(TF32 off); memory = peak device memory of the column (WarpForge: device bytes in use).",
        f"Precision: fp32 rows in true fp32: torch.backends.cuda.matmul.allow_tf32=False, "
        f"torch.backends.cudnn.allow_tf32=False, WarpForge allow_tf32={'on' if meta['allow_tf32'] else 'off'}; "
        f"XLA {meta['xla_precision_note']}.",
        "Timing: WarpForge = run report device time (CUDA events, inputs resident); eager/compile = CUDA events "
        "around the call; XLA = host clock around execute + block_until_ready." if cuda else
        "Timing: host wall clock around each call.",
        f"Floors: WarpForge <= eager on every row; bert-base b1 <= {BERT_BASE_FLOOR_MS} ms; WarpForge err <= "
        f"{FP32_REL_L2:g} (fp32) / {LOW_REL_L2:g} (bf16; or within {LOW_EAGER_FACTOR}x eager bf16's own err where "
        f"that is larger); no host fallback.",
        "",
        "| row | WarpForge | WF compile cold / warm | eager | torch.compile | XLA | WF / eager | floors |",
        "|---|---|---|---|---|---|---:|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['row']} | {r['error'][:200]} | | | | | | FAIL |")
            continue
        cols = r["columns"]
        t_wf, t_eager = timing(cols.get("warpforge", {}), cuda), timing(cols.get("eager", {}), cuda)
        ratio = f"{t_wf / t_eager:.2f}" if t_wf and t_eager else "-"
        verdict, why = floors(r, cuda)
        cells = [fmt_cell(cols.get(c, {"skipped": True}), cuda) for c in COLUMNS]
        cells.insert(1, fmt_compile(cols.get("warpforge", {"skipped": True})))
        lines.append(f"| {r['row']} | " + " | ".join(cells) + f" | {ratio} | {verdict}{': ' + '; '.join(why) if why else ''} |")
    lines += [
        "",
        "WF compile cold / warm: seconds to open the package (load, compile, bind the weights: `warpforge bench`'s "
        "compile time), each time in a fresh process with the kernel cache in one new folder: cold = the folder empty, "
        "so every generated kernel is compiled by NVRTC and every library algorithm problem is timed; warm = the same "
        "folder again, a warm start, which should compile no kernel and time nothing. NVRTC = programs compiled cold / "
        "warm, timed = algorithm problems timed cold / warm, with the warm start's kernel cache hits; a warm start that "
        "compiled or timed anything is in bold. The other WarpForge figures come from a third open of that (warm) "
        "cache in this process." + ("" if cuda else " On cpu there is no kernel cache: cold and warm do the same work."),
    ]
    roof = [(r, roofline(r, meta)) for r in results] if cuda else []
    hbm = hbm_ceiling(meta.get("device_name", ""))
    if any(x for _, x in roof):
        lines += [
            "",
            f"Roofline (WarpForge column): work = 2 x multiply-adds of the matrix products and convolutions "
            f"(model.mlir's shapes); floor = max(work at the compute ceiling, weights read once at "
            f"{hbm[0]:g} TB/s, measured on the {hbm[2]}; {hbm[1]:g} nominal); ceilings: " +
            "; ".join(f"{k} {c['tflops']:g} TFLOP/s ({c['what']})" for k, c in CEILINGS.items()) + ".",
            "",
            "| row | work TFLOP | weights GB | floor ms | WarpForge ms | achieved TFLOP/s | of ceiling | of nominal | WF / floor |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r, x in roof:
            if not x:
                continue
            t = timing(r["columns"]["warpforge"], True)
            lines.append(f"| {r['row']} | {r['work']['flops'] / 1e12:.3f} | {r['work']['weight_bytes'] / 1e9:.2f} | "
                         f"{x['floor_ms']:.3f} ({x['precision']}{', weights' if x['memory_ms'] > x['compute_ms'] else ''}) | "
                         f"{t:.3f} | {x['achieved_tflops']:.0f} | {x['of_ceiling']:.0%} | {x['of_nominal']:.0%} | "
                         f"{x['floor_ratio']:.2f}x |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build folder holding libwarpforge.so (or its carry/ folder)")
    ap.add_argument("--lib", help="path of libwarpforge.so (overrides --build)")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--rows", default="all", help="comma-separated rows, or all: " + ", ".join(ROWS))
    ap.add_argument("--skip", default="", help="comma-separated columns to leave out: " + ", ".join(COLUMNS))
    ap.add_argument("--small", action="store_true", help="tiny configs (2 layers, small batch): for cpu runs")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="host threads (cpu)")
    ap.add_argument("--allow-tf32", action="store_true", help="TF32 for fp32 rows in every column")
    ap.add_argument("--xla-precision", choices=["default", "highest"], default="default",
                    help="highest: precision_config HIGHEST on every dot_general/convolution XLA compiles")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "wf-gpu-models"),
                    help="exported packages (reused when the row's spec is unchanged)")
    ap.add_argument("--reexport", action="store_true")
    ap.add_argument("--no-cold-warm", dest="cold_warm", action="store_false",
                    help="leave out the WarpForge compile times cold and warm (two extra processes per row)")
    ap.add_argument("--compile-timeout", type=float, default=1200,
                    help="seconds each cold or warm compile process may take (default 1200)")
    ap.add_argument("--json", help="write every figure and sample here")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--table-from", metavar="JSON[,JSON]",
                    help="print the table of earlier --json files (rows of split runs together) and exit")
    args = ap.parse_args()

    if args.table_from:
        meta, results = None, []
        for f in args.table_from.split(","):
            data = json.loads(Path(f).read_text())
            meta = meta or data["meta"]
            results += data["rows"]
        for r in results:
            r["floors"] = floors(r, meta["device"] == "cuda")
        print(table(results, meta))
        return 0 if all(r["floors"][0] == "pass" for r in results) else 1

    rows = list(ROWS) if args.rows == "all" else [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        ap.error(f"unknown rows {unknown}; known: {', '.join(ROWS)}")
    args.skip = {c.strip() for c in args.skip.split(",") if c.strip()}
    if args.skip - set(COLUMNS):
        ap.error(f"--skip takes {', '.join(COLUMNS)}")
    if args.iters < 30:
        print(f"note: --iters {args.iters} is below the 30 timed runs the figures are meant to use", file=sys.stderr)

    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: PyTorch sees no GPU (use --device cpu --small here)")
    torch.backends.cuda.matmul.allow_tf32 = args.allow_tf32
    torch.backends.cudnn.allow_tf32 = args.allow_tf32
    if args.device == "cpu":
        torch.set_num_threads(args.threads)
    args.wf_device = "cuda:0" if args.device == "cuda" else "cpu"

    wf = None
    if "warpforge" not in args.skip:
        wf = WarpForge(find_library(args.build, args.lib))
        print(f"libwarpforge.so {wf.version} ({wf.path}), devices: {wf.device_kinds}", file=sys.stderr)
        if args.device == "cuda" and "cuda" not in wf.device_kinds.split(","):
            raise SystemExit(f"{wf.path} was built without the CUDA backend")
    device_name = torch.cuda.get_device_name(0) if args.device == "cuda" else f"cpu ({platform.processor() or platform.machine()}, {args.threads} threads)"
    if args.xla_precision == "highest":
        xla_note = "with precision_config HIGHEST written into every dot_general/convolution (true fp32)"
    else:
        xla_note = ("at its default f32 precision, which on Ampere/Hopper runs dots and convolutions in TF32 "
                    "(--xla-precision highest for true fp32)") if args.device == "cuda" else "at its default precision (fp32 on cpu)"
    meta = {"device": args.device, "device_name": device_name, "small": args.small, "iters": args.iters,
            "warmup": args.warmup, "allow_tf32": args.allow_tf32, "xla_precision": args.xla_precision,
            "xla_precision_note": xla_note, "torch": torch.__version__, "threads": args.threads,
            "warpforge": wf.version if wf else None, "library": str(wf.path) if wf else None}
    try:
        import jax
        meta["jax"] = jax.__version__
    except ImportError:
        meta["jax"] = None

    results = []
    for name in rows:
        try:
            results.append(run_row(name, args, wf))
        except Exception as e:  # noqa: BLE001 - the row's cell says why; the others still run
            traceback.print_exc()
            results.append({"row": name, "spec": row_spec(name, args.small), "columns": {},
                            "error": f"{type(e).__name__}: {e}"})
        if args.json:  # after each row, so that a run cut short keeps what it measured
            Path(args.json).write_text(json.dumps({"meta": meta, "rows": results}, indent=1, default=str))
    for r in results:
        r["floors"] = floors(r, args.device == "cuda")
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": results}, indent=1, default=str))
    print(table(results, meta))
    return 0 if all(r["floors"][0] == "pass" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
