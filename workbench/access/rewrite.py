"""A restricted read rewritten for the engine, not run on a copy (issue 20, part 1, step 3).

:func:`restrict` takes a SPARQL query and a reader's name and groups, and returns the query the
engine should run on the whole store so that it sees only the graphs the reader may see:

- every ``GRAPH ?g { ... }`` is followed by the audience filter
  (:func:`workbench.access.audience.withheld`), in the same group, so the engine drops the
  solutions from graphs the reader may not see, a lookup per graph a solution binds; a
  ``GRAPH <iri>`` (or a prefixed name) gets the same filter about that graph;
- ``FROM`` and ``FROM NAMED`` keep the graphs the reader may see (:attr:`Rewritten.dataset`
  lists them for the caller to check, :meth:`Rewritten.query` names those it may see and the
  empty graph for the others);
- the filter's own variables carry a prefix the query does not use, so they never meet its own;
- in Workbench's own queries (never a tool's), a record's metadata read in the same group as the
  record itself takes no filter of its own (:func:`seen_with`).

The same reading (:func:`read`: each GRAPH group, the dataset, whether the default graph is
read) serves :func:`workbench.rules.conclusions.joined`, which writes reasoning's conclusions
into a query. It reads the text with one reading of SPARQL's tokens (the patterns of
:mod:`workbench.sparqlcheck`) and refuses, in plain words, what one reading cannot place
exactly: a ``<`` after an operand inside an expression that could also start an IRI
(``FILTER(?a<b:c>)``), triple terms (``<<``), a bare word that holds ``GRAPH`` or ``FROM`` glued
to another (pyoxigraph reads ``trueGRAPH`` as two words), and a dataset named by prefixed or
relative IRIs. The checks of :func:`workbench.sparqlcheck.check_query` (SERVICE, depth, length)
come first and still hold. Until the shared graphs hold nothing a reader may be denied
(docs/decisions/20261205-visibility-the-engine-enforces.md), the tests hold it against the
readers' views, which remain what readers read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from workbench.access.audience import withheld
from workbench.errors import Unsupported
from workbench.records import meta_graph
from workbench.sparqlcheck import BNODE, COMMENT, IRI, LANGTAG, NUMBER, PNAME, STRING_LONG, STRING_SHORT, VAR, WS
from workbench.store.dialect import not_engine_graph

NONE_GRAPH = "<urn:wb:graph:none>"  # a graph nothing is written to: a dataset's hidden member
_TOKEN = re.compile(
    rf"(?P<quiet>{WS}|{COMMENT})|(?P<string>{STRING_LONG}|{STRING_SHORT})|(?P<var>{VAR})|(?P<bnode>{BNODE})"
    rf"|(?P<pname>{PNAME})|(?P<number>{NUMBER})|(?P<lang>{LANGTAG})|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<triple><<|>>)|(?P<lt><=|<)|(?P<open>[({\[])|(?P<close>[)}\]])|(?P<other>\|\||&&|!=|>=|\^\^|.)",
    re.DOTALL,
)
_IRI = re.compile(IRI)
_GLUED = re.compile(r"graph|from", re.IGNORECASE)
_OPERANDS = frozenset({"string", "var", "bnode", "pname", "number", "lang", "iri", "word"})
_TERMS = frozenset({"string", "var", "bnode", "pname", "number", "iri"})  # what a triple pattern is made of
_MODIFIERS = frozenset({"SELECT", "BY", "HAVING", "LIMIT", "OFFSET"})
_FORMS = frozenset({"SELECT", "CONSTRUCT", "ASK", "DESCRIBE"})
_WHOSE = "SPARQL that Workbench rewrites (a named reader's on a server, or any with reasoning on)"


@dataclass(frozen=True)
class Rewritten:
    """The query to send, in pieces around the graphs its ``FROM`` / ``FROM NAMED`` name
    (``dataset``: IRIs, in order), each of which :meth:`query` names only if the reader may see it."""

    pieces: tuple[str, ...]
    dataset: tuple[str, ...] = ()
    # a triple pattern outside every GRAPH: it reads the default graph, which on some servers
    # (Virtuoso) is every graph, where the filter cannot follow it
    reads_default: bool = False

    def query(self, visible: Iterable[str] = ()) -> str:
        """The query, naming each dataset graph among ``visible`` and the empty graph for the others."""
        seen = set(visible)
        out = [self.pieces[0]]
        for graph, piece in zip(self.dataset, self.pieces[1:], strict=True):
            out += [f"<{graph}>" if graph in seen else NONE_GRAPH, piece]
        return "".join(out)


def _fresh(text: str) -> str:
    """A variable prefix the query does not use."""
    n = 0
    while f"_wb{n}" in text:
        n += 1
    return f"_wb{n}_"


@dataclass(frozen=True)
class GraphGroup:
    """A ``GRAPH term { ... }`` in a query: where its keyword starts, its graph term as written,
    where its braces open and end (``query[brace:end]`` is its group), whether it sits inside
    another such group (whose graph it then overrides), and the bracket it sits directly in."""

    start: int
    term: str
    brace: int
    end: int
    inner: bool
    parent: int = -1  # where the bracket it sits directly in opens (-1: none)


@dataclass(frozen=True)
class Reading:
    """What one reading of a query's tokens finds (:func:`read`)."""

    groups: tuple[GraphGroup, ...]  # in the order they close: inner groups first
    dataset: tuple[tuple[int, int, bool], ...]  # FROM / FROM NAMED IRIs: (start, end, named), <...> included
    reads_default: bool  # a triple pattern outside every GRAPH
    form: int  # where the query form (SELECT, CONSTRUCT, ASK, DESCRIBE) starts: the prologue ends there


