"""Do the offline extractors extract? Prints JSON.

Runs an extractor over the sections of ACI-BENCH clinician notes (test split 1, read in place from
``../shared/data``) and counts, per extractor:

* ``claims``: claims per section;
* ``supported_by_section``: the share of claims the section itself supports by the
  ``clinical-rules`` judge (an extractor should restate the text, not invent);
* ``copied_from_prompt``: claims that occur in the extraction prompt's few-shot examples but not
  in the section (the model copying the prompt);
* ``repeated``: claims that occur more than once in one section's list;
* ``replies_at_cap`` (``local`` only): replies that used every token ``max_reply_tokens`` allows
  (the model looping until the cap);
* wall time per section.

    python -m benchmarks.extraction_quality --extractors clauses,sentences
    python -m benchmarks.extraction_quality --extractors local --sections 6     # slow (SmolLM2)
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from doclens.evaluators import load_evaluator, load_extractor  # noqa: E402
from doclens.extraction.extractors import ExtractionRequest  # noqa: E402
from doclens.parsing.sections import split_note_sections  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "aci_bench_test1.jsonl"


def sections(rows: list[dict], limit: int) -> list[tuple[str, str, str]]:
    """``(note id, section, text)`` for the first ``limit`` non-empty sections, cycling through
    the four SOAP sections so every section prompt is used."""
    out = []
    for row in rows:
        for name, text in split_note_sections(row["reference"]).items():
            if text.strip():
                out.append((row["id"], name, text))
    out.sort(key=lambda x: (x[0], x[1]))
    chosen, seen = [], Counter()
    for note, name, text in out:
        if len(chosen) < limit and seen[name] <= min(seen.values() or [0]):
            chosen.append((note, name, text))
            seen[name] += 1
    for item in out:  # fill up when some section is rare
        if len(chosen) >= limit:
            break
        if item not in chosen:
            chosen.append(item)
    return chosen


def prompt_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8").lower() for p in (REPO / "prompts" / "extract").glob("*.txt"))


def measure(name: str, items, judge, prompts: str) -> dict:
    extractor = load_extractor(name, **({"no_cache": True} if name == "local" else {}))
    lengths: list[int] = []
    judge_of = getattr(extractor, "judge", None)
    if judge_of is not None:  # record each reply's length: did the model loop to the cap?
        ask = judge_of.ask_many

        def recording(*a, **k):
            completions = ask(*a, **k)
            lengths.extend(c.completion_tokens for c in completions)
            return completions

        judge_of.ask_many = recording
    started = time.perf_counter()
    lists = extractor.extract_many([ExtractionRequest(text, "note_generation", section) for _, section, text in items])
    elapsed = time.perf_counter() - started
    claims = sum(len(c) for c in lists)
    supported = copied = repeated = 0
    for (_, _, text), found in zip(items, lists):
        verdicts = judge.entail_batch([(text, c) for c in found]) if found else []
        supported += sum(verdicts)
        bare = [c.lower().strip(". ") for c in found]
        copied += sum(1 for c in bare if c in prompts and c not in text.lower())
        repeated += sum(n - 1 for n in Counter(found).values() if n > 1)
    result = {"signature": extractor.signature(), "sections": len(items), "claims": claims,
              "claims_per_section": round(claims / max(1, len(items)), 2),
              "supported_by_section": round(supported / claims, 3) if claims else None,
              "copied_from_prompt": copied, "repeated": repeated,
              "seconds_per_section": round(elapsed / max(1, len(items)), 2),
              "empty_lists": sum(1 for c in lists if not c)}
    cap = getattr(judge_of, "max_reply_tokens", None)
    if lengths and cap:
        result["max_reply_tokens"] = cap
        result["replies_at_cap"] = sum(1 for n in lengths if n >= cap)
        result["reply_tokens_median"] = sorted(lengths)[len(lengths) // 2]
    result["example"] = {"section": items[0][1], "claims": lists[0][:8]} if items else None
    extractor.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--extractors", default="clauses,sentences")
    parser.add_argument("--sections", type=int, default=40)
    args = parser.parse_args()
    rows = [json.loads(line) for line in open(args.data, encoding="utf-8")]
    items = sections(rows, args.sections)
    judge = load_evaluator("clinical-rules")
    prompts = prompt_text()
    report = {"data": Path(args.data).name, "sections": len(items),
              "section_names": dict(Counter(name for _, name, _ in items)), "extractors": {}}
    for name in [n for n in args.extractors.split(",") if n]:
        report["extractors"][name] = measure(name, items, judge, prompts)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
