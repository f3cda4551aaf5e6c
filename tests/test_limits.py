"""The limits on one input (workbench/limits.py): each finding of the security issue as a test.

Every refusal says which limit and where (``file:line``, the field, the parameter) and leaves the
store byte-identical (``dump``, or ``Api.snapshot`` over HTTP). Tests marked ``regression`` failed
before the limits existed. The scanners are checked against a plain oracle on random input
(hypothesis), piece sizes included.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import dump
from tests.test_api import Api, api
from tests.test_bad_input import (
    _one_error_line,
    _store_dump,
    bug,
    cli_store,
    record,
    refused,
    run_cli,
    write_jsonl,
)
from workbench import limits
from workbench.errors import Invalid, ParseError
from workbench.service import Workbench

# Fixtures reused from other modules: test_api's served store (a real `workbench serve`, module
# scoped) and test_bad_input's CLI store.
FIXTURES = (api, cli_store)
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
SCAN = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def rdfxml(body: str, dtd: str = "") -> str:
    """An RDF/XML document: ``dtd`` the internal subset (none if empty), ``body`` inside rdf:RDF."""
    doctype = f"<!DOCTYPE rdf:RDF [\n{dtd}\n]>\n" if dtd else ""
    return (f'<?xml version="1.0"?>\n{doctype}<rdf:RDF xmlns:rdf="{RDF_NS}" xmlns:e="urn:x:">\n'
            f"{body}\n</rdf:RDF>\n")


def laughs(levels: int, fan: int = 10) -> str:
    """A "billion laughs" file: entity lolN holds ``fan`` references to lolN-1; the last one's
    expansion is 3 * fan ** (levels - 1) bytes."""
    dtd = "\n".join(['<!ENTITY lol0 "lol">'] + [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * fan}">'
                                                 for i in range(1, levels)])
    return rdfxml(f'<rdf:Description rdf:about="urn:s"><e:p>&lol{levels - 1};</e:p></rdf:Description>', dtd)


def nested_jsonld(levels: int) -> str:
    """JSON-LD nesting ``levels`` objects, as the issue measured: pyoxigraph 0.5.13 segfaults near 4,000."""
    return '{"@id": "urn:s", "urn:p": ' + '{"urn:p": ' * levels + '"x"' + "}" * (levels + 1) + "\n"


# ---------------------------------------------------------------------- RDF/XML entities


@bug("pyoxigraph's RDF/XML parser expands nested DTD entities: a 9-level billion laughs imported "
     "(87 s, 11.6 GB RSS, a 2.9 GB store); this one, 7 levels, would expand to 30 MB")
def test_billion_laughs_is_refused_naming_the_nested_entity(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "laughs.rdf"
    path.write_text(laughs(7), encoding="utf-8")
    exc = refused(wb, [path], Invalid, f"{path}:4", "'lol1'", "refers to another entity", "billion laughs")
    assert exc.where == f"{path}:4"  # type: ignore[attr-defined]


@bug("a flat entity used many times multiplies a file as well: 300 references to 4,000 bytes")
def test_flat_entity_expansion_past_the_ratio_is_refused(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "flat.rdf"
    path.write_text(rdfxml('<rdf:Description rdf:about="urn:s"><e:p>' + "&a;\n" * 300 + "</e:p></rdf:Description>",
                           '<!ENTITY a "' + "A" * 4000 + '">'), encoding="utf-8")
    allowed = limits.ENTITY_EXPANSION_FLOOR + limits.ENTITY_EXPANSION_RATIO * path.stat().st_size
    line = 6 + (allowed // 4000)  # the reference that takes the expansion past what is allowed
    refused(wb, [path], Invalid, f"{path}:{line}", "ENTITY_EXPANSION_RATIO", str(allowed))


@pytest.mark.parametrize(("dtd", "says"), [
    ('<!ENTITY a SYSTEM "file:///etc/passwd">', "external entity"),
    ('<!ENTITY a PUBLIC "-//X//EN" "http://127.0.0.1:9/x">', "external entity"),
    ('<!ENTITY % p "x">', "parameter entity"),
    ('<!ENTITY a "' + "A" * (limits.MAX_ENTITY_BYTES + 1) + '">', "MAX_ENTITY_BYTES"),
    ('<!ENTITY a "&#38;x">', "refers to another entity or character"),
    ("<!ENTITY a 'single quoted'>", "plain-text entity"),
    ('<!ENTITY a "x"><!-- <!ENTITY a "&b;"> -->', "refers to another entity"),  # pyoxigraph reads comments here
], ids=["system", "public", "parameter", "too-long", "character-reference", "single-quotes", "in-a-comment"])
def test_entities_that_are_not_plain_text_are_refused(wb: Workbench, tmp_path: Path, dtd: str, says: str) -> None:
    path = tmp_path / "entities.rdf"
    path.write_text(rdfxml('<rdf:Description rdf:about="urn:s"><e:p>&a;</e:p></rdf:Description>', dtd),
                    encoding="utf-8")
    refused(wb, [path], Invalid, f"{path}:3", says)


@bug("pyoxigraph honours a DOCTYPE anywhere, even inside the root element, so looking at the prolog "
     "alone would miss it")
def test_a_doctype_after_the_root_element_is_checked_too(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "late.rdf"
    path.write_text(rdfxml('<!DOCTYPE x [<!ENTITY b "lol"><!ENTITY a "&b;&b;&b;">]>\n'
                           '<rdf:Description rdf:about="urn:s"><e:p>&a;</e:p></rdf:Description>'), encoding="utf-8")
    refused(wb, [path], Invalid, f"{path}:3", "'a'", "refers to another entity")


def test_an_external_dtd_is_refused(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "dtd.rdf"
    path.write_text(rdfxml('<rdf:Description rdf:about="urn:s"><e:p>x</e:p></rdf:Description>')
                    .replace("<rdf:RDF", '<!DOCTYPE rdf:RDF SYSTEM "http://127.0.0.1:9/rdf.dtd">\n<rdf:RDF', 1),
                    encoding="utf-8")
    refused(wb, [path], Invalid, f"{path}:2", "external DTD")


PROTEGE_DTD = """    <!ENTITY owl "http://www.w3.org/2002/07/owl#" >
    <!ENTITY xsd "http://www.w3.org/2001/XMLSchema#" >
    <!ENTITY rdfs "http://www.w3.org/2000/01/rdf-schema#" >
    <!ENTITY kitchen "urn:wb:entity:" >"""
PROTEGE_BODY = """    <owl:Class rdf:about="&kitchen;appliance"/>
    <owl:Class rdf:about="&kitchen;kettle">
        <rdfs:subClassOf rdf:resource="&kitchen;appliance"/>
        <rdfs:label rdf:datatype="&xsd;string">kettle</rdfs:label>
    </owl:Class>"""


def _protege(entities: bool) -> str:
    text = rdfxml(PROTEGE_BODY, PROTEGE_DTD).replace(
        'xmlns:e="urn:x:"', 'xmlns:owl="http://www.w3.org/2002/07/owl#" '
                            'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#"')
    if not entities:
        for name, iri in re.findall(r'<!ENTITY (\w+) "([^"]+)" >', PROTEGE_DTD):
            text = text.replace(f"&{name};", iri)
        text = re.sub(r"<!DOCTYPE.*?\]>\n", "", text, flags=re.S)
    return text


def test_namespace_entities_as_protege_writes_them_still_import(wb: Workbench, tmp_path: Path) -> None:
    with_entities, spelled_out = tmp_path / "protege.owl", tmp_path / "plain.owl"
    with_entities.write_text(_protege(entities=True), encoding="utf-8")
    spelled_out.write_text(_protege(entities=False), encoding="utf-8")
    assert "&kitchen;" in with_entities.read_text() and "&" not in spelled_out.read_text()
    wb.import_files([with_entities], source="pack")
    mine = wb.record("pack").triples
    assert len(mine) == 4 and any("urn:wb:entity:kettle" in t[0] for t in mine)
    wb.import_files([spelled_out], source="pack-2")
    assert wb.record("pack-2").triples == mine


# ---------------------------------------------------------------------- JSON-LD nesting


@bug("pyoxigraph's JSON-LD parser kills the process (SIGSEGV) on ~4,000 nested objects")
def test_cli_deeply_nested_jsonld_exits_1_instead_of_crashing(cli_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonld"
    path.write_text(nested_jsonld(4000), encoding="utf-8")
    before = _store_dump(cli_store)
    line = _one_error_line(run_cli("--store", str(cli_store), "import", str(path), cwd=tmp_path))
    assert f"{path}:1" in line and "MAX_JSON_DEPTH" in line
    assert _store_dump(cli_store) == before


@bug("JSON-LD nesting was unbounded (pyoxigraph crashes past ~3,500 levels, sooner on small thread stacks)")
def test_jsonld_nested_past_the_limit_is_refused(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonld"
    path.write_text(nested_jsonld(limits.MAX_JSON_DEPTH), encoding="utf-8")
    exc = refused(wb, [path], ParseError, f"{path}:1", "nested deeper than 128 levels", "MAX_JSON_DEPTH")
    assert exc.data["exceeds"] == "MAX_JSON_DEPTH"  # type: ignore[attr-defined]


def test_jsonld_at_the_limit_imports(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonld"
    path.write_text(nested_jsonld(limits.MAX_JSON_DEPTH - 2), encoding="utf-8")  # the outer object: one more
    assert wb.import_files([path]).records_added == 1


# ---------------------------------------------------------------------- long lines and literals


@bug("a line over 16 MiB (the issue's 50 MB) ended in a bare MemoryError from pyoxigraph's token "
     "buffer ('Reached the buffer maximal size of 16777216'), raised by the store's bulk load")
def test_a_line_past_the_limit_is_refused_naming_it(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "long.nt"
    with open(path, "w", encoding="utf-8") as f:
        f.write('<urn:s> <urn:p> "short" .\n<urn:s> <urn:p> "')
        f.write("a" * limits.MAX_LINE_BYTES)
        f.write('" .\n')
    refused(wb, [path], ParseError, f"{path}:2", "line 2 is longer than 8388608 bytes", "MAX_LINE_BYTES")


@bug("a literal past pyoxigraph's 16 MiB token buffer in a large file met a bare MemoryError")
def test_a_multiline_literal_past_the_parser_buffer_is_a_parse_error(tmp_path: Path) -> None:
    with Workbench.open(tmp_path / "store", create=True, user="t") as wb:
        wb.init()
        path = tmp_path / "long.ttl"
        path.write_text('<urn:s> <urn:p> """' + ("a" * 99 + "\n") * 180_000 + '""" .\n', encoding="utf-8")
        refused(wb, [path], ParseError, str(path), "MAX_LITERAL_CHARS")


@bug("literal sizes were unbounded")
@pytest.mark.parametrize("ext", [".nt", ".rdf", ".jsonld"])
def test_a_literal_past_the_limit_is_refused(wb: Workbench, tmp_path: Path, ext: str) -> None:
    long = "a" * (limits.MAX_LITERAL_CHARS + 1)
    text = {".nt": f'<urn:s> <urn:p> "x" .\n<urn:s> <urn:p> "{long}" .\n',
            ".rdf": rdfxml(f'<rdf:Description rdf:about="urn:s">\n<e:p>{long}</e:p></rdf:Description>'),
            ".jsonld": '{"@id": "urn:s",\n "urn:p": "' + long + '"}\n'}[ext]
    path = tmp_path / f"long{ext}"
    path.write_text(text, encoding="utf-8")
    line = {".nt": 2, ".rdf": 4, ".jsonld": 2}[ext]
    refused(wb, [path], Invalid, f"{path}:{line}", "1048577 characters", "MAX_LITERAL_CHARS")


# ---------------------------------------------------------------------- JSON Lines


@bug("a deeply nested JSON Lines record raised RecursionError (a traceback), not an error naming the line")
def test_deeply_nested_json_lines_name_the_line(wb: Workbench, tmp_path: Path) -> None:
    deep = record("t-2", triples=[["me", "<urn:p>", {"value": "x"}]]) | {"about": ["me"]}
    text = json.dumps(deep).replace('"about": ["me"]', '"about": ' + "[" * 5000 + '"me"' + "]" * 5000)
    path = write_jsonl(tmp_path / "deep.jsonl", [record("t-1"), text])
    refused(wb, [path], ParseError, f"{path}:2", "nested deeper than 128 levels", "MAX_JSON_DEPTH")


@bug("a lone surrogate (\\ud800) in a JSON Lines record raised UnicodeEncodeError when it reached the store")
def test_a_lone_surrogate_in_json_lines_names_the_line_and_field(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [record("t-1"),
                                              json.dumps(record("t-2", statement="I own a \ud800 thing."))])
    assert "\\ud800" in path.read_text()
    refused(wb, [path], Invalid, f"{path}:2", "field 'statement'", "lone surrogate \\ud800")


def test_a_surrogate_pair_in_json_lines_is_text(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [json.dumps(record("t-1", statement="I own a \U0001f600 thing."))])
    assert "\\ud83d\\ude00" in path.read_text()
    wb.import_files([path])
    assert wb.record("t-1").statement == "I own a \U0001f600 thing."


@bug("strings in JSON Lines records were unbounded")
def test_a_json_lines_string_past_the_literal_limit_names_the_field(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [record("t-1", source={"id": "s", "said_by": "me",
                                                                      "text": "x" * (limits.MAX_LITERAL_CHARS + 1)})])
    refused(wb, [path], Invalid, f"{path}:1", "field 'source.text'", "MAX_LITERAL_CHARS")


def test_a_json_lines_line_past_the_limit_is_refused(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [record("t-1"), '{"id": "' + "x" * limits.MAX_LINE_BYTES + '"}'])
    refused(wb, [path], ParseError, f"{path}:2", "MAX_LINE_BYTES")


def test_candidates_share_the_json_lines_limits(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", ["[" * 200 + "]" * 200])
    before = dump(wb.store)
    with pytest.raises(ParseError, match="MAX_JSON_DEPTH") as info:
        wb.import_candidates(path)
    assert info.value.where == f"{path}:1"
    assert dump(wb.store) == before


@bug("a JSON Lines record nested past Python's recursion limit crashed the CLI with a traceback")
def test_cli_deeply_nested_json_lines_exit_1(cli_store: Path, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "deep.jsonl", ["[" * 100_000 + "]" * 100_000])
    line = _one_error_line(run_cli("--store", str(cli_store), "import", str(path), cwd=tmp_path))
    assert f"{path}:1" in line and "MAX_JSON_DEPTH" in line


# ---------------------------------------------------------------------- listing limits


@bug("records(limit=0) returned every record; limit=-1 and huge limits reached SPARQL as a syntax error")
@pytest.mark.parametrize(("limit", "says"), [(0, "at least 1"), (-1, "at least 1"),
                                             (10**30, "at most 1000000000"), (True, "an integer")])
def test_a_records_limit_out_of_range_is_invalid_naming_it(sample: Workbench, limit: Any, says: str) -> None:
    with pytest.raises(Invalid, match=says) as info:
        sample.records(limit=limit)
    assert info.value.where == "limit"
    assert len(sample.records(limit=2)) == 2


@bug("workbench records --limit 1000000000000000000000000000000 printed a raw SPARQL syntax error")
def test_cli_records_limit_too_large_is_a_usage_error(cli_store: Path, tmp_path: Path) -> None:
    done = run_cli("--store", str(cli_store), "records", "--limit", "1" + "0" * 30, cwd=tmp_path)
    assert done.returncode == 2, (done.returncode, done.stderr)  # a usage mistake, as --limit 0 is
    assert "Traceback" not in done.stderr and "SPARQL" not in done.stderr
    assert "--limit" in done.stderr and "1<=x<=1000000000" in done.stderr


# ---------------------------------------------------------------------- over HTTP (test_api's served store)


def _post(api: Api, path: str, body: Any, *, who: str = "cora", **headers: str) -> httpx.Response:
    sent = {"Authorization": f"Bearer {api.tokens[who]}", "Content-Type": "application/json", **headers}
    return httpx.post(api.root + path, content=body if isinstance(body, bytes) else json.dumps(body).encode(),
                      headers=sent, timeout=60)


@bug("over HTTP a 517-byte RDF/XML body stored a 10 MB literal: the body limit did not bound entity expansion")
def test_http_billion_laughs_is_400_and_changes_nothing(api: Api) -> None:
    before = api.snapshot()
    data = laughs(6, fan=10)
    assert len(data.encode()) < 700  # expands to 300 KB here; the issue's 517 bytes to 10 MB
    r = _post(api, "/api/import/rdf", {"data": data, "format": "rdfxml", "name": "laughs"})
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "Invalid" and r.json()["where"] == "laughs:4", r.json()
    assert "billion laughs" in r.json()["message"] and "workbench-upload" not in r.text
    assert api.snapshot() == before


@bug("a deeply nested JSON request body was a 500 (RecursionError)")
def test_http_deeply_nested_body_is_400(api: Api) -> None:
    before = api.snapshot()
    r = _post(api, "/api/ask", b"[" * 100_000 + b"]" * 100_000)
    assert r.status_code == 400, r.text
    assert r.json() == {"error": "ParseError", "where": "body", "exceeds": "MAX_JSON_DEPTH",
                        "message": "body: JSON nested deeper than 128 levels at column 129 (limits.MAX_JSON_DEPTH)"}
    assert api.snapshot() == before


@bug("a deeply nested or lone-surrogate record uploaded as JSON Lines text was a 500")
@pytest.mark.parametrize(("line", "says"), [
    ("[" * 5000 + "]" * 5000, "MAX_JSON_DEPTH"),
    (json.dumps(record("t-1", statement="a \ud800 b")), "lone surrogate"),
], ids=["deep", "surrogate"])
def test_http_bad_json_lines_upload_is_400_naming_the_line(api: Api, line: str, says: str) -> None:
    before = api.snapshot()
    r = _post(api, "/api/import/records", {"records": json.dumps(record("t-0")) + "\n" + line + "\n"})
    assert r.status_code == 400, r.text
    assert r.json()["where"] == "records:2" and says in r.json()["message"], r.json()
    assert api.snapshot() == before


@bug("GET /api/records?limit=-1 gave a raw SPARQL syntax error; ?limit=0 was ignored (every record)")
@pytest.mark.parametrize("limit", ["0", "-1", "1" + "0" * 30])
def test_http_records_limit_out_of_range_is_400_naming_it(api: Api, limit: str) -> None:
    r = httpx.get(api.root + "/api/records", params={"limit": limit},
                  headers={"Authorization": f"Bearer {api.tokens['vic']}"}, timeout=60)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "Invalid" and r.json()["where"] == "limit", r.json()
    with pytest.raises(Invalid) as info:  # and the client raises it as the embedded API does
        api.client("vic").records(limit=int(limit))
    assert info.value.where == "limit"


@bug("a POST body without Content-Type: application/json was parsed as JSON by the JSON API")
@pytest.mark.parametrize("ctype", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_http_body_that_is_not_declared_json_is_415(api: Api, ctype: str | None) -> None:
    before = api.snapshot()
    headers = {"Authorization": f"Bearer {api.tokens['cora']}", **({"Content-Type": ctype} if ctype else {})}
    body = json.dumps({"records": json.dumps(record("t-415")) + "\n"}).encode()
    r = httpx.post(api.root + "/api/import/records", content=body, headers=headers, timeout=60)
    assert r.status_code == 415, r.text
    assert "application/json" in r.json()["message"] and r.headers["accept-post"] == "application/json"
    assert api.snapshot() == before


@bug("over HTTP, ~4,000 nested JSON-LD objects killed `workbench serve` (pyoxigraph segfaults)")
def test_http_deeply_nested_jsonld_is_400_and_the_server_lives(api: Api) -> None:
    """Last of the HTTP tests: before the limit, it took the shared server down."""
    before = api.snapshot()
    r = _post(api, "/api/import/rdf", {"data": nested_jsonld(4000), "format": "jsonld", "name": "deep"})
    assert r.status_code == 400, r.text
    assert r.json()["where"] == "deep:1" and "MAX_JSON_DEPTH" in r.json()["message"], r.json()
    assert api.snapshot() == before


# ---------------------------------------------------------------------- the scanners, against oracles

_TEXT = st.text(alphabet=st.sampled_from(list('[]{}"\\/:, \n\t\x01ab\u00e9\u2028\U0001f600')), max_size=12)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=40)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


def _dumped(value: Any, ascii_only: bool, indent: int | None) -> str:
    return json.dumps(value, ensure_ascii=ascii_only, indent=indent)


@SCAN
@given(value=_JSON, ascii_only=st.booleans(), indent=st.sampled_from([None, 0, 2]))
def test_json_depth_is_the_nesting_json_loads_sees(value: Any, ascii_only: bool, indent: int | None) -> None:
    text = _dumped(value, ascii_only, indent)
    assert limits.json_depth(text) == limits.json_depth(text.encode()) == _depth(json.loads(text))


@SCAN
@given(value=_JSON, limit=st.integers(0, 6))
def test_check_json_text_refuses_exactly_past_the_limit(value: Any, limit: int) -> None:
    text = json.dumps(value)
    if _depth(value) > limit:
        with pytest.raises(ParseError, match="MAX_JSON_DEPTH"):
            limits.check_json_text(text, "x", limit=limit)
    else:
        limits.check_json_text(text, "x", limit=limit)


def _line_past(text: str, limit: int) -> int:
    """The line of the first bracket that nests ``text`` deeper than ``limit``: a plain loop."""
    depth, inside, escaped, line = 0, False, False, 1
    for c in text:
        if c == "\n":
            line += 1
        if inside:
            escaped, inside = (False, True) if escaped else (c == "\\", c != '"')
        elif c == '"':
            inside = True
        elif c in "[{":
            depth += 1
            if depth > limit:
                return line
        elif c in "]}":
            depth -= 1
    raise AssertionError("not nested that deep")


def _strings_of(value: Any) -> list[str]:
    if isinstance(value, list):
        return [s for v in value for s in _strings_of(v)]
    if isinstance(value, dict):
        return [*value, *(s for v in value.values() for s in _strings_of(v))]
    return [value] if isinstance(value, str) else []


def _written_length(s: str, ascii_only: bool) -> int:
    """A string's bytes as written in JSON, \\\\ and \\" not counted (as check_json_file counts)."""
    written = json.dumps(s, ensure_ascii=ascii_only)[1:-1].encode()
    return len(written.replace(b"\\\\", b"").replace(b'\\"', b""))


