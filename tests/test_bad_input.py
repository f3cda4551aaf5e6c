"""Bad input gets a clear error naming file, line, field or constraint, and changes nothing.

Every refusal here is checked two ways: the error says what and where, and the store is
byte-identical before and after (``dump``). Most tests run on both backends (``wb``/``sample``).
Tests marked ``xfail(strict=True, reason="BUG: ...")`` show product bugs; they fail today and will
start passing (and so be reported by pytest) once the bug is fixed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from tests.conftest import dump
from workbench.errors import Ambiguous, Conflict, Invalid, ParseError, WorkbenchError
from workbench.ids import record_iri
from workbench.service import Workbench

XSD = "http://www.w3.org/2001/XMLSchema#"


def bug(reason: str) -> pytest.MarkDecorator:
    """Marks a test that once showed a product bug (fixed since); kept as a regression test."""
    return pytest.mark.regression(reason)


def refused(wb: Workbench, paths: Sequence[Path], kind: type[BaseException], *needles: str) -> BaseException:
    """Import ``paths``; it must raise ``kind`` whose text holds every needle, and change nothing."""
    before = dump(wb.store)
    with pytest.raises(kind) as info:
        wb.import_files(list(paths))
    assert dump(wb.store) == before, "a refused import changed the store"
    text = str(info.value)
    for needle in needles:
        assert needle in text, f"{needle!r} not in error: {text!r}"
    return info.value


def record(rid: str, **fields: Any) -> dict[str, Any]:
    """A valid memory record; ``fields`` override (None removes a field)."""
    rec: dict[str, Any] = {
        "id": rid,
        "statement": f"I own the thing of {rid}.",
        "type": "observation",
        "about": ["me"],
        "source": {"id": f"src-{rid}", "said_by": "me"},
        "triples": [["me", "owns", f"thing of {rid}"]],
    }
    rec.update(fields)
    return {k: v for k, v in rec.items() if v is not None}


def write_jsonl(path: Path, lines: Sequence[dict[str, Any] | str | bytes]) -> Path:
    out = b""
    for line in lines:
        if isinstance(line, dict):
            out += json.dumps(line, ensure_ascii=False).encode()
        elif isinstance(line, str):
            out += line.encode()
        else:
            out += line
        out += b"\n"
    path.write_bytes(out)
    return path


# ---------------------------------------------------------------------- malformed RDF

# (extension, text with its first error on ``line``, line or None when the parser gives no position)
MALFORMED = [
    (".ttl", "@prefix e: <urn:x:> .\ne:a e:b e:c .\ne:a e:b .\ne:d e:e e:f .\n", 3),
    (".trig", "<urn:g:1> {\n  <urn:a> <urn:b> <urn:c> .\n  <urn:a> <urn:b> [ <urn:c> \n}\n", 4),
    (".nt", "<urn:a> <urn:b> <urn:c> .\n<urn:a> <urn:b> <urn:c> .\n<urn:a> <urn:b> urn:c .\n", 3),
    (".nq", "<urn:a> <urn:b> <urn:c> <urn:g:1> .\n<urn:a> <urn:b> <urn:c> <urn:g:1> <urn:g:2> .\n", 2),
    (".jsonld", '{\n  "@id": "urn:a",\n  "urn:b": {"@id": "urn:c"}\n  "urn:d": "x"\n}\n', 4),
    (".rdf", '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
             '  <rdf:Description rdf:about="urn:a">\n</rdf:RDF>\n', None),
]


@pytest.mark.parametrize(("ext", "text", "line"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_rdf_is_a_parse_error_naming_file_and_position(
        sample: Workbench, tmp_path: Path, ext: str, text: str, line: int | None) -> None:
    path = tmp_path / f"broken{ext}"
    path.write_text(text, encoding="utf-8")
    exc = refused(sample, [path], ParseError, str(path))
    assert isinstance(exc, ParseError)
    assert exc.where == str(path)
    if line is not None:  # RDF/XML's parser reports no position; every other one does
        assert f"line {line}" in str(exc)
        assert "column" in str(exc)


def test_malformed_rdf_beside_a_good_file_lands_nothing(sample: Workbench, tmp_path: Path) -> None:
    good = tmp_path / "good.nt"
    good.write_text("<urn:a> <urn:b> <urn:c> .\n", encoding="utf-8")
    bad = tmp_path / "bad.ttl"
    bad.write_text("<urn:a> <urn:b> .\n", encoding="utf-8")
    refused(sample, [good, bad], ParseError, str(bad), "line 1")
    assert not sample.store.has_graph(record_iri("good.nt"))


def test_unknown_extension_is_invalid_naming_it(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "facts.rdfx"
    path.write_text("<urn:a> <urn:b> <urn:c> .\n", encoding="utf-8")
    exc = refused(wb, [path], Invalid, str(path), "'.rdfx'", ".ttl", ".nq")
    assert exc.where == str(path)  # type: ignore[attr-defined]


def test_missing_file_is_invalid_naming_it(wb: Workbench, tmp_path: Path) -> None:
    refused(wb, [tmp_path / "nowhere.ttl"], Invalid, str(tmp_path / "nowhere.ttl"))


# ---------------------------------------------------------------------- literals

_HEAD = "<urn:s> <urn:label> \"a thing\" .\n<urn:s> <urn:kind> <urn:k> .\n"  # no digits: see the line test

REWRITTEN = [
    ('"007"', "integer", '"7"^^<http://www.w3.org/2001/XMLSchema#integer>'),
    ('"-3"', "negativeInteger", '"-3"^^<http://www.w3.org/2001/XMLSchema#integer>'),
    ('"1.0E6"', "double", '"1000000"^^<http://www.w3.org/2001/XMLSchema#double>'),
    ('"0"', "boolean", '"false"^^<http://www.w3.org/2001/XMLSchema#boolean>'),
]


@pytest.mark.parametrize(("lexical", "datatype", "canonical"), REWRITTEN, ids=[r[1] for r in REWRITTEN])
def test_literal_the_store_would_rewrite_is_refused_with_its_canonical_form(
        wb: Workbench, tmp_path: Path, lexical: str, datatype: str, canonical: str) -> None:
    path = tmp_path / "values.nt"
    path.write_text(_HEAD + f"<urn:s> <urn:value> {lexical}^^<{XSD}{datatype}> .\n", encoding="utf-8")
    exc = refused(wb, [path], Invalid, f"{path}:3", f"{lexical}^^<{XSD}{datatype}>", f"stored as {canonical}")
    assert not isinstance(exc, ParseError)


def test_ill_typed_literal_is_refused(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "values.nt"
    path.write_text(_HEAD + f'<urn:s> <urn:value> "abc"^^<{XSD}integer> .\n', encoding="utf-8")
    refused(wb, [path], Invalid, f"{path}:3", '"abc"', "not a valid xsd:integer")


@bug("the line of a refused literal is the first line containing its value as a substring "
     "(imports/rdf.py _line_of), so a Turtle file whose @prefix xsd: <...2001...> line contains "
     "'0' reports line 1 for a \"0\"^^xsd:boolean on line 4")
def test_refused_literal_names_the_line_it_is_on(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "flags.ttl"
    path.write_text(
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        "@prefix e: <urn:wb:entity:> .\n"
        "e:stove e:label \"stove\" .\n"
        "e:stove e:broken \"0\"^^xsd:boolean .\n",
        encoding="utf-8",
    )
    refused(wb, [path], Invalid, f"{path}:4", "false")


CANONICAL = [
    f'"7"^^<{XSD}integer>',
    f'"-3"^^<{XSD}integer>',
    f'"true"^^<{XSD}boolean>',
    f'"1.5"^^<{XSD}decimal>',
    f'"1000000"^^<{XSD}double>',
    f'"0.1"^^<{XSD}float>',
    f'"2026-05-01"^^<{XSD}date>',
    f'"2026-05-01T10:00:00Z"^^<{XSD}dateTime>',
    f'"P1Y2M"^^<{XSD}duration>',
    '"hello"@en',
    '"café"',
    '"x"^^<urn:custom:type>',
]


def test_canonical_literals_export_back_byte_identical(wb: Workbench, tmp_path: Path) -> None:
    lines = [f"<urn:s> <urn:p{i}> {lit} <urn:g:canonical> .\n" for i, lit in enumerate(CANONICAL)]
    path = tmp_path / "canonical.nq"
    path.write_text("".join(lines), encoding="utf-8")
    wb.import_files([path])
    out = tmp_path / "export.nq"
    wb.export(out)
    exported = set(out.read_bytes().splitlines(keepends=True))
    for line in lines:
        assert line.encode() in exported, f"not exported as entered: {line!r}"


# ---------------------------------------------------------------------- JSON Lines

GOOD = [record("t-1"), record("t-2")]

# name -> (line 3, expected error class, what the message must say besides file:3)
JSONL_BAD: dict[str, tuple[Any, type[WorkbenchError], tuple[str, ...]]] = {
    "missing field": ({k: v for k, v in record("t-3").items() if k != "statement"}, Invalid,
                      ("missing field 'statement'",)),
    "missing source field": (record("t-3", source={"id": "s"}), Invalid, ("source", "'said_by'")),
    "unknown field": (record("t-3", colour="red"), Invalid, ("unknown field 'colour'",)),
    "bad date": (record("t-3", effective_from="2026-13-01"), Invalid, ("effective_from", "2026-13-01")),
    "bad captured_at": (record("t-3", source={"id": "s", "said_by": "me", "captured_at": "yesterday"}),
                        Invalid, ("source.captured_at", "yesterday")),
    "unknown record type": (record("t-3", type="rumour"), Invalid, ("field 'type'", "rumour")),
    "not JSON": ('{"id": "t-3", "statement": ', ParseError, ("not JSON",)),
    "not an object": ("[1, 2, 3]", Invalid, ("JSON object",)),
    "effective_to before effective_from": (
        record("t-3", effective_from="2026-05-01", effective_to="2026-04-30"), Invalid,
        ("effective_to 2026-04-30 is before effective_from 2026-05-01",)),
    "duplicate id": (record("t-1"), Invalid, ("'t-1'", "line 1")),
    "unknown relation": (record("t-3", triples=[["me", "frobnicates", "x"]]), Invalid,
                         ("triples[0]", "unknown relation 'frobnicates'")),
    "triple of two parts": (record("t-3", triples=[["me", "owns"]]), Invalid,
                            ("triples[0] must be [subject, relation, object]",)),
    "triple as a string": (record("t-3", triples=["me owns x"]), Invalid,
                           ("triples[0] must be [subject, relation, object]",)),
    "triple with null object": (record("t-3", triples=[["me", "owns", None]]), Invalid, ("triples[0] object",)),
    "empty name in about": (record("t-3", about=[" "]), Invalid, ("field 'about'",)),
    "no about nor triples": (record("t-3", about=[], triples=[]), Invalid, ("'about'", "'triples'")),
    "id not a string": (record("t-3", id=3), Invalid, ("field 'id'",)),
    "rewritten literal": (record("t-3", triples=[["me", "<urn:p>", {"value": "007", "datatype": "xsd:integer"}]]),
                          Invalid, ('would be stored as "7"',)),
    "ill-typed literal": (record("t-3", triples=[["me", "<urn:p>", {"value": "abc", "datatype": "xsd:integer"}]]),
                          Invalid, ("not a valid xsd:integer",)),
    "unknown datatype form": (record("t-3", triples=[["me", "<urn:p>", {"value": "1", "datatype": "int"}]]),
                              Invalid, ("triples[0] datatype",)),
    "supersedes nothing": (record("t-3", supersedes="no-such-record"), Invalid, ("no-such-record",)),
}

# Refusals that do not yet name file:line, or bad input that is not refused at all: product bugs.
JSONL_BUGS = {
    "invalid IRI in a triple": (
        record("t-3", triples=[["<not an iri>", "owns", "x"]]), Invalid, ("<not an iri>",),
        "an invalid <IRI> in triples raises Invalid('<not an iri> is not a valid IRI') without file:line "
        "(imports/records.py expand() raises with no where)"),
    "invalid datatype IRI": (
        record("t-3", triples=[["me", "<urn:p>", {"value": "1", "datatype": "<bad iri>"}]]), Invalid,
        ("<bad iri>",), "an invalid datatype <IRI> raises Invalid without file:line"),
    "bad prefixed name": (
        record("t-3", triples=[["me", "wb:a<b", "x"]]), Invalid, ("wb:a<b",),
        "a prefixed name with a bad character raises a bare ValueError (Invalid IRI code point) "
        "from pyoxigraph, not a WorkbenchError, and names no file:line"),
    "bad language tag": (
        record("t-3", triples=[["me", "<urn:p>", {"value": "x", "lang": "not a tag"}]]), Invalid, ("lang",),
        "an invalid language tag raises a bare ValueError from pyoxigraph, not a WorkbenchError"),
    "NaN number": (
        '{"id": "t-3", "statement": "s", "type": "observation", "about": ["me"], '
        '"source": {"id": "s3", "said_by": "me"}, "triples": [["me", "<urn:p>", NaN]]}', Invalid, ("NaN", "not a number JSON allows"),
        "NaN/Infinity (accepted by json.loads) reach `assert isinstance(o, str)` in "
        "imports/records.py _object: AssertionError, not a WorkbenchError"),
    "ISO week date": (
        record("t-3", effective_from="2026-W18-5"), Invalid, ("effective_from",),
        "dates Python's fromisoformat accepts but XSD does not (2026-W18-5) are stored as "
        "ill-typed xsd:date literals"),
    "date-time without seconds": (
        record("t-3", effective_from="2026-05-01T10:00"), Invalid, ("effective_from",),
        "2026-05-01T10:00 passes the date check and is stored as an ill-typed xsd:dateTime"),
    "offset without colon": (
        record("t-3", effective_from="2026-05-01T10:00:00+0200"), Invalid, ("effective_from",),
        "a +0200 offset passes the date check and is stored as an ill-typed xsd:dateTime"),
    "basic-format date": (
        record("t-3", effective_from="20260501"), Invalid, ("effective_from",),
        "20260501 passes the date check; the shapes then refuse it with no file:line"),
    "effective_to before effective_from across time zones": (
        record("t-3", effective_from="2026-05-01T10:00:00Z", effective_to="2026-05-01T11:00:00+05:00"), Invalid,
        ("effective_to",),
        "effective_to < effective_from is checked by comparing strings, so 11:00+05:00 (06:00Z) "
        "passes as after 10:00Z"),
}


def _jsonl_cases() -> list[Any]:
    cases = [pytest.param(line, kind, needles, id=name) for name, (line, kind, needles) in JSONL_BAD.items()]
    cases += [pytest.param(line, kind, needles, id=name, marks=bug(reason))
              for name, (line, kind, needles, reason) in JSONL_BUGS.items()]
    return cases


@pytest.mark.parametrize(("line3", "kind", "needles"), _jsonl_cases())
def test_bad_jsonl_line_names_file_line_and_lands_nothing(
        sample: Workbench, tmp_path: Path, line3: Any, kind: type[WorkbenchError], needles: tuple[str, ...]) -> None:
    path = write_jsonl(tmp_path / "memories.jsonl", [*GOOD, line3])
    exc = refused(sample, [path], kind, f"{path}:3", *needles)
    assert getattr(exc, "where", None) == f"{path}:3"
    for rid in ("t-1", "t-2"):  # atomic: the good lines before the bad one did not land
        assert not sample.store.has_graph(record_iri(rid))


def test_non_utf8_jsonl_is_a_parse_error_and_lands_nothing(sample: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "memories.jsonl", [*GOOD, b'{"id": "t-\xff"}'])
    refused(sample, [path], ParseError, str(path), "UTF-8")
    assert not sample.store.has_graph(record_iri("t-1"))


@bug("non-UTF-8 bytes are reported by byte offset only ('not UTF-8 text (byte 325)'), not file:line")
def test_non_utf8_jsonl_names_the_line(sample: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "memories.jsonl", [*GOOD, b'{"id": "t-\xff"}'])
    refused(sample, [path], ParseError, f"{path}:3")


def test_duplicate_id_across_two_files_names_both(wb: Workbench, tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [record("t-1")])
    second = write_jsonl(tmp_path / "b.jsonl", [record("t-2"), record("t-1", statement="other")])
    refused(wb, [first, second], Invalid, f"{second}:2", f"{first}:1", "'t-1'")


@bug("effective_to >= effective_from is checked by comparing strings, so a valid record whose "
     "effective_to (09:00Z) is after its effective_from (10:00+02:00 = 08:00Z) is refused")
def test_effective_range_across_time_zones_is_accepted(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [
        record("t-1", effective_from="2026-05-01T10:00:00+02:00", effective_to="2026-05-01T09:00:00Z")])
    assert wb.import_files([path]).records_added == 1


_XSD_DECIMAL = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)"


@bug("a JSON number written with an exponent (2E3, 1.5e-7) is stored as an ill-typed "
     "xsd:decimal (\"2E+3\"^^xsd:decimal) instead of being refused or written as a valid decimal")
def test_json_number_with_exponent_is_not_stored_ill_typed(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [
        '{"id": "t-1", "statement": "s", "type": "observation", "about": ["me"], '
        '"source": {"id": "s1", "said_by": "me"}, "triples": [["me", "<urn:weight>", 2E3]]}'])
    try:
        wb.import_files([path])
    except Invalid as exc:  # refusing is fine, if it says where
        assert f"{path}:1" in str(exc)
        return
    [value] = [q.object for q in wb.store.quads(record_iri("t-1"))]
    assert isinstance(value, ox.Literal)
    if value.datatype.value == XSD + "decimal":
        assert re.fullmatch(_XSD_DECIMAL, value.value), f"ill-typed xsd:decimal stored: {value}"


# ---------------------------------------------------------------------- names, aliases, ids

def test_name_matching_two_entities_is_ambiguous_listing_both(sample: Workbench, tmp_path: Path) -> None:
    first = sample.add_entity("Alex")
    second = sample.add_entity("Alex")
    assert first != second
    path = write_jsonl(tmp_path / "alex.jsonl", [*GOOD, record("t-3", about=["Alex"], triples=[])])
    exc = refused(sample, [path], Ambiguous, f"{path}:3", f"<{first.value}>", f"<{second.value}>")
    assert isinstance(exc, Ambiguous)
    assert sorted(exc.data["candidates"]) == sorted([first.value, second.value])


def test_ambiguous_name_inside_a_triple_is_refused(sample: Workbench, tmp_path: Path) -> None:
    first, second = sample.add_entity("Alex"), sample.add_entity("alex")
    path = write_jsonl(tmp_path / "alex.jsonl", [record("t-1", triples=[["me", "friend of", "ALEX"]])])
    refused(sample, [path], Ambiguous, f"{path}:1", first.value, second.value)


@pytest.mark.parametrize("alias", ["Paris", "  PARIS ", "巴黎"])
def test_alias_taken_by_another_entity_is_a_conflict(sample: Workbench, alias: str) -> None:
    sample.add_entity("Lyon")
    before = dump(sample.store)
    with pytest.raises(Conflict) as info:
        sample.add_alias("Lyon", alias)
    assert "<urn:wb:entity:paris>" in str(info.value)
    assert repr(alias) in str(info.value)
    assert dump(sample.store) == before
    assert sample.resolve(alias).entities == ("urn:wb:entity:paris",)


def test_paris_never_binds_paris_hilton(sample: Workbench, tmp_path: Path) -> None:
    assert sample.resolve("Paris").entities == ("urn:wb:entity:paris",)
    hilton = sample.resolve("Paris Hilton")
    assert hilton.outcome == "bound"
    assert "urn:wb:entity:paris" not in hilton.entities
    for near in ("Pari", "Paris Hilto", "Paris, France", "Parisian"):
        assert sample.resolve(near).outcome == "unknown", near
    path = write_jsonl(tmp_path / "m.jsonl", [record("t-1", about=["paris  hilton"], triples=[])])
    sample.import_files([path])
    assert sample.record("t-1").about == hilton.entities


def test_same_id_with_other_content_is_a_conflict(sample: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", GOOD)
    assert sample.import_files([path]).records_added == 2
    changed = write_jsonl(tmp_path / "changed.jsonl", [record("t-1"), record("t-2", statement="changed")])
    exc = refused(sample, [changed], Conflict, f"{changed}:2", "'t-2'", "supersedes")
    assert exc.where == f"{changed}:2"  # type: ignore[attr-defined]


def test_same_id_same_content_changes_nothing(sample: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", GOOD)
    sample.import_files([path])
    before = dump(sample.store)
    # The same records, keys in another order and spaced differently: the same content.
    again = tmp_path / "again.jsonl"
    again.write_text("".join(json.dumps(dict(reversed(list(r.items()))), indent=None, separators=(",", ":")) + "\n"
                             for r in GOOD), encoding="utf-8")
    for p in (path, again):
        report = sample.import_files([p])
        assert (report.records_added, report.records_unchanged, report.quads_added) == (0, 2, 0)
        assert dump(sample.store) == before


def test_rdf_graph_reimported_with_other_triples_is_a_conflict(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "facts.nq"
    path.write_text("<urn:a> <urn:b> <urn:c> <urn:g:facts> .\n", encoding="utf-8")
    wb.import_files([path])
    before = dump(wb.store)
    assert wb.import_files([path]).records_unchanged == 1
    assert dump(wb.store) == before
    path.write_text("<urn:a> <urn:b> <urn:d> <urn:g:facts> .\n", encoding="utf-8")
    refused(wb, [path], Conflict, str(path), "urn:g:facts")


# ---------------------------------------------------------------------- the command line

def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed ``workbench`` command, as a user runs it."""
    binary = shutil.which("workbench")
    assert binary, "the workbench command is not installed: pip install -e '.[test]'"
    return subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("cli")
    done = run_cli("--store", str(where / "store"), "init", cwd=where)
    assert done.returncode == 0, done.stderr
    return where / "store"


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


