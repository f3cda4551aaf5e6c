"""How the service imports files (:meth:`Workbench.import_files`): memory records (JSON Lines,
:mod:`workbench.imports.records`) or RDF (:mod:`workbench.imports.landing`), planned against
what the writer may see (:mod:`workbench.access.writes`), all of it or nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import Invalid
from workbench.imports.common import ProgressFactory, write_batch
from workbench.imports.landing import import_rdf
from workbench.imports.rdf import RdfOptions
from workbench.imports.records import RecordsPlanner
from workbench.values.records import ImportReport, RecordType

if TYPE_CHECKING:
    from workbench.service import Workbench


def import_files(wb: Workbench, files: list[Path], *, record_type: RecordType | str | None, source: str | None,
                 said_by: str | None, statement: str | None, visible_to: Sequence[str],
                 progress: ProgressFactory | None, used: Sequence[str] | None) -> ImportReport:
    """See :meth:`Workbench.import_files`."""
    if not files:
        raise Invalid("name at least one file to import")
    rdf = [f for f in files if f.suffix.lower() != ".jsonl"]
    wb._allow("import RDF" if rdf else "import records")
    for f in files:
        if not f.is_file():
            raise Invalid(f"no such file: {f}")
    if rdf and len(rdf) < len(files):
        raise Invalid("import JSON Lines records and RDF files in separate imports")
    now, writer = wb._now(), wb._writer()
    if rdf:
        rtype = RecordType.parse(record_type) if isinstance(record_type, str) else record_type
        options = RdfOptions(actor=wb.user, now=now, record_type=rtype or RecordType.OBSERVATION,
                             source_id=source, said_by=said_by, statement=statement,
                             visible_to=tuple(visible_to), used=tuple(used or ()),
                             writer=writer)
        landed = import_rdf(wb.store, rdf, options, progress)
        wb._indexes.changed(records=bool(landed.plan.records_added))
        return ImportReport(files=tuple(str(p) for p in rdf), records_added=landed.plan.records_added,
                            records_unchanged=landed.plan.records_unchanged, entities_created=0,
                            quads_added=landed.quads_added,
                            activity=landed.plan.activity.value if landed.quads_added else "")
    plan = RecordsPlanner(wb.store, actor=wb.user, now=now, writer=writer).plan(files, used=used)
    if len(plan.batch):
        write_batch(wb.store, plan.batch, progress, len(plan.batch.quads))
    wb._indexes.changed(records=bool(len(plan.batch)))
    return ImportReport(files=plan.files, records_added=plan.records_added,
                        records_unchanged=plan.records_unchanged, entities_created=len(plan.new_entities),
                        quads_added=len(plan.batch.quads), activity=plan.activity.value if len(plan.batch) else "",
                        new_entities=tuple(plan.new_entities))
