"""SPARQL Update at ``/sparql``: new records by ``INSERT DATA``, landed as an import.

The store changes only with validation and provenance, so an update is accepted only when

- it comes from a user with the curator or admin role (a viewer: 403; no token: 401, even on a
  store with no users, as for every write over HTTP);
- every operation in it is ``INSERT DATA`` (with ``PREFIX`` / ``BASE`` lines); and
- every triple is in a named graph (a record's graph), none in the default graph nor in a graph
  of Workbench's own (``urn:wb:graph:meta`` and the rest of ``urn:wb:``, records aside).

The quads then become a TriG file in a temporary directory and go through
:meth:`Workbench.import_files` on the Workbench acting as the user: the same literal checks,
SHACL validation of the metadata, all-or-nothing write and provenance as ``workbench import``.
Each graph becomes one record, attributed to the user (``said_by``), from a new source
``sparql-update:<time>-<8 hex digits>`` that everyone may see. A graph already recorded with other
triples is refused (409: records are never rewritten); the same triples again are "unchanged".

Everything else (``DELETE DATA``, ``DELETE``/``INSERT ... WHERE``, ``LOAD``, ``CLEAR``, ``DROP``,
``CREATE``, ``ADD``/``MOVE``/``COPY``) is refused with 403 and a message naming the command to
use instead.

How the text is read: never by a SPARQL engine, not even a scratch store's (``LOAD`` and
``SERVICE`` would reach the network). :func:`read_insert` is a strict recognizer of
``Prologue INSERT DATA { QuadData } ( ; Prologue INSERT DATA { QuadData } )* ;?``: the prologue
and the data hold no expressions, so a context-free lexer (IRIs, strings, comments, prefixed
names, blank nodes, numbers, punctuation) reads them exactly, and the first operation that is not
``INSERT DATA`` stops the reading and is named (the text after it is never read). The data is
then parsed as TriG (``pyoxigraph.parse``, a parser and nothing else): the update's own text with
the words ``INSERT DATA``, the operations' braces and semicolons and the dots between graph blocks
blanked, so that literals stay as written (a store would respell ``"007"^^xsd:integer`` as
``"7"``, which the import refuses to do behind the curator's back) and a TriG error's line and
column are the update's.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench.access.users import Role, User
from workbench.errors import WorkbenchError
from workbench.ids import RECORD_PREFIX
from workbench.server.access import REALM
from workbench.server.protocol import ProtocolError
from workbench.service import Workbench
from workbench.sparqlcheck import (
    BNODE,
    COMMENT,
    IRI,
    LANGTAG,
    NUMBER,
    PNAME,
    STRING_LONG,
    STRING_SHORT,
    UPDATE_FORMS,
    VAR,
    WS,
)

INSTEAD = (
    "Records are never changed in place. Instead: add records with INSERT DATA "
    "{ GRAPH <urn:wb:record:ID> { ... } } here or `workbench import FILE`; withdraw one with "
    "`workbench retract ID --reason ...`; correct one with `workbench supersede OLD --by NEW --reason ...`; "
    "remove one for good with `workbench erase ID --reason ...`."
)
DEFAULT_GRAPH = (
    "INSERT DATA into the default graph is refused: each record is a named graph. Put the triples in "
    "GRAPH <urn:wb:record:ID> { ... }; the import adds the record's metadata and provenance."
)
_TOKEN = re.compile(
    rf"(?P<ws>{WS}|{COMMENT})|(?P<iri>{IRI})|(?P<string>{STRING_LONG}|{STRING_SHORT})|(?P<var>{VAR})"
    rf"|(?P<bnode>{BNODE})|(?P<pname>{PNAME})|(?P<number>[+-]?(?:{NUMBER}))|(?P<lang>{LANGTAG})|(?P<dt>\^\^)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>[{}()\[\].,;])|(?P<other>.)",
    re.DOTALL,
)
_TERMS = ("iri", "string", "bnode", "pname", "number")


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    start: int
    end: int


class _Reader:
    """The update's tokens (white space and comments skipped), one at a time."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._tokens = self._scan()
        self.token = next(self._tokens, None)

    def _scan(self) -> Iterator[_Token]:
        for m in _TOKEN.finditer(self.text):
            if m.lastgroup != "ws":
                yield _Token(m.lastgroup or "other", m.group(), m.start(), m.end())

    def take(self) -> _Token | None:
        token, self.token = self.token, next(self._tokens, None)
        return token

    def word(self) -> str:
        """The current token as an upper-case keyword ("" if it is not a word)."""
        return self.token.text.upper() if self.token is not None and self.token.kind == "word" else ""

    def error(self, message: str, token: _Token | None = None) -> ProtocolError:
        """400 "error at LINE:COLUMN: message" at ``token`` (else the current one, else the end)."""
        at = token or self.token
        offset = at.start if at is not None else len(self.text)
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        found = f", found {at.text[:40]!r}" if at is not None else ", found the end of the update"
        return ProtocolError(400, f"SPARQL Update syntax error at {line}:{column}: {message}{found}")


