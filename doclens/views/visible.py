"""Text shown on a page or in a terminal, with its invisible characters made visible.

A claim can hold characters that change how it is drawn without being seen: bidirectional
controls (U+202E RIGHT-TO-LEFT OVERRIDE draws "revef on" as "no fever"), zero-width and other
format characters, C0/C1 controls (a terminal acts on ESC sequences). Shown raw, a page could
display a claim other than the one judged. Wherever DocLens shows text (the HTML report, the
leaderboard page, the CLI tables) each such character is written as ``⟨U+202E⟩`` and, on pages,
the text is isolated in ``<bdi>`` so that its direction cannot leak into what follows. The text
judged and stored is never changed: only its display is.
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


def visible(text) -> str:
    """``text`` (any value, as ``str``) with each :data:`INVISIBLE` character written ``⟨U+XXXX⟩``."""
    return INVISIBLE.sub(lambda match: f"⟨U+{ord(match.group()):04X}⟩", str(text))


def html_text(text) -> str:
    """``text`` for an HTML page: invisible characters made visible, escaped (quotes too), and
    isolated in ``<bdi>`` (its direction stays inside)."""
    return f"<bdi>{escape(visible(text))}</bdi>"


def html_attribute(text) -> str:
    """``text`` for an HTML attribute (a ``title`` tooltip): made visible and escaped."""
    return escape(visible(text))
