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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from doclens.retrieval import RetrievalConfig, Retriever, source_facts  # noqa: E402
from doclens.retrieval.store import VectorStore  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci_bench_test1.jsonl"

#: (planted fact, the same claim paraphrased)
PLANTED = [
    ("She was bitten by her neighbor's parrot on the left thumb two weeks ago.",
     "A bird bit the patient's left thumb a couple of weeks back."),
    ("He works night shifts as a crane operator at the harbor.",
     "The patient operates cranes at the port overnight."),
    ("Her mother was diagnosed with Huntington disease at age 52.",
     "There is a maternal family history of Huntington's chorea."),
    ("He drinks about six cans of energy drinks every day.",
     "The patient consumes several energy beverages daily."),
    ("A tattoo on the right calf was done last spring at a street fair.",
     "The patient got a tattoo on the lower right leg at an outdoor fair."),
    ("She reports a metallic taste in her mouth since starting the new antibiotic.",
     "Since beginning the antibiotic, the patient notices a metal-like taste."),
    ("He had a splenectomy after a snowboarding accident in 2009.",
     "The patient's spleen was removed following a snowboard injury."),
    ("Her INR this morning was 4.8 on warfarin.",
     "The international normalized ratio is elevated at 4.8 while taking warfarin."),
    ("He keeps three ferrets at home and cleans their cages daily.",
     "The patient has pet ferrets and handles their enclosures every day."),
    ("She is allergic to latex and develops hives with surgical gloves.",
     "Latex exposure, such as from medical gloves, gives the patient urticaria."),
    ("He returned from a trekking trip in Nepal ten days ago.",
     "The patient recently came back from hiking in the Himalayas."),
    ("Her thyroid ultrasound showed a 1.4 cm nodule in the right lobe.",
     "Imaging of the thyroid found a nodule of about 1.4 centimeters on the right side."),
    ("He quit smoking in 2015 after a 30 pack-year history.",
     "The patient is a former smoker with 30 pack-years who stopped about ten years ago."),
    ("She uses a CPAP machine every night for obstructive sleep apnea.",
     "The patient sleeps with positive airway pressure for her sleep apnea."),
    ("He has a pacemaker that was placed for complete heart block in 2019.",
     "A cardiac pacing device was implanted because of third-degree AV block."),
    ("She is training for a marathon and runs 40 miles a week.",
     "The patient is preparing for a long-distance race with high weekly running mileage."),
    ("His hemoglobin dropped from 13.1 to 9.8 over the past month.",
     "The patient's hemoglobin has fallen to 9.8 from 13.1 within a month."),
    ("She had gestational diabetes during her second pregnancy.",
     "The patient developed diabetes while pregnant with her second child."),
    ("He was stung by a jellyfish while surfing last weekend.",
     "The patient suffered a jellyfish sting in the ocean a few days ago."),
    ("She takes melatonin 3 mg at bedtime for insomnia.",
     "The patient uses a melatonin supplement at night to help her sleep."),
    ("He reports ringing in both ears after a rock concert.",
     "The patient has bilateral tinnitus following loud music exposure."),
    ("Her brother died suddenly of a cardiac arrest at age 34.",
     "The patient's sibling had sudden cardiac death in his thirties."),
    ("He works as a welder and does not always wear eye protection.",
     "The patient welds for a living and sometimes skips safety goggles."),
    ("She noticed her hair falling out in clumps over the last two months.",
     "The patient describes significant hair loss in recent weeks."),
    ("He was vaccinated against shingles last October.",
     "The patient received the zoster vaccine in the fall."),
    ("Her colonoscopy in March removed two small tubular adenomas.",
     "Two adenomatous polyps were excised during the patient's colonoscopy this spring."),
    ("He sleeps only four hours a night because he cares for his newborn twins.",
     "The patient gets little sleep while looking after two newborn babies."),
    ("She fainted in the shower yesterday and hit her forehead.",
     "The patient had a syncopal episode while bathing and struck her head."),
    ("He takes St. John's wort that he buys at a health food store.",
     "The patient uses an over-the-counter herbal antidepressant supplement."),
    ("Her potassium was 6.1 on the basic metabolic panel.",
     "The patient's labs showed hyperkalemia with a potassium of 6.1."),
    ("He volunteers at an animal shelter on weekends.",
     "The patient helps out caring for rescue animals on Saturdays and Sundays."),
    ("She has worn hearing aids in both ears since childhood.",
     "The patient has used bilateral hearing amplification devices since she was young."),
    ("He was treated for Lyme disease after a tick bite last summer.",
     "The patient received therapy for borreliosis following a tick bite."),
    ("Her vision became blurry in the left eye three days ago.",
     "The patient reports recent loss of visual clarity on the left."),
    ("He recently started a ketogenic diet and lost 15 pounds.",
     "The patient has lost weight after switching to a very low-carbohydrate diet."),
    ("She works as a flight attendant on long-haul international routes.",
     "The patient is cabin crew on long-distance overseas flights."),
    ("He had a kidney stone that passed spontaneously in January.",
     "The patient passed a renal calculus on his own at the start of the year."),
    ("Her daughter has cystic fibrosis and lives with her.",
     "The patient's child, who resides with her, has CF."),
    ("He grinds his teeth at night and wears a mouth guard.",
     "The patient has nocturnal bruxism and uses a dental night guard."),
    ("She was exposed to tuberculosis while working at a homeless shelter.",
     "The patient had a TB exposure through her job at a shelter."),
]


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=40, help="claims timed one at a time")
    args = parser.parse_args()
    if not DATA.is_file():
        sys.exit(f"ACI-BENCH data not found at {DATA} (clone the project beside ../shared)")

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
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
