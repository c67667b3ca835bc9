"""How well do the offline judges tell a supported claim from an unsupported one? Prints JSON.

The labelled set is built deterministically (fixed seed) from the clinician notes of ACI-BENCH
test split 1 (read in place from ``../shared/data``). Every pair is ``(note, claim)``: the
premise is the whole note, as in claim precision (a prediction's claims judged against the
reference note).

Supported kinds (label 1):
* ``verbatim``: a sentence of the note;
* ``shortened``: the part of a note sentence before its first comma, ``but`` or ``and``;
* ``paraphrase``: a note sentence rewritten by one of the hand-written templates in
  :data:`PARAPHRASES` (subject swaps, reported speech, passive plans, age phrasing …);
* ``written_paraphrase``: :data:`WRITTEN_PARAPHRASES`, 33 note sentences reworded by hand, as a
  clinician or a model would (synonyms, lay terms, reordering, other verbs), written by reading
  the notes before any judge saw them and never tuned on (held out: all are in ``held_out``).

Unsupported kinds (label 0):
* ``other_patient``: a sentence of another patient's note that does not occur in this one;
* ``laterality``: a note sentence with ``left`` and ``right`` swapped;
* ``negation``: a note sentence with its assertion flipped (``denies`` ↔ ``reports``, ``no X`` →
  ``X``, ``is`` → ``is not`` …; :data:`NEGATION_FLIPS`);
* ``number``: a note sentence with one number changed;
* ``drug``: a note sentence with a drug name swapped for one the note never mentions;
* ``dialogue``: something said in the visit's dialogue that the note does not record (a turn of
  at least eight words of which fewer than half the content words occur in the note), as
  ``The patient said …`` / ``The doctor said …``.

The set is balanced: as many supported as unsupported pairs (``--per-kind`` unsupported pairs per
kind, twice as many per supported kind), drawn round-robin over notes so no note dominates a
kind. Notes are split in two halves by a seeded permutation: ``dev`` (where judge rules may be
tuned) and ``held_out`` (never looked at while writing rules); figures are reported for both.

For each judge: balanced accuracy (mean of the supported and the unsupported accuracy), the
accuracy of every kind (the share of its pairs judged correctly), and wall time per pair.

    python -m benchmarks.judge_quality                      # overlap, overlap:t1, clinical-rules
    python -m benchmarks.judge_quality --local-pairs 24     # + SmolLM2 on a balanced subset, with
                                                            #   its logit margins and calibrations
    python -m benchmarks.judge_quality --dump pairs.jsonl   # write the labelled set to look at it

``local`` costs ~19 s a pair on a 2-core CPU, hence the small subset. Its study reads the margin
``logit('1') - logit('0')`` at the verdict position and reports three readings: raw (margin > 0,
the judge's own), content-free calibration (margin above the margin the same prompt gives for an
empty premise and claim, after Zhao et al. 2021), and a threshold fitted on the dev half's
subset pairs, applied to the held-out half's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from doclens.parsing.statements import parse_statements  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "aci_bench_test1.jsonl"
SEED = 20261123
SUPPORTED = ("verbatim", "shortened", "paraphrase", "written_paraphrase")
UNSUPPORTED = ("other_patient", "laterality", "negation", "number", "drug", "dialogue")

#: Drug names (generic and brand) the swap draws from; a replacement never occurs in the note.
DRUGS = """lisinopril metformin methotrexate protonix omeprazole ibuprofen tylenol acetaminophen motrin
meloxicam prednisone amoxicillin augmentin keflex atorvastatin lipitor metoprolol amlodipine norvasc losartan
hydrochlorothiazide lasix furosemide insulin lantus glipizide jardiance flomax gabapentin naproxen aleve
zyrtec claritin flonase albuterol singulair xarelto eliquis coumadin warfarin aspirin plavix synthroid
levothyroxine zoloft sertraline prozac lexapro wellbutrin oxycodone tramadol cipro bactrim doxycycline
azithromycin famotidine pepcid nexium ozempic humira simvastatin carvedilol robaxin flexeril cortisone
miralax prilosec""".split()
#: Drugs that replace others (common, unambiguous names).
SWAP_DRUGS = ["warfarin", "metoprolol", "gabapentin", "amoxicillin", "sertraline", "atorvastatin", "losartan",
              "prednisone", "omeprazole", "furosemide", "naproxen", "doxycycline"]

#: Hand-written paraphrase templates: (pattern, replacement), tried in order on a note sentence;
#: the first that matches makes the paraphrase. Written before any rule judge was.
PARAPHRASES: list[tuple[str, str]] = [
    (r"^(?:He|She) (denies|reports|endorses|notes|states) (.+)$", r"The patient \1 \2"),
    (r"^The patient (?:reports|states|notes) that (?:he|she) (.+)$", r"According to the patient, they \1"),
    (r"^(?:He|She|The patient) (?:reports|states|notes) that (.+)$", r"According to the patient, \1"),
    (r"^(.+?) is an? (\d+)-year-old (male|female|man|woman)\b(.*)$", r"\1, a \3 aged \2,\4"),
    (r"^We will (order|obtain|start|refer|prescribe|schedule|continue|check) (.+)$", r"The plan is to \1 \2"),
    (r"^I (?:have )?(?:recommended|advised|encouraged) (?:that )?(?:he|she|the patient|him|her) (.+)$",
     r"The patient was advised to \1"),
    (r"^(?:He|She) should (.+)$", r"The patient is to \1"),
    (r"^(?:He|She) has been (.+)$", r"The patient has been \1"),
    (r"^(?:He|She) (?:is|was) (.+)$", r"The patient is \1"),
    (r"^(?:He|She) has (.+)$", r"The patient has \1"),
    (r"^Denies (.+)$", r"The patient denies \1"),
    (r"^Endorses (.+)$", r"The patient reports \1"),
    (r"^(.+?) (?:was|is) unremarkable(.*)$", r"\1 showed nothing abnormal\2"),
    (r"^(.+?) (?:is|are) (negative|positive) for (.+)$", r"\1 came back \2 for \3"),
    (r"^(?:Continue|Continue with) (.+)$", r"\1 will be continued"),
]

#: Hand-written paraphrases: (note id, a note sentence reworded by hand). Written by reading the
#: notes of ACI-BENCH test split 1 before any judge was run on them; held out (never tuned on).
WRITTEN_PARAPHRASES: list[tuple[str, str]] = [
    ("D2N088", "He checks his blood pressure regularly on weekdays but is less consistent on the weekend."),
    ("D2N088", "He thinks carrying heavy bags caused these symptoms."),
    ("D2N088", "He has been short of breath and coughing."),
    ("D2N091", "The 54-year-old man, who has osteoporosis and multiple sclerosis, came in for his yearly physical."),
    ("D2N091", "He has been travelling around the country."),
    ("D2N091", "He says this summer was stressful."),
    ("D2N094", "She hurt it while she was skiing."),
    ("D2N094", "Palpating the MCP and DIP joints of her right hand causes pain."),
    ("D2N097", "A mammogram will be ordered."),
    ("D2N097", "She denies any chest pain or shortness of breath."),
    ("D2N100", "Her acne began about two years ago and shows up nearly every day."),
    ("D2N100", "Her acne is doing well today."),
    ("D2N100", "Dryness or irritation may be side effects."),
    ("D2N103", "He says he feels better and is doing pretty well overall."),
    ("D2N103", "The episodes of chest pain and shortness of breath last a few minutes and do not come back for "
               "weeks."),
    ("D2N106", "His breathing has gotten worse than it used to be."),
    ("D2N106", "His symptoms started two years ago."),
    ("D2N106", "I told him to take it as soon as any symptoms start."),
    ("D2N109", "The left lower extremity has intact sensation."),
    ("D2N109", "The lateral malleolus and fifth metatarsal of the left ankle are tender when palpated."),
    ("D2N109", "The medication was refilled today."),
    ("D2N112", "Strength is 4/5 on the left side and 5/5 on the right side."),
    ("D2N112", "Palpating the L4 vertebra is painful."),
    ("D2N112", "His primary care doctor referred him."),
    ("D2N115", "He was prescribed Flexeril 10 mg to take every 12 hours when needed."),
    ("D2N115", "Depending on the MRI results, he will be referred to physical rehabilitation or a chiropractor."),
    ("D2N115", "Flexion, rotation, and lateral bending are painful."),
    ("D2N118", "The patient takes Norvasc 2.5 mg and metformin 500 mg."),
    ("D2N118", "A urinalysis and urine culture were ordered."),
    ("D2N118", "The patient will follow up in three months."),
    ("D2N121", "He is doing well with his current medications."),
    ("D2N121", "The neck is supple with no lymphadenopathy."),
    ("D2N121", "He has no edema in his lower extremities."),
]

#: Assertion flips, tried in order; the first that matches makes the negation kind.
NEGATION_FLIPS: list[tuple[str, str]] = [
    (r"\bdenies\b", "reports"), (r"\bDenies\b", "Endorses"), (r"\bdenied\b", "reported"),
    (r"\bendorses\b", "denies"), (r"\bEndorses\b", "Denies"),
    (r"\b(is|was|are|were|has|have|had|does|did|do|will|can|should) not\b", r"\1"),
    (r"\bnegative\b", "positive"), (r"\bpositive\b", "negative"),
    (r"\bwithout\b", "with"), (r"^No\s+", ""), (r"\bno\s+(?=\w)", ""),
    (r"\bunremarkable\b", "abnormal"), (r"\bnormal\b", "abnormal"),
    (r"\breports\b", "denies"),
    (r"\b(is|was|are|were|has|have|had|will|should)\b(?! not)", r"\1 not"),
]

_NUMBER = re.compile(r"(?<![\w./-])(\d+(?:\.\d+)?)(?![\w./])")
_WORD_NUMBERS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve"]
_STOP = set("""a an the and or of to in on at for with by from as is are was were be been being this that these those
it its he she they his her their him them we our you your i me my has have had do does did will would shall should
can could may might must also than then there here which who whom whose what when where while about into over
under after before during per very more most some any each other such only same so not no just like um uh yeah
okay know going think really little bit get got well right""".split())


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in _STOP}


def _sentences(note: str) -> list[str]:
    """Note sentences worth a claim: 5 to 40 words, not a header, section labels kept."""
    out = []
    for statement in parse_statements(note):
        text = statement.text.strip().lstrip("•-* ").strip()
        if 5 <= len(text.split()) <= 40:
            out.append(text)
    return out


def _shorten(sentence: str):
    for splitter in (r",\s+", r"\s+but\s+", r"\s+and\s+"):
        parts = re.split(splitter, sentence, maxsplit=1)
        if len(parts) == 2 and len(parts[0].split()) >= 4 and len(parts[1].split()) >= 2:
            return parts[0].rstrip(" ,;:") + "."
    return None


def _paraphrase(sentence: str):
    body = sentence.rstrip(".")
    for pattern, replacement in PARAPHRASES:
        if re.search(pattern, body):
            out = re.sub(pattern, replacement, body, count=1).strip()
            out = out[0].upper() + out[1:]
            return out.rstrip(",") + "."
    return None


def _flip_negation(sentence: str):
    for pattern, replacement in NEGATION_FLIPS:
        if re.search(pattern, sentence):
            out = re.sub(pattern, replacement, sentence, count=1)
            out = out[0].upper() + out[1:]
            if out != sentence:
                return out
    return None


def _flip_laterality(sentence: str):
    if not re.search(r"\b(left|right|Left|Right)\b", sentence):
        return None
    swap = {"left": "right", "right": "left", "Left": "Right", "Right": "Left"}
    return re.sub(r"\b(left|right|Left|Right)\b", lambda m: swap[m.group(1)], sentence)


def _change_number(sentence: str, rng: random.Random):
    matches = list(_NUMBER.finditer(sentence))
    if matches:
        m = rng.choice(matches)
        value = m.group(1)
        if "." in value:
            new = f"{float(value) + rng.choice([1.0, 2.0, 0.5]):.{len(value.split('.')[1])}f}"
        else:
            n = int(value)
            new = str(n + rng.choice([1, 2, 3, 5, 10]) if n < 1000 else n + 100)
        return sentence[:m.start(1)] + new + sentence[m.end(1):]
    words = [m for m in re.finditer(r"\b(" + "|".join(_WORD_NUMBERS) + r")\b", sentence)]
    if words:
        m = rng.choice(words)
        options = [w for w in _WORD_NUMBERS if w != m.group(1)]
        return sentence[:m.start()] + rng.choice(options) + sentence[m.end():]
    return None


def _swap_drug(sentence: str, note: str, rng: random.Random):
    lower_note = note.lower()
    found = [m for d in DRUGS for m in re.finditer(rf"\b{d}\b", sentence, flags=re.IGNORECASE)]
    if not found:
        return None
    m = rng.choice(found)
    options = [d for d in SWAP_DRUGS if not re.search(rf"\b{d}\b", lower_note)]
    new = rng.choice(options)
    if m.group(0)[0].isupper():
        new = new.capitalize()
    return sentence[:m.start()] + new + sentence[m.end():]


def _dialogue_claims(source: str, note: str) -> list[str]:
    note_words = _content(note)
    out = []
    for line in source.splitlines():
        m = re.match(r"^\[\d+\]\[(doctor|patient)\]\s*(.+)$", line)
        if not m:
            continue
        text = re.sub(r"\b(uh|um|uh-huh|mm-hmm|you know|like)\b,?\s*", "", m.group(2))
        text = re.sub(r"\s+([,.?!])", r"\1", text).strip(" ,.")
        words = _content(text)
        if len(text.split()) < 8 or len(text.split()) > 40 or len(words) < 4 or "?" in text:
            continue
        if len(words & note_words) / len(words) >= 0.5:
            continue
        out.append(f"The {m.group(1)} said {text}.")
    return out


def build_pairs(rows: list[dict], per_kind: int = 40, seed: int = SEED) -> list[dict]:
    """The labelled set: dicts with ``id, note_id, split, kind, label, premise, claim``."""
    rng = random.Random(seed)
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    split = {rows[i]["id"]: ("dev" if rank < len(rows) // 2 else "held_out") for rank, i in enumerate(order)}
    candidates: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    note_sentences = {row["id"]: _sentences(row["reference"]) for row in rows}
    for index, row in enumerate(rows):
        note, nid = row["reference"], row["id"]
        sentences = note_sentences[nid]
        for s in sentences:
            candidates["verbatim"][nid].append(s)
            for kind, made in (("shortened", _shorten(s)), ("paraphrase", _paraphrase(s)),
                               ("laterality", _flip_laterality(s)), ("negation", _flip_negation(s)),
                               ("number", _change_number(s, rng)), ("drug", _swap_drug(s, note, rng))):
                # an unsupported variant must not occur in the note itself
                if made and made != s and (kind in SUPPORTED or made.rstrip(".") not in note):
                    candidates[kind][nid].append(made)
        other = rows[(index + 1 + rng.randrange(len(rows) - 1)) % len(rows)]
        for s in note_sentences[other["id"]]:
            if s not in note and len(s.split()) >= 6:
                candidates["other_patient"][nid].append(s)
        candidates["dialogue"][nid].extend(_dialogue_claims(row.get("source", ""), note))
    notes = {row["id"]: row["reference"] for row in rows}
    pairs = []
    for nid, claim in WRITTEN_PARAPHRASES:  # fixed, all held out
        if nid in notes:
            pairs.append({"id": f"written_paraphrase-{len(pairs)}", "note_id": nid, "split": "held_out",
                          "kind": "written_paraphrase", "label": True, "premise": notes[nid], "claim": claim})
    for kind in SUPPORTED + UNSUPPORTED:
        if kind == "written_paraphrase":
            continue
        want = per_kind * 2 if kind in SUPPORTED else per_kind
        pools = {nid: list(dict.fromkeys(c)) for nid, c in sorted(candidates[kind].items())}
        for pool in pools.values():
            rng.shuffle(pool)
        ids = sorted(pools)
        rng.shuffle(ids)
        chosen: list[tuple[str, str]] = []
        while len(chosen) < want and any(pools[i] for i in ids):
            for nid in ids:
                if pools[nid] and len(chosen) < want:
                    chosen.append((nid, pools[nid].pop()))
        for nid, claim in chosen:
            pairs.append({"id": f"{kind}-{len(pairs)}", "note_id": nid, "split": split[nid], "kind": kind,
                          "label": kind in SUPPORTED, "premise": notes[nid], "claim": claim})
    return pairs


# ---- scoring --------------------------------------------------------------------------------------
def summarise(pairs: list[dict], verdicts: list[bool]) -> dict:
    def block(items):
        by_kind = defaultdict(list)
        for pair, verdict in items:
            by_kind[pair["kind"]].append(verdict == pair["label"])
        kinds = {k: round(sum(v) / len(v), 3) for k, v in by_kind.items() if v}
        pos = [verdict == pair["label"] for pair, verdict in items if pair["label"]]
        neg = [verdict == pair["label"] for pair, verdict in items if not pair["label"]]
        tpr = sum(pos) / len(pos) if pos else None
        tnr = sum(neg) / len(neg) if neg else None
        balanced = (tpr + tnr) / 2 if pos and neg else None
        return {"balanced_accuracy": round(balanced, 3) if balanced is not None else None,
                "supported_accuracy": round(tpr, 3) if tpr is not None else None,
                "unsupported_accuracy": round(tnr, 3) if tnr is not None else None,
                "pairs": len(items), "kinds": kinds}

    items = list(zip(pairs, verdicts))
    return {"all": block(items), "dev": block([x for x in items if x[0]["split"] == "dev"]),
            "held_out": block([x for x in items if x[0]["split"] == "held_out"])}


def run_judge(name: str, pairs: list[dict], **options) -> dict:
    from doclens.evaluators import load_evaluator

    started = time.perf_counter()
    judge = load_evaluator(name, **options)
    loaded = time.perf_counter()
    verdicts = judge.entail_batch([(p["premise"], p["claim"]) for p in pairs])
    done = time.perf_counter()
    judge.close()
    result = {"signature": judge.signature(), "load_s": round(loaded - started, 3),
              "per_pair_ms": round(1000 * (done - loaded) / max(1, len(pairs)), 3)}
    result.update(summarise(pairs, [bool(v) for v in verdicts]))
    return result, verdicts


def balanced_subset(pairs: list[dict], n: int, seed: int = SEED) -> list[dict]:
    """``n`` pairs, half supported and half not, spread over the kinds and both splits."""
    rng = random.Random(seed + 1)
    by_kind = defaultdict(list)
    for p in pairs:
        by_kind[(p["kind"], p["split"])].append(p)
    for v in by_kind.values():
        rng.shuffle(v)
    out: list[dict] = []
    for label_kinds, quota in ((SUPPORTED, n // 2), (UNSUPPORTED, n - n // 2)):
        keys = [(k, s) for k in label_kinds for s in ("dev", "held_out")]
        taken = 0
        while taken < quota and any(by_kind[k] for k in keys):
            for key in keys:
                if by_kind[key] and taken < quota:
                    out.append(by_kind[key].pop())
                    taken += 1
    return out


def local_study(pairs: list[dict], max_new_tokens: int) -> dict:
    """SmolLM2's margins on ``pairs``: raw, content-free calibrated and threshold-fitted readings."""
    from doclens.evaluators.models.local_chat import LocalChatJudge

    margins: dict[str, float] = {}

    class MarginJudge(LocalChatJudge):
        def _read_verdicts(self, prefix, texts):
            values = self._verdict_margins(prefix, texts)
            for text, margin in zip(texts, values):
                margins[text.split("entailment prediction:")[0][-400:]] = margin
            return [margin > 0 for margin in values]

    started = time.perf_counter()
    judge = MarginJudge(no_cache=True, max_new_tokens=max_new_tokens)
    values = []
    for p in pairs + [{"premise": "N/A", "claim": "N/A"}]:
        margins.clear()
        judge.judge_claims(p["premise"], [p["claim"]], task="general", direction="precision")
        values.append(next(iter(margins.values())))
    elapsed = time.perf_counter() - started
    content_free = values[-1]
    values = values[:-1]
    raw = [v > 0 for v in values]
    calibrated = [v > content_free for v in values]
    dev = [(p, v) for p, v in zip(pairs, values) if p["split"] == "dev"]
    best, best_score = 0.0, -1.0
    for threshold in sorted({v for _, v in dev}):
        score = summarise([p for p, _ in dev], [v >= threshold for _, v in dev])["all"]["balanced_accuracy"] or 0
        if score > best_score:
            best, best_score = threshold, score
    held = [(p, v) for p, v in zip(pairs, values) if p["split"] == "held_out"]
    pos = sorted(v for p, v in zip(pairs, values) if p["label"])
    neg = sorted(v for p, v in zip(pairs, values) if not p["label"])
    return {
        "model": judge.model, "max_new_tokens": max_new_tokens, "pairs": len(pairs),
        "seconds_per_pair": round(elapsed / (len(pairs) + 1), 2),
        "content_free_margin": round(content_free, 3),
        "margin_supported": {"min": round(pos[0], 3), "median": round(pos[len(pos) // 2], 3), "max": round(pos[-1], 3)},
        "margin_unsupported": {"min": round(neg[0], 3), "median": round(neg[len(neg) // 2], 3),
                               "max": round(neg[-1], 3)},
        "auc": round(_auc(pos, neg), 3),
        "raw": summarise(pairs, raw),
        "content_free_calibrated": summarise(pairs, calibrated),
        "threshold_fitted_on_dev": {"threshold": round(best, 3), "dev_balanced_accuracy": best_score,
                                    "held_out": summarise([p for p, _ in held], [v >= best for _, v in held])["all"]},
    }


def _auc(pos: list[float], neg: list[float]) -> float:
    """Probability that a supported pair's margin is above an unsupported one's (ties count half)."""
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg)) if pos and neg else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--per-kind", type=int, default=40, help="unsupported pairs per kind (supported: twice)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--judges", default="overlap,overlap:t1,clinical-rules",
                        help="comma-separated presets; 'overlap:t1' is overlap with threshold 1 (every content word)")
    parser.add_argument("--local-pairs", type=int, default=0, help="run SmolLM2 (`local`) on this many pairs (slow)")
    parser.add_argument("--local-max-new-tokens", type=int, default=24)
    parser.add_argument("--dump", help="write the labelled set here as JSONL (claims only, no notes)")
    parser.add_argument("--show-errors", help="print this judge's wrong verdicts to stderr")
    args = parser.parse_args()

    rows = [json.loads(line) for line in open(args.data, encoding="utf-8")]
    pairs = build_pairs(rows, args.per_kind, args.seed)
    counts = defaultdict(int)
    for p in pairs:
        counts[p["kind"]] += 1
    report = {"data": Path(args.data).name, "seed": args.seed, "pairs": len(pairs),
              "supported": sum(p["label"] for p in pairs), "unsupported": sum(not p["label"] for p in pairs),
              "per_kind": dict(counts), "splits": {s: sum(p["split"] == s for p in pairs) for s in ("dev", "held_out")},
              "judges": {}}
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as handle:
            for p in pairs:
                handle.write(json.dumps({k: v for k, v in p.items() if k != "premise"}) + "\n")
    for name in [n for n in args.judges.split(",") if n]:
        preset, _, option = name.partition(":")
        options = {"threshold": float(option[1:])} if option.startswith("t") else {}
        result, verdicts = run_judge(preset, pairs, **options)
        report["judges"][name] = result
        if args.show_errors == name:
            for p, v in zip(pairs, verdicts):
                if bool(v) != p["label"]:
                    print(f"[{p['split']}] {p['kind']} {p['note_id']}: {p['claim']}", file=sys.stderr)
    if args.local_pairs:
        report["local"] = local_study(balanced_subset(pairs, args.local_pairs, args.seed), args.local_max_new_tokens)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
