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
use instead; nothing is run for it, not even against a scratch store (``LOAD`` would fetch a URL).

How the text is read: a length-keeping mask (:func:`workbench.server.protocol.masked`) blanks
strings, IRIs, comments and escapes, so the operations, their keywords and their braces can be
found without being fooled by what a literal says. Only an update in which no other form (and
no ``LOAD`` or ``SERVICE`` keyword) is found is given to pyoxigraph, against an empty in-memory
store, for its syntax check (400 with the parser's message) and the graphs it writes. That
store rewrites literals into their canonical form (``"007"^^xsd:integer`` as ``"7"``), which the
import would refuse to do behind the curator's back, so the quads imported are read from the
update's own text as TriG (each operation's prologue and the inside of its braces) and checked
against pyoxigraph's.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench.access.users import Role, User
from workbench.errors import Conflict, WorkbenchError
from workbench.ids import RECORD_PREFIX
from workbench.server.access import REALM
from workbench.server.protocol import UPDATES, ProtocolError, masked
from workbench.service import Workbench

INSTEAD = (
    "Records are never changed in place. Instead: add records with INSERT DATA "
    "{ GRAPH <urn:wb:record:ID> { ... } } here or `workbench import FILE`; withdraw one with "
    "`workbench retract ID --reason ...`; correct one with `workbench supersede OLD --by NEW --reason ...`; "
    "remove one for good with `workbench erase ID --reason ...`."
)
_PROLOGUE = re.compile(r"\s*(?:PREFIX\s*[^\s:{}]*:\s*<_*>|BASE\s*<_*>)", re.IGNORECASE)
_WORD = re.compile(r"\s*([A-Za-z]+)")
# A keyword that would make pyoxigraph call out; never in an INSERT DATA (masked text).
_CALLS_OUT = re.compile(r"(?<![\w:?$.\-])(?:LOAD|SERVICE)\b(?![:\-])", re.IGNORECASE)


@dataclass(frozen=True)
class Operation:
    """One operation of an update: its form (``INSERT DATA``, ``DELETE WHERE``, ``LOAD``...; ""
    when the text does not say) and, for INSERT DATA, where its prologue and data lie."""

    form: str
    prologue: str = ""
    data: tuple[int, int] | None = None  # the inside of INSERT DATA's braces: [start, end)


def operations(update: str) -> list[Operation]:
    """The operations of an update, in order, read from the masked text.

    >>> [o.form for o in operations("PREFIX ex: <x:> INSERT DATA { GRAPH ex:g { ex:a ex:b ';' } } ;"
    ...                              " DELETE WHERE { ?s ?p ?o } ; LOAD <http://x/> ; CLEAR ALL")]
    ['INSERT DATA', 'DELETE WHERE', 'LOAD', 'CLEAR']
    """
    text = masked(update, same_length=True)
    found: list[Operation] = []
    i = 0
    while True:
        start = i
        while (m := _PROLOGUE.match(text, i)) is not None:
            i = m.end()
        word = _WORD.match(text, i)
        if word is None:  # nothing but a prologue (or nothing, or something the parser will name)
            if text[i:].strip():
                found.append(Operation(""))
            return found
        form, i = _form(text, word)
        data = None
        if form == "INSERT DATA" and text[i:].lstrip().startswith("{"):
            opening = i + len(text[i:]) - len(text[i:].lstrip())
            closing = _closing(text, opening)
            if closing is not None:
                data = (opening + 1, closing)
                i = closing + 1
        found.append(Operation(form, update[start : word.start(1)], data))
        end = _next_semicolon(text, i)
        if end is None:
            return found
        i = end + 1


def _form(text: str, word: re.Match[str]) -> tuple[str, int]:
    first = word.group(1).upper()
    i = word.end()
    if first not in UPDATES:
        return "", i  # not an update keyword: the parser names what is wrong
    if first in ("INSERT", "DELETE"):
        second = _WORD.match(text, i)
        following = second.group(1).upper() if second else ""
        if following == "DATA" or (first == "DELETE" and following == "WHERE"):
            return f"{first} {following}", second.end() if second else i
    return first, i


