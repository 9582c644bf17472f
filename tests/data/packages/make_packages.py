#!/usr/bin/env python3
"""Writes the model packages under tests/data/packages (docs/model-package.md) used by the unit
and CLI tests. Deterministic: running it again rewrites identical files.

  mlp/  two dense layers, static batch 2: input x; weights fc1.weight/bias, fc2.weight/bias;
        outputs logits and probs (= logistic(logits)); activations fc1 (%h1) and fc2 (%logits).
  dyn/  dynamic batch: inputs x [batch, 4] and y [batch, 3] (sharing 'batch'), weight w [4, 3];
        output out = x @ w + y; no activations.

Golden outputs are computed with numpy in float64 and stored as float32.

Usage: make_packages.py [OUT_DIR]   (default: the directory holding this script)
"""
import json
import os
import struct
import sys

import numpy as np


def write_safetensors(path, tensors):
    codes = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64", np.dtype(np.int64): "I64"}
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        blob = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": codes[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_package(out, manifest, mlir, weights, golden_inputs, golden_outputs, golden_activations=None):
    os.makedirs(os.path.join(out, "golden"), exist_ok=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "model.mlir"), "w") as f:
        f.write(mlir)
    write_safetensors(os.path.join(out, "weights.safetensors"), weights)
    write_safetensors(os.path.join(out, "golden", "inputs.safetensors"), golden_inputs)
    write_safetensors(os.path.join(out, "golden", "outputs.safetensors"), golden_outputs)
    if golden_activations is not None:
        write_safetensors(os.path.join(out, "golden", "activations.safetensors"), golden_activations)


PRODUCER = {"name": "tests/data/packages/make_packages.py", "version": "1"}

MLP_MLIR = """\
module @mlp {
  func.func @main(%x: tensor<2x4xf32>, %w1: tensor<8x4xf32>, %b1: tensor<8xf32>, %w2: tensor<3x8xf32>,
                  %b2: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
    %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [1] : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
    %1 = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
    %2 = stablehlo.add %0, %1 : tensor<2x8xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<2x8xf32>
    %h1 = stablehlo.maximum %2, %zero : tensor<2x8xf32>
    %3 = stablehlo.dot_general %h1, %w2, contracting_dims = [1] x [1] : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x3xf32>
    %4 = stablehlo.broadcast_in_dim %b2, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %logits = stablehlo.add %3, %4 : tensor<2x3xf32>
    %probs = stablehlo.logistic %logits : tensor<2x3xf32>
    return %logits, %probs : tensor<2x3xf32>, tensor<2x3xf32>
  }
}
"""

DYN_MLIR = """\
module @dyn {
  func.func @main(%x: tensor<?x4xf32>, %y: tensor<?x3xf32>, %w: tensor<4x3xf32>) -> tensor<?x3xf32> {
    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
    %out = stablehlo.add %0, %y : tensor<?x3xf32>
    return %out : tensor<?x3xf32>
  }
}
"""


def mlp(out):
    rng = np.random.default_rng(3)
    f32 = np.float32
    x = rng.standard_normal((2, 4)).astype(f32)
    w1 = (rng.standard_normal((8, 4)) * 0.5).astype(f32)
    b1 = (rng.standard_normal(8) * 0.1).astype(f32)
    w2 = (rng.standard_normal((3, 8)) * 0.5).astype(f32)
    b2 = (rng.standard_normal(3) * 0.1).astype(f32)
    h1 = np.maximum(x.astype(np.float64) @ w1.T.astype(np.float64) + b1, 0.0)
    logits = h1 @ w2.T.astype(np.float64) + b2
    probs = 1.0 / (1.0 + np.exp(-logits))
    manifest = {
        "format": "warpforge.package",
        "format_version": 1,
        "name": "mlp",
        "producer": PRODUCER,
        "entry": "main",
        "dtype": "f32",
        "inputs": [{"name": "x", "argument": 0, "dtype": "f32", "shape": [2, 4]}],
        "weights": [
            {"name": "fc1.weight", "argument": 1, "dtype": "f32", "shape": [8, 4], "kind": "parameter"},
            {"name": "fc1.bias", "argument": 2, "dtype": "f32", "shape": [8], "kind": "parameter"},
            {"name": "fc2.weight", "argument": 3, "dtype": "f32", "shape": [3, 8], "kind": "parameter"},
            {"name": "fc2.bias", "argument": 4, "dtype": "f32", "shape": [3], "kind": "parameter"},
        ],
        "outputs": [
            {"name": "logits", "result": 0, "dtype": "f32", "shape": [2, 3]},
            {"name": "probs", "result": 1, "dtype": "f32", "shape": [2, 3]},
        ],
        "dynamic_dims": {},
        "tolerances": {"rtol": 1e-3, "atol": 1e-5},
        "golden": {
            "inputs": "golden/inputs.safetensors",
            "outputs": "golden/outputs.safetensors",
            "activations": "golden/activations.safetensors",
        },
        "activations": [
            {"name": "fc1", "value": "%h1", "dtype": "f32", "shape": [2, 8]},
            {"name": "fc2", "value": "%logits", "dtype": "f32", "shape": [2, 3]},
        ],
    }
    write_package(out, manifest, MLP_MLIR,
                  {"fc1.weight": w1, "fc1.bias": b1, "fc2.weight": w2, "fc2.bias": b2},
                  {"x": x},
                  {"logits": logits.astype(f32), "probs": probs.astype(f32)},
                  {"fc1": h1.astype(f32), "fc2": logits.astype(f32)})


def dyn(out):
    rng = np.random.default_rng(4)
    f32 = np.float32
    x = rng.standard_normal((3, 4)).astype(f32)
    y = rng.standard_normal((3, 3)).astype(f32)
    w = rng.standard_normal((4, 3)).astype(f32)
    result = x.astype(np.float64) @ w.astype(np.float64) + y
    manifest = {
        "format": "warpforge.package",
        "format_version": 1,
        "name": "dyn",
        "producer": PRODUCER,
        "entry": "main",
        "dtype": "f32",
        "inputs": [
            {"name": "x", "argument": 0, "dtype": "f32", "shape": ["batch", 4]},
            {"name": "y", "argument": 1, "dtype": "f32", "shape": ["batch", 3]},
        ],
        "weights": [{"name": "w", "argument": 2, "dtype": "f32", "shape": [4, 3], "kind": "parameter"}],
        "outputs": [{"name": "out", "result": 0, "dtype": "f32", "shape": ["batch", 3]}],
        "dynamic_dims": {"batch": {"min": 1, "max": 64}},
        "tolerances": {"rtol": 1e-3, "atol": 1e-5},
        "golden": {"inputs": "golden/inputs.safetensors", "outputs": "golden/outputs.safetensors"},
        "activations": [],
    }
    write_package(out, manifest, DYN_MLIR, {"w": w}, {"x": x, "y": y}, {"out": result.astype(f32)})


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    mlp(os.path.join(root, "mlp"))
    dyn(os.path.join(root, "dyn"))


if __name__ == "__main__":
    main()