@SCAN
@given(value=_JSON, ascii_only=st.booleans(), indent=st.sampled_from([None, 1]), chunk=st.integers(1, 40),
       limit=st.integers(0, 6), string_limit=st.integers(0, 12))
def test_check_json_file_agrees_with_the_oracle_in_pieces_of_any_size(
        tmp_path: Path, value: Any, ascii_only: bool, indent: int | None, chunk: int, limit: int,
        string_limit: int) -> None:
    text = _dumped(value, ascii_only, indent)
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    if _depth(value) > limit:  # the first bracket past the limit names the line
        with pytest.raises(ParseError, match="MAX_JSON_DEPTH") as info:
            limits.check_json_file(path, depth_limit=limit, string_limit=10**9, chunk=chunk)
        assert info.value.where == f"{path}:{_line_past(text, limit)}"
    else:
        limits.check_json_file(path, depth_limit=limit, string_limit=10**9, chunk=chunk)
    longest = max((_written_length(s, ascii_only) for s in _strings_of(value)), default=0)
    if longest > string_limit:
        with pytest.raises(ParseError, match="JSON string longer than"):
            limits.check_json_file(path, depth_limit=10**9, string_limit=string_limit, chunk=chunk)
    else:
        limits.check_json_file(path, depth_limit=10**9, string_limit=string_limit, chunk=chunk)


