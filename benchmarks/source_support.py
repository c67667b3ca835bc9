"""Retrieval for source support: index build, store reuse, query latency and planted-fact recall
on a 10,000-fact record.

The record: every fact (sentence) of the ACI-BENCH test-1 dialogues and clinicians' notes
(``../shared/data/aci_bench_test1.jsonl``, read in place, never copied) — 4,799 facts, all the
data has — given as one patient's documents, then the same encounters again as later
"visits" (verbatim copies, as copy-forward notes are in real records) until the record holds
``--facts`` facts (10,000 by default). ``distinct_fact_texts`` says how many are different.
Into it, :data:`PLANTED` facts (40 clinical statements found nowhere in ACI-BENCH) are inserted,
each into the middle of a different document. Each planted fact is then searched for twice:
verbatim, and as a paraphrase in other words (what a generated note would say). Recall@k is the
share of planted facts found within the top k.

Timings: ``index_build_seconds`` is the cold build (BM25, encoding every fact with the shipped
all-MiniLM-L6-v2, writing the FAISS store); ``index_reload_seconds`` is the same record indexed
again by a new retriever (a store hit: BM25 rebuilt, nothing encoded). ``peak_rss_mb`` is the
process's peak resident memory after the build (the model, torch and the record included);
``peak_rss_before_build_mb`` the same just before it. Query latency is one claim at a time
(encode the claim, BM25, FAISS search, fusion), and per claim in batches of 32.

Prints one JSON object. Target: ``recall.hybrid.paraphrased.recall_at_50`` ≥ 0.95.

**Information asymmetry** (``--part asymmetry``, or ``all``): can the metric tell a claim the
record is silent on from one it states? For each ACI-BENCH test-1 encounter, the *true* claims
are the sentences of its clinician's note (header lines left out), and *hallucinated* claims are
sentences of other encounters' notes (a sentence that also occurs in this encounter's note is
never used), mixed in at 5, 15 and 30 % of the claims. Each claim is judged by the real pipeline
(``DocLens(metrics=["doclens", "source_support"])``) against the facts retrieved from the
encounter's dialogue (top 50, MiniLM + BM25; a dialogue is longer than the judge's budget, so
every claim is retrieved for) by a deterministic judge: ``overlap`` by default (``--judge``:
any offline preset). Reported per mix: the share of hallucinated claims labelled Not Addressed
(the target behaviour; Not Supported is VeriFact's known failure mode, reported beside it), how
many true claims were labelled Not Addressed, and the corpus ``source_not_addressed`` rate.
Each claim is judged on its own evidence, so a claim's verdict does not depend on the mix; the
mixes differ in which hallucinated claims are drawn (seeded) and in the corpus rates.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from doclens.retrieval import RetrievalConfig, Retriever, source_facts  # noqa: E402
from doclens.retrieval.store import VectorStore  # noqa: E402
from tests.planted_facts import PLANTED  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci_bench_test1.jsonl"



def build_record(target_facts: int):
    """Documents of the record, the document each planted fact went into, and the count of
    facts the ACI-BENCH data gives once."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    encounter_docs = []
    for row in rows:
        turns = source_facts(row["source"])
        encounter_docs.append("\n".join(f.premise_text for f in turns))  # one document per dialogue
        encounter_docs.append(row["reference"])  # and one per note
    once = sum(len(source_facts(doc)) for doc in encounter_docs)
    documents, total, visit = [], 0, 0
    while total < target_facts - len(PLANTED):
        for doc in encounter_docs:
            count = len(source_facts(doc))
            if total + count > target_facts - len(PLANTED):
                doc = "\n".join(f.text for f in source_facts(doc)[: target_facts - len(PLANTED) - total])
                count = len(source_facts(doc))
            if count:
                documents.append(doc)
                total += count
            if total >= target_facts - len(PLANTED):
                break
        visit += 1
    where = []
    for i, (fact, _paraphrase) in enumerate(PLANTED):
        document = (i * 7 + 3) % len(documents)
        lines = documents[document].split("\n")
        lines.insert(len(lines) // 2, fact)
        documents[document] = "\n".join(lines)
        where.append(document)
    return documents, where, once


def recall(hit_lists, targets, ks):
    out = {}
    for k in ks:
        found = sum(1 for hits, target in zip(hit_lists, targets) if any(h.fact.index == target for h in hits[:k]))
        out[f"recall_at_{k}"] = round(found / len(targets), 4)
    ranks = []
    for hits, target in zip(hit_lists, targets):
        rank = next((h.rank for h in hits if h.fact.index == target), None)
        ranks.append(rank)
    out["missed_at_50"] = [PLANTED[i][0] for i, r in enumerate(ranks) if r is None]
    out["median_rank"] = statistics.median(r if r is not None else 10**9 for r in ranks)
    return out


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def information_asymmetry(judge_name: str, rates=(0.05, 0.15, 0.30), seed: int = 13, encounters: int = 0) -> dict:
    """The information-asymmetry test of the module docstring."""
    import random
    import warnings

    from doclens import DocLens, load_evaluator
    from doclens.scoring.source_support import SourceSupport

    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[:encounters] if encounters else rows
    notes = {row["id"]: [f.text for f in source_facts(row["reference"])] for row in rows}
    rng = random.Random(seed)
    drawn = {}  # encounter → its hallucinated claims, in draw order (a mix takes a prefix)
    for row in rows:
        own = {" ".join(t.lower().split()) for t in notes[row["id"]]}
        pool = sorted({t for other, texts in notes.items() if other != row["id"] for t in texts
                       if " ".join(t.lower().split()) not in own})
        rng.shuffle(pool)
        drawn[row["id"]] = pool
    store_dir = Path(tempfile.mkdtemp(prefix="doclens-asymmetry-bench-"))
    judge = load_evaluator(judge_name)
    support = SourceSupport(retriever=Retriever(RetrievalConfig(), store=VectorStore(store_dir)))
    per_rate = {}
    try:
        for rate in rates:
            instances, fake = [], {}
            for row in rows:
                true = notes[row["id"]]
                count = max(1, round(len(true) * rate / (1 - rate)))
                hallucinated = drawn[row["id"]][:count]
                fake[row["id"]] = set(hallucinated)
                instances.append({"id": row["id"], "prediction": row["reference"], "reference": row["reference"],
                                  "reference_claims": ["placeholder"], "prediction_claims": true + hallucinated,
                                  "source": row["source"]})
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                report = DocLens(judge, metrics=["doclens", "source_support"], source_support=support).score(
                    instances, progress=False)
            seconds = time.perf_counter() - started
            tally = {"hallucinated": {}, "true": {}}
            for result in report.instances:
                for verdict in result.source_support:
                    kind = "hallucinated" if verdict.text in fake[result.id] else "true"
                    label = verdict.verdict or verdict.status
                    tally[kind][label] = tally[kind].get(label, 0) + 1
            n_fake, n_true = sum(tally["hallucinated"].values()), sum(tally["true"].values())
            per_rate[f"{round(100 * rate)}%"] = {
                "claims": n_fake + n_true, "hallucinated_claims": n_fake, "true_claims": n_true,
                "hallucinated_share": round(n_fake / (n_fake + n_true), 4),
                "hallucinated_not_addressed_share": round(tally["hallucinated"].get("not_addressed", 0) / n_fake, 4),
                "hallucinated_not_supported_share": round(tally["hallucinated"].get("not_supported", 0) / n_fake, 4),
                "hallucinated_supported_share": round(tally["hallucinated"].get("supported", 0) / n_fake, 4),
                "true_not_addressed": tally["true"].get("not_addressed", 0),
                "true_not_addressed_share": round(tally["true"].get("not_addressed", 0) / n_true, 4),
                "true_supported_share": round(tally["true"].get("supported", 0) / n_true, 4),
                "true_not_supported_share": round(tally["true"].get("not_supported", 0) / n_true, 4),
                "corpus_source_not_addressed": round(report.scores["source_not_addressed"], 4),
                "corpus_source_supported": round(report.scores["source_supported"], 4),
                "retrieved_claims": report.source_support["retrieved_claims"],
                "seconds": round(seconds, 1),
            }
        signature = report.signature
    finally:
        shutil.rmtree(store_dir, ignore_errors=True)
    return {"judge": judge_name, "encounters": len(rows), "seed": seed, "signature": signature, "mixes": per_rate}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=40, help="claims timed one at a time")
    parser.add_argument("--part", choices=("all", "retrieval", "asymmetry"), default="all")
    parser.add_argument("--judge", default="overlap", help="asymmetry test: a deterministic offline judge preset")
    parser.add_argument("--encounters", type=int, default=0, help="asymmetry test: first N encounters (0: all 40)")
    args = parser.parse_args()
    if not DATA.is_file():
        sys.exit(f"ACI-BENCH data not found at {DATA} (clone the project beside ../shared)")
    if args.part == "asymmetry":
        print(json.dumps({"benchmark": "source_support_information_asymmetry",
                          "information_asymmetry": information_asymmetry(args.judge, encounters=args.encounters),
                          "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                      "load_average_1min": round(os.getloadavg()[0], 2)}}, indent=1))
        return

    documents, where, once = build_record(args.facts)
    facts = source_facts(documents)
    targets = []
    for (fact, _), document in zip(PLANTED, where):
        matches = [f.index for f in facts if f.text == fact and f.unit == document]
        assert len(matches) == 1, fact
        targets.append(matches[0])
    store_dir = Path(tempfile.mkdtemp(prefix="doclens-retrieval-bench-"))
    try:
        config = RetrievalConfig()
        retriever = Retriever(config, store=VectorStore(store_dir))
        retriever.encoder.encode(["load the model"])  # model load is not part of the build
        encoded_before = retriever.encoder.texts_encoded
        rss_before = peak_rss_mb()
        started = time.perf_counter()
        index = retriever.index(facts)
        build = time.perf_counter() - started
        rss_after = peak_rss_mb()
        encoded = retriever.encoder.texts_encoded - encoded_before

        again = Retriever(config, store=VectorStore(store_dir), encoder=retriever.encoder)
        before = retriever.encoder.texts_encoded
        started = time.perf_counter()
        reloaded = again.index(facts)
        reload_seconds = time.perf_counter() - started
        assert reloaded.cache_hit and retriever.encoder.texts_encoded == before

        started = time.perf_counter()
        Retriever(RetrievalConfig(dense=False)).index(facts)
        bm25_seconds = time.perf_counter() - started
        store_bytes = sum(p.stat().st_size for p in store_dir.rglob("*") if p.is_file())

        verbatim_claims = [fact for fact, _ in PLANTED]
        paraphrased_claims = [paraphrase for _, paraphrase in PLANTED]
        single = []
        for claim in (paraphrased_claims * 4)[: args.queries]:
            started = time.perf_counter()
            index.search(claim)
            single.append(time.perf_counter() - started)
        started = time.perf_counter()
        hybrid_para = index.search_many(paraphrased_claims)
        batch_seconds = time.perf_counter() - started
        hybrid_verbatim = index.search_many(verbatim_claims)

        ks = (5, 10, 25, 50)
        results = {"hybrid": {"verbatim": recall(hybrid_verbatim, targets, ks),
                              "paraphrased": recall(hybrid_para, targets, ks)}}
        for name, options in (("bm25_only", {"dense": False}), ("dense_only", {"sparse": False})):
            alone = Retriever(RetrievalConfig(**options), store=VectorStore(store_dir),
                              encoder=retriever.encoder).index(facts)
            results[name] = {"verbatim": recall(alone.search_many(verbatim_claims), targets, ks),
                             "paraphrased": recall(alone.search_many(paraphrased_claims), targets, ks)}
    finally:
        shutil.rmtree(store_dir, ignore_errors=True)

    single.sort()
    report = {
        "benchmark": "source_support_retrieval",
        "record": {"facts": len(facts), "documents": len(documents),
                   "distinct_fact_texts": len({f.premise_text for f in facts}),
                   "aci_bench_facts_once": once, "planted": len(PLANTED)},
        "signature": config.signature(),
        "index_build_seconds": round(build, 2),
        "facts_encoded_in_build": encoded,
        "facts_longer_than_encoder_window": retriever.encoder.texts_truncated,
        "encode_facts_per_second": round(encoded / build, 1) if build else None,
        "index_reload_seconds": round(reload_seconds, 3),
        "bm25_build_seconds": round(bm25_seconds, 3),
        "store_bytes": store_bytes,
        "peak_rss_before_build_mb": rss_before,
        "peak_rss_mb": rss_after,
        "query_latency_ms": {"single_mean": round(1000 * statistics.mean(single), 1),
                             "single_p50": round(1000 * single[len(single) // 2], 1),
                             "single_p95": round(1000 * single[min(len(single) - 1, int(0.95 * len(single)))], 1),
                             "batched_per_claim": round(1000 * batch_seconds / len(paraphrased_claims), 1)},
        "recall": results,
        "target": {"paraphrased_recall_at_50_min": 0.95,
                   "met": results["hybrid"]["paraphrased"]["recall_at_50"] >= 0.95},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average_1min": round(os.getloadavg()[0], 2)},
    }
    if args.part == "all":
        report["information_asymmetry"] = information_asymmetry(args.judge, encounters=args.encounters)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