def refusal(forms: Iterable[str]) -> str:
    """Why an update with these forms is refused, and what to do instead."""
    named = sorted({f for f in forms if f != "INSERT DATA"}) or ["this update"]
    shown = ", ".join(f or "an operation that is not INSERT DATA" for f in named)
    return f"SPARQL Update here accepts only INSERT DATA into record graphs; refused: {shown}. {INSTEAD}"


@dataclass(frozen=True)
class Inserted:
    """What an accepted update inserts: its quads (spelled as the update spells them) and graphs."""

    quads: list[ox.Quad]
    graphs: list[ox.NamedNode]


def read_insert(update: str, base: str) -> Inserted:
    """The quads of an update made only of INSERT DATA into record graphs, or ProtocolError:
    403 naming what is refused, 400 naming where the text is malformed.

    >>> found = read_insert("PREFIX ex: <http://e/> INSERT DATA { GRAPH ex:g { ex:s ex:p '007' } } ;", "http://b/")
    >>> [str(q) for q in found.quads]
    ['<http://e/s> <http://e/p> "007" <http://e/g>']
    >>> read_insert("INSERT DATA { GRAPH <urn:wb:record:a> { <urn:s> <urn:p> 1 } } ; LOAD <http://x/>", "http://b/")
    Traceback (most recent call last):
    ...
    workbench.server.protocol.ProtocolError: SPARQL Update here accepts only INSERT DATA ...; refused: LOAD. ...
    """
    blanks = _recognize(update)
    kept = list(update)
    for start, end in blanks:
        for i in range(start, end):
            if kept[i] not in "\r\n":
                kept[i] = " "
    try:
        quads = list(ox.parse("".join(kept).encode("utf-8"), ox.RdfFormat.TRIG, base_iri=base))
    except SyntaxError as exc:
        raise ProtocolError(400, "SPARQL Update syntax error " + _where(str(exc))) from None
    graphs = sorted({q.graph_name for q in quads if isinstance(q.graph_name, ox.NamedNode)}, key=lambda g: g.value)
    if any(not isinstance(q.graph_name, ox.NamedNode) for q in quads):  # the recognizer should have said
        raise ProtocolError(403, DEFAULT_GRAPH)
    own = [g for g in graphs if g.value.startswith("urn:wb:") and not g.value.startswith(RECORD_PREFIX)]
    if own:
        raise ProtocolError(
            403, f"INSERT DATA into {own[0]} is refused: Workbench writes its own graphs (metadata, entities, users, "
            "audit...) itself, from imports and commands. Put the triples in a record's graph, "
            "GRAPH <urn:wb:record:ID> { ... }, and the import adds the metadata. " + INSTEAD
        )
    return Inserted(quads, graphs)


def _where(message: str) -> str:
    """A TriG parser's "Parser error at line L column C: ..." as "at L:C: ..." (the same place
    in the update, whose layout the TriG text keeps)."""
    found = re.match(r"Parser error at line (\d+) (?:column|between columns) (\d+)(?: and \d+)?: (.*)", message,
                     re.DOTALL)
    return f"at {found.group(1)}:{found.group(2)}: {found.group(3)}" if found else f"in its data: {message}"


def _recognize(update: str) -> list[tuple[int, int]]:
    """Check ``update`` is prologues and INSERT DATA operations only (else raise), and return
    the spans to blank for its TriG reading: the keywords, the operations' braces, the
    semicolons and the dots between graph blocks."""
    reader = _Reader(update)
    blanks: list[tuple[int, int]] = []
    labels: dict[str, int] = {}  # blank node label -> the operation that used it
    operation = 0
    while True:
        _prologue(reader)
        if reader.token is None:
            return blanks
        first = reader.take()
        assert first is not None
        keyword = first.text.upper() if first.kind == "word" else ""
        following = reader.word()
        if keyword == "INSERT" and following == "DATA":
            data = reader.take()
            assert data is not None
            blanks.append((first.start, data.end))
        elif keyword in UPDATE_FORMS:
            form = keyword
            if keyword in ("INSERT", "DELETE") and following in ("DATA", "WHERE"):
                form = f"{keyword} {following}"
            raise ProtocolError(403, refusal([form]))
        else:
            raise reader.error("expected INSERT DATA (or PREFIX, BASE)", first)
        operation += 1
        blanks.extend(_quad_data(reader, labels, operation))
        if reader.token is None:
            return blanks
        if reader.token.text != ";":
            raise reader.error("expected ';' between operations")
        separator = reader.take()
        assert separator is not None
        blanks.append((separator.start, separator.end))


def _prologue(reader: _Reader) -> None:
    """PREFIX and BASE lines (kept: TriG reads them too)."""
    while (word := reader.word()) in ("PREFIX", "BASE"):
        reader.take()
        if word == "PREFIX":
            name = reader.take()
            if name is None or name.kind != "pname" or not name.text.endswith(":"):
                raise reader.error("expected a prefix name such as ex: after PREFIX", name)
        iri = reader.take()
        if iri is None or iri.kind != "iri":
            raise reader.error(f"expected an IRI in <...> after {word}", iri)