@SCAN
@given(lines=st.lists(st.integers(0, 30), min_size=1, max_size=12), chunk=st.integers(1, 50),
       limit=st.integers(0, 25), final_newline=st.booleans())
def test_check_lines_names_the_first_long_line_in_pieces_of_any_size(
        tmp_path: Path, lines: list[int], chunk: int, limit: int, final_newline: bool) -> None:
    path = tmp_path / "x.nt"
    path.write_bytes(b"\n".join(b"x" * n for n in lines) + (b"\n" if final_newline else b""))
    first = next((i for i, n in enumerate(lines, start=1) if n > limit), None)
    if first is None:
        limits.check_lines(path, limit=limit, chunk=chunk)
    else:
        with pytest.raises(ParseError, match=f"line {first} is longer") as info:
            limits.check_lines(path, limit=limit, chunk=chunk)
        assert info.value.where == f"{path}:{first}"


@SCAN
@given(chunk=st.integers(1, 300), refs=st.integers(0, 60), padding=st.integers(0, 200))
def test_entity_references_are_counted_exactly_in_pieces_of_any_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, refs: int, padding: int) -> None:
    monkeypatch.setattr(limits, "ENTITY_EXPANSION_FLOOR", 0)
    monkeypatch.setattr(limits, "ENTITY_EXPANSION_RATIO", 1)
    path = tmp_path / "x.rdf"
    text = _protege(entities=True).replace(PROTEGE_BODY, "&kitchen;&owl;\n" * refs + " " * padding + PROTEGE_BODY)
    path.write_text(text, encoding="utf-8")
    sizes = {"kitchen": len("urn:wb:entity:"), "owl": len("http://www.w3.org/2002/07/owl#"),
             "xsd": len("http://www.w3.org/2001/XMLSchema#")}
    added = sum(text.count(f"&{name};") * n for name, n in sizes.items())
    if added > path.stat().st_size:
        with pytest.raises(Invalid, match="ENTITY_EXPANSION_RATIO"):
            limits.check_entities(path, chunk=chunk)
    else:
        limits.check_entities(path, chunk=chunk)


