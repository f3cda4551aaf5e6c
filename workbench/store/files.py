"""Files written so that a crash leaves the old version or the new one, never half of either:
write a temporary file beside the target, flush it to disk, rename it over the target, and
flush the directory so the rename itself survives."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_synced(tmp: Path, target: Path) -> None:
    """Flush ``tmp`` to disk and rename it over ``target``, durably."""
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, target)
    fsync_dir(target.parent)


def write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    replace_synced(tmp, path)
