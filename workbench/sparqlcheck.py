"""What SPARQL from outside Workbench may be, checked before any SPARQL parser sees it.

A query that a person, a program or a client sends (``Workbench.sparql``: the CLI's ``workbench
sparql``, the Python API and the server's ``/sparql``) must

- be at most :data:`MAX_CHARS` characters long;
- nest brackets (``(``, ``{``, ``[``, ``<<``) at most :data:`MAX_DEPTH` deep, and chain at most
  :data:`MAX_CHAIN` operators and group keywords on one path (``1+1+...``, ``a || b || ...``,
  ``<p>/<p>/...``, ``{} UNION {} ...``, OPTIONAL, MINUS, FILTER, BIND... one after the other),
  because pyoxigraph's parser and optimizer recurse without a depth guard and a few thousand
  levels overflow an 8 MiB stack, killing the process (see
  docs/decisions/20261201-sparql-checked-by-parsing.md for the measurements);
- never use SERVICE, however spelled: Workbench never sends a request on a client's behalf,
  and a remote answer would bypass what the reader may see (invariant 11).

The text is read by :func:`scan`, a lexer that follows *every* way pyoxigraph might read it:
SPARQL is lexically ambiguous in one place, ``<`` (an IRI's start, or "less than" after an
operand inside an expression), so where both are possible both readings are followed, and the
limits hold for the worst of them. Strings, IRIs, comments and escapes are read exactly as
pyoxigraph reads them (a comment ends at CR or LF; ``\\u`` escapes are not expanded outside
strings and IRIs), and a text with ``\\u`` escapes is also read once more with them expanded,
as engines that expand them first (Jena) read it. The SERVICE keyword can only stand where a
group graph pattern takes its elements, so a query is refused when any reading has the word
``service`` (any case, even glued to a number or ``true``) there. Nothing is unescaped, guessed
from a masked copy, or left to a second parser.

>>> check_query("SELECT * WHERE { ?s <urn:ex:service> 'SERVICE <http://elsewhere/> {}' }")
>>> check_query("SELECT * WHERE { BIND(1 AS ?a) .SERVICE <http://elsewhere/> { ?s ?p ?o } }")
Traceback (most recent call last):
...
workbench.errors.Invalid: SERVICE is refused: Workbench never sends a query to another service ...
>>> query_form("PREFIX ex: <http://ex/#> # a comment\\n select * { ?s ?p ?o }")
'SELECT'
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import pyoxigraph as ox

from workbench import sparqlbounded
from workbench.errors import Invalid, ParseError, Unsupported
from workbench.formats import sparql_formats
from workbench.store.base import Graphs, Store

T = TypeVar("T")

MAX_CHARS = 1_000_000  #: the longest query, in characters (the server's default --max-body, in bytes)
MAX_DEPTH = 128  #: the deepest nesting of ( { [ <<
MAX_CHAIN = 500  #: the most operators and group keywords chained along one nesting path
MAX_READINGS = 16  #: the most readings of one text followed at once
STACK_BYTES = 256 * 1024 * 1024  #: the stack of the threads that evaluate queries (virtual: only touched pages cost)

UPDATE_FORMS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH"})
QUERY_FORMS = frozenset({"SELECT", "ASK", "CONSTRUCT", "DESCRIBE"})

# ---------------------------------------------------------------------- SPARQL's tokens

# Each as pyoxigraph reads it, or wider (never narrower: a wider IRI or string only adds a reading).
_IRI_CH = r'[^<>"{}|^`\\\x00-\x20]'
IRI = rf"<{_IRI_CH}*(?:(?:\\u[0-9A-Fa-f]{{4}}|\\U[0-9A-Fa-f]{{8}}){_IRI_CH}*)*>"
STRING_LONG = r"'''(?:(?:'|'')?(?:[^'\\]|\\.))*'''" + r'|"""(?:(?:"|"")?(?:[^"\\]|\\.))*"""'
STRING_SHORT = r"'[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*'" + r'|"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"'
COMMENT = r"\#[^\r\n]*"  # pyoxigraph ends a comment at CR too (rdflib does not)
WS = r"[ \t\r\n]+"
_NAME = r"[\w\u00B7\u0300-\u036F\u203F\u2040]"
_PLX = r"(?:%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%])"
VAR = rf"[?$]{_NAME}+"
# A prefixed name; its local part never starts with '-' or '.' (so `ex:-1` is `ex:` minus 1).
_NAME_MID = r"[\w.\-\u00B7\u0300-\u036F\u203F\u2040]"
PNAME = rf"(?:[^\W\d_]{_NAME_MID}*)?:(?:(?:[\w:]|{_PLX})(?:{_NAME_MID}|:|{_PLX})*)?"
BNODE = rf"_:{_NAME_MID}*"
NUMBER = r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
LANGTAG = r"@[A-Za-z]+(?:-[A-Za-z0-9]+)*"

_KEYWORDS = "OPTIONAL|MINUS|UNION|FILTER|BIND|VALUES|GRAPH|SERVICE|EXISTS|SELECT|LATERAL"
_OPERAND = rf"{VAR}|{BNODE}|{PNAME}|{NUMBER}|{LANGTAG}"
_QUIET = rf"{WS}|{COMMENT}"
# Runs of tokens that change nothing the scan follows, read in one regex step. Outside an
# expression an IRI and the separators are quiet too; inside one, '<' may be an operator.
_SHORT = rf"(?!''')(?!\"\"\")(?:{STRING_SHORT})"  # a short string, not the start of a long one
_RUN_GROUP = re.compile(rf"(?:{_QUIET}|{_OPERAND}|{IRI}|{_SHORT}|[.,;*+?\-]|\^\^)+")
_RUN_EXPR = re.compile(rf"(?:{_QUIET}|{_OPERAND}|{_SHORT})+")
_ONLY_QUIET = re.compile(rf"(?:{_QUIET})*\Z")
_ONLY_VARIABLES = re.compile(rf"(?:{_QUIET}|{VAR})*\Z")  # what may stand between VALUES and its block
# A list's next items (`, <a>, "b", 3`): after a comma an IRI is an IRI, and the chain starts over.
_RUN_LIST = re.compile(rf"(?:(?:{_QUIET})*[,;](?:{_QUIET})*(?:{IRI}|{_OPERAND}|{_SHORT}))+")
_TOKEN = re.compile(
    rf"(?P<quiet>{_QUIET})|(?P<operand>{_OPERAND})|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<esc>\\.)"
    r"|(?P<lt><<|<=|<)|(?P<gt>>>|>=|>)|(?P<op>\|\||&&|!=|\^\^|[|&!=+\-*/^?~])"
    r"|(?P<open>[({\[])|(?P<close>[)}\]])|(?P<sep>[,;])|(?P<quote>['\"])|(?P<other>.)",
    re.DOTALL,
)
_IRI = re.compile(IRI)
_STRINGS = [re.compile(STRING_LONG), re.compile(STRING_SHORT)]
# Keywords that add one element to a chain (the group's left-deep join, a UNION...), and SERVICE.
_CHAINED = re.compile(_KEYWORDS, re.IGNORECASE)
_PAIRS = {")": "(rt", "}": "{v", "]": "["}
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


@dataclass
class _Reading:
    """One way of reading the text, up to ``pos``: the open brackets, innermost last (``(``,
    ``{``, ``[``, ``<`` for ``<<``; ``t`` for a triple term's ``<<(``, ``v`` for a VALUES block
    and ``r`` for a row in it, which hold no expressions) and, per nesting level (the top level
    first), how many chained elements it holds so far."""

    pos: int
    opens: str = ""
    counts: list[int] = field(default_factory=lambda: [0])
    operand: bool = False  # the last token ends an operand (so a '<' after it may be "less than")
    values: int = 0  # 1 after the keyword VALUES, 2 in its variables' brackets: its { is a data block

    def copy(self, pos: int) -> _Reading:
        return _Reading(pos, self.opens, list(self.counts), self.operand, self.values)

    @property
    def key(self) -> tuple[int, str, int]:
        return self.pos, self.opens, self.values


@dataclass
class Shape:
    """What :func:`scan` found: the deepest nesting, the longest chain, whether SERVICE may occur."""

    depth: int = 0
    chain: int = 0
    service: bool = False
    steps: int = 0


def _too(what: str) -> Invalid:
    return Invalid(f"{what}: the SPARQL engine would run out of stack (pyoxigraph's parser has no depth guard); "
                   "split the query or write it flatter (VALUES and IN lists of any length are fine)")


def scan(text: str) -> Shape:
    """The nesting, chains and possible SERVICE of ``text`` over every reading pyoxigraph might
    make of it. Raises Invalid at the first limit passed (so it stops early on a hostile text).

    >>> scan("ASK { FILTER(1 + 2 < 3 || ?x) }")
    Shape(depth=2, chain=5, service=False, steps=...)
    """
    shape = Shape()
    budget = 8 * len(text) + 1000
    readings = [_Reading(0)]
    while readings:
        readings.sort(key=lambda r: r.pos)
        current = readings.pop(0)
        ahead = readings[0].pos if readings else len(text) + 1
        for found in _advance(text, current, ahead, shape, budget):
            twin = next((r for r in readings if r.key == found.key), None)
            if twin is None:
                readings.append(found)
            else:  # the same place in the same brackets: one reading, the worst of both
                twin.counts = [max(a, b) for a, b in zip(twin.counts, found.counts, strict=True)]
                twin.operand = twin.operand or found.operand
        if len(readings) > MAX_READINGS:
            raise Invalid(f"the query can be read in more than {MAX_READINGS} ways at once (its '<' and quotes); "
                          "too ambiguous to check, so it is refused")
    return shape


def _advance(text: str, r: _Reading, ahead: int, shape: Shape, budget: int) -> list[_Reading]:
    """Read on from ``r.pos`` until the reading reaches ``ahead`` (where another one waits),
    forks, or ends; the readings it has become (none when it ends or cannot go on)."""
    end, start = len(text), r.pos
    while r.pos < end:
        if r.pos >= ahead and r.pos > start:
            return [r]
        shape.steps += 1
        if shape.steps > budget:
            raise Invalid("the query is too complex to check in proportion to its length, so it is refused")
        top = r.opens[-1:] or " "
        expr = top == "("
        run = (_RUN_EXPR if expr else _RUN_GROUP).match(text, r.pos)
        if run is not None and run.end() > r.pos:  # variables, names, literals, white space...
            if expr and not _ONLY_QUIET.match(run.group()):
                r.operand = True
            if r.values and not _ONLY_VARIABLES.match(run.group()):
                r.values = 0
            r.pos = run.end()
            continue
        if expr and (items := _RUN_LIST.match(text, r.pos)) is not None:
            r.counts[-1], r.operand, r.pos = 0, True, items.end()
            continue
        m = _TOKEN.match(text, r.pos)
        assert m is not None
        kind, token = m.lastgroup, m.group()
        r.pos = m.end()
        if kind == "quiet":
            continue
        values, r.values = r.values, 0
        if kind == "operand":
            r.operand, r.values = True, values if token[0] in "?$" else 0
        elif kind == "word":
            _word(token, top, r, shape)
            r.operand = True
            r.values = 1 if token.upper().endswith("VALUES") else 0
        elif kind == "open":
            if token == "{" and top in "{ <":
                _chain(r, shape)  # a group in a group: one more element of its join
            bracket = "v" if token == "{" and values == 1 else "r" if token == "(" and top == "v" else token
            _push(r, bracket, shape)
            r.values = 2 if token == "(" and values == 1 else 0
        elif kind == "close":
            if not r.opens or r.opens[-1] not in _PAIRS[token]:
                return []  # a bracket closed that is not open: pyoxigraph stops here
            _pop(r)
            r.operand = True
            r.values = 1 if values == 2 else 0
        elif kind == "sep":
            if expr:  # a new argument or list item starts a new chain
                r.counts[-1] = 0
            r.operand = False
        elif kind == "quote":
            return _strings(text, r, m.start())
        elif kind == "lt":
            return _angle(text, r, m.start(), expr, shape)
        elif kind == "gt":
            if token == ">>" and top == "<":
                _pop(r)
                r.operand = True
                continue
            if expr:
                _chain(r, shape)
            r.operand = False
        elif kind == "op":
            if token != "^^" and (expr or token in ("/", "|", "^", "!")):
                _chain(r, shape)
            r.operand = token in ("?", "*", "+")  # a path's modifier may end an operand: '<' may compare after it
        # "esc" and "other": one more character of a name, or a syntax error pyoxigraph stops at
    return []


def _angle(text: str, r: _Reading, at: int, expr: bool, shape: Shape) -> list[_Reading]:
    """The readings after a '<': a triple term's ``<<``, an IRI, and, in an expression after an
    operand, "less than" (``?o<<urn:x>`` is "?o less than <urn:x>"); each that can be."""
    out = []
    if text.startswith("<<", at):
        term = r.copy(at + 2)
        _push(term, "<", shape)
        if text.startswith("(", at + 2):  # a triple term, <<( s p o )>>: terms, no expression
            term.pos += 1
            _push(term, "t", shape)
        out.append(term)
    iri = _IRI.match(text, at)
    if iri is not None:
        out.append(r.copy(iri.end()))
        out[-1].operand = True
    if expr and (r.operand or not out):  # "less than" (or a syntax error pyoxigraph stops at)
        _chain(r, shape)
        r.pos, r.operand = at + (2 if text.startswith("<=", at) else 1), False
        out.append(r)
    elif not out:  # not an IRI where only one can stand: pyoxigraph stops here
        r.pos = at + 1
        out.append(r)
    return out


def _strings(text: str, r: _Reading, start: int) -> list[_Reading]:
    """The readings after a quote: a long string, or a short one (``''`` then ``'`` is also
    possible at three quotes), each as far as it goes; none if no string can start here."""
    out = []
    for pattern in _STRINGS:
        s = pattern.match(text, start)
        if s is not None:
            f = r.copy(s.end())
            f.operand = True
            out.append(f)
    return out


def _word(token: str, top: str, r: _Reading, shape: Shape) -> None:
    """A bare word. pyoxigraph needs no space between keywords (``NOTEXISTS``,
    ``SERVICESILENT``) nor after ``true`` or a number (``1SERVICE``), and a bare word in valid
    SPARQL is only ever keywords, so every keyword inside one counts: in chains, and SERVICE
    where a group's elements stand is refused."""
    for k in _CHAINED.finditer(token):
        _chain(r, shape)
        if k.group().upper() == "SERVICE" and top == "{":
            shape.service = True


def _push(r: _Reading, bracket: str, shape: Shape) -> None:
    r.opens += bracket
    r.counts.append(0)
    r.operand = False
    shape.depth = max(shape.depth, len(r.opens))
    if len(r.opens) > MAX_DEPTH:
        raise _too(f"the query nests brackets more than {MAX_DEPTH} deep (the limit)")


def _pop(r: _Reading) -> None:
    r.opens = r.opens[:-1]
    r.counts.pop()


def _chain(r: _Reading, shape: Shape) -> None:
    r.counts[-1] += 1
    total = sum(r.counts)
    shape.chain = max(shape.chain, total)
    if total > MAX_CHAIN:
        raise _too(f"the query chains more than {MAX_CHAIN} operators and group keywords (OPTIONAL, MINUS, UNION, "
                   "FILTER, BIND, VALUES, GRAPH, groups...) on one path (the limit)")


def expand_escapes(text: str) -> str:
    """The text with ``\\uXXXX`` and ``\\UXXXXXXXX`` replaced, as the SPARQL spec says to do
    before parsing (pyoxigraph does not; Jena does). Invalid code points stay as written."""

    def one(m: re.Match[str]) -> str:
        code = int(m.group(1) or m.group(2), 16)
        return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else m.group()

    return _ESCAPE.sub(one, text)


def check_query(query: str) -> None:
    """Refuse a query Workbench must not run; return if it may run.

    Raises Invalid: longer than :data:`MAX_CHARS` (its ``status`` 413), nested or chained past
    :data:`MAX_DEPTH` / :data:`MAX_CHAIN`, or using SERVICE (400), each naming its limit.
    """
    if len(query) > MAX_CHARS:
        error = Invalid(f"the query is {len(query):,} characters long; the limit is {MAX_CHARS:,}")
        error.status = 413
        raise error
    if sparqlbounded.bounded(query) is not None:  # one triple pattern, no escapes: nothing the scan could find
        return
    readings = [query]
    if _ESCAPE.search(query):
        readings.append(expand_escapes(query))
    for text in readings:
        if scan(text).service:
            raise Invalid("SERVICE is refused: Workbench never sends a query to another service "
                          "(a remote answer would bypass what you may see)")


# ---------------------------------------------------------------------- the form of a query

_PROLOGUE = re.compile(rf"(?:{WS}|{COMMENT}|PREFIX(?:{WS})?{PNAME}(?:{WS})?{IRI}|BASE(?:{WS})?{IRI})*", re.IGNORECASE)
_FORM_WORD = re.compile(r"[A-Za-z]+")


def query_form(text: str) -> str | None:
    """The first keyword after the prologue, upper case (SELECT, ASK, CONSTRUCT, DESCRIBE, or
    an update's INSERT, DELETE...); None when the text does not start with a word there. It
    only picks an answer's format and a friendly refusal; the parser has the last word.

    >>> query_form("BASE <http://ex/> INSERT DATA { }")
    'INSERT'
    """
    word = _FORM_WORD.match(text, len(split_prologue(text)[0]))
    return word.group().upper() if word else None


def split_prologue(text: str) -> tuple[str, str]:
    """A query's prologue (PREFIX and BASE declarations, with the spaces and comments among
    them) and the rest, which can then stand as a subquery.

    >>> split_prologue("PREFIX wb: <urn:x#> # ours\\nSELECT ?a WHERE { ?a wb:p 1 }")
    ('PREFIX wb: <urn:x#> # ours\\n', 'SELECT ?a WHERE { ?a wb:p 1 }')
    """
    prologue = _PROLOGUE.match(text)
    end = prologue.end() if prologue else 0
    return text[:end], text[end:]


# ---------------------------------------------------------------------- a big stack to evaluate on

_local = threading.local()
_stack_lock = threading.Lock()


def big_stack_thread(target: Callable[[], object], *, name: str, daemon: bool = True) -> threading.Thread:
    """A started thread with a :data:`STACK_BYTES` stack, running ``target``: the SPARQL engine
    then has room far beyond what :func:`check_query` lets through."""

    def run() -> None:
        _local.big = True
        target()

    with _stack_lock:  # threading.stack_size is process-wide: set, start, put back
        before = threading.stack_size(STACK_BYTES)
        try:
            thread = threading.Thread(target=run, name=name, daemon=daemon)
            thread.start()
        finally:
            threading.stack_size(before)
    return thread


def on_big_stack(fn: Callable[[], T]) -> T:
    """``fn()`` on a thread with a big stack: this one if it has one, else a new one."""
    if getattr(_local, "big", False):
        return fn()
    return on_new_thread(fn)


def on_new_thread(fn: Callable[[], T]) -> T:
    """``fn()`` on a new thread with a big stack, waited for: its result, or its exception.
    Python's recursion limit then counts from zero (rdflib's parser needs every frame)."""
    outcome: list[tuple[bool, object]] = []

    def run() -> None:
        try:
            outcome.append((True, fn()))
        except BaseException as exc:  # handed back to the caller's thread
            outcome.append((False, exc))

    big_stack_thread(run, name="workbench-sparql").join()
    ok, value = outcome[0]
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]


class Evaluator(Protocol):
    """Runs a checked query on a store and serialises its answer (``Store.query_raw``'s terms)."""

    def __call__(
        self,
        store: Store,
        query: str,
        *,
        results: ox.QueryResultsFormat,
        graph: ox.RdfFormat,
        default_graph: Graphs = None,
        named_graphs: Graphs = None,
    ) -> bytes: ...


def evaluate(
    store: Store,
    query: str,
    *,
    results: ox.QueryResultsFormat,
    graph: ox.RdfFormat,
    default_graph: Sequence[ox.NamedNode] | None = None,
    named_graphs: Sequence[ox.NamedNode] | None = None,
) -> bytes:
    """The default :class:`Evaluator`: ``store.query_raw`` on a big stack."""
    return on_big_stack(lambda: store.query_raw(query, results=results, graph=graph, default_graph=default_graph,
                                                named_graphs=named_graphs))


def read_only(query: str) -> None:
    """Refuse an update (Unsupported) or a query :func:`check_query` refuses (Invalid)."""
    if query_form(query) in UPDATE_FORMS:  # friendlier than the parser's word
        raise Unsupported("SPARQL Update is not accepted here; change the store through imports and commands")
    check_query(query)


def parses(query: str) -> None:
    """Raise ParseError unless pyoxigraph reads ``query`` (read and planned on an empty store, not
    run), so that a malformed query is refused before anything is computed for it."""
    def read() -> None:
        try:
            ox.Store().query(query)
        except SyntaxError as exc:
            raise ParseError(f"SPARQL syntax error: {exc}") from exc

    on_big_stack(read)


def answer(store: Store, query: str, *, format: str = "json", default_graph: Sequence[str] | None = None,
           named_graphs: Sequence[str] | None = None, runner: Evaluator | None = None, checked: bool = False) -> bytes:
    """A read-only query's answer from ``store``, serialised as ``format`` (:mod:`workbench.formats`),
    after :func:`read_only` (unless the caller ``checked`` already); ``default_graph`` /
    ``named_graphs`` are graph IRIs, as the Protocol's ``default-graph-uri`` / ``named-graph-uri``;
    ``runner`` runs it (default :func:`evaluate`). See :meth:`Workbench.sparql`."""
    if not checked:
        read_only(query)
    results, graph = sparql_formats(format)

    def graph_iri(text: str) -> ox.NamedNode:
        try:
            return ox.NamedNode(text)
        except ValueError as exc:
            raise Invalid(f"{text!r} is not a graph IRI: {exc}") from exc

    return (runner or evaluate)(
        store, query, results=results, graph=graph,
        default_graph=None if default_graph is None else [graph_iri(g) for g in default_graph],
        named_graphs=None if named_graphs is None else [graph_iri(g) for g in named_graphs],
    )
