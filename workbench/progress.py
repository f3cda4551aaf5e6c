"""Reading files with progress: a reader that reports bytes read, so a bar can move while
pyoxigraph's Rust parser pulls the file through it."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

Progress = Callable[[int], object]


def open_counted(path: Path, progress: Progress | None) -> io.BufferedReader:
    """Open a file for binary reading; each read reports its size to ``progress``."""
    return io.BufferedReader(ProgressReader(path, progress), buffer_size=1 << 20)


class ProgressReader(io.RawIOBase):
    """A file reader that reports bytes read, so a bar can move while Rust parses."""

    def __init__(self, path: Path, progress: Progress | None) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 - closed in close()
        self._progress = progress

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = self._file.readinto(buffer)
        if n and self._progress:
            self._progress(n)
        return n or 0

    def close(self) -> None:
        self._file.close()
        super().close()
