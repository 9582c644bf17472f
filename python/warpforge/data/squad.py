"""SQuAD v1.1 for BERT question answering: loader, synthetic generator, WordPiece vocabulary,
feature preparation, postprocessing and the official metric.

The feature preparation and postprocessing follow Hugging Face's `examples/pytorch/question-answering`
(`run_qa.py` and `utils_qa.py`, SQuAD v1 mode, `pad_to_max_length=True`) line for line, so that a
model trained on these features is comparable with a `run_qa.py` run; the metric is the official
SQuAD v1.1 evaluation script's.

Command line:

    python -m warpforge.data.squad generate --out DIR --train N --dev N --seed S [--vocab-size V] [--confusable P]

writes DIR/train-v1.1.json, DIR/dev-v1.1.json and DIR/vocab.txt;

    python -m warpforge.data.squad features --data FILE --vocab vocab.txt --out F.safetensors [--max-seq 384 --doc-stride 128] [--eval]

writes the features file `warpforge train --data` reads (and, with --eval, F.safetensors.examples.json).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import random
import re
import string
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

TRAIN_FILE = "train-v1.1.json"
DEV_FILE = "dev-v1.1.json"
VOCAB_FILE = "vocab.txt"
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


# --------------------------------------------------------------------------------------------
# Loading and validation
# --------------------------------------------------------------------------------------------


class SquadFormatError(ValueError):
    """A SQuAD file that does not follow the v1.1 format; the message names the file and record."""


def _where(path, a, title, p=None, q=None, qid=None) -> str:
    s = f"{path}: data[{a}]"
    if title is not None:
        s += f" (title {title!r})"
    if p is not None:
        s += f" paragraphs[{p}]"
    if q is not None:
        s += f" qas[{q}]"
    if qid is not None:
        s += f" (id {qid!r})"
    return s


def load_squad(path, check_spans: bool = True) -> list[dict]:
    """Reads a SQuAD v1.1 JSON file and returns its questions as flat examples, in file order:
    `{"id", "title", "context", "question", "answers": {"text": [...], "answer_start": [...]}}`
    (the layout of Hugging Face's `squad` data set, which `prepare_*_features` take).

    The file is validated: every article needs a `title` and `paragraphs`, every paragraph a
    `context` and `qas`, every question a non-empty `question`, a unique `id` and at least one
    answer, every answer a `text` and an integer `answer_start` with
    `context[answer_start:answer_start + len(text)] == text` (unless `check_spans=False`). A
    violation raises `SquadFormatError` naming the file, the article, paragraph and question
    indices and the question's id.
    """
    path = str(path)
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise SquadFormatError(f"{path}: not valid JSON: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise SquadFormatError(f'{path}: expected an object with a "data" list (SQuAD v1.1)')

    examples: list[dict] = []
    seen: dict[str, str] = {}
    for a, article in enumerate(doc["data"]):
        if not isinstance(article, dict):
            raise SquadFormatError(f"{_where(path, a, None)}: article is not an object")
        title = article.get("title")
        if not isinstance(title, str):
            raise SquadFormatError(f'{_where(path, a, None)}: missing or non-string "title"')
        paragraphs = article.get("paragraphs")
        if not isinstance(paragraphs, list):
            raise SquadFormatError(f'{_where(path, a, title)}: missing "paragraphs" list')
        for p, para in enumerate(paragraphs):
            where_p = _where(path, a, title, p)
            if not isinstance(para, dict):
                raise SquadFormatError(f"{where_p}: paragraph is not an object")
            context = para.get("context")
            if not isinstance(context, str) or not context:
                raise SquadFormatError(f'{where_p}: missing or empty "context"')
            qas = para.get("qas")
            if not isinstance(qas, list):
                raise SquadFormatError(f'{where_p}: missing "qas" list')
            for q, qa in enumerate(qas):
                qid = qa.get("id") if isinstance(qa, dict) else None
                where = _where(path, a, title, p, q, qid)
                if not isinstance(qa, dict):
                    raise SquadFormatError(f"{where}: question is not an object")
                if not isinstance(qid, str) or not qid:
                    raise SquadFormatError(f'{where}: missing or non-string "id"')
                if qid in seen:
                    raise SquadFormatError(f"{where}: duplicate id, first seen at {seen[qid]}")
                seen[qid] = f"data[{a}] paragraphs[{p}] qas[{q}]"
                question = qa.get("question")
                if not isinstance(question, str) or not question.strip():
                    raise SquadFormatError(f'{where}: missing or empty "question"')
                answers = qa.get("answers")
                if not isinstance(answers, list) or not answers:
                    raise SquadFormatError(f'{where}: "answers" must be a non-empty list in SQuAD v1.1')
                texts, starts = [], []
                for k, ans in enumerate(answers):
                    if not isinstance(ans, dict):
                        raise SquadFormatError(f"{where}: answers[{k}] is not an object")
                    text, start = ans.get("text"), ans.get("answer_start")
                    if not isinstance(text, str) or not text:
                        raise SquadFormatError(f'{where}: answers[{k}] has no "text"')
                    if not isinstance(start, int) or isinstance(start, bool):
                        raise SquadFormatError(f'{where}: answers[{k}] "answer_start" {start!r} is not an integer')
                    if check_spans:
                        if not 0 <= start <= len(context) - len(text):
                            raise SquadFormatError(
                                f"{where}: answers[{k}] answer_start {start} with text {text!r} lies outside "
                                f"the context ({len(context)} characters)")
                        found = context[start:start + len(text)]
                        if found != text:
                            raise SquadFormatError(
                                f"{where}: answers[{k}] answer_start {start} does not point at its text "
                                f"{text!r} (the context there reads {found!r})")
                    texts.append(text)
                    starts.append(start)
                examples.append({
                    "id": qid,
                    "title": title,
                    "context": context,
                    "question": question,
                    "answers": {"text": texts, "answer_start": starts},
                })
    return examples


def _articles_from_examples(examples: Sequence[Mapping]) -> list[dict]:
    """Flat examples back to the nested v1.1 layout (one paragraph per distinct context)."""
    articles: dict[str, dict] = {}
    for ex in examples:
        art = articles.setdefault(ex.get("title", ""), {"title": ex.get("title", ""), "paragraphs": []})
        paras = art["paragraphs"]
        if not paras or paras[-1]["context"] != ex["context"]:
            paras.append({"context": ex["context"], "qas": []})
        answers = ex["answers"]
        paras[-1]["qas"].append({
            "question": ex["question"],
            "id": ex["id"],
            "answers": [{"text": t, "answer_start": int(s)}
                        for t, s in zip(answers["text"], answers["answer_start"])],
        })
    return list(articles.values())


# --------------------------------------------------------------------------------------------
# The official SQuAD v1.1 metric
# --------------------------------------------------------------------------------------------


def normalize_answer(s: str) -> str:
    """Lower text and remove punctuation, articles and extra whitespace (official v1.1 script)."""

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def f1_score(prediction: str, ground_truth: str) -> float:
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = collections.Counter(prediction_tokens) & collections.Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def exact_match_score(prediction: str, ground_truth: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def metric_max_over_ground_truths(metric_fn, prediction, ground_truths):
    return max(metric_fn(prediction, gt) for gt in ground_truths)


def squad_v1_metrics(predictions: Mapping[str, str], dataset) -> dict:
    """The official SQuAD v1.1 evaluation: `{"exact_match": EM, "f1": F1}` in percent over every
    question of `dataset`, each scored against the best of its ground truths; an unanswered
    question scores 0 (and is reported on stderr, as the official script does).

    `dataset` is the `data` list of a v1.1 file (what the official script takes), a whole parsed
    file, a path to one, or the flat examples `load_squad` returns.
    """
    if isinstance(dataset, (str, os.PathLike)):
        with open(dataset, encoding="utf-8") as f:
            dataset = json.load(f)
    if isinstance(dataset, Mapping):
        dataset = dataset["data"]
    dataset = list(dataset)
    if dataset and "paragraphs" not in dataset[0]:
        dataset = _articles_from_examples(dataset)
    f1 = exact_match = total = 0
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                total += 1
                if qa["id"] not in predictions:
                    print(f"Unanswered question {qa['id']} will receive score 0.", file=sys.stderr)
                    continue
                ground_truths = [x["text"] for x in qa["answers"]]
                prediction = predictions[qa["id"]]
                exact_match += metric_max_over_ground_truths(exact_match_score, prediction, ground_truths)
                f1 += metric_max_over_ground_truths(f1_score, prediction, ground_truths)
    if total == 0:
        return {"exact_match": 0.0, "f1": 0.0}
    return {"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total}


# --------------------------------------------------------------------------------------------
# Synthetic generator
# --------------------------------------------------------------------------------------------

FIRST_NAMES = [
    "Alice", "Bruno", "Clara", "Dmitri", "Elena", "Felix", "Greta", "Hugo", "Ingrid", "Jonas",
    "Karin", "Lukas", "Marta", "Nikolai", "Olga", "Pavel", "Quentin", "Rosa", "Stefan", "Tamara",
    "Ulrich", "Vera", "Walter", "Xenia", "Yusuf", "Zora", "Anton", "Beatrix", "Cyril", "Dora",
    "Emil", "Frida", "Gustav", "Helga", "Ivan", "Julia",
]
LAST_NAMES = [
    "Adler", "Brandt", "Castell", "Dorn", "Eckert", "Falk", "Gruber", "Hartmann", "Iversen",
    "Jansen", "Keller", "Lorenz", "Moreau", "Novak", "Oberg", "Petrov", "Quist", "Richter",
    "Sandoval", "Thorne", "Ulrich", "Vogel", "Werner", "Yilmaz", "Zeller", "Albrecht", "Bauer",
    "Costa", "Dietrich", "Engel", "Fischer", "Gallo", "Horvath", "Ibsen", "Jovanovic", "Kraus",
]
CITIES = [
    "Vienna", "Lyon", "Porto", "Krakow", "Bergen", "Turin", "Ghent", "Leipzig", "Seville",
    "Tallinn", "Zagreb", "Utrecht", "Bilbao", "Aarhus", "Graz", "Brno", "Malmo", "Nantes",
    "Riga", "Split", "Basel", "Dresden", "Verona", "Cork", "Lille", "Tampere", "Kaunas", "Gdansk",
    "Salzburg", "Bologna",
]
OCCUPATIONS = [
    "baker", "carpenter", "physician", "teacher", "lawyer", "painter", "sailor", "engineer",
    "tailor", "librarian", "pharmacist", "architect", "journalist", "blacksmith", "gardener",
    "watchmaker", "printer", "surveyor", "chemist", "banker",
]
COLOURS = ["red", "blue", "green", "yellow", "purple", "orange", "grey", "white", "black", "brown",
           "violet", "silver", "golden", "crimson"]
INSTRUMENTS = ["violin", "cello", "piano", "flute", "trumpet", "harp", "clarinet", "oboe", "guitar",
               "organ", "accordion", "drums"]
COMPANY_ADJ = ["Silver", "Northern", "Royal", "Golden", "Eastern", "Iron", "Blue", "United", "Old",
               "Grand", "Western", "Crystal"]
COMPANY_NOUN = ["River", "Harbour", "Mill", "Bridge", "Lantern", "Anchor", "Valley", "Tower",
                "Forge", "Garden", "Mountain", "Compass"]
COMPANY_KIND = ["Company", "Works", "Society", "Bank", "Press", "Foundry"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
NUMBER_WORDS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve"]

# Each fact is one sentence about a person {P}, its other slots filled by _slot_value. Every fact
# has several wordings and each asked slot several question wordings: the question names the
# person and the relation, never the answer.
FACTS: dict[str, dict] = {
    "birth": {
        "sentences": [
            "{P} was born in {city} on {date}.",
            "On {date}, {P} was born in {city}.",
            "{P} was born on {date} in {city}.",
        ],
        "questions": {
            "city": ["Where was {P} born?", "In which city was {P} born?"],
            "date": ["When was {P} born?", "On what date was {P} born?"],
        },
    },
    "work": {
        "sentences": [
            "{P} worked as {a} {occupation}.",
            "For many years {P} worked as {a} {occupation}.",
        ],
        "questions": {
            "occupation": ["What did {P} work as?", "What was the job of {P}?"],
        },
    },
    "colour": {
        "sentences": [
            "The favourite colour of {P} was {colour}.",
            "{P} liked the colour {colour} best.",
        ],
        "questions": {
            "colour": ["What was the favourite colour of {P}?", "Which colour did {P} like best?"],
        },
    },
    "children": {
        "sentences": [
            "{P} had {number} children.",
            "{P} raised {number} children.",
        ],
        "questions": {
            "number": ["How many children did {P} have?", "How many children did {P} raise?"],
        },
    },
    "founded": {
        "sentences": [
            "In {year}, {P} founded the {company}.",
            "{P} founded the {company} in {year}.",
        ],
        "questions": {
            "company": ["What did {P} found?", "Which company did {P} found?"],
            "year": ["In what year did {P} found the {company}?", "When did {P} found the {company}?"],
        },
    },
    "instrument": {
        "sentences": [
            "{P} played the {instrument}.",
            "{P} was a skilled {instrument} player.",
        ],
        "questions": {
            "instrument": ["What instrument did {P} play?", "Which instrument did {P} play?"],
        },
    },
    "marriage": {
        "sentences": [
            "{P} married {spouse} in {year}.",
            "In {year}, {P} married {spouse}.",
        ],
        "questions": {
            "year": ["When did {P} marry {spouse}?", "In what year did {P} marry {spouse}?"],
        },
    },
    "moved": {
        "sentences": [
            "In {year}, {P} moved to {city}.",
            "{P} moved to {city} in {year}.",
        ],
        "questions": {
            "city": ["To which city did {P} move?", "Where did {P} move to?"],
            "year": ["When did {P} move to {city}?", "In what year did {P} move to {city}?"],
        },
    },
}

# Distractor sentences about no one. Those with slots hold spans of the answer types (cities,
# colours, numbers, years, companies...) that no question asks for; one of a type the paragraph
# already answers with is only used with probability `confusable`.
FILLERS = [
    "{city} is known for its {colour} bridges.",
    "The market in {city} sold {number} kinds of bread.",
    "In {year}, a great fire destroyed much of {city}.",
    "The {company} opened an office in {city} in {year}.",
    "Many families in {city} played the {instrument}.",
    "The old {occupation} guild of {city} had {number} members.",
    "Trams painted {colour} crossed {city} every morning.",
    "The harbour was busy every summer.",
    "Most streets of the old town were paved with stone.",
    "Few travellers came there in winter.",
    "The {colour} doors of the town hall were repainted each spring.",
    "The local choir had {number} singers.",
]

# The answer type of each slot: a paragraph holds one span of each type unless `confusable` lets
# a distractor add another (a date holds a year).
SLOT_TYPES = {"city": "city", "date": "year", "year": "year", "occupation": "occupation",
              "colour": "colour", "number": "number", "instrument": "instrument",
              "company": "company", "spouse": "person"}


def _types(template: str) -> set[str]:
    return {SLOT_TYPES[s] for s in _SLOT_RE.findall(template) if s in SLOT_TYPES} - {"person"}


def _is_dev_name(first: str, last: str) -> bool:
    """One full name in five is held out for the dev set; each first and last name occurs in both."""
    return int(hashlib.md5(f"{first} {last}".encode()).hexdigest(), 16) % 5 == 0


def _slot_value(rng: random.Random, slot: str, names: list[str]) -> str:
    if slot == "city":
        return rng.choice(CITIES)
    if slot == "date":
        return f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(1750, 1950)}"
    if slot == "year":
        return str(rng.randint(1750, 1950))
    if slot == "occupation":
        return rng.choice(OCCUPATIONS)
    if slot == "colour":
        return rng.choice(COLOURS)
    if slot == "number":
        return rng.choice(NUMBER_WORDS)
    if slot == "instrument":
        return rng.choice(INSTRUMENTS)
    if slot == "company":
        return f"{rng.choice(COMPANY_ADJ)} {rng.choice(COMPANY_NOUN)} {rng.choice(COMPANY_KIND)}"
    if slot == "spouse":
        return rng.choice(names)
    raise KeyError(slot)


_SLOT_RE = re.compile(r"\{(\w+)\}")


def _render(template: str, values: Mapping[str, str]) -> tuple[str, dict[str, tuple[int, int]]]:
    """Fills `template`; returns the text and each slot's (start, end) character span in it."""
    out, spans, pos = [], {}, 0
    for m in _SLOT_RE.finditer(template):
        out.append(template[pos:m.start()])
        start = sum(len(s) for s in out)
        out.append(values[m.group(1)])
        spans.setdefault(m.group(1), (start, start + len(values[m.group(1)])))
        pos = m.end()
    out.append(template[pos:])
    text = "".join(out)
    return text[0].upper() + text[1:], spans


def _alternative_answers(rng: random.Random, slot: str, text: str, start: int, context: str) -> list[dict]:
    """Up to 3 answers for a dev question, as several annotators would give: the gold span again
    or a variant span of the same context (with a leading "the" or "a", or a date's year alone)."""
    answers = [{"text": text, "answer_start": start}]
    variants = []
    for prefix in ("the ", "a ", "an ", "on ", "in "):
        if start >= len(prefix) and context[start - len(prefix):start] == prefix:
            variants.append({"text": context[start - len(prefix):start + len(text)],
                             "answer_start": start - len(prefix)})
    if slot == "date":
        year = text.rsplit(" ", 1)[1]
        variants.append({"text": year, "answer_start": start + len(text) - len(year)})
    for _ in range(rng.randint(0, 2)):
        answers.append(rng.choice(variants) if variants and rng.random() < 0.5 else answers[0])
    return answers


def _make_paragraph(rng: random.Random, dev: bool, persons_range, facts_range, fillers_range,
                    max_questions: int, confusable: float, templates: int):
    names = []
    n_persons = rng.randint(*persons_range)
    while len(names) < n_persons:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        name = f"{first} {last}"
        if first == last or _is_dev_name(first, last) != dev or name in names:
            continue
        names.append(name)
    spouses = []
    while len(spouses) < 4:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        name = f"{first} {last}"
        if first != last and _is_dev_name(first, last) == dev and name not in names:
            spouses.append(name)

    def pick(options):
        return rng.choice(options[:templates] if templates else options)

    fact_types = sorted(FACTS)
    used: set[str] = set()  # answer types present in the paragraph
    sentences = []  # (template, values, fact kind or None for a distractor)
    for person in names:
        mine: list[str] = []
        for _ in range(rng.randint(*facts_range)):
            # A fact whose answer types are already in the paragraph is a same-type distractor
            # (another city, another year...): allowed with probability `confusable`.
            pool = [t for t in fact_types if t not in mine
                    and (not (_types(" ".join(FACTS[t]["sentences"])) & used) or rng.random() < confusable)]
            if not pool:
                break
            kind = rng.choice(pool)
            mine.append(kind)
            fact = FACTS[kind]
            used |= _types(" ".join(fact["sentences"]))
            values = {"P": person}
            for slot in _SLOT_RE.findall(" ".join(fact["sentences"])):
                if slot not in ("P", "a") and slot not in values:
                    values[slot] = _slot_value(rng, slot, spouses)
            if "occupation" in values:
                values["a"] = "an" if values["occupation"][0] in "aeiou" else "a"
            sentences.append((pick(fact["sentences"]), values, kind))
    fillers_used: list[str] = []
    for _ in range(rng.randint(*fillers_range)):
        pool = [t for t in FILLERS if t not in fillers_used
                and (not (_types(t) & used) or rng.random() < confusable)]
        if not pool:
            break
        template = rng.choice(pool)
        fillers_used.append(template)
        values = {s: _slot_value(rng, s, spouses) for s in _SLOT_RE.findall(template)}
        sentences.append((template, values, None))
    rng.shuffle(sentences)

    context_parts, candidates = [], []
    offset = 0
    for template, values, kind in sentences:
        if context_parts:
            offset += 1  # the space between sentences
        text, spans = _render(template, values)
        if kind is not None:
            for slot, wordings in FACTS[kind]["questions"].items():
                s, e = spans[slot]
                candidates.append((kind, slot, wordings, values, offset + s, text[s:e]))
        context_parts.append(text)
        offset += len(text)
    context = " ".join(context_parts)

    rng.shuffle(candidates)
    qas = []
    for kind, slot, wordings, values, start, answer in candidates[:max_questions]:
        qas.append((pick(wordings).format(**values), slot, start, answer))
    return context, qas, names


def generate_squad(out_dir, n_train: int, n_dev: int, seed: int = 0, *, persons=(1, 2),
                   facts=(2, 4), fillers=(1, 3), questions_per_paragraph: int = 5,
                   confusable: float = 0.05, templates: int = 0,
                   paragraphs_per_article: int = 20) -> dict:
    """Writes `train-v1.1.json` (`n_train` questions) and `dev-v1.1.json` (`n_dev` questions) of a
    synthetic SQuAD v1.1 set into `out_dir` and returns their paths.

    Each paragraph holds sentences about `persons` synthetic people, `facts` facts each (birth
    city and date, occupation, favourite colour, children, a company founded and its year,
    instrument, wedding year, a move and its year), each in one of several wordings, and `fillers`
    distractor sentences about no one, shuffled together. Up to `questions_per_paragraph` questions
    name a person and a relation ("Where was Clara Novak born?", "In what year did Hugo Falk found
    the Iron Mill Works?"); the answer is the span of the sentence about both. Each answer type
    (city, year or date, occupation, colour, number, instrument, company) occurs once per
    paragraph, except that with probability `confusable` a fact or distractor may add a second
    span of a type already present, which only the words around it tell apart; `confusable` sets
    how hard the set is (docs/data.md has the figures). `templates=k` keeps the first k wordings.

    Dev paragraphs are about people whose full names never occur in the training set (each first
    and last name does), and carry 1-3 answers per question (the gold span repeated, or a variant
    such as "the violin", "in 1850" or a date's year) like the real dev set. The files are a
    function of the arguments alone.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for split, n, dev in (("train", n_train, False), ("dev", n_dev, True)):
        rng = random.Random(f"warpforge-squad-{seed}-{split}")
        articles, paragraphs, count = [], [], 0
        while count < n:
            context, qas, names = _make_paragraph(rng, dev, persons, facts, fillers,
                                                  questions_per_paragraph, confusable, templates)
            qas = qas[: n - count]
            if not qas:
                continue
            para = {"context": context, "qas": []}
            for question, slot, start, answer in qas:
                qid = hashlib.md5(f"{seed}-{split}-{count}".encode()).hexdigest()[:24]
                answers = (_alternative_answers(rng, slot, answer, start, context) if dev
                           else [{"text": answer, "answer_start": start}])
                para["qas"].append({"answers": answers, "question": question, "id": qid})
                count += 1
            paragraphs.append(para)
            if len(paragraphs) == paragraphs_per_article:
                articles.append({"title": f"Synthetic_biographies_{split}_{len(articles)}",
                                 "paragraphs": paragraphs})
                paragraphs = []
        if paragraphs:
            articles.append({"title": f"Synthetic_biographies_{split}_{len(articles)}",
                             "paragraphs": paragraphs})
        path = out_dir / (TRAIN_FILE if split == "train" else DEV_FILE)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"version": "1.1", "data": articles}, f, ensure_ascii=False)
            f.write("\n")
        paths[split] = path
    return paths


# --------------------------------------------------------------------------------------------
# WordPiece vocabulary and tokenizer
# --------------------------------------------------------------------------------------------


def _texts(files: Iterable) -> Iterable[str]:
    for path in files:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for article in doc["data"]:
            for para in article["paragraphs"]:
                yield para["context"]
                for qa in para["qas"]:
                    yield qa["question"]


def load_tokenizer(vocab_path, do_lower_case: bool = True):
    """A `transformers.BertTokenizerFast` over a WordPiece `vocab.txt` (one trained here, or a real
    BERT one such as bert-base-uncased's)."""
    import inspect

    from transformers import BertTokenizerFast

    vocab_path = str(vocab_path)
    # transformers 5 takes the file as `vocab` (and ignores `vocab_file`); 4.x takes `vocab_file`.
    if "vocab" in inspect.signature(BertTokenizerFast.__init__).parameters:
        tok = BertTokenizerFast(vocab=vocab_path, do_lower_case=do_lower_case)
    else:
        tok = BertTokenizerFast(vocab_file=vocab_path, do_lower_case=do_lower_case)
    with open(vocab_path, encoding="utf-8") as f:
        n = sum(1 for line in f if line.rstrip("\n"))
    if len(tok) != n:
        raise RuntimeError(f"{vocab_path}: tokenizer holds {len(tok)} tokens, the file {n}")
    return tok


def train_wordpiece(files, vocab_size: int, out_path, lowercase: bool = True):
    """Trains a BERT WordPiece vocabulary (`tokenizers`, uncased, BERT's special tokens) on the
    contexts and questions of SQuAD JSON `files`, writes it to `out_path` (a `vocab.txt` file, or a
    directory to hold one) and returns a `BertTokenizerFast` over it."""
    from tokenizers.implementations import BertWordPieceTokenizer
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer

    if isinstance(files, (str, os.PathLike)):
        files = [files]
    out_path = Path(out_path)
    if out_path.is_dir() or out_path.suffix != ".txt":
        out_path = out_path / VOCAB_FILE
    out_path.parent.mkdir(parents=True, exist_ok=True)
    texts = list(_texts(files))
    # The trainer assigns ids to continuing-subword tokens ("##x") in hash-map order, and breaks
    # ties between equally frequent merges by id, so the same corpus can give another vocabulary
    # on every run (huggingface/tokenizers#1794). Declaring every "##x" of the corpus up front, in
    # sorted order, fixes their ids and makes the vocabulary a function of the corpus.
    normalizer = BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                lowercase=lowercase)
    pre = BertPreTokenizer()
    continuing = sorted({"##" + ch for text in texts
                         for word, _ in pre.pre_tokenize_str(normalizer.normalize_str(text))
                         for ch in word[1:]})
    wp = BertWordPieceTokenizer(lowercase=lowercase, clean_text=True, handle_chinese_chars=True,
                                strip_accents=None)
    wp.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=1,
                           special_tokens=SPECIAL_TOKENS + continuing, show_progress=False)
    vocab = wp.get_vocab()
    # Written in id order, ids 0..n-1 (what BertTokenizer expects from vocab.txt).
    with open(out_path, "w", encoding="utf-8") as f:
        for token, _ in sorted(vocab.items(), key=lambda kv: kv[1]):
            f.write(token + "\n")
    return load_tokenizer(out_path, do_lower_case=lowercase)


