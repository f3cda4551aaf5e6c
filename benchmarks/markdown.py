"""Writing a benchmark's generated results into its section of docs/benchmarks.md."""

from __future__ import annotations

import re
from pathlib import Path


def write_section(path: Path, section: str, block: str, *, begin: str, end: str) -> None:
    """Put ``block`` in the ``## {section}`` part of ``path``, between the ``begin`` and ``end``
    markers (replacing what they held); keep the rest of the file as it is."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    generated = f"{begin}\n\n{block.strip()}\n\n{end}"
    heading = re.compile(rf"(?m)^## {re.escape(section)}\s*$")
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + generated + rest.split(end, 1)[1]
    elif heading.search(text):
        text = heading.sub(lambda m: f"{m[0]}\n\n{generated}", text, count=1)
    else:
        text = text.rstrip("\n") + f"\n\n## {section}\n\n{generated}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
