"""warpforge.data.squad: the official v1.1 metric, the loader's validation, the generator, the
WordPiece vocabulary, run_qa.py's feature preparation and postprocessing, and the reference
run's command line."""

import filecmp
import json
import os
import re

import numpy as np
import pytest

from warpforge.data import squad
from warpforge.data.squad import (
    SquadFormatError,
    exact_match_score,
    f1_score,
    generate_squad,
    load_squad,
    load_tokenizer,
    normalize_answer,
    postprocess_predictions,
    prepare_train_features,
    prepare_validation_features,
    squad_v1_metrics,
    train_wordpiece,
)


# ------------------------------------------------------------------------------------------
# The official metric
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, normalized", [
    ("The Eiffel Tower", "eiffel tower"),
    ("  an   apple,  a pear!  ", "apple pear"),
    ("Theatre of the Absurd", "theatre of absurd"),  # "the" only as a word
    ("U.S.A.", "usa"),
    ("well-known", "wellknown"),  # punctuation is removed, not replaced by a space
    ("A", ""),
    ("the (1990s)", "1990s"),
    ("Tom's", "toms"),
    ("ANother", "another"),
])
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized


def test_exact_match_and_f1_by_hand():
    assert exact_match_score("The Eiffel Tower.", "eiffel tower")
    assert not exact_match_score("Eiffel", "eiffel tower")
    # pred tokens [cat, sat, on, mat], truth [cat, on, mat]: P = 3/4, R = 1, F1 = 6/7
    assert f1_score("the cat sat on the mat", "cat on mat") == pytest.approx(6 / 7)
    # Counter intersection: x once, y once -> 2 common of 3 and 3: F1 = 2/3
    assert f1_score("x x y", "x y y") == pytest.approx(2 / 3)
    assert f1_score("Paris", "London") == 0
    # Both normalise to nothing: the official script scores EM 1 and F1 0.
    assert exact_match_score("the", "a")
    assert f1_score("the", "a") == 0


def _nested(*qas):
    return [{"title": "t", "paragraphs": [{"context": "c", "qas": [
        {"id": qid, "question": "q?", "answers": [{"text": t, "answer_start": 0} for t in truths]}
        for qid, truths in qas]}]}]


def test_squad_v1_metrics_by_hand(capsys):
    data = _nested(("q1", ["Denver Broncos", "Broncos"]),  # best of several ground truths
                   ("q2", ["Santa Clara, California"]),
                   ("q3", ["1990"]))
    preds = {"q1": "the Broncos", "q2": "California"}  # q3 unanswered -> 0
    m = squad_v1_metrics(preds, data)
    # q1: EM 1 (matches "Broncos"); q2: P 1, R 1/3 -> F1 1/2; q3: 0
    assert m["exact_match"] == pytest.approx(100 / 3)
    assert m["f1"] == pytest.approx(100 * (1 + 0.5) / 3)
    assert "Unanswered question q3" in capsys.readouterr().err
    # The same from a whole file, a path and flat examples.
    assert squad_v1_metrics(preds, {"version": "1.1", "data": data}) == m


def test_metrics_accept_file_path_and_flat_examples(tmp_path):
    paths = generate_squad(tmp_path, 40, 30, seed=3)
    dev = load_squad(paths["dev"])
    gold = {ex["id"]: ex["answers"]["text"][0] for ex in dev}
    assert squad_v1_metrics(gold, paths["dev"]) == {"exact_match": 100.0, "f1": 100.0}
    assert squad_v1_metrics(gold, dev) == {"exact_match": 100.0, "f1": 100.0}
    wrong = dict(gold, **{dev[0]["id"]: "nothing like it"})
    assert squad_v1_metrics(wrong, dev)["exact_match"] == pytest.approx(100 * 29 / 30)


# ------------------------------------------------------------------------------------------
# Loader validation
# ------------------------------------------------------------------------------------------