# --------------------------------------------------------------------------------------------
# Features (HF run_qa.py) and postprocessing (HF utils_qa.py)
# --------------------------------------------------------------------------------------------


def _columns(examples) -> dict[str, list]:
    if isinstance(examples, Mapping):
        return {k: list(v) for k, v in examples.items()}
    examples = list(examples)
    return {k: [ex[k] for ex in examples] for k in ("id", "context", "question", "answers")}


def _tokenize(tokenizer, cols, max_seq, doc_stride):
    pad_on_right = tokenizer.padding_side == "right"
    # Some questions have lots of whitespace on the left, which is useless and makes truncation
    # of the context fail (the tokenized question takes a lot of space).
    questions = [q.lstrip() for q in cols["question"]]
    contexts = cols["context"]
    return pad_on_right, tokenizer(
        questions if pad_on_right else contexts,
        contexts if pad_on_right else questions,
        truncation="only_second" if pad_on_right else "only_first",
        max_length=max_seq,
        stride=doc_stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding="max_length",
    )


def _feature_arrays(tok) -> dict[str, np.ndarray]:
    out = {}
    for key in ("input_ids", "token_type_ids", "attention_mask"):
        if key in tok:
            out[key] = np.asarray(tok[key], dtype=np.int64)
    return out


def prepare_train_features(examples, tokenizer, max_seq: int = 384, doc_stride: int = 128) -> dict:
    """Training features exactly as HF `run_qa.py`'s `prepare_train_features`: question first,
    the context truncated (`only_second`) into spans of `max_seq` tokens overlapping by
    `doc_stride`, padded to `max_seq`; each span's start/end positions are the first answer's
    tokens, or the CLS index when the answer is not fully inside the span.

    `examples`: flat examples (`load_squad`) or a column dict. Returns int64 arrays `input_ids`,
    `token_type_ids`, `attention_mask` (N, max_seq), `start_positions`, `end_positions` (N,).
    """
    cols = _columns(examples)
    pad_on_right, tokenized = _tokenize(tokenizer, cols, max_seq, doc_stride)
    sample_mapping = tokenized["overflow_to_sample_mapping"]
    offset_mapping = tokenized["offset_mapping"]
    start_positions, end_positions = [], []
    for i, offsets in enumerate(offset_mapping):
        input_ids = tokenized["input_ids"][i]
        if tokenizer.cls_token_id in input_ids:
            cls_index = input_ids.index(tokenizer.cls_token_id)
        elif tokenizer.bos_token_id in input_ids:
            cls_index = input_ids.index(tokenizer.bos_token_id)
        else:
            cls_index = 0
        sequence_ids = tokenized.sequence_ids(i)
        sample_index = sample_mapping[i]
        answers = cols["answers"][sample_index]
        if len(answers["answer_start"]) == 0:
            start_positions.append(cls_index)
            end_positions.append(cls_index)
            continue
        start_char = answers["answer_start"][0]
        end_char = start_char + len(answers["text"][0])
        token_start_index = 0
        while sequence_ids[token_start_index] != (1 if pad_on_right else 0):
            token_start_index += 1
        token_end_index = len(input_ids) - 1
        while sequence_ids[token_end_index] != (1 if pad_on_right else 0):
            token_end_index -= 1
        if not (offsets[token_start_index][0] <= start_char and offsets[token_end_index][1] >= end_char):
            start_positions.append(cls_index)
            end_positions.append(cls_index)
        else:
            while token_start_index < len(offsets) and offsets[token_start_index][0] <= start_char:
                token_start_index += 1
            start_positions.append(token_start_index - 1)
            while offsets[token_end_index][1] >= end_char:
                token_end_index -= 1
            end_positions.append(token_end_index + 1)
    out = _feature_arrays(tokenized)
    out["start_positions"] = np.asarray(start_positions, dtype=np.int64)
    out["end_positions"] = np.asarray(end_positions, dtype=np.int64)
    return out


