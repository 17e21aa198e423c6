"""The language of a chunk's text, for specs/003's `language` vector metadata.

A stopword vote over seven European languages: the share of a text's words that are among
each language's most frequent function words. No model and no download; deterministic, so the
doctor's metadata check computes the same value the ingest stored. Texts too short or too
mixed to tell give None (the field is then left out, as the spec's `language: str?` allows).
"""

from __future__ import annotations

import re

_STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the of and to in is that it for was on are as with be by this at from "
                    "or an have not but which they has were their will would can".split()),
    "de": frozenset("der die und das ist nicht ein eine zu den mit von sich des auf für im "
                    "dem auch es als wird werden bei nach oder aber sind wir ich".split()),
    "fr": frozenset("le la les et des est une un du en que qui pour dans pas sur au ce par "
                    "avec sont il elle nous vous ont cette mais ou aux".split()),
    "es": frozenset("el la los las y de que en un una es por con para se del al lo como "
                    "más pero sus le ya o este sí porque esta entre".split()),
    "it": frozenset("il lo la gli le di che e un una è per non con del della sono si da in "
                    "come anche questo ma nel alla dei più".split()),
    "nl": frozenset("de het een en van is dat niet op te zijn voor met die in aan er maar "
                    "ook als bij door wordt naar worden heeft".split()),
    "pt": frozenset("o a os as e de que do da em um uma para com não por se na no dos das "
                    "mais como mas ao ele ela são".split()),
}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
MIN_WORDS = 12
"""Fewer words than this: no language (a heading or a table row says too little)."""
MIN_SHARE = 0.12
"""The winning language's stopwords must make up at least this share of the words."""
MIN_LEAD = 1.5
"""... and outnumber the runner-up's by this factor (closely related languages share words)."""


def detect_language(text: str) -> str | None:
    """The ISO 639-1 code of `text`'s language, or None when it cannot be told."""
    words = [w.lower() for w in _WORD.findall(text[:4000])]
    if len(words) < MIN_WORDS:
        return None
    votes = sorted(((sum(w in stop for w in words), code) for code, stop in _STOPWORDS.items()),
                   reverse=True)
    (best, code), (second, _) = votes[0], votes[1]
    if best < MIN_SHARE * len(words) or best < MIN_LEAD * second:
        return None
    return code