def _store_dump(location: Path) -> bytes:
    with Workbench.open(location) as wb:
        return dump(wb.store)


def test_cli_bad_jsonl_exits_1_with_one_error_line(cli_store: Path, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [*GOOD, record("t-3", effective_from="someday")])
    before = _store_dump(cli_store)
    line = _one_error_line(run_cli("--store", str(cli_store), "import", str(path), cwd=tmp_path))
    assert f"{path}:3" in line
    assert "effective_from" in line
    assert _store_dump(cli_store) == before


def test_cli_malformed_turtle_exits_1_with_one_error_line(cli_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.ttl"
    path.write_text("<urn:a> <urn:b> <urn:c> .\n<urn:a> <urn:b> .\n", encoding="utf-8")
    line = _one_error_line(run_cli("--store", str(cli_store), "import", str(path), cwd=tmp_path))
    assert str(path) in line and "line 2" in line


def test_cli_missing_store_exits_1_with_a_plain_message(tmp_path: Path) -> None:
    line = _one_error_line(run_cli("--store", str(tmp_path / "nonexistent"), "stats", cwd=tmp_path))
    assert "no Workbench store" in line and str(tmp_path / "nonexistent") in line
    assert not (tmp_path / "nonexistent").exists()  # a read does not create a store


@bug("a bad language tag in a JSON Lines triple crashes the CLI with a ValueError traceback "
     "instead of one 'error: FILE:LINE: ...' line")
def test_cli_bad_language_tag_exits_1_with_one_error_line(cli_store: Path, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [record("t-1", triples=[["me", "<urn:p>", {"value": "x", "lang": "not a tag"}]])])
    line = _one_error_line(run_cli("--store", str(cli_store), "import", str(path), cwd=tmp_path))
    assert f"{path}:1" in line