def prepare_validation_features(examples, tokenizer, max_seq: int = 384, doc_stride: int = 128) -> dict:
    """Evaluation features exactly as HF `run_qa.py`'s `prepare_validation_features`.

    Returns int64 arrays `input_ids`, `token_type_ids`, `attention_mask` (N, max_seq),
    `offset_mapping` (N, max_seq, 2: character span of each token in the context, -1 for tokens
    outside the context, HF's `None`), `example_index` (N,: the feature's example) and
    `example_id` (N,: the example's id, str).
    """
    cols = _columns(examples)
    pad_on_right, tokenized = _tokenize(tokenizer, cols, max_seq, doc_stride)
    sample_mapping = tokenized["overflow_to_sample_mapping"]
    context_index = 1 if pad_on_right else 0
    n = len(tokenized["input_ids"])
    offsets = np.full((n, max_seq, 2), -1, dtype=np.int64)
    example_ids = []
    for i in range(n):
        sequence_ids = tokenized.sequence_ids(i)
        example_ids.append(cols["id"][sample_mapping[i]])
        for k, o in enumerate(tokenized["offset_mapping"][i]):
            if sequence_ids[k] == context_index:
                offsets[i, k] = o
    out = _feature_arrays(tokenized)
    out["offset_mapping"] = offsets
    out["example_index"] = np.asarray(sample_mapping, dtype=np.int64)
    out["example_id"] = np.asarray(example_ids, dtype=object)
    return out


