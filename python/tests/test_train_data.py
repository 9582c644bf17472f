"""WarpForge's training data pieces on the Python side: the sampler (against the table the C++
unit test checks, so both implementations agree) and torch's samplers over it.

    python python/tests/test_train_data.py --write-sampler-table
    python python/tests/test_train_data.py --write-squad-fixture

rewrite tests/data/train/sampler_expected.json and squad_metrics_fixture.json from the Python
implementations; the C++ tests `Sampler.*` and `SquadMetrics.*` check theirs against the same
files, and the tests here check that Python still writes them."""

import json
import pathlib
import random
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from warpforge.data import sampler as S  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLER_TABLE = REPO / "tests" / "data" / "train" / "sampler_expected.json"
SQUAD_FIXTURE = REPO / "tests" / "data" / "train" / "squad_metrics_fixture.json"
UNICODE_TABLES = REPO / "src" / "train" / "squad_unicode_tables.inc"


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


# ------------------------------------------------------------------------------------------
# SQuAD postprocessing and metric: the fixture the C++ implementation is checked against
# ------------------------------------------------------------------------------------------

# Pieces of text that exercise normalize_answer: ASCII and Unicode case, punctuation (ASCII only
# is removed), articles next to Unicode letters (re's \b is Unicode), Unicode whitespace, the
# final sigma, U+0130, combining marks, digits of other scripts, characters beyond the BMP.
WORDS = ["a", "an", "the", "The", "AN", "A", "theatre", "anew", "ta", "Paris", "U.S.A.", "well-known",
         "Tom's", "1990s", "_x_", "São", "Paulo", "ÉCOLE", "Straße", "STRASSE", "ẞ", "İstanbul", "ıı",
         "ΟΔΟΣ", "ΣΑΣ", "Σ", "ΑΣ.Β", "Α'Σ'", "ΌΣΟΣ", "Ωμέγα", "Ѐлка", "ДОМ", "Ꭰ", "Ა", "ǅ", "ǲ", "ʰa",
         "éa", "aé", "the\u0301", "a\u0301", "北京", "東京の", "٣٤", "²", "½", "Ⅻ", "𝐀bc", "😀",
         "’", "«the»", "—", "…", "¿Qué?", "¡Hola!", "#1", "$5", "50%", "x_y", "ǈ", "ﬁ", "Ⓐ", "Å", "K", "µ"]
SEPARATORS = [" ", " ", " ", "  ", "\t", "\n", "\xa0", "\u2003", "\u3000", "\u200b", "-", ",", "", "\x1f", "\x85"]


def _random_text(rng: random.Random, words: int) -> str:
    return "".join(rng.choice(WORDS) + rng.choice(SEPARATORS) for _ in range(words)).strip(" ")


def _context(rng: random.Random) -> tuple[str, list[tuple[int, int]]]:
    """A context of random words and its word spans (code points), the tokens of the features."""
    text, spans = "", []
    for _ in range(rng.randint(6, 40)):
        w = rng.choice(WORDS)
        spans.append((len(text), len(text) + len(w)))
        text += w + rng.choice([" ", " ", ", ", " ", ". ", "\xa0"])
    return text.rstrip(), spans


