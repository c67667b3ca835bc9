"""One check the rules tests share: a verdict an absence decided (issue 46's invariant)."""

from doclens.evaluators.rules.decision import DECISIVE
from doclens.evaluators.rules.findings import CONTRADICTION_PHRASING, FindingKind


def decided_absences(verdict, kind: FindingKind) -> list:
    """The findings of ``kind`` on ``verdict``, after checking that the verdict is "not supported",
    that there is at least one, that each decides it (``DECISIVE``), and that each is an absence,
    never a conflict nor phrased as one ("note says …": ``CONTRADICTION_PHRASING``)."""
    assert not verdict.entailed, verdict.explanation
    found = [f for f in verdict.findings if f.kind is kind]
    assert found and all((f.kind, f.conflict) in DECISIVE for f in found), verdict.explanation
    assert not any(f.conflict or CONTRADICTION_PHRASING.search(f.text) for f in found), verdict.explanation
    return found