def _quad_data(reader: _Reader, labels: dict[str, int], operation: int) -> list[tuple[int, int]]:
    """``{ GRAPH name { triples } ... }``: the spans to blank (its braces, the dots between
    blocks). Triples outside a GRAPH block are refused (403); so is anything but terms and
    punctuation inside one (400)."""
    opening = reader.take()
    if opening is None or opening.text != "{":
        raise reader.error("expected '{' after INSERT DATA", opening)
    blanks = [(opening.start, opening.end)]
    after_block = False
    while True:
        token = reader.token
        if token is None:
            raise reader.error("expected '}' to close INSERT DATA")
        if token.text == "}":
            reader.take()
            return [*blanks, (token.start, token.end)]
        if token.text == "." and after_block:
            reader.take()
            blanks.append((token.start, token.end))
            after_block = False
            continue
        if reader.word() != "GRAPH":
            if token.kind in _TERMS or token.text in ("[", "(") or reader.word() in ("A", "TRUE", "FALSE"):
                raise ProtocolError(403, DEFAULT_GRAPH)
            raise reader.error("expected GRAPH <name> { ... } in INSERT DATA")
        reader.take()
        name = reader.take()
        if name is None or name.kind not in ("iri", "pname"):
            kind = "a variable" if name is not None and name.kind == "var" else "this"
            raise reader.error(f"INSERT DATA names its graph by an IRI, not {kind}", name)
        _graph_block(reader, labels, operation)
        after_block = True


def _graph_block(reader: _Reader, labels: dict[str, int], operation: int) -> None:
    """``{ triples }`` of one graph: terms and punctuation only, brackets balanced."""
    opening = reader.take()
    if opening is None or opening.text != "{":
        raise reader.error("expected '{' after the graph's name", opening)
    brackets: list[str] = []
    while True:
        token = reader.take()
        if token is None:
            raise reader.error("expected '}' to close the graph")
        text, kind = token.text, token.kind
        if text == "}" and not brackets:
            return
        if text in ("[", "("):
            brackets.append("]" if text == "[" else ")")
        elif text in ("]", ")"):
            if not brackets or brackets.pop() != text:
                raise reader.error("unbalanced brackets", token)
        elif kind == "var":
            raise reader.error("INSERT DATA holds data: no variables", token)
        elif kind == "bnode":
            if labels.setdefault(text, operation) != operation:
                raise ProtocolError(400, f"the blank node {text} is used by two operations: name it once, in one "
                                         "INSERT DATA, or import the triples as a TriG file")
        elif kind == "word" and text.upper() not in ("A", "TRUE", "FALSE") or kind == "other" or text == "{":
            raise reader.error("expected a term, or one of . , ; [ ] ( ) in the graph's triples", token)


def needs_role(user: User | None) -> None:
    """401 without a token (a write needs one even on a store with no users), 403 without the
    curator or admin role."""
    if user is None:
        raise ProtocolError(401, "SPARQL Update changes the store: send Authorization: Bearer TOKEN of a curator "
                                 "or an admin", headers={"WWW-Authenticate": REALM})
    if not user.may(Role.CURATOR):
        roles = ", ".join(sorted(r.value for r in user.roles)) or "no role"
        raise ProtocolError(403, f"SPARQL Update needs the curator or admin role; {user.name} has {roles}")


def land(wb: Workbench, user: User, inserted: Inserted) -> dict[str, Any]:
    """Import what an update inserts, as ``user``, through the service's own import. Blocking:
    call it from a worker thread, under the lock every write over HTTP holds."""
    if not inserted.quads:
        return {"import": None, "source": None, "said_by": user.name, "records_added": 0, "records_unchanged": 0,
                "quads_added": 0, "graphs": []}
    now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    source = f"sparql-update:{now}-{uuid.uuid4().hex[:8]}"
    # The import checks the graphs as the user may see them (access.writes): one they may not
    # see is "taken", whatever the update holds.
    folder = Path(tempfile.mkdtemp(prefix="workbench-sparql-update-"))
    path = folder / (re.sub(r"[^\w.-]", "-", source) + ".trig")
    try:
        path.write_bytes(ox.serialize(inserted.quads, format=ox.RdfFormat.TRIG) or b"")
        try:
            report = wb.acting_as(user.name).import_files([path], source=source, said_by=user.name,
                                                          used=[f"SPARQL Update {source}"])
        except WorkbenchError as exc:
            # Lines of the temporary file mean nothing to the client: the update is named instead.
            where = re.sub(re.escape(str(path)) + r"(:\d+)?", "the update", exc.where) if exc.where else None
            raise ProtocolError(exc.status, f"{where}: {exc.message}" if where else exc.message) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "import": report.activity or None,
        "source": source if report.records_added else None,
        "said_by": user.name,
        "records_added": report.records_added,
        "records_unchanged": report.records_unchanged,
        "quads_added": report.quads_added,
        "graphs": [g.value for g in inserted.graphs],
    }