def postprocess_predictions(examples, features, start_logits, end_logits, n_best: int = 20,
                            max_answer_len: int = 30) -> dict[str, str]:
    """HF `utils_qa.postprocess_qa_predictions` (SQuAD v1): for every example, the best-scoring
    (start logit + end logit) span over all its features among the `n_best` start and end
    indices, inside the context, end >= start, at most `max_answer_len` tokens; returns
    {question id: answer text}."""
    cols = _columns(examples)
    start_logits = np.asarray(start_logits)
    end_logits = np.asarray(end_logits)
    offsets_all = np.asarray(features["offset_mapping"])
    if len(start_logits) != len(offsets_all) or len(end_logits) != len(offsets_all):
        raise ValueError(f"got {len(start_logits)} start and {len(end_logits)} end logit rows "
                         f"for {len(offsets_all)} features")
    example_id_to_index = {k: i for i, k in enumerate(cols["id"])}
    features_per_example = collections.defaultdict(list)
    for i, eid in enumerate(features["example_id"]):
        features_per_example[example_id_to_index[eid]].append(i)

    all_predictions = collections.OrderedDict()
    for example_index, qid in enumerate(cols["id"]):
        prelim_predictions = []
        for feature_index in features_per_example[example_index]:
            s_logits = start_logits[feature_index]
            e_logits = end_logits[feature_index]
            offset_mapping = offsets_all[feature_index]
            start_indexes = np.argsort(s_logits)[-1: -n_best - 1: -1].tolist()
            end_indexes = np.argsort(e_logits)[-1: -n_best - 1: -1].tolist()
            for start_index in start_indexes:
                for end_index in end_indexes:
                    # Out-of-scope answers: indices out of bounds or outside the context.
                    if (start_index >= len(offset_mapping) or end_index >= len(offset_mapping)
                            or offset_mapping[start_index][0] < 0 or offset_mapping[end_index][0] < 0):
                        continue
                    if end_index < start_index or end_index - start_index + 1 > max_answer_len:
                        continue
                    prelim_predictions.append({
                        "offsets": (int(offset_mapping[start_index][0]), int(offset_mapping[end_index][1])),
                        "score": s_logits[start_index] + e_logits[end_index],
                    })
        predictions = sorted(prelim_predictions, key=lambda x: x["score"], reverse=True)[:n_best]
        context = cols["context"][example_index]
        texts = [context[p["offsets"][0]: p["offsets"][1]] for p in predictions]
        if len(texts) == 0 or (len(texts) == 1 and texts[0] == ""):
            texts.insert(0, "empty")
        all_predictions[qid] = texts[0]
    return dict(all_predictions)


