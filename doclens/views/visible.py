"""Text shown on a page or in a terminal, with its invisible characters made visible.

A claim can hold characters that change how it is drawn without being seen: bidirectional
controls (U+202E RIGHT-TO-LEFT OVERRIDE draws "revef on" as "no fever"), zero-width and other
format characters, C0/C1 controls (a terminal acts on ESC sequences). Shown raw, a page could
display a claim other than the one judged. Wherever DocLens shows text (the HTML report, the
leaderboard page, the CLI tables) each such character is written as ``⟨U+202E⟩`` and, on pages,
the text is isolated in ``<bdi>`` so that its direction cannot leak into what follows. The text
judged and stored is never changed: only its display is.

A page also bounds what it shows of one text (:func:`cut`): a name (an id, a section, a system)
past :data:`NAME_CHARS` characters and any other text past :data:`TEXT_CHARS` is cut with a
visible marker saying how much was left out and that the scores file holds it whole; a
200,000-character section name once made a page of 152 MB.
"""

from __future__ import annotations

import re
from html import escape

#: Characters drawn invisibly or that change the drawing of others: C0 and C1 controls (not tab
#: or line breaks), soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers,
#: Mongolian and Khmer invisible marks, zero-width and bidi controls (LRM/RLM, LRE…RLO, LRI…PDI),
#: line/paragraph separators, word joiner and invisible operators, BOM, interlinear annotation
#: marks, tag characters and musical-symbol format controls.
INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
                       "\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb"
                       "\U0001d173-\U0001d17a\U000e0000-\U000e007f]")


#: the longest name (an instance id, a section, a system, a column) a page shows whole
NAME_CHARS = 200
#: the longest text (a claim, a prediction, an explanation, a source unit) a page shows whole:
#: above the longest note of ACI-BENCH (13,047 characters)
TEXT_CHARS = 20_000


def cut(text, limit: int = TEXT_CHARS) -> str:
    """``text`` (as ``str``) whole up to ``limit`` characters, else its first ``limit`` and a
    visible marker: how many characters were left out, and where the whole text is."""
    text = str(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f" … [cut: {len(text) - limit:,} more characters; the scores file holds the whole text]"


def visible(text) -> str:
    """``text`` (any value, as ``str``) with each :data:`INVISIBLE` character written ``⟨U+XXXX⟩``."""
    return INVISIBLE.sub(lambda match: f"⟨U+{ord(match.group()):04X}⟩", str(text))


def html_text(text, limit: int = TEXT_CHARS) -> str:
    """``text`` for an HTML page: cut past ``limit`` characters (:func:`cut`), invisible characters
    made visible, escaped (quotes too), and isolated in ``<bdi>`` (its direction stays inside)."""
    return f"<bdi>{escape(visible(cut(text, limit)))}</bdi>"


def html_attribute(text, limit: int = TEXT_CHARS) -> str:
    """``text`` for an HTML attribute (a ``title`` tooltip): cut, made visible and escaped."""
    return escape(visible(cut(text, limit)))
