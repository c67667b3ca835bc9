"""Short, readable names for what a signature pins, and the banner for results made with a judge
that is not fit for comparing systems.

The signature stays the record (``doclens.scoring.signature``); these only help a reader:
``judge_label`` names the judge and its model in a few words above a leaderboard table, and
``demo_banner`` says loudly, at the top of every page and summary, that the scores come from a
demo-quality or smoke-test judge (the ``local`` chat judge on its shipped SmolLM2 default, whose
verdicts do not discriminate — ``cards/local-chat.md``; the ``overlap`` heuristic, for smoke tests
only — ``doclens presets``).
"""

from __future__ import annotations

from doclens.core.signature import Signature

#: judges whose scores are never fit to compare systems, and why
SMOKE_TEST_JUDGES = {"overlap": "a lexical containment heuristic for smoke tests (not a publishable judge; "
                                "'doclens presets')"}


def _judge_parts(signature: Signature | str | None) -> tuple[str, str | None, bool]:
    """``(judge name, model, demo marker)`` read from a signature's ``judge`` field."""
    judge = Signature.read(signature).get("judge") or ""  # read returns a Signature as it is
    demo = judge.endswith(":demo")
    if demo:
        judge = judge[: -len(":demo")]
    name, _, model = judge.partition(":")
    return name or "unknown judge", model or None, demo


def judge_label(signature: Signature | str) -> str:
    """A few words for the judge of ``signature``: ``gpt4-json-cot · gpt-4o``, ``local ·
    SmolLM2-135M-Instruct.Q4_1.gguf (demo)``, ``clinical-rules``; the claims' origin
    (``claims given`` / ``claims: sentences``) and the task when the signature names them."""
    name, model, demo = _judge_parts(signature)
    fields = Signature.read(signature).as_dict()
    parts = [name]
    if model and not name.startswith("clinical-rules") and not name.startswith("overlap"):
        parts.append(model.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1])  # a path: its last part
    label = " · ".join(parts) + (" (demo)" if demo else "")
    extract = fields.get("extract")
    if extract:
        label += ", claims given" if extract == "given" else f", claims: {extract.split(':')[0]}"
    if fields.get("task"):
        label += f", task {fields['task']}"
    return label


def demo_banner(signature: Signature | str | None, config: dict | None = None) -> str | None:
    """The banner text for results made with a demo-quality or smoke-test judge; ``None`` for any
    other judge. ``config`` (a report's) is read too: ``evaluator.demo_quality``."""
    name, model, demo = _judge_parts(signature)
    evaluator = (config or {}).get("evaluator") or {}
    if demo or (isinstance(evaluator, dict) and evaluator.get("demo_quality")):
        return (f"DEMO-QUALITY JUDGE ({name}{' · ' + model if model else ''}): these verdicts are for trying "
                "DocLens, not for comparing systems or publishing; on labelled pairs this model does not tell "
                "supported from unsupported claims (cards/local-chat.md)")
    if name in SMOKE_TEST_JUDGES:
        return (f"SMOKE-TEST JUDGE ({name}): {SMOKE_TEST_JUDGES[name]}; these scores are not fit for comparing "
                "systems or publishing")
    return None