def _closing(text: str, opening: int) -> int | None:
    depth = 0
    for i in range(opening, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _next_semicolon(text: str, i: int) -> int | None:
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c == ";" and depth <= 0:
            return j
    return None


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
    403 naming what is refused, 400 with the parser's message."""
    ops = operations(update)
    if any(o.form not in ("INSERT DATA", "") for o in ops):
        raise ProtocolError(403, refusal(o.form for o in ops))
    if _CALLS_OUT.search(masked(update, same_length=True)):
        raise ProtocolError(403, refusal(["LOAD or SERVICE"]))
    scratch = ox.Store()
    try:
        scratch.update(update, base_iri=base)
    except SyntaxError as exc:
        raise ProtocolError(400, str(exc)) from None
    if any(o.form != "INSERT DATA" or o.data is None for o in ops):  # the parser should have said
        raise ProtocolError(403, refusal(o.form for o in ops))
    if next(iter(scratch.quads_for_pattern(None, None, None, ox.DefaultGraph())), None) is not None:
        raise ProtocolError(
            403, "INSERT DATA into the default graph is refused: each record is a named graph. Put the triples in "
            "GRAPH <urn:wb:record:ID> { ... }; the import adds the record's metadata and provenance."
        )
    graphs = sorted((g for g in scratch.named_graphs() if isinstance(g, ox.NamedNode)), key=lambda g: g.value)
    own = [g for g in graphs if g.value.startswith("urn:wb:") and not g.value.startswith(RECORD_PREFIX)]
    if own:
        raise ProtocolError(
            403, f"INSERT DATA into {own[0]} is refused: Workbench writes its own graphs (metadata, entities, users, "
            "audit...) itself, from imports and commands. Put the triples in a record's graph, "
            "GRAPH <urn:wb:record:ID> { ... }, and the import adds the metadata. " + INSTEAD
        )
    quads = _as_trig(update, ops, base)
    _same(scratch, quads)
    return Inserted(quads, graphs)


def _as_trig(update: str, ops: list[Operation], base: str) -> list[ox.Quad]:
    """The quads of INSERT DATA operations, parsed from their own text as TriG: the prologue
    lines, then the GRAPH blocks (without the optional dots between them, which TriG lacks)."""
    text = masked(update, same_length=True)
    parts = [f"BASE <{base}>\n"]
    for op in ops:
        assert op.data is not None
        start, end = op.data
        inside = list(update[start:end])
        depth = 0
        last = ""
        for j in range(start, end):
            c = text[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif c == "." and depth == 0 and last == "}":
                inside[j - start] = " "
            if not c.isspace():
                last = c
        parts.append(op.prologue + "\n" + "".join(inside) + "\n")
    try:
        return list(ox.parse("".join(parts).encode("utf-8"), ox.RdfFormat.TRIG))
    except (SyntaxError, ValueError) as exc:
        raise ProtocolError(400, f"the update's data cannot be read as TriG: {exc}") from None


def _same(scratch: ox.Store, quads: list[ox.Quad]) -> None:
    """The TriG reading must hold what pyoxigraph's own reading of the update holds (both seen
    through a store, which spells literals one way; blank nodes are counted, not compared)."""
    again = ox.Store()
    again.extend(quads)

    def plain(store: ox.Store) -> set[ox.Quad]:
        return {q for q in store if not _blank(q)}

    if len(again) != len(scratch) or plain(again) != plain(scratch):
        raise ProtocolError(400, "this update's data could not be read faithfully; send its triples in one "
                                 "INSERT DATA { GRAPH <...> { ... } } without blank node labels shared between "
                                 "operations, or import them as a TriG file")


def _blank(q: ox.Quad) -> bool:
    return isinstance(q.subject, ox.BlankNode) or isinstance(q.object, ox.BlankNode)


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
    now = wb.now()
    source = f"sparql-update:{now}-{uuid.uuid4().hex[:8]}"
    existing = [g for g in inserted.graphs if wb.store.has_graph(g)]
    seen = wb.seen_by(user.name).store if existing else wb.store
    for graph in existing:
        # A graph the user may not see is as taken to them as one they see with other triples.
        if seen is not wb.store and not seen.has_graph(graph):
            raise Conflict(f"graph {graph} is already recorded with other triples; records are never rewritten: "
                           "import the new triples as a new record that supersedes it")
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
