"""The sample data in ``data/``: admitted common sense, a person's memories, and the aliases they
registered. ``workbench init --sample`` loads it; loading it twice changes nothing."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import Conflict
from workbench.imports.common import ProgressFactory
from workbench.model import ImportReport, RecordType

if TYPE_CHECKING:
    from workbench.service import Workbench

COMMON_SENSE_SOURCE = "common-sense-v1"


def load(wb: Workbench, data: Path, *, progress: ProgressFactory | None = None) -> list[ImportReport]:
    reports = [
        wb.import_files(
            [data / "common-sense.ttl"],
            record_type=RecordType.COMMON_SENSE,
            source=COMMON_SENSE_SOURCE,
            said_by="workbench-curators",
            statement="Admitted common sense: kinds of things and what each kind has, is used for, depends on, needs.",
            progress=progress,
        ),
        wb.import_files([data / "memories.jsonl"], progress=progress),
    ]
    acting = wb.user
    try:
        for alias in json.loads((data / "aliases.json").read_text(encoding="utf-8")):
            wb.user = alias["by"]
            with contextlib.suppress(Conflict):  # registered by an earlier load
                wb.add_alias(alias["entity"], alias["alias"], lang=alias.get("lang"))
    finally:
        wb.user = acting
    return reports