def restrict(query: str, agents: Iterable[str] | None, *, own: bool = False,
             foreign: Sequence[str] = ()) -> Rewritten:
    """``query`` as a reader with ``agents`` (their name and groups; None: one who sees every
    source, see :func:`withheld`) may run it on the whole store. ``own``: the query is Workbench's
    own, never a tool's, so a record's metadata read beside the record (:func:`seen_with`) needs
    no filter of its own. ``foreign``: prefixes of graphs the engine keeps for itself, which a
    ``GRAPH ?g`` never binds. Raises Unsupported, in plain words, for what it cannot place exactly
    (see above)."""
    fresh = _fresh(query)
    names = None if agents is None else sorted(set(agents))
    found = read(query)
    skip = seen_with(found.groups) if own else frozenset()

    def kept(g: GraphGroup) -> str:
        return f" {withheld(g.term, names, fresh=fresh)} {not_engine_graph(g.term, foreign)}".rstrip()

    # One pass over the edits in order: a filter follows each GRAPH group, in the same group;
    # a dataset graph ends a piece.
    pieces, current, last = [], [], 0
    edits = sorted([(g.end, g.end, kept(g)) for g in found.groups
                    if g not in skip] + [(s, e, None) for s, e, _ in found.dataset], key=lambda x: x[0])
    for s, e, add in edits:
        current.append(query[last:s])
        if add is None:
            pieces.append("".join(current))
            current = []
        else:
            current.append(add)
        last = e
    current.append(query[last:])
    pieces.append("".join(current))
    return Rewritten(tuple(pieces), tuple(query[s + 1:e - 1] for s, e, _ in found.dataset), found.reads_default)


def seen_with(groups: Iterable[GraphGroup]) -> frozenset[GraphGroup]:
    """The groups that read a record's metadata beside the record itself: ``GRAPH ?_r_m { ... }``
    (:func:`workbench.records.meta_graph` of ``?r``) in the same group as ``GRAPH ?r { ... }``, so
    that every solution binds ``?r`` to a graph the reader may see. A record's metadata is in its
    source's graph, whose audience is the record's (docs/data-model.md), so those groups see
    nothing their record's filter did not already let through: their own filter, planned and run
    once per group, is a fifth of a reader's query time (issue 20). Only for Workbench's own
    queries, which write nothing else in such a group: a tool's could (``GRAPH ?_r_m { ?s ?p ?o }``)."""
    groups = list(groups)

    def metadata(records: Iterable[GraphGroup]) -> frozenset[GraphGroup]:
        beside = {(g.parent, meta_graph(g.term)) for g in records if g.term.startswith(("?", "$"))}
        return frozenset(g for g in groups if (g.parent, g.term) in beside and not g.inner)

    # the record's own group keeps its filter: a metadata group is never the record of another
    return metadata(g for g in groups if g not in metadata(groups))


