"""Token alignment: how much of a claim MiniLM finds, token by token, in the note's closest sentences
(optional features of clinical-rules' decision model: ``judge-fit --alignment``; the shipped model
does not read them, see the clinical-rules card).

The rules (:mod:`doclens.evaluators.rules.clinical_rules`) match a claim's words by lemma, stem,
abbreviation and one-word MiniLM similarity. A rewording that changes several words at once ("not as
functional as it used to be" for "limited in function", "difficult to catch his breath" for
"shortness of breath") leaves words the note never uses, each one weakly similar to some word of the
note. The shipped MiniLM's *contextual* token vectors read each word in its sentence, so a claim
token is compared with the note's tokens as they are used there (BERTScore's recall, Zhang et al.,
2020, with the judge's own encoder and no idf weights):

* the **candidates** are the :data:`CANDIDATES` premise sentences with the most claim keys in common
  (the rules' own ranking, ties in note order);
* each content token of the claim (a word piece with a letter or digit, not a stop word; ``[CLS]``
  and ``[SEP]`` left out) gets its largest cosine with any content token of the candidates;
* the features (:data:`FEATURES`) are the mean of those cosines, the lowest, the share under
  :data:`LOW`, and the best mean over one candidate alone.

The logistic decision model (:mod:`doclens.evaluators.rules.decision`) weighs them with the rules'
measurements; its weights are fitted by ``doclens judge-fit`` on the development half of the
real-output set (:mod:`doclens.evaluators.rules.fit`). Nothing here is trained: MiniLM is the
package's shipped encoder, used as it is.

A text's token vectors are computed once and kept (:data:`KEPT` texts); while the judge works in
rounds (``ClinicalRulesJudge._explain_all``) the texts a claim needs are noted
(:class:`NotYetEncoded`) and encoded together in one batch, longest first.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

#: the features this module adds to the decision model's inputs (names as ``decision.FEATURES``)
FEATURES = ("token_recall", "token_lowest", "token_low_share", "token_best_sentence")
#: premise sentences a claim is aligned with
CANDIDATES = 3
#: a claim token whose best cosine is under this is counted as not found
LOW = 0.6
#: texts whose token vectors are kept across calls (a note's sentences serve all its claims; about
#: 20 tokens of 384 half floats a text: 60 MB at most)
KEPT = 4096
#: the encoder's limit on a text's tokens (as the judge's sentence encoder)
MAX_LENGTH = 128

_CONTENT_PIECE = re.compile(r"[a-z0-9]")


class NotYetEncoded(Exception):
    """Raised while judging in rounds: a text's token vectors are not computed yet (they are noted)."""


class TokenAligner:
    """Token vectors of texts by the judge's MiniLM, and the alignment features of a claim.

    ``load``: returns the judge's loaded encoder (:class:`~doclens.evaluators.models.sentence_encoder.Encoder`),
    whose model and tokenizer are reused; ``stop``: the judge's stop words (lower case)."""

    def __init__(self, load: Callable[[], object], stop: frozenset[str]) -> None:
        self._load = load
        self._stop = stop
        self._kept: OrderedDict[str, np.ndarray] = OrderedDict()
        #: while judging in rounds: the texts a deferred claim needs (``None``: encode at once), and
        #: the vectors of this call's rounds (kept apart from the bounded store, never evicted)
        self.wanted: set[str] | None = None
        self._round: dict[str, np.ndarray] = {}
        self.texts_encoded = 0

    def features(self, claim: str, candidates: Sequence[str]) -> dict[str, float]:
        """The :data:`FEATURES` of ``claim`` against ``candidates`` (the premise sentences it is
        aligned with, best first; at most :data:`CANDIDATES` are read). A claim with no content
        token is fully found; a premise with none finds nothing."""
        candidates = list(candidates[:CANDIDATES])
        matrices = self._matrices([claim, *candidates])
        claim_tokens = matrices[0]
        if not len(claim_tokens):
            return dict.fromkeys(FEATURES, 1.0) | {"token_low_share": 0.0}
        sentences = [m for m in matrices[1:] if len(m)]
        if not sentences:
            return dict.fromkeys(FEATURES, 0.0) | {"token_low_share": 1.0}
        best = (claim_tokens @ np.vstack(sentences).T).max(axis=1)
        return {"token_recall": float(best.mean()), "token_lowest": float(best.min()),
                "token_low_share": float((best < LOW).mean()),
                "token_best_sentence": float(max((claim_tokens @ m.T).max(axis=1).mean() for m in sentences))}

    def _matrices(self, texts: list[str]) -> list[np.ndarray]:
        found = {t: self._find(t) for t in dict.fromkeys(texts)}
        missing = [t for t, m in found.items() if m is None]
        if missing:
            if self.wanted is not None:
                self.wanted.update(missing)
                raise NotYetEncoded
            found.update(self.encode(missing))
        return [np.asarray(found[t], dtype=np.float32) for t in texts]

    def _find(self, text: str) -> np.ndarray | None:
        matrix = self._round.get(text)
        if matrix is None:
            matrix = self._kept.get(text)
            if matrix is not None:
                self._kept.move_to_end(text)
        return matrix

    def start_rounds(self) -> None:
        """Judging in rounds from now: a claim whose texts are not encoded raises :class:`NotYetEncoded`."""
        self.wanted = set()

    def encode_wanted(self) -> None:
        """Encode the texts noted in this round (one batch), kept until :meth:`end_rounds`."""
        if self.wanted:
            self._round.update(self.encode(sorted(self.wanted)))
            self.wanted.clear()

    def end_rounds(self) -> None:
        self.wanted, self._round = None, {}

    def encode(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The content-token vectors (L2-normalised, stored as half floats) of ``texts``, also kept."""
        out: dict[str, np.ndarray] = {}
        encoder = self._load()
        torch, tokenizer, model, device = encoder._load()  # type: ignore[attr-defined]
        order = sorted(range(len(texts)), key=lambda n: -len(texts[n]))  # similar lengths pad little
        with torch.inference_mode():
            for start in range(0, len(order), 32):
                batch = [texts[n] for n in order[start:start + 32]]
                inputs = tokenizer(batch, padding=True, truncation=True, max_length=MAX_LENGTH,
                                   return_tensors="pt").to(device)
                hidden = torch.nn.functional.normalize(model(**inputs).last_hidden_state.float(), dim=-1).cpu().numpy()
                for row, text in enumerate(batch):
                    ids = inputs["input_ids"][row].tolist()
                    mask = inputs["attention_mask"][row].tolist()
                    pieces = tokenizer.convert_ids_to_tokens(ids)
                    keep = [p for p, (piece, on) in enumerate(zip(pieces, mask))
                            if on and piece not in ("[CLS]", "[SEP]") and _CONTENT_PIECE.search(piece)
                            and piece not in self._stop]
                    out[text] = self._kept[text] = hidden[row, keep].astype(np.float16)
        self.texts_encoded += len(texts)
        while len(self._kept) > KEPT:
            self._kept.popitem(last=False)
        return out