# --------------------------------------------------------------------------------------------
# Features files (what `warpforge train --data` reads)
# --------------------------------------------------------------------------------------------

FEATURES_FORMAT = "warpforge.features"
EXAMPLES_FORMAT = "warpforge.squad-examples"
TRAIN_INPUTS = ("input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions")
EVAL_INPUTS = ("input_ids", "token_type_ids", "attention_mask", "example_index", "offset_mapping")


def examples_path(features_path) -> Path:
    """The examples file that goes with an evaluation features file: `<features>.examples.json`."""
    return Path(str(features_path) + ".examples.json")


def write_features(examples, tokenizer, out_path, max_seq: int = 384, doc_stride: int = 128,
                   eval: bool = False, source: str | None = None) -> dict:
    """Prepares features (`prepare_train_features`, or `prepare_validation_features` when `eval`)
    and writes them to `out_path`, one safetensors file whose every tensor has the feature index as
    its first dimension (docs/data.md, "Features files"), all int64:

    - training: `input_ids`, `token_type_ids`, `attention_mask` (N, max_seq), `start_positions`,
      `end_positions` (N,): the batch arguments of a BERT QA training program;
    - evaluation: `input_ids`, `token_type_ids`, `attention_mask` (N, max_seq), `example_index`
      (N,: the feature's example, a position in the examples file) and `offset_mapping`
      (N, max_seq, 2: the characters of the context each token covers, -1 outside the context),
      and beside it `<out>.examples.json` with each example's `id`, `question`, `context` and gold
      `answers` (`text`, `answer_start` lists), in example order: what postprocessing and the v1.1
      metric need.

    The header's metadata records the format, the split, max_seq, doc_stride, the vocabulary size
    and counts. Returns the arrays written (and, for eval, `example_id`)."""
    from safetensors.numpy import save_file

    examples = list(examples)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    if eval:
        feats = prepare_validation_features(examples, tokenizer, max_seq, doc_stride)
        names = EVAL_INPUTS
    else:
        feats = prepare_train_features(examples, tokenizer, max_seq, doc_stride)
        names = TRAIN_INPUTS
    tensors = {k: np.ascontiguousarray(feats[k], dtype=np.int64) for k in names}
    metadata = {
        "format": FEATURES_FORMAT, "format_version": "1", "task": "squad-v1.1",
        "split": "eval" if eval else "train", "max_seq": str(max_seq), "doc_stride": str(doc_stride),
        "vocab_size": str(len(tokenizer)), "examples": str(len(examples)),
        "features": str(len(tensors["input_ids"])),
    }
    if source is not None:
        metadata["source"] = str(source)
    if eval:
        side = examples_path(out_path)
        metadata["examples_file"] = side.name
        doc = {"format": EXAMPLES_FORMAT, "format_version": 1, "source": source,
               "examples": [{"id": e["id"], "question": e["question"], "context": e["context"],
                             "answers": {"text": list(e["answers"]["text"]),
                                         "answer_start": [int(a) for a in e["answers"]["answer_start"]]}}
                            for e in examples]}
        tmp = side.with_name(side.name + ".tmp")
        tmp.write_text(json.dumps(doc, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, side)
    tmp = out_path.with_name(out_path.name + ".tmp")
    save_file(tensors, str(tmp), metadata=metadata)
    os.replace(tmp, out_path)
    if eval:
        tensors = dict(tensors, example_id=feats["example_id"])
    return tensors


def read_features(path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """A features file's tensors (numpy) and its metadata."""
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, dict(f.metadata() or {})


def read_examples(path) -> list[dict]:
    """The examples file of an evaluation features file (`examples_path`), as flat examples
    `{"id", "question", "context", "answers": {"text": [...], "answer_start": [...]}}` (the layout
    of `load_squad`, without `title`) that `postprocess_predictions` and
    `squad_v1_metrics` take."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("format") != EXAMPLES_FORMAT:
        raise SquadFormatError(f"{path}: not a {EXAMPLES_FORMAT} file")
    return [{"id": e["id"], "question": e["question"], "context": e["context"],
             "answers": {"text": list(e["answers"]["text"]), "answer_start": list(e["answers"]["answer_start"])}}
            for e in doc["examples"]]


def evaluate_features(features_path, start_logits, end_logits, n_best: int = 20,
                      max_answer_len: int = 30) -> tuple[dict[str, str], dict]:
    """Predictions and v1.1 EM/F1 from the logits of an evaluation features file's features (rows
    in file order): what `warpforge train` computes in C++ (src/train/squad_metrics.h)."""
    tensors, _ = read_features(features_path)
    examples = read_examples(examples_path(features_path))
    ids = [e["id"] for e in examples]
    feats = {"offset_mapping": tensors["offset_mapping"],
             "example_id": np.asarray([ids[k] for k in tensors["example_index"]], dtype=object)}
    preds = postprocess_predictions(examples, feats, start_logits, end_logits, n_best, max_answer_len)
    return preds, squad_v1_metrics(preds, examples)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m warpforge.data.squad",
                                     description="SQuAD v1.1 data for WarpForge's BERT QA benchmark")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write a synthetic SQuAD v1.1 set and its WordPiece vocab")
    gen.add_argument("--out", required=True, help="output directory")
    gen.add_argument("--train", type=int, required=True, help="training questions")
    gen.add_argument("--dev", type=int, required=True, help="dev questions")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--vocab-size", type=int, default=1000)
    gen.add_argument("--confusable", type=float, default=0.05,
                     help="probability of a second span of an answer type in a paragraph (harder)")
    chk = sub.add_parser("check", help="validate SQuAD v1.1 files (real or generated)")
    chk.add_argument("files", nargs="+")
    feat = sub.add_parser("features", help="write a features file for `warpforge train --data`")
    feat.add_argument("--data", required=True, help="a SQuAD v1.1 JSON file")
    feat.add_argument("--vocab", required=True, help="the WordPiece vocab.txt")
    feat.add_argument("--out", required=True, help="the features file (.safetensors)")
    feat.add_argument("--max-seq", type=int, default=384)
    feat.add_argument("--doc-stride", type=int, default=128)
    feat.add_argument("--eval", action="store_true",
                      help="evaluation features (offsets, example index, <out>.examples.json)")
    feat.add_argument("--cased", action="store_true", help="keep case (a cased vocabulary)")
    args = parser.parse_args(argv)

    if args.command == "generate":
        paths = generate_squad(args.out, args.train, args.dev, args.seed, confusable=args.confusable)
        tok = train_wordpiece([paths["train"], paths["dev"]], args.vocab_size, Path(args.out) / VOCAB_FILE)
        for split in ("train", "dev"):
            n = len(load_squad(paths[split]))
            print(f"{paths[split]}: {n} questions")
        print(f"{Path(args.out) / VOCAB_FILE}: {len(tok)} tokens")
        return 0
    if args.command == "features":
        if args.doc_stride >= args.max_seq:
            parser.error(f"--doc-stride {args.doc_stride} must be below --max-seq {args.max_seq}")
        try:
            examples = load_squad(args.data)
        except SquadFormatError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        tok = load_tokenizer(args.vocab, do_lower_case=not args.cased)
        tensors = write_features(examples, tok, args.out, args.max_seq, args.doc_stride, eval=args.eval,
                                 source=os.path.basename(args.data))
        split = "eval" if args.eval else "train"
        print(f"{args.out}: {len(examples)} questions -> {len(tensors['input_ids'])} {split} features "
              f"(max_seq {args.max_seq}, doc_stride {args.doc_stride})")
        if args.eval:
            print(f"{examples_path(args.out)}: {len(examples)} examples")
        return 0
    status = 0
    for path in args.files:
        try:
            n = len(load_squad(path))
            print(f"{path}: {n} questions, valid")
        except SquadFormatError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