def squad_metrics_fixture() -> dict:
    import numpy as np

    from warpforge.data.squad import (exact_match_score, f1_score, normalize_answer,
                                      postprocess_predictions, squad_v1_metrics)

    rng = random.Random(20240611)
    texts = [w for w in WORDS] + [_random_text(rng, rng.randint(1, 7)) for _ in range(400)]
    normalize = [[t, normalize_answer(t)] for t in texts]
    pairs = []
    for _ in range(300):
        a = _random_text(rng, rng.randint(1, 6))
        b = a if rng.random() < 0.2 else _random_text(rng, rng.randint(1, 6))
        if rng.random() < 0.3:
            b = rng.choice(["The ", "a ", "", "(", ""]) + a.upper() + rng.choice([".", "", "!", " the"])
        pairs.append([a, b, f1_score(a, b), bool(exact_match_score(a, b))])

    cases = []
    for case in range(4):
        seq = rng.choice([16, 24, 32])
        n_best, max_len = [(20, 30), (3, 4), (20, 2), (5, 30)][case]
        examples, example_index, offsets, start, end = [], [], [], [], []
        for e in range(rng.randint(5, 14)):
            context, spans = _context(rng)
            g0 = rng.randrange(len(spans))
            g1 = min(len(spans) - 1, g0 + rng.randint(0, 3))
            gold = context[spans[g0][0]:spans[g1][1]]
            answers = [gold] + [rng.choice(["the ", "", "A "]) + gold.upper() + rng.choice(["", "."])
                                for _ in range(rng.randint(0, 2))]
            examples.append({"id": f"q{case}-{e}", "question": "?", "context": context,
                             "answers": {"text": answers, "answer_start": [spans[g0][0]] * len(answers)}})
            # Features: windows of the context's tokens after 3 question tokens, overlapping.
            room = seq - 5
            first = 0
            while True:
                window = spans[first:first + room]
                row = [[-1, -1]] * 4 + [list(sp) for sp in window] + [[-1, -1]] * (seq - 4 - len(window))
                example_index.append(e)
                offsets.append(row)
                s = [np.float32(rng.gauss(0, 2)) for _ in range(seq)]
                t = [np.float32(rng.gauss(0, 2)) for _ in range(seq)]
                if rng.random() < 0.6 and first <= g0 and g1 < first + room:  # point at the gold span
                    s[4 + g0 - first] = np.float32(6 + rng.random())
                    t[4 + g1 - first] = np.float32(6 + rng.random())
                if rng.random() < 0.3 and len(window) >= 2:
                    # Two spans of exactly equal score, (q, q) and (p, p) with p < q: the first one
                    # found (the higher start logit) wins.
                    p_, q_ = sorted(rng.sample(range(len(window)), 2))
                    s[4 + q_], t[4 + q_] = np.float32(9.5), np.float32(9.0)
                    s[4 + p_], t[4 + p_] = np.float32(9.0), np.float32(9.5)
                if rng.random() < 0.2:  # an exact tie between two start logits
                    s[rng.randrange(seq)] = s[rng.randrange(seq)]
                start.append(s)
                end.append(t)
                if first + room >= len(spans):
                    break
                first += max(1, room // 2)
        start = np.asarray(start, dtype=np.float32)
        end = np.asarray(end, dtype=np.float32)
        ids = [x["id"] for x in examples]
        feats = {"offset_mapping": np.asarray(offsets, dtype=np.int64),
                 "example_id": np.asarray([ids[k] for k in example_index], dtype=object)}
        preds = postprocess_predictions(examples, feats, start, end, n_best=n_best, max_answer_len=max_len)
        metrics = squad_v1_metrics(preds, examples)
        cases.append({
            "n_best": n_best, "max_answer_length": max_len, "seq_len": seq,
            "examples": [{"id": x["id"], "context": x["context"], "answers": x["answers"]["text"]} for x in examples],
            "example_index": example_index, "offset_mapping": offsets,
            "start_logits": [float(v) for v in start.ravel()], "end_logits": [float(v) for v in end.ravel()],
            "predictions": [preds[i] for i in ids],
            "exact_match": metrics["exact_match"], "f1": metrics["f1"],
        })
    return {"unicode_version": __import__("unicodedata").unidata_version, "normalize": normalize,
            "f1": pairs, "postprocess": cases}


def test_squad_fixture_matches_python_implementation():
    # The C++ test checks its implementation against this file; this checks the Python one.
    import unicodedata

    expected = json.loads(SQUAD_FIXTURE.read_text(encoding="utf-8"))
    if expected["unicode_version"] != unicodedata.unidata_version:
        pytest.skip(f"fixture made with Unicode {expected['unicode_version']}, this Python has "
                    f"{unicodedata.unidata_version}")
    got = json.loads(json.dumps(squad_metrics_fixture()))
    assert got == expected
    # The fixture is not trivial: some answers right, some wrong, some "empty"; ties present.
    for case in expected["postprocess"]:
        assert 0 < case["exact_match"] < 100 and 0 < case["f1"] < 100
    assert any(p == "empty" for c in expected["postprocess"] for p in c["predictions"])
    assert any(not a.isascii() for c in expected["postprocess"] for a in c["predictions"])
    assert len({n for _, n in expected["normalize"]}) > 300


def test_unicode_tables_are_what_this_python_writes():
    import unicodedata

    from warpforge.data import squad_unicode

    text = UNICODE_TABLES.read_text()
    if f'"{unicodedata.unidata_version}"' not in text:
        pytest.skip(f"tables made from another Unicode version than {unicodedata.unidata_version}")
    assert text == squad_unicode.render()


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-sampler-table"]:
        SAMPLER_TABLE.parent.mkdir(parents=True, exist_ok=True)
        SAMPLER_TABLE.write_text(json.dumps(sampler_table(), indent=None) + "\n")
        print(f"wrote {SAMPLER_TABLE}")
    elif sys.argv[1:] == ["--write-squad-fixture"]:
        SQUAD_FIXTURE.write_text(json.dumps(squad_metrics_fixture(), ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {SQUAD_FIXTURE}")
    else:
        sys.exit(pytest.main([__file__, "-q"]))
