"""ChatJudge without any endpoint: prompt rendering and the one abstract call, as an in-process
chat evaluator would use them."""

import json
import re

import pytest

from doclens import DocLens
from doclens.evaluators.llm.chat import (
    STYLES,
    ChatJudge,
    Completion,
    citation_fence,
    claims_fence,
    format_sources,
    judge_prompt_tags,
    render_citation,
    render_claims,
    render_reask,
)
from doclens.evaluators.llm.prompting import load_prompt, make_fence
from tests.llm_server import judge_reply


class InProcessJudge(ChatJudge):
    """Answers with the rule judge, synchronously, without calling on_complete."""

    name = "in-process"
    model = "rule"

    def __init__(self, style="json_cot", **options):
        super().__init__(style, **options)
        self.asked = []

    def complete_many(self, conversations, *, json_mode, on_complete=None):
        self.asked += conversations
        return [Completion(judge_reply(c), 10, 2) for c in conversations]


INSTANCE = {"id": "1", "prediction": "Fever [0]. Cough [0][1].", "reference": "Fever. Cough. Rash.",
            "source": ["patient: fever", "patient: cough"],
            "reference_claims": ["Fever.", "Cough.", "Rash."], "prediction_claims": ["Fever.", "Cough."]}


@pytest.mark.parametrize("style", STYLES)
def test_every_prompt_renders_with_a_version(style):
    for task in ("general", "note_generation", "report_summarization", "question_summarization"):
        messages = render_claims(style, task, "recall", "PREMISE TEXT", ["CLAIM ONE"])
        assert messages[-1]["role"] == "user" and "PREMISE TEXT" in messages[-1]["content"]
        assert "CLAIM ONE" in messages[-1]["content"] and "${" not in json.dumps(messages)
    citation = render_citation(style, "STATEMENT", {3: "doctor: a", 1: "patient: b"})
    fence = citation_fence("STATEMENT", {3: "doctor: a", 1: "patient: b"})
    assert f"[1] {fence.wrap('patient: b')}\n[3] {fence.wrap('doctor: a')}" in citation[-1]["content"]
    assert f"Sentence: {fence.wrap('STATEMENT')}" in citation[-1]["content"]
    tags = judge_prompt_tags(style)
    assert len(tags) == 4 and all("@v" in tag for tag in tags)
    assert load_prompt(f"judge/claims.{style}").version


def test_json_styles_judge_all_claims_in_one_call_cot_one_each():
    messages = render_claims("json_cot", "general", "precision", "P", ["a", "b"])
    fence = claims_fence("P", ["a", "b"])
    assert f"Claim 1: {fence.wrap('a')}\nClaim 2: {fence.wrap('b')}" in messages[-1]["content"]
    renumbered = render_claims("json_cot", "general", "precision", "P", ["a", "b"], ids=[4, 7])
    assert f"Claim 4: {fence.wrap('a')}\nClaim 7: {fence.wrap('b')}" in renumbered[-1]["content"]
    with pytest.raises(ValueError, match="distinct positive"):
        render_claims("json_cot", "general", "precision", "P", ["a", "b"], ids=[1, 1])
    with pytest.raises(ValueError, match="one claim per call"):
        render_claims("cot", "general", "recall", "P", ["a", "b"])
    with pytest.raises(ValueError, match="direction"):
        render_claims("json", "general", "sideways", "P", ["a"])


def test_reask_appends_the_reply_and_names_only_the_missing():
    first = render_claims("json_cot", "general", "recall", "P", ["a", "b"])
    fence = claims_fence("P", ["a", "b"])
    again = render_reask(first, "[garbled", ["b"], [2], fence=fence)
    assert again[: len(first)] == first and again[len(first)] == {"role": "assistant", "content": "[garbled"}
    assert again[-1]["content"].endswith(f"Claim 2: {fence.wrap('b')}")
    assert fence.open in again[-1]["content"].split("\n\n")[0]  # the instruction names the fence
    default = render_reask(first, "[garbled", ["b"])  # numbered from 1, a fence derived from the conversation
    assert "Claim 1: <<<DATA-" in default[-1]["content"]


