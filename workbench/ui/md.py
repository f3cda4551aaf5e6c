"""Text from the store shown in Streamlit's Markdown as it is: names, statements and source texts
may hold ``*``, ``[...]`` or backticks, which must not turn into formatting or links.

>>> print(md("*not bold* [x](y) at 11:00, a-b"))
\\*not bold\\* \\[x\\](y) at 11:00, a-b
>>> print(md("# not a heading\\n1. nor a list"))
\\# not a heading
1\\. nor a list
>>> code("a`b")
'`` a`b ``'
"""

from __future__ import annotations

import re

_INLINE = re.compile(r"([\\`*_\[\]<>|~$])")  # formatting, links, HTML, tables, maths
_BLOCK = re.compile(r"(?m)^(\s*)([#>+\-=])")  # a heading, quote or list at a line's start
_NUMBERED = re.compile(r"(?m)^(\s*\d+)([.)])")


def md(text: str) -> str:
    """Text shown as it is in Markdown: what would format it escaped."""
    text = _INLINE.sub(r"\\\1", text)
    return _NUMBERED.sub(r"\1\\\2", _BLOCK.sub(r"\1\\\2", text))


def code(text: str) -> str:
    """Text as a Markdown code span (nothing is escaped inside one; a backtick needs a wider fence)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"