@SCAN
@given(chunk=st.integers(1, 200), before=st.integers(0, 120), levels=st.integers(2, 4))
def test_a_nested_entity_is_found_wherever_pieces_are_cut(tmp_path: Path, chunk: int, before: int,
                                                           levels: int) -> None:
    path = tmp_path / "x.rdf"
    text = laughs(levels).replace("<!DOCTYPE", "<!--" + "c" * before + "-->\n<!DOCTYPE")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(Invalid, match="'lol1' refers to another entity") as info:
        limits.check_entities(path, chunk=chunk)
    assert info.value.where == f"{path}:5"


@SCAN
@given(piece=st.integers(1, 40), pad=st.integers(0, 60), one_line=st.booleans())
def test_line_of_a_refused_literal_is_found_in_pieces_of_any_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int, pad: int, one_line: bool) -> None:
    """imports/rdf.py _line_of reads a line in pieces of limits.CHUNK, never whole (JSON-LD and
    RDF/XML are often one line): a value across two pieces is still found on its line."""
    from workbench.imports.rdf import _line_of

    xsd = "http://www.w3.org/2001/XMLSchema#"
    sep = " " if one_line else "\n"
    text = (f'{{"@id": "urn:s",{sep}"urn:a": "{"p" * pad}",{sep}"urn:b": "0",{sep}'
            f'"urn:c": {{"@value": "007", "@type": "{xsd}integer"}}}}\n')
    path = tmp_path / "x.jsonld"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(limits, "CHUNK", piece)
    lit = ox.Literal("007", datatype=ox.NamedNode(xsd + "integer"))
    assert _line_of(path, lit) == f"{path}:{1 if one_line else 4}"
