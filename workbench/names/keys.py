"""How names bind: exactly, after Unicode NFC, case folding and whitespace normalisation.

Nothing fuzzy happens here. "Paris" never binds "Paris Hilton"; "巴黎" binds Paris only once
someone registered it as an alias.

>>> name_key("  PARIS\\u00a0 ") == name_key("paris")
True
>>> name_key("Paris") == name_key("Paris Hilton")
False
>>> name_key("Cafe\\u0301") == name_key("Café")
True
"""

from __future__ import annotations

import functools
import unicodedata

from workbench.errors import Invalid


@functools.lru_cache(maxsize=4096)  # a question's names are keyed several times on its way
def name_key(name: str) -> str:
    """The key a name binds through. Raises :class:`Invalid` for an empty name."""
    text = unicodedata.normalize("NFC", name)
    text = unicodedata.normalize("NFC", text.casefold())
    key = " ".join(text.split())
    if not key:
        raise Invalid("a name must not be empty or only white space")
    return key
