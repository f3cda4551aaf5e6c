"""Planning an import reads the file a bounded number of times, whatever its number of graphs:
the line an error names is looked for only when there is an error. (Looking it up for every
graph, to pass it to a check that then passed, read a 245 MB N-Quads file once per graph: 1,800
graphs took 168 s to plan beside a 15 s load.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.errors import Forbidden
from workbench.imports import rdf
from workbench.service import Workbench


def _nquads(path: Path, graphs: int, *, own: bool = False) -> Path:
    lines = [f"<urn:x:s{i}> <urn:x:p> <urn:x:o{i}> <urn:wb:record:w{i}> ." for i in range(graphs)]
    if own:
        lines.append("<urn:x:s> <urn:x:p> <urn:x:o> <urn:wb:graph:meta> .")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_valid_import_of_many_graphs_never_searches_the_file_for_a_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    searched: list[str] = []
    real = rdf.first_line
    monkeypatch.setattr(rdf, "first_line", lambda path, text: searched.append(text) or real(path, text))
    with Workbench.open(tmp_path / "s", create=True, user="me") as wb:
        wb.init()
        report = wb.import_files([_nquads(tmp_path / "w.nq", 200)], record_type="common_sense", source="w",
                                 said_by="me", statement="worlds")
    assert report.records_added == 200 and searched == []


def test_a_graph_of_workbench_s_own_is_still_refused_at_its_line(tmp_path: Path) -> None:
    file = _nquads(tmp_path / "w.nq", 5, own=True)
    with Workbench.open(tmp_path / "s", create=True, user="me") as wb:
        wb.init()
        with pytest.raises(Forbidden, match="own graph") as err:
            wb.import_files([file])
    assert err.value.where == f"{file}:6"