def _write(tmp_path, doc, name="bad.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def _doc(context="Alice was born in Lyon.", start=18, text="Lyon", qid="id-1"):
    return {"version": "1.1", "data": [{"title": "Art", "paragraphs": [
        {"context": "Bob lives in Porto.", "qas": [
            {"question": "Where does Bob live?", "id": "id-0",
             "answers": [{"text": "Porto", "answer_start": 13}]}]},
        {"context": context, "qas": [
            {"question": "Where was Alice born?", "id": qid,
             "answers": [{"text": text, "answer_start": start}]}]}]}]}


def test_loader_reads_valid_file(tmp_path):
    ex = load_squad(_write(tmp_path, _doc(), "ok.json"))
    assert [e["id"] for e in ex] == ["id-0", "id-1"]
    assert ex[1] == {"id": "id-1", "title": "Art", "context": "Alice was born in Lyon.",
                     "question": "Where was Alice born?",
                     "answers": {"text": ["Lyon"], "answer_start": [18]}}


def test_loader_error_names_file_and_record(tmp_path):
    path = _write(tmp_path, _doc(start=17))
    with pytest.raises(SquadFormatError) as err:
        load_squad(path)
    msg = str(err.value)
    for part in (str(path), "data[0]", "'Art'", "paragraphs[1]", "qas[0]", "'id-1'",
                 "answer_start 17", "'Lyon'", "' Lyo'"):
        assert part in msg, (part, msg)
    # The same file passes when spans are not checked.
    assert len(load_squad(path, check_spans=False)) == 2


@pytest.mark.parametrize("mutate, expect", [
    (lambda d: d["data"][0]["paragraphs"][1]["qas"][0].update(id="id-0"), "duplicate id"),
    (lambda d: d["data"][0]["paragraphs"][1]["qas"][0].update(answers=[]), "non-empty list"),
    (lambda d: d["data"][0]["paragraphs"][1]["qas"][0]["answers"][0].update(answer_start="18"),
     "is not an integer"),
    (lambda d: d["data"][0]["paragraphs"][1]["qas"][0]["answers"][0].update(answer_start=40),
     "lies outside the context"),
    (lambda d: d["data"][0]["paragraphs"][1].pop("context"), 'paragraphs[1]: missing or empty "context"'),
    (lambda d: d["data"][0]["paragraphs"][1]["qas"][0].pop("question"), 'missing or empty "question"'),
    (lambda d: d["data"][0].pop("title"), 'data[0]: missing or non-string "title"'),
])
def test_loader_errors(tmp_path, mutate, expect):
    doc = _doc()
    mutate(doc)
    path = _write(tmp_path, doc)
    with pytest.raises(SquadFormatError, match=re.escape(expect)) as err:
        load_squad(path)
    assert str(path) in str(err.value)


def test_loader_rejects_non_json_and_wrong_layout(tmp_path):
    with pytest.raises(SquadFormatError, match=re.escape(str(tmp_path / "bad.json")) + ".*not valid JSON"):
        load_squad(_write(tmp_path, "{not json"))
    with pytest.raises(SquadFormatError, match='"data" list'):
        load_squad(_write(tmp_path, {"version": "1.1", "articles": []}))


# ------------------------------------------------------------------------------------------
# Generator
# ------------------------------------------------------------------------------------------


def test_generator_is_deterministic(tmp_path):
    a = generate_squad(tmp_path / "a", 300, 100, seed=7)
    b = generate_squad(tmp_path / "b", 300, 100, seed=7)
    c = generate_squad(tmp_path / "c", 300, 100, seed=8)
    for split in ("train", "dev"):
        assert filecmp.cmp(a[split], b[split], shallow=False)
        assert not filecmp.cmp(a[split], c[split], shallow=False)


def test_generated_answers_point_at_their_text(tmp_path):
    paths = generate_squad(tmp_path, 600, 300, seed=1)
    for split, n in (("train", 600), ("dev", 300)):
        doc = json.loads(paths[split].read_text())
        assert doc["version"] == "1.1"
        count = 0
        for article in doc["data"]:
            for para in article["paragraphs"]:
                for qa in para["qas"]:
                    count += 1
                    answers = qa["answers"]
                    assert 1 <= len(answers) <= (3 if split == "dev" else 1)
                    for ans in answers:
                        s = ans["answer_start"]
                        assert para["context"][s:s + len(ans["text"])] == ans["text"]
        assert count == n
        assert len(load_squad(paths[split])) == n  # the loader's validation agrees


def test_dev_uses_held_out_names(tmp_path):
    paths = generate_squad(tmp_path, 1000, 300, seed=2)
    name = re.compile(r"\b(%s) (%s)\b" % ("|".join(squad.FIRST_NAMES), "|".join(squad.LAST_NAMES)))
    train = {m.group(0) for ex in load_squad(paths["train"]) for m in name.finditer(ex["context"])}
    dev = {m.group(0) for ex in load_squad(paths["dev"]) for m in name.finditer(ex["question"])}
    assert dev and train and not (train & dev)
    firsts = {n.split()[0] for n in train}
    assert {n.split()[0] for n in dev} <= firsts  # combinations are new, the names are not
    assert not ({ex["id"] for ex in load_squad(paths["train"])} & {ex["id"] for ex in load_squad(paths["dev"])})


def test_questions_are_answered_by_their_wording(tmp_path):
    """Each question asks about a person named in the context and a relation whose sentence holds
    the answer: the answer span lies in a sentence that names the person."""
    paths = generate_squad(tmp_path, 400, 10, seed=4)
    name = re.compile(r"\b(%s) (%s)\b" % ("|".join(squad.FIRST_NAMES), "|".join(squad.LAST_NAMES)))
    for ex in load_squad(paths["train"]):
        person = name.search(ex["question"]).group(0)
        s = ex["answers"]["answer_start"][0]
        ctx = ex["context"]
        sentence = ctx[ctx.rfind(". ", 0, s) + 1: ctx.find(".", s + len(ex["answers"]["text"][0]))]
        assert person in sentence, (ex["question"], sentence)


# ------------------------------------------------------------------------------------------
# Tokenizer
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_set(tmp_path_factory):
    out = tmp_path_factory.mktemp("squad")
    paths = generate_squad(out, 400, 100, seed=0)
    tok = train_wordpiece([paths["train"], paths["dev"]], 600, out / "vocab.txt")
    return out, paths, tok


def test_train_wordpiece(small_set, tmp_path):
    out, paths, tok = small_set
    vocab = (out / "vocab.txt").read_text().split("\n")[:-1]
    assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert len(tok) == len(vocab) <= 600
    ids = tok("Where was Clara Novak born?")["input_ids"]
    assert ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id
    assert tok.unk_token_id not in ids
    assert tok.decode(ids[1:-1]) == "where was clara novak born?"
    # Deterministic: the same files give the same vocabulary.
    train_wordpiece([paths["train"], paths["dev"]], 600, tmp_path)
    assert (tmp_path / "vocab.txt").read_text() == (out / "vocab.txt").read_text()


def test_real_vocab_file_loads_the_same_way(tmp_path):
    """A vocab.txt written by hand (the layout of bert-base-uncased's) gives token ids = line numbers."""
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "where", "was", "alice", "born", "?",
             "in", "ly", "##on", "."]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    tok = load_tokenizer(tmp_path / "vocab.txt")
    enc = tok("Where was Alice born?", "Alice was born in Lyon.")
    assert tok.convert_ids_to_tokens(enc["input_ids"]) == [
        "[CLS]", "where", "was", "alice", "born", "?", "[SEP]",
        "alice", "was", "born", "in", "ly", "##on", ".", "[SEP]"]
    assert enc["input_ids"][:3] == [2, 5, 6]