def test_format_sources_sorted():
    assert format_sources({2: "x", 0: "y"}) == "[0] y\n[2] x"
    fence = make_fence(["x", "y"])
    assert format_sources({2: "x", 0: "y"}, fence) == f"[0] {fence.wrap('y')}\n[2] {fence.wrap('x')}"


@pytest.mark.parametrize("style,calls", [("json_cot", 4), ("json", 4), ("cot", 7)])
def test_in_process_subclass_scores_and_caches(style, calls, tmp_path):
    judge = InProcessJudge(style, cache_dir=str(tmp_path))
    report = DocLens(judge).score([INSTANCE], progress=False)
    assert report.scores["claim_recall"] == pytest.approx(2 / 3) and report.scores["claim_precision"] == 1.0
    assert report.scores["citation_recall"] == 1.0
    assert report.scores["citation_precision"] == pytest.approx(2 / 3)  # [0] not in "Cough"'s provenance
    assert len(judge.asked) == calls and judge.usage.calls == calls and judge.usage.prompt_tokens == 10 * calls
    again = InProcessJudge(style, cache_dir=str(tmp_path))  # answers stored even without on_complete
    DocLens(again).score([INSTANCE], progress=False)
    assert again.asked == [] and again.usage.cached_calls == calls
    assert report.config["evaluator"]["style"] == style and report.config["evaluator"]["model"] == "rule"


def test_complete_many_returning_the_wrong_number_is_an_error():
    class Broken(InProcessJudge):
        def complete_many(self, conversations, *, json_mode, on_complete=None):
            return []

    with pytest.raises(RuntimeError, match="returned 0 completions"):
        Broken(no_cache=True).judge_claims("premise", ["a"])


def test_base_class_demands_complete_many():
    with pytest.raises(NotImplementedError):
        ChatJudge(no_cache=True).judge_claims("premise", ["a"])


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("task", ["general", "question_summarization"])
def test_shared_text_comes_first_in_every_judge_prompt(style, task):
    """Servers reuse a repeated prompt prefix only if the shared text comes first: the
    instructions and worked example are the same text in every request (the fence is described
    generically, the example has a fixed boundary of its own), and the calls on one premise share
    it plus the fenced premise, since they all use the fence of the premise and all its claims."""
    from doclens.evaluators.llm.prompting import EXAMPLE_FENCE_TOKEN

    def flat(messages):
        return "\n".join(f"{m['role']}\n{m['content']}" for m in messages)

    def shared(a, b):
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    one = flat(render_claims(style, task, "recall", "Premise one: fever.", ["Fever."]))
    two = flat(render_claims(style, task, "recall", "Another note: rash.", ["Rash."]))
    fixed = shared(one, two)
    assert EXAMPLE_FENCE_TOKEN in one[:fixed]
    for text in (one, two):  # the texts part inside the first marker of the instance data
        first = re.search(f"<<<DATA-(?!{EXAMPLE_FENCE_TOKEN})[0-9a-f]{{8}}>>>", text).start()
        assert first <= fixed < first + len("<<<DATA-") + 8
    assert make_fence(["x"]).token != EXAMPLE_FENCE_TOKEN
    if task == "general":  # the claims of one premise: everything up to the claim is shared
        premise, claims = "The patient has a fever and a cough.", ["Fever.", "Cough.", "No rash."]
        fence = claims_fence(premise, claims)
        if style == "cot":
            calls = [flat(render_claims(style, task, "recall", premise, [c], [i + 1], fence=fence))
                     for i, c in enumerate(claims)]
        else:
            calls = [flat(render_claims(style, task, "recall", premise, claims[:1], fence=fence)),
                     flat(render_claims(style, task, "recall", premise, claims[1:], [2, 3], fence=fence))]
        common = shared(*calls[:2])
        assert calls[0][:common].endswith(fence.block(premise) + "\n" + ("\nClaims:\n" if style != "cot" else "")
                                          + ("Claim " if style != "cot" else "claim "))
        citation_one = flat(render_citation(style, "A.", {1: "patient: a"}))
        citation_two = flat(render_citation(style, "B.", {2: "doctor: b"}))
        assert EXAMPLE_FENCE_TOKEN in citation_one[:shared(citation_one, citation_two)]
