"""WarpForge's training data pieces on the Python side: the sampler (against the table the C++
unit test checks, so both implementations agree) and torch's samplers over it.

    python python/tests/test_train_data.py --write-sampler-table

rewrites tests/data/train/sampler_expected.json from the Python implementation (the C++ test
`Sampler.*` reads the same file)."""

import json
import pathlib
import random
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from warpforge.data import sampler as S  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLER_TABLE = REPO / "tests" / "data" / "train" / "sampler_expected.json"


def sampler_table() -> dict:
    """Expected values of the sampler, computed by the Python implementation."""
    splitmix = []
    for seed in (0, 1, 0xDEADBEEF, (1 << 64) - 1):
        g = S.SplitMix64(seed)
        splitmix.append({"seed": seed, "outputs": [g.next() for _ in range(4)]})
    uniform = []
    for seed, bound in ((7, 1), (7, 3), (7, 10), (7, 1000003), (9, (1 << 63) + 12345), (9, (1 << 64) - 1)):
        g = S.SplitMix64(seed)
        uniform.append({"seed": seed, "bound": bound, "outputs": [g.uniform(bound) for _ in range(6)]})
    perms = []
    for seed, epoch, n in ((0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 10), (0, 1, 10), (1, 0, 10),
                           (42, 3, 37), (0xFFFFFFFFFFFF, 7, 64), ((1 << 64) - 1, 0, 25),
                           (123456789, 1, 100)):
        perms.append({"seed": seed, "epoch": epoch, "n": n, "permutation": S.epoch_permutation(seed, epoch, n)})
    big = []
    for seed, epoch, n in ((0, 0, 100000), (5, 2, 88641)):
        p = S.epoch_permutation(seed, epoch, n)
        big.append({"seed": seed, "epoch": epoch, "n": n, "head": p[:8], "tail": p[-8:],
                    "weighted_sum": sum(i * v for i, v in enumerate(p))})
    batches = []
    for n, bs, seed, epoch, shuffle, drop_last, world in (
            (10, 4, 3, 0, True, False, 1), (10, 4, 3, 0, True, True, 1), (10, 4, 3, 1, False, False, 1),
            (10, 3, 3, 2, True, False, 3), (11, 2, 8, 0, True, True, 4), (2, 1, 0, 0, True, False, 5),
            (23, 5, 17, 4, True, False, 2)):
        for rank in range(world):
            batches.append({"n": n, "batch_size": bs, "seed": seed, "epoch": epoch, "shuffle": shuffle,
                            "drop_last": drop_last, "rank": rank, "world_size": world,
                            "batches": S.epoch_batches(n, bs, seed, epoch, shuffle, drop_last, rank, world)})
    return {"splitmix64": splitmix, "uniform": uniform, "permutations": perms, "large": big,
            "batches": batches}


def test_sampler_table_matches_python_implementation():
    # The C++ test checks its implementation against this file; this checks the Python one.
    assert json.loads(SAMPLER_TABLE.read_text()) == sampler_table()


def test_splitmix64_reference_values():
    # Vigna's splitmix64.c, seeded with 0: the first outputs are well known.
    g = S.SplitMix64(0)
    assert [g.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


@pytest.mark.parametrize("n", [1, 2, 3, 17, 256, 1001])
def test_permutation_is_a_permutation_and_depends_on_seed_and_epoch(n):
    rng = random.Random(n)
    seed = rng.getrandbits(64)
    p = S.epoch_permutation(seed, 0, n)
    assert sorted(p) == list(range(n))
    assert S.epoch_permutation(seed, 0, n) == p
    assert S.epoch_permutation(seed, 0, n, shuffle=False) == list(range(n))
    if n >= 17:
        assert S.epoch_permutation(seed, 1, n) != p
        assert S.epoch_permutation(seed + 1, 0, n) != p
        assert p != list(range(n))


def test_permutation_is_uniform_on_small_n():
    # Every one of the 6 orders of 3 elements, over many (seed, epoch) pairs, about equally often.
    counts = {}
    trials = 6000
    for k in range(trials):
        p = tuple(S.epoch_permutation(k // 10, k % 10, 3))
        counts[p] = counts.get(p, 0) + 1
    assert len(counts) == 6
    for c in counts.values():
        assert abs(c - trials / 6) < 5 * (trials / 6 * 5 / 6) ** 0.5


def test_uniform_rejects_below_threshold():
    # bound 2^63 + 1: threshold 2^63 - 1, so about half of the draws are rejected; every result in range.
    g = S.SplitMix64(3)
    bound = (1 << 63) + 1
    values = [g.uniform(bound) for _ in range(200)]
    assert all(0 <= v < bound for v in values)
    with pytest.raises(ValueError):
        g.uniform(0)


@pytest.mark.parametrize("n, world", [(10, 3), (11, 4), (2, 5), (12, 4), (1, 1)])
def test_sharding_matches_torch_distributed_sampler(n, world):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DistributedSampler

    order = S.epoch_permutation(9, 0, n)
    data = list(range(n))
    for rank in range(world):
        ds = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=False, drop_last=False)
        expected = [order[i] for i in ds]  # torch's sharding of positions, applied to our order
        assert S.shard_indices(order, rank, world) == expected
    # Every example is visited; the shards together are the padded order.
    seen = sorted(i for r in range(world) for i in S.shard_indices(order, r, world))
    assert set(seen) == set(range(n))
    assert len(seen) == -(-n // world) * world
    del torch


def test_torch_samplers_yield_the_same_batches():
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader, TensorDataset

    n, bs = 29, 4
    sampler = S.WarpForgeBatchSampler(n, bs, seed=11, drop_last=True)
    assert isinstance(sampler, torch.utils.data.Sampler)
    data = TensorDataset(torch.arange(n) * 10)
    loader = DataLoader(data, batch_sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        got = [b[0].tolist() for b in loader]
        expected = [[10 * i for i in batch] for batch in S.epoch_batches(n, bs, 11, epoch, drop_last=True)]
        assert got == expected
        assert len(got) == len(sampler) == n // bs
    flat = S.WarpForgeSampler(n, seed=11, rank=1, world_size=2)
    flat.set_epoch(2)
    assert list(flat) == S.shard_indices(S.epoch_permutation(11, 2, n), 1, 2)
    assert len(flat) == 15
    with pytest.raises(ValueError):
        S.WarpForgeSampler(n, rank=2, world_size=2)
    with pytest.raises(ValueError):
        S.WarpForgeBatchSampler(n, 0)


def test_batches_cover_the_epoch():
    n, bs = 103, 8
    batches = S.epoch_batches(n, bs, seed=4, epoch=1)
    assert len(batches) == 13 and len(batches[-1]) == 103 - 12 * 8
    assert sorted(i for b in batches for i in b) == list(range(n))
    assert [i for b in batches for i in b] == S.epoch_permutation(4, 1, n)
    assert len(S.epoch_batches(n, bs, seed=4, epoch=1, drop_last=True)) == 12


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-sampler-table"]:
        SAMPLER_TABLE.parent.mkdir(parents=True, exist_ok=True)
        SAMPLER_TABLE.write_text(json.dumps(sampler_table(), indent=None) + "\n")
        print(f"wrote {SAMPLER_TABLE}")
    else:
        sys.exit(pytest.main([__file__, "-q"]))