# ------------------------------------------------------------------------------------------
# Features (run_qa.py) with overflow, and postprocessing
# ------------------------------------------------------------------------------------------


def _long_example(tok, reps=3):
    """One context of many sentences, long enough for several spans (11 * reps sentences of about
    ten tokens); three questions whose answers lie in the first span only, in a middle span, and
    at the end."""
    sentences = [f"The market in Lyon sold {w} kinds of bread." for w in squad.NUMBER_WORDS] * reps
    sentences[len(sentences) // 2] = "Clara Novak was born in Porto on 5 May 1901."
    sentences[1] = "Hugo Falk played the violin."
    sentences[-1] = "Vera Vogel founded the Iron Mill Works in 1850."
    context = " ".join(sentences)
    qs = [("Where was Clara Novak born?", "Porto"), ("What instrument did Hugo Falk play?", "violin"),
          ("What did Vera Vogel found?", "Iron Mill Works")]
    return [{"id": f"q{i}", "title": "t", "context": context, "question": "  " + q,
             "answers": {"text": [a], "answer_start": [context.index(a)]}} for i, (q, a) in enumerate(qs)]


@pytest.mark.parametrize("max_seq, stride, reps", [(64, 24, 3), (384, 128, 10)])
def test_train_features_match_transformers_with_overflow(small_set, max_seq, stride, reps):
    _, _, tok = small_set
    examples = _long_example(tok, reps)
    feats = prepare_train_features(examples, tok, max_seq=max_seq, doc_stride=stride)
    # transformers' own tokenisation of the same call (question stripped on the left, as run_qa does)
    ref = tok([e["question"].lstrip() for e in examples], [e["context"] for e in examples],
              truncation="only_second", max_length=max_seq, stride=stride,
              return_overflowing_tokens=True, return_offsets_mapping=True, padding="max_length")
    n = len(ref["input_ids"])
    assert n > 3 * 3  # every example split into several spans
    for key in ("input_ids", "token_type_ids", "attention_mask"):
        assert feats[key].dtype == np.int64 and feats[key].shape == (n, max_seq)
        np.testing.assert_array_equal(feats[key], np.asarray(ref[key]))
    assert feats["start_positions"].shape == feats["end_positions"].shape == (n,)

    mapping = ref["overflow_to_sample_mapping"]
    for i in range(n):
        ex = examples[mapping[i]]
        a_start = ex["answers"]["answer_start"][0]
        a_end = a_start + len(ex["answers"]["text"][0])
        offsets, seq = ref["offset_mapping"][i], ref.sequence_ids(i)
        ctx = [k for k in range(max_seq) if seq[k] == 1]
        inside = offsets[ctx[0]][0] <= a_start and offsets[ctx[-1]][1] >= a_end
        s, e = feats["start_positions"][i], feats["end_positions"][i]
        if inside:
            assert offsets[s][0] == a_start and offsets[e][1] == a_end
            assert seq[s] == seq[e] == 1
        else:
            assert s == e == 0  # the CLS index
    # Per example: the answer in the first span only; in a later span only; in the last span.
    spans = {j: [i for i in range(n) if mapping[i] == j] for j in range(3)}
    cls = lambda i: feats["start_positions"][i] == 0
    assert not cls(spans[1][0]) and cls(spans[1][-1])   # violin: first span, not the last
    assert cls(spans[0][0]) and any(not cls(i) for i in spans[0][1:])  # Porto: only later spans
    assert cls(spans[2][0]) and not cls(spans[2][-1])   # the company: the last span
    # The answer of a span straddling a boundary is not taken: each found span decodes to the answer.
    for j, idx in spans.items():
        for i in idx:
            if not cls(i):
                text = tok.decode(feats["input_ids"][i][feats["start_positions"][i]:feats["end_positions"][i] + 1])
                assert text == examples[j]["answers"]["text"][0].lower()


def test_validation_features(small_set):
    _, _, tok = small_set
    examples = _long_example(tok)
    feats = prepare_validation_features(examples, tok, max_seq=64, doc_stride=24)
    n = len(feats["input_ids"])
    assert feats["offset_mapping"].shape == (n, 64, 2) and feats["offset_mapping"].dtype == np.int64
    assert list(feats["example_id"]) == [examples[k]["id"] for k in feats["example_index"]]
    for i in range(n):
        off, tt, mask = feats["offset_mapping"][i], feats["token_type_ids"][i], feats["attention_mask"][i]
        # context tokens (segment 1, not [SEP], not padding) carry offsets; the rest are -1
        is_ctx = off[:, 0] >= 0
        assert not is_ctx[0] and (tt[is_ctx] == 1).all() and (mask[is_ctx] == 1).all()
        last = int(mask.sum()) - 1
        assert not is_ctx[last] and is_ctx[last - 1]


def _gold_logits(examples, feats):
    """Logits that point at each example's first answer in every span holding it."""
    n, L = feats["input_ids"].shape
    start = np.full((n, L), -5.0, dtype=np.float32)
    end = np.full((n, L), -5.0, dtype=np.float32)
    start[:, 0] = end[:, 0] = 8.0  # CLS is high everywhere: v1 postprocessing must skip it
    by_id = {e["id"]: e for e in examples}
    for i in range(n):
        ex = by_id[feats["example_id"][i]]
        s = ex["answers"]["answer_start"][0]
        e = s + len(ex["answers"]["text"][0])
        off = feats["offset_mapping"][i]
        ks = np.nonzero(off[:, 0] == s)[0]
        ke = np.nonzero(off[:, 1] == e)[0]
        if len(ks) and len(ke):
            start[i, ks[0]] = 5.0
            end[i, ke[0]] = 5.0
    return start, end


def test_postprocess_round_trip(small_set):
    _, paths, tok = small_set
    dev = load_squad(paths["dev"])
    for examples, max_seq, stride in ((dev, 192, 128), (_long_example(tok), 64, 24)):
        feats = prepare_validation_features(examples, tok, max_seq=max_seq, doc_stride=stride)
        start, end = _gold_logits(examples, feats)
        preds = postprocess_predictions(examples, feats, start, end)
        assert set(preds) == {e["id"] for e in examples}
        assert all(preds[e["id"]] == e["answers"]["text"][0] for e in examples)
        assert squad_v1_metrics(preds, examples) == {"exact_match": 100.0, "f1": 100.0}


def test_postprocess_limits():
    """max_answer_len, end before start and non-context tokens are skipped like utils_qa does."""
    context = "alpha beta gamma delta"
    examples = [{"id": "x", "context": context, "question": "q",
                 "answers": {"text": ["beta"], "answer_start": [6]}}]
    offsets = np.array([[[-1, -1], [0, 5], [6, 10], [11, 16], [17, 22], [-1, -1]]])
    feats = {"offset_mapping": offsets, "example_id": np.array(["x"], dtype=object)}
    # CLS (index 0) and the final [SEP] (index 5) score highest but lie outside the context.
    start = np.array([[9.0, 0.0, 1.0, 3.0, 0.5, 9.0]])
    end = np.array([[9.0, 2.0, 1.5, 0.2, 0.1, 9.0]])
    # (3,3) "gamma" 3.2 > (3,4) 3.1 > (2,2) 2.5 > (1,1) 2.0 ...
    assert postprocess_predictions(examples, feats, start, end) == {"x": "gamma"}
    # (3,4) "gamma delta" 4.5 wins unless answers are limited to one token: then (4,4) 2.5
    start = np.array([[9.0, 0.0, 0.0, 2.0, 0.0, 9.0]])
    end = np.array([[9.0, 0.0, 0.0, 0.0, 2.5, 9.0]])
    assert postprocess_predictions(examples, feats, start, end) == {"x": "gamma delta"}
    assert postprocess_predictions(examples, feats, start, end, max_answer_len=1) == {"x": "delta"}
    # (4,1) would score 6 but ends before it starts: (4,4) 3.5 beats (1,1) 3.0
    start = np.array([[9.0, 0.0, 0.0, 0.0, 3.0, 9.0]])
    end = np.array([[9.0, 3.0, 0.0, 0.0, 0.5, 9.0]])
    assert postprocess_predictions(examples, feats, start, end) == {"x": "delta"}
    # Only positions among the n_best start and end logits are considered.
    assert postprocess_predictions(examples, feats, start, end, n_best=2) == {"x": "empty"}


# ------------------------------------------------------------------------------------------
# Features files
# ------------------------------------------------------------------------------------------


def test_features_files_hold_exactly_the_prepared_features(small_set, tmp_path):
    from safetensors import safe_open

    out, paths, tok = small_set
    train = load_squad(paths["train"])[:60] + _long_example(tok)
    written = squad.write_features(train, tok, tmp_path / "train.safetensors", max_seq=64, doc_stride=24)
    ref = prepare_train_features(train, tok, max_seq=64, doc_stride=24)
    tensors, meta = squad.read_features(tmp_path / "train.safetensors")
    assert sorted(tensors) == sorted(squad.TRAIN_INPUTS)
    n = len(ref["input_ids"])
    assert n > len(train)  # the long contexts overflow into several spans
    for k in squad.TRAIN_INPUTS:
        assert tensors[k].dtype == np.int64 and tensors[k].shape[0] == n
        np.testing.assert_array_equal(tensors[k], ref[k])
        np.testing.assert_array_equal(written[k], ref[k])
    assert meta["format"] == "warpforge.features" and meta["split"] == "train"
    assert (meta["max_seq"], meta["doc_stride"], meta["features"]) == ("64", "24", str(n))
    assert int(meta["vocab_size"]) == len(tok)
    with safe_open(str(tmp_path / "train.safetensors"), framework="numpy") as f:
        assert f.get_slice("input_ids").get_shape() == [n, 64]

    dev = load_squad(paths["dev"])[:40] + _long_example(tok)
    squad.write_features(dev, tok, tmp_path / "dev.safetensors", max_seq=64, doc_stride=24, eval=True,
                         source="dev-v1.1.json")
    ref = prepare_validation_features(dev, tok, max_seq=64, doc_stride=24)
    tensors, meta = squad.read_features(tmp_path / "dev.safetensors")
    assert sorted(tensors) == sorted(squad.EVAL_INPUTS)
    for k in squad.EVAL_INPUTS:
        assert tensors[k].dtype == np.int64
        np.testing.assert_array_equal(tensors[k], ref[k])
    assert meta["split"] == "eval" and meta["examples_file"] == "dev.safetensors.examples.json"
    assert meta["source"] == "dev-v1.1.json"
    examples = squad.read_examples(squad.examples_path(tmp_path / "dev.safetensors"))
    assert [e["id"] for e in examples] == [e["id"] for e in dev]
    assert [e["context"] for e in examples] == [e["context"] for e in dev]
    assert [e["answers"]["text"] for e in examples] == [e["answers"]["text"] for e in dev]
    assert [examples[k]["id"] for k in tensors["example_index"]] == list(ref["example_id"])

    # Logits pointing at the gold answers give EM = F1 = 100 through the file; random ones agree
    # with postprocessing the in-memory features.
    start, end = _gold_logits(dev, ref)
    preds, metrics = squad.evaluate_features(tmp_path / "dev.safetensors", start, end)
    assert metrics == {"exact_match": 100.0, "f1": 100.0}
    rng = np.random.default_rng(3)
    start = rng.standard_normal(start.shape).astype(np.float32)
    end = rng.standard_normal(end.shape).astype(np.float32)
    preds, metrics = squad.evaluate_features(tmp_path / "dev.safetensors", start, end)
    assert preds == postprocess_predictions(dev, ref, start, end)
    assert metrics == squad_v1_metrics(preds, dev)
    assert 0 < metrics["f1"] < 100


def test_features_command_line(small_set, tmp_path, capsys):
    out, paths, tok = small_set
    f = tmp_path / "dev_features.safetensors"
    assert squad.main(["features", "--data", str(paths["dev"]), "--vocab", str(out / "vocab.txt"),
                       "--out", str(f), "--max-seq", "128", "--doc-stride", "64", "--eval"]) == 0
    printed = capsys.readouterr().out
    assert "100 questions -> 100 eval features" in printed
    tensors, meta = squad.read_features(f)
    assert tensors["input_ids"].shape == (100, 128) and meta["source"] == "dev-v1.1.json"
    assert squad.examples_path(f).exists()
    g = tmp_path / "train_features.safetensors"
    assert squad.main(["features", "--data", str(paths["train"]), "--vocab", str(out / "vocab.txt"),
                       "--out", str(g), "--max-seq", "128", "--doc-stride", "64"]) == 0
    tensors, meta = squad.read_features(g)
    assert sorted(tensors) == sorted(squad.TRAIN_INPUTS) and meta["split"] == "train"
    assert not squad.examples_path(g).exists()
    bad = _write(tmp_path, _doc(start=3))
    assert squad.main(["features", "--data", str(bad), "--vocab", str(out / "vocab.txt"),
                       "--out", str(tmp_path / "bad.safetensors")]) == 1
    assert "id-1" in capsys.readouterr().err
    assert not (tmp_path / "bad.safetensors").exists()


# ------------------------------------------------------------------------------------------
# Command lines
# ------------------------------------------------------------------------------------------


def test_command_line(tmp_path, capsys):
    assert squad.main(["generate", "--out", str(tmp_path), "--train", "50", "--dev", "20",
                       "--seed", "5", "--vocab-size", "500"]) == 0
    for f in ("train-v1.1.json", "dev-v1.1.json", "vocab.txt"):
        assert (tmp_path / f).exists()
    assert "50 questions" in capsys.readouterr().out
    assert squad.main(["check", str(tmp_path / "dev-v1.1.json")]) == 0
    bad = _write(tmp_path, _doc(start=3))
    assert squad.main(["check", str(bad)]) == 1
    assert "id-1" in capsys.readouterr().err


def test_reference_run_command_line(tmp_path):
    """`python -m warpforge.data.squad_reference` end to end on a small set (one epoch). That the
    default set is learnable (one run F1 >= 85, EM >= 84 after 2000 steps; docs/data.md) is
    checked by tests/test_bert_qa_training.py, whose PyTorch run is this module's model and
    optimizer on the same batches."""
    from warpforge.data import squad_reference

    out = tmp_path / "squad"
    assert squad_reference.main(["--out", str(out), "--train", "200", "--dev", "40", "--epochs", "1",
                                 "--vocab-size", "400", "--json", str(tmp_path / "r.json")]) == 0
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["train_questions"] == 200 and result["dev_questions"] == 40
    assert result["steps"] == -(-result["train_features"] // 8) and result["steps"] > 0
    assert 0 <= result["exact_match"] <= 100 and 0 <= result["f1"] <= 100
    assert result["exact_match"] <= result["f1"]