def read(query: str) -> Reading:
    """One reading of ``query``'s tokens: its GRAPH groups, its dataset, whether it reads the
    default graph. Raises Unsupported for what one reading cannot place exactly (see above)."""
    groups: list[GraphGroup] = []
    dataset: list[tuple[int, int, bool]] = []  # spans of FROM / FROM NAMED IRIs
    # per open bracket: it, the graph term its group is of ("": none), where its GRAPH keyword is, where it opens
    opens: list[tuple[str, str, int, int]] = []
    expect: str | None = None  # after GRAPH: "term", then "brace"; after FROM: "iri"
    named = False  # after FROM NAMED
    values = False  # after VALUES, until its block of rows opens
    modifier = False  # after SELECT, BY, HAVING, LIMIT, OFFSET: terms that are no pattern, until a brace
    template = False  # after CONSTRUCT: its template's brace comes next
    default = False  # a term of a triple pattern outside every GRAPH
    form = -1
    term = ""
    keyword = 0
    operand = False
    pos = 0
    while pos < len(query):
        m = _TOKEN.match(query, pos)
        assert m is not None  # '.' matches any character
        kind, token, start = m.lastgroup, m.group(), m.start()
        pos = m.end()
        if kind == "quiet":
            continue
        if kind == "triple":
            raise Unsupported(f"triple terms (<< >>) are not available to {_WHOSE}")
        expr = bool(opens) and opens[-1][0] == "("
        if kind == "lt":
            iri = _IRI.match(query, start)
            if iri is not None:
                if expr and operand:
                    raise Unsupported(f"at character {start}: '<' could start an IRI or compare; write a space "
                                      f"after a '<' that compares ({_WHOSE} is read one way)")
                kind, token, pos = "iri", iri.group(), iri.end()
        if kind == "word" and _GLUED.search(token) and token.upper() not in ("GRAPH", "FROM"):
            raise Unsupported(f"at character {start}: {token!r} holds a keyword glued to another word; "
                              "separate them with a space")
        if expect == "iri":
            if kind == "word" and token.upper() == "NAMED":
                named = True
                continue
            if kind != "iri":
                raise Unsupported(f"FROM and FROM NAMED take a full IRI in angle brackets in {_WHOSE} "
                                  "(not a prefixed or relative name)")
            dataset.append((start, pos, named))
            expect, named = None, False
        elif expect == "term":
            if kind not in ("var", "iri", "pname"):
                expect = None  # not a graph pattern (pyoxigraph will say what it is)
            else:
                term, expect = token, "brace"
                continue
        elif expect == "brace":
            expect = None
            if token == "{":
                opens.append(("{", term, keyword, start))
                operand = False
                continue
        if (kind in _TERMS and not (modifier or values) and opens and opens[-1][0] == "{"
                and not any(o[1] for o in opens)):
            default = True
        template = template and token == "{"
        if kind == "word" and form < 0 and token.upper() in _FORMS:
            form = start
        if kind == "word" and token.upper() == "GRAPH" and not expr:
            expect, keyword = "term", start
        elif kind == "word" and token.upper() == "FROM":
            expect = "iri"
        elif kind == "word" and token.upper() == "VALUES":
            values = True
        elif kind == "word" and token.upper() in _MODIFIERS:
            modifier = True
        elif kind == "word" and token.upper() == "CONSTRUCT":
            template = True
        elif kind == "open":
            # VALUES' variables and rows are terms, not expressions, and a CONSTRUCT template's
            # triples no pattern: their brackets are marked so
            data = values or (bool(opens) and opens[-1][0] in ("(v", "{v"))
            opens.append((token + "v" if data and token in "({" else "{t" if template else token, "", 0, start))
            values = values and token == "("  # until the block of rows opens
            modifier = modifier and token == "("
            template = False
        elif kind == "close" and opens:
            modifier = modifier and token == ")"
            _, graph, at, brace = opens.pop()
            if graph:  # the end of GRAPH term { ... }
                groups.append(GraphGroup(at, graph, brace, pos, any(o[1] for o in opens),
                                         opens[-1][3] if opens else -1))
        operand = kind in _OPERANDS or kind == "close"
    return Reading(tuple(groups), tuple(dataset), default, max(form, 0))
