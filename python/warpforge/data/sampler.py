"""The order in which a training run visits its examples, defined by WarpForge so that a PyTorch
reference loop and `warpforge train` (src/train/sampler.{h,cpp}, the same algorithm in C++) see
exactly the same batches.

    perm = epoch_permutation(seed, epoch, n)                # a permutation of range(n)
    batches = epoch_batches(n, batch_size, seed=seed, epoch=epoch, drop_last=False)

The algorithm (docs/data.md, "The sampler"), all arithmetic on unsigned 64-bit integers (mod 2^64):

- SplitMix64: `next(state)`: `state += 0x9E3779B97F4A7C15`; `z = state`;
  `z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9`; `z = (z ^ (z >> 27)) * 0x94D049BB133111EB`;
  return `z ^ (z >> 31)`.
- The epoch's generator: `state = seed`; `state = next(state) ^ epoch` (the first output of a
  generator seeded with `seed`, XOR the epoch number).
- `uniform(bound)`: draws `r = next(state)` until `r >= 2^64 mod bound`, returns `r mod bound`
  (unbiased).
- Fisher-Yates: `p = [0, 1, ..., n-1]`; for `i = n-1` down to `1`: `j = uniform(i + 1)`, swap
  `p[i]` and `p[j]`.

Without shuffling the order is `0, 1, ..., n-1`. With `world_size` W > 1 the order is sharded as
torch's `DistributedSampler` does (drop_last=False): padded by repeating it from its start to a
multiple of W, then rank r takes positions r, r + W, r + 2W, ... Batches are `batch_size`
consecutive indices of the rank's order; `drop_last` drops a final shorter batch.
"""

from __future__ import annotations

from typing import Iterator

MASK64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15


class SplitMix64:
    """Vigna's SplitMix64 generator (the seeding generator of xoshiro), 64-bit outputs."""

    def __init__(self, state: int):
        self.state = state & MASK64

    def next(self) -> int:
        self.state = (self.state + GOLDEN_GAMMA) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self, bound: int) -> int:
        """An unbiased integer in [0, bound): rejection below 2^64 mod bound, then modulo."""
        if bound <= 0:
            raise ValueError(f"bound must be positive, got {bound}")
        threshold = (1 << 64) % bound
        while True:
            r = self.next()
            if r >= threshold:
                return r % bound


def epoch_generator(seed: int, epoch: int) -> SplitMix64:
    """The generator of one epoch: SplitMix64 seeded with `seed`, its first output XOR `epoch`."""
    if seed < 0 or epoch < 0:
        raise ValueError(f"seed and epoch must be non-negative, got seed {seed}, epoch {epoch}")
    return SplitMix64(SplitMix64(seed).next() ^ (epoch & MASK64))


def epoch_permutation(seed: int, epoch: int, n: int, shuffle: bool = True) -> list[int]:
    """The order of `range(n)` in epoch `epoch` (from 0) of a run seeded with `seed`: a
    Fisher-Yates shuffle driven by `epoch_generator(seed, epoch)`; `shuffle=False` gives
    `0..n-1`."""
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    p = list(range(n))
    if not shuffle:
        return p
    gen = epoch_generator(seed, epoch)
    for i in range(n - 1, 0, -1):
        j = gen.uniform(i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def shard_indices(indices: list[int], rank: int = 0, world_size: int = 1) -> list[int]:
    """This rank's share of `indices`, as torch's DistributedSampler (drop_last=False) takes it:
    padded by repeating from the start to a multiple of `world_size`, then every
    `world_size`-th position starting at `rank`."""
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in [0, world_size {world_size})")
    indices = list(indices)
    n = len(indices)
    if n == 0:
        return []
    per_rank = -(-n // world_size)
    total = per_rank * world_size
    padding = total - n
    if padding <= n:
        indices += indices[:padding]
    else:
        indices += (indices * -(-padding // n))[:padding]
    return indices[rank:total:world_size]


def epoch_indices(n: int, seed: int = 0, epoch: int = 0, shuffle: bool = True, rank: int = 0,
                  world_size: int = 1) -> list[int]:
    """The indices rank `rank` visits in epoch `epoch`, in order."""
    return shard_indices(epoch_permutation(seed, epoch, n, shuffle), rank, world_size)


def num_batches(n: int, batch_size: int, drop_last: bool = False, world_size: int = 1) -> int:
    """Batches per epoch on each rank."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    per_rank = -(-n // world_size) if n else 0
    return per_rank // batch_size if drop_last else -(-per_rank // batch_size)


def epoch_batches(n: int, batch_size: int, seed: int = 0, epoch: int = 0, shuffle: bool = True,
                  drop_last: bool = False, rank: int = 0, world_size: int = 1) -> list[list[int]]:
    """The batches of epoch `epoch` on rank `rank`: `batch_size` consecutive indices of
    `epoch_indices`; `drop_last` drops a final shorter batch."""
    order = epoch_indices(n, seed, epoch, shuffle, rank, world_size)
    count = num_batches(n, batch_size, drop_last, world_size)
    return [order[b * batch_size:(b + 1) * batch_size] for b in range(count)]


try:  # a torch Sampler when torch is there (DataLoader takes any iterable either way)
    from torch.utils.data import Sampler as _SamplerBase
except ImportError:  # pragma: no cover
    _SamplerBase = object


class WarpForgeSampler(_SamplerBase):
    """A `torch.utils.data.Sampler` over WarpForge's order: yields the example indices of the
    current epoch (`set_epoch`, as with DistributedSampler) for this rank."""

    def __init__(self, n: int, seed: int = 0, shuffle: bool = True, rank: int = 0, world_size: int = 1):
        self.n, self.seed, self.shuffle, self.rank, self.world_size = n, seed, shuffle, rank, world_size
        self.epoch = 0
        shard_indices([], rank, world_size)  # validates rank and world_size

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[int]:
        return iter(epoch_indices(self.n, self.seed, self.epoch, self.shuffle, self.rank, self.world_size))

    def __len__(self) -> int:
        return -(-self.n // self.world_size) if self.n else 0


class WarpForgeBatchSampler(_SamplerBase):
    """A batch sampler (`DataLoader(..., batch_sampler=...)`) over WarpForge's order: yields the
    lists of indices of `epoch_batches` for the current epoch (`set_epoch`)."""

    def __init__(self, n: int, batch_size: int, seed: int = 0, shuffle: bool = True,
                 drop_last: bool = False, rank: int = 0, world_size: int = 1):
        self.n, self.batch_size, self.seed, self.shuffle = n, batch_size, seed, shuffle
        self.drop_last, self.rank, self.world_size = drop_last, rank, world_size
        self.epoch = 0
        num_batches(n, batch_size, drop_last, world_size)  # validates batch_size
        shard_indices([], rank, world_size)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[list[int]]:
        return iter(epoch_batches(self.n, self.batch_size, self.seed, self.epoch, self.shuffle,
                                  self.drop_last, self.rank, self.world_size))

    def __len__(self) -> int:
        return num_batches(self.n, self.batch_size, self.drop_last, self.world_size)
