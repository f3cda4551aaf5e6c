"""One question's reads of recorded facts, for :mod:`workbench.rules.engine`: premises looked up
over the facts the read sees (content of active records, or of records effective on the as-of
date), each lone lookup remembered by its shape, closures' edges walked and remembered, several
lookups batched into one query, and a caller's own patterns sent along with them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import pyoxigraph as ox

from workbench import records
from workbench.errors import StoreUnavailable
from workbench.records import effective, meta
from workbench.rules.bindings import dedupe, ground, match, reach, shape, value, values_block
from workbench.rules.proof import Fact, Match, Row, Triple
from workbench.rules.walked import About, Looked, Reached, Walked, by_predicate
from workbench.store import Store
from workbench.store.base import Row as StoreRow
from workbench.values.rules import Closure, Filter, Node, NotExists, Premise, Var
from workbench.vocab import PREFIXES

MAX_CLOSURE = 64
PATTERN_KEYS = 8  # a lone lookup's keys read by quad patterns at most (a query costs 8-15 patterns' time)
CLOSURE_LEVELS = 4  # levels of a closure walked in one query over a network (a chain of joins per level)
Lookup = tuple[Premise, list[str], list[tuple[Node, ...]]]  # a lone premise, its bound columns, their values


class Reads:
    """What one question reads (see the module's note). ``queries`` counts the store calls;
    ``incomplete`` says a closure's walk was cut."""

    def __init__(self, store: Store, *, as_of: str | None, deadline: float | None = None) -> None:
        self.store = store
        self.as_of = as_of
        self.deadline = deadline  # time.monotonic() past which no query is sent
        self.closure_levels = CLOSURE_LEVELS if store.capabilities.round_trips else 1
        self.queries = 0
        self.incomplete = False
        self.edges: dict[tuple[str, bool], dict[Node, list[tuple[Node, ox.NamedNode]]]] = {}
        # What a forward walk fetched about each node it expanded beside its edges: the
        # predicates asked for, and the node's facts with them (see :meth:`expand`).
        self.about: dict[Node, About] = {}
        self.seen: dict[tuple[str, tuple[Node, ...]], list[tuple[tuple[Node, ...], Fact]]] = {}
        # a lone lookup read by quad patterns, not a query (see :meth:`by_patterns`)
        self.patterns = store.cheap_patterns and as_of is None
        # ... and its matches kept for the store's version (:class:`Looked`): recorded facts only
        self.version = (store.known_version() or "") if self.patterns else ""
        self.looked = Looked.of(store) if self.version else None
        self.rides: dict[int, str] = {}  # group patterns to send with the next batched lookups
        self.ridden: dict[int, list[StoreRow]] = {}

    def select(self, query: str) -> list[StoreRow]:
        """The one door to the store: counted, and refused past the deadline (work a request no
        longer waits for stops at its next query)."""
        self.check_deadline()
        self.queries += 1
        return self.store.select(PREFIXES + query)

    def check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise StoreUnavailable("the rules' conclusions were not done within the deadline; name the subject "
                                   "or the relation in the query to reason over less")

    def ride(self, pattern: str) -> Callable[[], list[StoreRow]]:
        """A query of the caller's (a group pattern) sent with the engine's next batched lookups,
        a round trip fewer; the function returned gives its solutions, asking on its own if no
        lookup carried it. For what a question needs beside the goal (its negative facts)."""
        key = len(self.rides) + len(self.ridden)
        self.rides[key] = pattern

        def solutions() -> list[StoreRow]:
            if key in self.rides:
                self.ridden[key] = self.select(f"SELECT * WHERE {{ {self.rides.pop(key)} }}")
            return self.ridden[key]
        return solutions

    def recorded(
        self, premises: Sequence[Premise], rows: list[Row], filters: Sequence[Filter | NotExists]
    ) -> list[Row]:
        """Join ``rows`` with premises over the recorded facts, in one SELECT. A lone premise
        without filters is looked up through the question's cache (rules often share one)."""
        if not rows:
            return []
        used = premises[0].vars() if len(premises) == 1 and not filters else set().union(
            *(p.vars() for p in premises), *(f.vars for f in filters))
        cols = sorted(v for v in rows[0].vals if v in used)
        keys: dict[tuple[Node, ...], list[Row]] = {}
        for row in rows:
            vals = row.vals
            keys.setdefault(tuple([vals[c] for c in cols]), []).append(row)
        if len(premises) == 1 and not filters:
            matches = self.lookup(premises[0], cols, list(keys))
        else:
            matches = self.query(premises, cols, list(keys), filters)
        out = []
        for key, hits in matches.items():
            for new, facts in hits:
                for row in keys[key]:
                    out.append(Row({**row.vals, **new}, row.sup + facts, row.tag))
        return out

    def lookup(self, p: Premise, cols: list[str], keys: list[tuple[Node, ...]]) -> dict[tuple[Node, ...], list[Match]]:
        """A lone premise's matches, remembered by the premise's shape (variables by position),
        so rules that share a premise under other variable names share the lookup."""
        form, free = shape(p, cols)
        seen = self.seen
        missing = [k for k in keys if (form, k) not in seen and not self.known(p, cols, k)]
        if missing:
            if self.natively(p, len(missing)):
                self.by_patterns(p, cols, missing)
            else:
                self.remember(p, cols, missing, self.query([p], cols, missing, []))
        return {
            k: [(dict(zip(free, values, strict=True)), ((p.index, fact),)) for values, fact in seen[(form, k)]]
            for k in keys
        }

    def natively(self, p: Premise, keys: int) -> bool:
        """Whether a lone lookup of ``p`` under ``keys`` keys is read by quad patterns: on a store
        where they are cheap, for a normal read (an as-of read's records need dates compared), of
        a premise about content (not a record's metadata, not a closure), a few keys at most."""
        return self.patterns and keys <= PATTERN_KEYS and not p.metadata and not isinstance(p.p, Closure)

    def by_patterns(self, p: Premise, cols: list[str], keys: list[tuple[Node, ...]]) -> None:
        """:meth:`lookup`'s matches of one premise under ``keys``, read by quad patterns in the
        records a normal read sees (:func:`records.seen`), into the lookup cache."""
        self.check_deadline()
        form, free = shape(p, cols)
        ps, pp, po = p.s, p.p, p.o
        for key in keys:
            hits: list[tuple[tuple[Node, ...], Fact]] = []
            self.seen[(form, key)] = hits
            if any(isinstance(t, ox.BlankNode) for t in key):
                continue  # as a query's VALUES leaves it out (values_block)
            vals = dict(zip(cols, key, strict=True))
            s = vals.get(ps.name) if isinstance(ps, Var) else ps
            pred = vals.get(pp.name) if isinstance(pp, Var) else pp
            o = vals.get(po.name) if isinstance(po, Var) else po
            if pred is not None and not isinstance(pred, ox.NamedNode):
                continue
            for q in records.seen(self.store, s, pred, o):
                triple = (q.subject, q.predicate, q.object)
                found = match(p, triple, vals)  # type: ignore[arg-type]
                if found is not None:
                    hits.append((tuple(found[v] for v in free), Fact(triple, q.graph_name)))  # type: ignore[arg-type]
            self.keep(form, key, hits)

    def known(self, p: Premise, cols: list[str], key: tuple[Node, ...]) -> bool:
        """Whether a lone lookup's matches under ``key`` are in the cache: looked up before, or
        answered now from what a walk fetched about the subject (its facts with the predicate)."""
        form, free = shape(p, cols)
        if (form, key) in self.seen:
            return True
        if self.looked is not None:
            kept = self.looked.peek(self.version, (form, key))
            if kept is not None:
                self.seen[(form, key)] = kept
                return True
        if not self.about or p.metadata or isinstance(p.p, Closure):
            return False
        vals = dict(zip(cols, key, strict=True))
        subject = value(p.s, vals) if not isinstance(p.s, Var) or p.s.name in vals else None
        pred = value(p.p, vals) if not isinstance(p.p, Var) or p.p.name in vals else None
        about = self.about.get(subject) if subject is not None else None
        if about is None or not isinstance(pred, ox.NamedNode) or pred.value not in about[0]:
            return False
        hits = []
        for triple, g in about[1].get(pred, ()):
            if (found := match(p, triple, vals)) is not None:
                hits.append((tuple(found[v] for v in free), Fact(triple, g)))  # the premise grounded
        self.seen[(form, key)] = hits
        self.keep(form, key, hits)
        return True

    def keep(self, form: str, key: tuple[Node, ...], hits: list[tuple[tuple[Node, ...], Fact]]) -> None:
        """A lone lookup's matches read by quad patterns (or fetched ahead by a walk, the same
        patterns), kept for the store's version when they are few (:data:`records.SEEN_KEPT`):
        the next question with this lookup reads nothing and matches nothing again."""
        if self.looked is not None and len(hits) <= records.SEEN_KEPT:
            self.looked.put(self.version, (form, key), tuple(hits))

    def remember(self, p: Premise, cols: list[str], keys: list[tuple[Node, ...]],
                  found: dict[tuple[Node, ...], list[Match]]) -> None:
        form, free = shape(p, cols)
        for k in keys:
            self.seen[(form, k)] = [
                (tuple(new[v] for v in free), fact)  # type: ignore[misc]
                for new, ((_, fact),) in found.get(k, [])
            ]

    def fetch(self, wanted: list[Lookup]) -> None:
        """Several lone lookups in one query (a union, a branch each), into the lookup cache,
        with the callers' rides (:meth:`ride`)."""
        branches = self.branches(wanted)
        rides, self.rides = self.rides, {}
        branches += [f"{{ {pattern} BIND({-1 - k} AS ?lookup) }}" for k, pattern in rides.items()]
        if not branches:
            return
        for k in rides:
            self.ridden[k] = []
        sols = self.select(f"SELECT * WHERE {{ {' UNION '.join(branches)} }}")
        for sol in sols:
            i = int(sol["lookup"].value)  # type: ignore[union-attr]
            if i < 0:
                self.ridden[-1 - i].append(sol)
        self.take(wanted, sols)

    def branches(self, wanted: list[Lookup]) -> list[str]:
        """:meth:`fetch`'s union branches for ``wanted``, the i-th bound to ``?lookup`` i (a
        lookup with no keys has none)."""
        out = []
        for i, (p, cols, keys) in enumerate(wanted):
            values = values_block(cols, keys)
            if values is not None:
                out.append(f"{{ {values} {self.pattern(p, 'g0')} BIND({i} AS ?lookup) }}")
        return out

    def take(self, wanted: list[Lookup], sols: Sequence[StoreRow]) -> None:
        """Into the lookup cache: what :meth:`branches` of ``wanted`` found (``sols``; rows
        with another ``?lookup`` are not theirs)."""
        found: dict[int, dict[tuple[Node, ...], list[Match]]] = {i: {} for i in range(len(wanted))}
        outs_of = {i: sorted(p.vars() - set(cols)) for i, (p, cols, _) in enumerate(wanted)}
        for sol in sols:
            i = int(sol["lookup"].value)  # type: ignore[union-attr]
            if not 0 <= i < len(wanted):
                continue
            p, cols, _ = wanted[i]
            key = tuple(sol[f"v_{c}"] for c in cols)
            new = {v: sol[f"v_{v}"] for v in outs_of[i]}
            fact = Fact(ground(p, {**dict(zip(cols, key, strict=True)), **new}), sol["g0"])  # type: ignore[arg-type, dict-item]
            found[i].setdefault(key, []).append((new, ((p.index, fact),)))  # type: ignore[arg-type]
        for i, (p, cols, keys) in enumerate(wanted):
            if values_block(cols, keys) is not None:
                self.remember(p, cols, keys, found[i])

    def query(
        self,
        premises: Sequence[Premise],
        cols: list[str],
        keys: list[tuple[Node, ...]],
        filters: Sequence[Filter | NotExists],
    ) -> dict[tuple[Node, ...], list[Match]]:
        """For each key (values of ``cols``), the new bindings and recorded facts of each match."""
        values = values_block(cols, keys)
        if values is None:
            return {}
        patterns = " ".join(self.pattern(p, f"g{i}") for i, p in enumerate(premises))
        conditions = " ".join(self.condition(f, len(premises) + i) for i, f in enumerate(filters))
        outs = sorted(set().union(*(p.vars() for p in premises)) - set(cols))
        select = " ".join([*(f"?v_{v}" for v in cols + outs), *(f"?g{i}" for i in range(len(premises)))])
        out: dict[tuple[Node, ...], list[Match]] = {}
        for sol in self.select(f"SELECT {select} WHERE {{ {values} {patterns} {conditions} }}"):
            key = tuple(sol[f"v_{c}"] for c in cols)
            new = {v: sol[f"v_{v}"] for v in outs}
            both = {**dict(zip(cols, key, strict=True)), **new}
            facts = tuple(
                (p.index, Fact(ground(p, both), sol[f"g{i}"]))  # type: ignore[arg-type]
                for i, p in enumerate(premises)
            )
            out.setdefault(key, []).append((new, facts))  # type: ignore[arg-type]
        return out

    def pattern(self, p: Premise, g: str) -> str:
        """SPARQL for one premise over the facts this read sees, its record bound to ?g."""
        if p.metadata:  # a fact about a record: the record is its own source
            if isinstance(p.s, Var):
                subject, pre, post = str(p.s), "", f"BIND({p.s} AS ?{g})"
            else:
                subject, pre, post = f"?{g}", f"BIND({p.s} AS ?{g})", ""
            view = effective(subject, as_of=self.as_of)
            return f"{pre} {meta(subject, f'{subject} {p.p} {p.o} .')} {view} {post}"
        return f"GRAPH ?{g} {{ {p.s} {p.p} {p.o} }} {effective('?' + g, as_of=self.as_of)}"

    def condition(self, f: Filter | NotExists, n: int) -> str:
        if isinstance(f, Filter):
            return f"FILTER{f.sparql}" if f.sparql.startswith("(") else f"FILTER({f.sparql})"
        inner = " ".join(self.pattern(p, f"x{n}_{i}") for i, p in enumerate(f.premises))
        checks = " ".join(f"FILTER{c}" for c in f.filters)
        return f"FILTER NOT EXISTS {{ {inner} {checks} }}"

    def filter(self, rows: list[Row], filters: Sequence[Filter | NotExists]) -> list[Row]:
        used = sorted(set().union(*(f.vars for f in filters)))
        keys = {tuple(r.vals[c] for c in used) for r in rows}
        values = values_block(used, sorted(keys, key=str))
        if values is None:
            return []
        conditions = " ".join(self.condition(f, i) for i, f in enumerate(filters))
        selected = " ".join(f"?v_{c}" for c in used)
        rows_ok = {tuple(sol[f"v_{c}"] for c in used)
                   for sol in self.select(f"SELECT {selected} WHERE {{ {values} {conditions} }}")}
        return [r for r in rows if tuple(r.vals[c] for c in used) in rows_ok]

    # ------------------------------------------------------------------ closures

    def closure(self, p: Premise, rows: list[Row], ahead: frozenset[str] = frozenset()) -> list[Row]:
        """``p``'s closure from each row's known end; ``ahead``: predicates whose facts about each
        node reached the body looks up next (fetched with the edges, see :meth:`expand`)."""
        assert isinstance(p.p, Closure)
        forward = not isinstance(p.s, Var) or p.s.name in rows[0].vals
        if not forward and isinstance(p.o, Var) and p.o.name not in rows[0].vals:
            self.incomplete = True  # neither end known: walking every chain is not goal-directed
            return []
        start_slot, end_slot = (p.s, p.o) if forward else (p.o, p.s)
        paths = self.walk(p.p.predicate, {value(start_slot, r.vals) for r in rows}, forward=forward,
                          min_len=p.p.min_len, ahead=ahead)
        out = []
        for row in rows:
            for end, chain in paths[value(start_slot, row.vals)].items():
                if isinstance(end_slot, Var) and end_slot.name not in row.vals:
                    vals = {**row.vals, end_slot.name: end}
                elif value(end_slot, row.vals) == end:
                    vals = row.vals
                else:
                    continue
                out.append(Row(vals, row.sup + tuple((p.index, f) for f in chain), row.tag))
        return dedupe(out)

    def walk(
        self, predicate: ox.NamedNode, starts: set[Node], *, forward: bool = True, min_len: int = 0,
        ahead: frozenset[str] = frozenset(),
    ) -> dict[Node, dict[Node, Sequence[Fact]]]:
        """For each start, every node it reaches along ``predicate`` edges the read sees
        (backwards with ``forward=False``), with the shortest chain of recorded edges that gets
        there (never changed: the caller only reads it). One query per ``closure_levels``
        levels of the walk (a property path would lose the edges' records, and pyoxigraph walks
        ``GRAPH ?g { p+ }`` over every graph); edges are remembered for the question. Where quad
        patterns are cheap, what a start reaches is kept for the store's version (:class:`Reached`:
        recorded edges only), so the next question walking from it walks nothing."""
        if self.looked is None:
            return self._walk(predicate, starts, forward=forward, min_len=min_len, ahead=ahead)
        reached = Reached.of(self.store)
        out: dict[Node, dict[Node, Sequence[Fact]]] = {}
        rest = set()
        for start in starts:
            found = reached.peek(self.version, (predicate, forward, min_len, start))
            if found is None:
                rest.add(start)
            else:
                out[start] = found
        if rest:
            walked = self._walk(predicate, rest, forward=forward, min_len=min_len, ahead=ahead)
            if not self.incomplete:
                for start, paths in walked.items():
                    if sum(map(len, paths.values())) <= records.SEEN_KEPT:
                        reached.put(self.version, (predicate, forward, min_len, start), paths)
            out.update(walked)
        return out

    def _walk(
        self, predicate: ox.NamedNode, starts: set[Node], *, forward: bool, min_len: int, ahead: frozenset[str],
    ) -> dict[Node, dict[Node, Sequence[Fact]]]:
        key = (predicate.value, forward)
        edges = self.edges.setdefault(key, {})
        # Edges read at this version by an earlier question are taken, not asked again.
        version = self.store.known_version() if self.as_of is None else None
        kept = Walked.of(self.store) if version is not None else None
        wide = frozenset({predicate.value, *ahead}) if forward and ahead else frozenset()
        fetched = False  # anything asked of the store: only then is there something new to keep
        while True:
            # Level by level from these starts, through edges known already (an earlier walk's)
            # as through new ones: the nearest nodes whose edges are still to fetch go next, and
            # nothing further than MAX_CLOSURE is fetched, however many levels a query takes.
            depth_of = _depths(starts, edges)
            todo = {n: d for n, d in depth_of.items() if n not in edges}
            if todo and kept is not None and version is not None:
                found, about = kept.get(version, key, {n: d for n, d in todo.items() if d < MAX_CLOSURE}, wide,
                                        limit=MAX_CLOSURE)
                if found:
                    edges.update(found)
                    self.about.update(about)
                    continue
            if not todo:
                break
            depth = min(todo.values())
            if depth >= MAX_CLOSURE:
                self.incomplete = True
                break
            levels = min(self.closure_levels, MAX_CLOSURE - depth)
            self.expand(predicate, forward, {n for n, d in todo.items() if d == depth}, edges, levels, ahead)
            fetched = True
        if fetched and kept is not None and version is not None and not self.incomplete:
            kept.put(version, key, edges, {n: self.about[n] for n in edges if n in self.about})
        return {
            s: {
                end: tuple(Fact((a, predicate, b) if forward else (b, predicate, a), g) for a, b, g in chain)
                for end, chain in reach(s, edges, min_len).items()
            }
            for s in starts
        }

    def expand(self, pred: ox.NamedNode, forward: bool, nodes: set[Node],
               edges: dict[Node, list[tuple[Node, ox.NamedNode]]], levels: int,
               ahead: frozenset[str] = frozenset()) -> None:
        """Fetch the edges of ``nodes`` and of what they reach in fewer than ``levels`` steps, in
        one query (a union of chains, one a level), each edge with its record. The same edges as
        one query a level: each level's chain starts from a node the level before reached. A
        blank node's edges are never asked (it cannot be written in a query). Where quad patterns
        are cheap (:meth:`natively`), a level of a few nodes is read by patterns instead.

        Walking forward, ``ahead`` widens each node's last step to its facts with those
        predicates too (what the body looks up next about the nodes the walk reaches, such as
        what a kind has): kept in :attr:`about`, they answer those lookups (:meth:`known`)
        without a query of their own."""
        known = set(edges)  # expanded earlier in this question: their edges are here already
        todo = sorted((n for n in nodes if not isinstance(n, ox.BlankNode)), key=str)
        for n in nodes:
            edges.setdefault(n, [])
        if not todo:
            return
        wide = sorted({pred.value, *ahead}) if forward and ahead else []
        if self.patterns and levels == 1 and len(todo) <= PATTERN_KEYS:
            rows = self.edges_by_patterns(pred, forward, todo, wide)
        else:
            rows = self.select(self.walk_query(pred, forward, todo, levels, wide))
        found: set[tuple[Node, Node, ox.NamedNode]] = set()
        facts: dict[Node, set[tuple[Triple, ox.NamedNode]]] = {n: set() for n in todo if n not in known}
        for r in rows:
            a, b = r["a"], r["b"]
            if a in known:
                continue
            if wide:
                facts.setdefault(a, set()).add(((a, r["p"], b), r["g"]))  # type: ignore[arg-type]
                if r["p"] != pred:
                    continue
            found.add((a, b, r["g"]))  # type: ignore[arg-type]
            if r["level"].value != str(levels):  # type: ignore[union-attr]
                # reached in fewer than ``levels`` steps: its edges come in this query too
                edges.setdefault(b, [])  # type: ignore[arg-type]
                facts.setdefault(b, set())  # type: ignore[arg-type]
        for a, b, g in found:
            edges.setdefault(a, []).append((b, g))
        for n in edges:
            edges[n].sort(key=lambda e: (str(e[0]), str(e[1])))
        if wide:
            for n, about in facts.items():
                if n not in known:  # (a node expanded before had its facts skipped above)
                    self.about[n] = (frozenset(wide), by_predicate(about))

    def walk_query(self, pred: ox.NamedNode, forward: bool, todo: Sequence[Node], levels: int,
                   wide: list[str]) -> str:
        """:meth:`expand`'s query: a union of chains, one a level, from ``todo``."""
        hop = "?{a} {p} ?{b}" if forward else "?{b} {p} ?{a}"

        def step(a: str, b: str, g: str, p: str = str(pred)) -> str:
            return f"GRAPH ?{g} {{ {hop.format(a=a, b=b, p=p)} }} {effective('?' + g, as_of=self.as_of)}"

        last = "?p" if wide else str(pred)
        only = f"FILTER(?p IN ({', '.join(f'<{p}>' for p in wide)}))" if wide else ""
        starts = " ".join(str(n) for n in todo)
        branches = []
        for level in range(levels):
            chain = ["s", *(f"m{i}" for i in range(1, level + 1))]
            hops = " ".join(step(chain[i], chain[i + 1], f"h{i}") for i in range(level))
            branches.append(f"{{ VALUES ?s {{ {starts} }} {hops} {step(chain[-1], 'b', 'g', last)} {only} "
                            f"BIND(?{chain[-1]} AS ?a) BIND({level + 1} AS ?level) }}")
        return f"SELECT DISTINCT ?level ?a ?b ?g{' ?p' if wide else ''} WHERE {{ {' UNION '.join(branches)} }}"

    def edges_by_patterns(self, pred: ox.NamedNode, forward: bool, nodes: Sequence[Node],
                          wide: Sequence[str] = ()) -> list[StoreRow]:
        """:meth:`expand`'s rows for one level, read by quad patterns (a pattern a node, and one
        a node for each of the ``wide`` predicates) in the records a normal read sees
        (:func:`records.seen`)."""
        self.check_deadline()
        rows: list[StoreRow] = []
        if wide:  # forward: each node's facts with these predicates, ``pred`` among them
            preds = [ox.NamedNode(p) for p in wide]
            for n in nodes:
                for p in preds:
                    for q in records.seen(self.store, n, p, None):
                        rows.append({"level": _ONE, "a": n, "b": q.object, "g": q.graph_name,  # type: ignore[dict-item]
                                     "p": q.predicate})
            return rows
        for n in nodes:
            for q in records.seen(self.store, n, pred, None) if forward else records.seen(self.store, None, pred, n):
                rows.append({"level": _ONE, "a": n, "b": q.object if forward else q.subject, "g": q.graph_name})  # type: ignore[dict-item]
        return rows


_ONE = ox.Literal(1)  # the level of an edge read by patterns


def _depths(starts: set[Node], edges: dict[Node, list[tuple[Node, ox.NamedNode]]]) -> dict[Node, int]:
    """How many known edges each node is from the nearest start (breadth first; a node whose
    edges are not fetched yet ends its paths)."""
    depth_of = dict.fromkeys(starts, 0)
    level = list(starts)
    while level:
        nxt = []
        for node in level:
            for b, _ in edges.get(node, ()):
                if b not in depth_of:
                    depth_of[b] = depth_of[node] + 1
                    nxt.append(b)
        level = nxt
    return depth_of
