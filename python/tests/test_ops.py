"""Op-level checks: small functions exported and run on WarpForge, compared with PyTorch. They
cover lowering paths the model zoo does not reach (variants, dtypes, indexing forms)."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import warpforge
from helpers import compare, run_package


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def _g(seed=0):
    return torch.Generator().manual_seed(seed)


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=_g(seed))


def randint(lo, hi, *shape, seed=0):
    return torch.randint(lo, hi, shape, generator=_g(seed))


CASES = {
    "sdpa_gqa_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
                        (randn(2, 8, 5, 16), randn(2, 2, 5, 16, seed=1), randn(2, 2, 5, 16, seed=2))),
    "sdpa_float_mask": (lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3),
                        (randn(2, 4, 5, 8), randn(2, 4, 7, 8, seed=1), randn(2, 4, 7, 8, seed=2), randn(5, 7, seed=3))),
    "sdpa_bool_mask": (lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m > -1.0),
                       (randn(1, 2, 4, 8), randn(1, 2, 6, 8, seed=1), randn(1, 2, 6, 8, seed=2), randn(1, 1, 4, 6, seed=3))),
    "index_non_adjacent": (lambda x, i, j: x[i, :, j], (randn(5, 3, 6), randint(-5, 5, 4), randint(0, 6, 4, seed=1))),
    "index_adjacent_broadcast": (lambda x, i, j: x[:, i, j], (randn(2, 5, 6), randint(0, 5, 3, 1), randint(-6, 6, 1, 4))),
    "gather": (lambda x, i: torch.gather(x, 1, i), (randn(3, 5, 4), randint(0, 5, 3, 2, 4))),
    "index_select": (lambda x, i: torch.index_select(x, 2, i), (randn(3, 5, 4), randint(0, 4, 6))),
    "cumsum_argmax_max": (lambda x: (x.cumsum(1), x.argmax(-1), x.max(dim=1).values, x.max(dim=1).indices,
                                     x.argmin()), (randn(3, 7, 5),)),
    "var_mean_std": (lambda x: (x.var(dim=1), x.var(dim=(0, 2), unbiased=False, keepdim=True), x.std(), x.mean()),
                     (randn(3, 7, 5),)),
    "int_div_rem": (lambda a, b: (torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
                                  a % b, torch.fmod(a, b), a / b),
                    (randint(-20, 20, 4, 5), randint(1, 6, 4, 5, seed=1) * (1 - 2 * randint(0, 2, 4, 5, seed=2)))),
    "float_ops": (lambda x: (torch.exp2(x), torch.log1p(x.abs()), torch.sign(x), torch.round(x * 3), x.clamp(-0.5, 0.7),
                             F.leaky_relu(x, 0.2), F.elu(x), F.hardswish(x), F.silu(x), torch.atan2(x, x + 0.5),
                             torch.logsumexp(x, 1), torch.prod(x, 1), F.softplus(x)),
                  (randn(4, 6),)),
    "compare_logical": (lambda x, y: ((x > y) & (x > 0), (x <= 0.5) | (y != x), torch.where(x > y, x, 2.0),
                                      (x == y).any(), torch.isnan(x), x.masked_fill(y > 0, -1.0)),
                        (randn(4, 6), randn(4, 6, seed=1))),
    "pooling": (lambda x: (F.max_pool2d(x, 3, 2, padding=1, ceil_mode=True), F.avg_pool2d(x, 3, 2, padding=1),
                           F.avg_pool2d(x, 2, ceil_mode=True, count_include_pad=True), F.adaptive_avg_pool2d(x, (3, 2)),
                           F.max_pool1d(x.flatten(2), 4)),
                (randn(2, 3, 9, 8),)),
    "shape_ops": (lambda x: (x.flip(1), F.pad(x, (1, 2, 0, 3), value=0.5), x.repeat(2, 1, 3), x.transpose(0, 2).reshape(-1, 2),
                             torch.stack([x, x * 2], dim=1), x.unbind(1)[1], x[:, 1:4:2, -2:], x.chunk(2, dim=2)[1],
                             torch.cat([x, x[:, :1]], 1)),
                  (randn(2, 5, 4),)),
    "conv3d_groups_dilation": (lambda x, w: F.conv3d(x, w, stride=(1, 2, 1), padding=(1, 0, 2), dilation=(1, 1, 2), groups=2),
                               (randn(1, 4, 5, 6, 7), randn(6, 2, 3, 2, 3, seed=1))),
    "conv_transpose1d": (lambda x, w: F.conv_transpose1d(x, w, stride=3, padding=2, output_padding=1, dilation=2),
                         (randn(2, 4, 6), randn(4, 3, 3, seed=1))),
    "arange_full_types": (lambda x: (torch.arange(2, 11, 3, dtype=torch.float32) + x[0, :3],
                                     torch.full((2, 3), 7, dtype=torch.int32) * 2, x.to(torch.int64), x.to(torch.bool),
                                     torch.ones_like(x) - torch.zeros(4, 6)),
                          (randn(4, 6) * 4,)),
    "scatter_family": (lambda x, i, v: (x.scatter(1, i, v), x.scatter(1, i, 2.5), x.scatter_add(1, i, v),
                                        x.index_put((i[:, 0] % 4,), v[:, 0, None].expand(3, 6), accumulate=True),
                                        x.index_put((torch.tensor([2, 0]), torch.tensor([1, 5])), torch.tensor(9.0))),
                       (randn(4, 6), randint(0, 6, 3, 2), randn(3, 3, seed=1))),
    "slice_select_assign": (lambda x: _assign(x), (randn(3, 5, 4),)),
    "sort_topk": (lambda x: (torch.sort(x, dim=1).values, torch.sort(x, dim=1, descending=True).indices,
                             torch.topk(x, 3).values, torch.topk(x, 2, dim=0, largest=False).indices, x.argsort(dim=-1)),
                  (randn(4, 7),)),
    "interpolate": (lambda x: (F.interpolate(x, scale_factor=2, mode="nearest"), F.interpolate(x, size=(7, 5), mode="nearest"),
                               F.interpolate(x, size=(7, 5), mode="bilinear", align_corners=False),
                               F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True),
                               F.interpolate(x.flatten(2), size=9, mode="linear")),
                    (randn(2, 3, 4, 4),)),
    "more_unary": (lambda x: (torch.trunc(x * 3), torch.log2(x.abs() + 0.1), torch.log10(x.abs() + 0.1),
                              torch.asin(x.clamp(-0.9, 0.9)), torch.acos(x.clamp(-0.9, 0.9)), torch.atan(x),
                              torch.sinh(x), torch.cosh(x), torch.asinh(x), torch.acosh(x.abs() + 1.5),
                              torch.atanh(x.clamp(-0.9, 0.9)), torch.erfinv(x.clamp(-0.9, 0.9)), torch.lgamma(x.abs() + 0.5),
                              torch.isinf(x / (x > 0).float()), torch.nan_to_num(x / (x > 0).float()),
                              torch.nan_to_num(-x / (x > 0).float(), nan=1.5, posinf=7.0), torch.nan_to_num(torch.log(x))),
                   (randn(4, 6),)),
    "edge_padding": (lambda x: (F.pad(x, (2, 1, 1, 3), mode="reflect"), F.pad(x, (3, 0, 0, 2), mode="replicate"),
                                F.pad(x.flatten(2), (2, 2), mode="reflect")),
                     (randn(2, 3, 5, 4),)),
    "scatter_reduce_diagonal_var": (lambda x, i, v: (x.scatter_reduce(1, i, v, "sum"), x.scatter_reduce(1, i, v, "amax"),
                                                     x.scatter_reduce(1, i, v, "amin", include_self=False),
                                                     x.scatter_reduce(1, i, v, "prod"),
                                                     x.scatter_reduce(1, i, v, "mean", include_self=False),
                                                     x.scatter_reduce(1, i, v, "mean"),
                                                     torch.diagonal(x), torch.diagonal(x, 2), torch.diagonal(x, -1),
                                                     torch.ops.aten.var.dim(x, [1], True, True)),
                                    (randn(4, 6), randint(0, 6, 4, 3), randn(4, 3, seed=1))),
}


def _assign(x):
    y = x.clone()
    y[:, 1] = 0.5
    y[:, :, 1:3] = x[:, :, :2] * 2
    y[:, ::2, 0] = -1.0
    return y


@pytest.mark.parametrize("name", list(CASES))
def test_op(name, tmp_path):
    fn, inputs = CASES[name]
    model = Fn(fn)
    man = warpforge.export(model, inputs, tmp_path / name)
    with torch.no_grad():
        expected = model(*inputs)
    leaves = [t for t in torch.utils._pytree.tree_leaves(expected)]
    results = run_package(tmp_path / name, tmp_path / "work")
    assert len(results) == len(leaves)
    for spec, want in zip(man["outputs"], leaves):
        compare(results[spec["result"]], want, {"rtol": 1e-5, "atol": 1e-6}, f"{name} {spec['name']}")
