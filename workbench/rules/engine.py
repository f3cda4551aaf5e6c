"""Goal-directed evaluation: a question's goal, the rules that could conclude it, their bodies
evaluated by the store's own SPARQL engine, and the proof of every conclusion.

How a goal ``(s, p, o?)`` is solved:

- recorded: one SELECT over the facts the read sees (content of active records, or of records
  effective on the as-of date; record metadata for the metadata predicates);
- derived: every active rule whose conclusion unifies with the goal; its body is evaluated
  premise by premise over a batch of bindings (one SELECT per step, with VALUES), runs of
  premises no rule concludes are pushed down together, premises a rule concludes become
  sub-goals, closures (``p*``, ``p+``) are walked breadth first (a level a query on an embedded
  store, :data:`CLOSURE_LEVELS` levels a query where each query is a round trip) and remembered
  per question.

Sub-goals are tabled: each is solved once into a table; one met again while in progress (a
cycle) reads its table so far, and afterwards the tables read that way that grew, and whatever
read them, are solved again until nothing grows. A conclusion never supports itself. Depth is
bounded; hitting the bound marks the result ``incomplete`` (never a wrong "no"). Nothing is
written anywhere. Each solution's bindings instantiate the premises: that is the proof.

>>> from workbench.rules.check import scratch, parse_turtle
>>> from workbench.rules.load import load_rules
>>> from workbench.resources import RULES_DIR
>>> from workbench.vocab import WB
>>> relations = frozenset(p.value for p in (WB.has, WB.usedFor, WB.dependsOn, WB.needs))
>>> rules = load_rules([RULES_DIR / "inherit-kind.ttl"], relations=relations)
>>> store = scratch(parse_turtle("e:x a e:car . e:car wb:needs e:gas .", "example"))
>>> result = Engine(store, rules).solve(ox.NamedNode("urn:wb:entity:x"), WB.needs)
>>> [(str(t[2]), support.rule.label) for t, support in result.found.items()]
[('<urn:wb:entity:gas>', 'inherit-kind v1')]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import pyoxigraph as ox

from workbench.ids import META_GRAPH
from workbench.records import effective
from workbench.rules.bindings import (
    bound_score,
    dedupe,
    domains,
    ground,
    match,
    reach,
    shape,
    unify,
    value,
    values_block,
)
from workbench.rules.proof import Fact, Match, Result, Row, Step, Triple, better
from workbench.store import Store
from workbench.store.base import Row as StoreRow
from workbench.values.rules import Closure, Filter, Node, NotExists, Premise, Rule, RuleSet, Var
from workbench.vocab import PREFIXES

TableKey = tuple[str, int, frozenset[tuple[str, Node]]]
MAX_DEPTH = 8
MAX_CLOSURE = 64
CLOSURE_LEVELS = 4  # levels of a closure walked in one query over a network (a chain of joins per level)
MAX_PASSES = 16


class Engine:
    """Answers goals over one store, for one read (now, or as of a date). Not thread-safe;
    make one per question: it remembers lookups, closure edges and sub-goal answers (tables)
    for the question's lifetime, never longer."""

    def __init__(self, store: Store, rules: RuleSet, *, as_of: str | None = None, max_depth: int = MAX_DEPTH) -> None:
        self.store = store
        self.rules = rules
        self.as_of = as_of
        self.max_depth = max_depth
        self.closure_levels = CLOSURE_LEVELS if store.capabilities.round_trips else 1
        self.incomplete = False
        self.queries = 0
        self._edges: dict[tuple[str, bool], dict[Node, list[tuple[Node, ox.NamedNode]]]] = {}
        self._seen: dict[tuple[str, tuple[Node, ...]], list[tuple[tuple[Node, ...], Fact]]] = {}
        # Tabling: each sub-goal (rule, conclusion, initial bindings) is solved once; a sub-goal
        # met again while in progress reads its table so far, and whatever read a table that
        # grew afterwards is solved again until nothing does (a fixpoint): cycles are complete
        # and terminate.
        self._tables: dict[TableKey, dict[Triple, Step]] = {}
        self._done: set[TableKey] = set()
        self._active: set[TableKey] = set()
        self._reads: list[tuple[TableKey, int]] = []  # tables read in progress, and their size then
        self._deps: dict[TableKey, set[TableKey]] = {}  # sub-goal -> the sub-goals it read
        self._stack: list[list[TableKey]] = []
        self._how: dict[TableKey, tuple[Rule, int, Premise, dict[str, Node]]] = {}
        self._cut = False
        self._depth = 0
        self._rules_for: dict[tuple[str, Premise], list[Rule]] = {}
        self._rides: dict[int, str] = {}  # group patterns to send with the next batched lookups
        self._ridden: dict[int, list[StoreRow]] = {}

    # ------------------------------------------------------------------ goals

    def ride(self, pattern: str) -> Callable[[], list[StoreRow]]:
        """A query of the caller's (a group pattern) sent with the engine's next batched lookups,
        a round trip fewer; the function returned gives its solutions, asking on its own if no
        lookup carried it. For what a question needs beside the goal (its negative facts)."""
        key = len(self._rides) + len(self._ridden)
        self._rides[key] = pattern

        def solutions() -> list[StoreRow]:
            if key in self._rides:
                self.queries += 1
                self._ridden[key] = list(self.store.select(PREFIXES + f"SELECT * WHERE {{ {self._rides.pop(key)} }}"))
            return self._ridden[key]
        return solutions

    def solve(self, s: Node | Var, p: ox.NamedNode, o: Node | None = None, *, derive: bool = True) -> Result:
        """Every fact matching ``s p o`` (s a variable or o None: open), recorded and, with ``derive``, derived."""
        goal = Premise(s, p, Var("o") if o is None else o)
        start = [Row({}, ())]
        if derive:
            self._prefetch(goal, start, None)
        rows = self._recorded([goal], start, [])
        derived = self._derived(goal, [Row({}, ())]) if derive else []
        # Tables read while still in progress that grew afterwards: what read them may miss
        # something. Solve those again, then whatever read a table that grew, until nothing
        # grows (a fixpoint); then read the goal's answers from the final tables.
        # What read them is solved again too: a batch of sub-goals (an open goal's) may have read a
        # sibling's table before the sibling was done.
        work = self._readers_of({k for k, size in self._reads if len(self._tables.get(k, {})) != size})
        for _ in range(MAX_PASSES):
            if not work:
                break
            self._reads = []
            sizes = {k: len(self._tables.get(k, {})) for k in work}
            self._done -= work
            for rule, hi, head, items in self._groups(work):
                self._compute(rule, hi, head, items)
            grown = {k for k in work if len(self._tables.get(k, {})) != sizes[k]}
            again = {k for k, size in self._reads if len(self._tables.get(k, {})) != size}
            work = self._readers_of(grown | again)
            derived = self._derived(goal, [Row({}, ())])
        else:
            self._cut = self._cut or bool(work)
        self.incomplete = self.incomplete or self._cut
        rows += derived
        result = Result(incomplete=self.incomplete)
        for r in rows:
            support = r.sup[-1][1]
            current = result.found.get(support.triple)
            if current is None or better(support, current):
                result.found[support.triple] = support
        result.queries = self.queries
        return result

    def _readers_of(self, keys: set[TableKey]) -> set[TableKey]:
        """These sub-goals and every sub-goal that read one of them, directly or not."""
        readers: dict[TableKey, set[TableKey]] = {}
        for reader, read in self._deps.items():
            for k in read:
                readers.setdefault(k, set()).add(reader)
        out, todo = set(keys), list(keys)
        while todo:
            for r in readers.get(todo.pop(), ()):
                if r not in out:
                    out.add(r)
                    todo.append(r)
        return out

    # ------------------------------------------------------------------ bodies

    def _body(self, rule: Rule, rows: list[Row]) -> list[Row]:
        todo = list(rule.body)
        filters: list[Filter | NotExists] = [*rule.filters, *rule.absences]
        bound = set(rows[0].vals) if rows else set()
        rows = domains(rows, filters, bound)
        while todo and rows:
            premise = max(todo, key=lambda p: (bound_score(p, bound, self._derivable(rule, p)), -p.index))
            todo.remove(premise)
            if isinstance(premise.p, Closure):
                rows = self._closure(premise, rows)
            elif not self._derivable(rule, premise):
                group = [premise]
                known = bound | premise.vars()
                for other in list(todo):
                    if not isinstance(other.p, Closure) and not self._derivable(rule, other) and other.vars() & known:
                        group.append(other)
                        todo.remove(other)
                        known |= other.vars()
                ready = [f for f in filters if f.vars <= known]
                rows = self._recorded(group, rows, ready)
                filters = [f for f in filters if f not in ready]
            else:
                ready = [f for f in filters if f.vars <= bound | premise.vars()]
                if not ready:
                    self._prefetch(premise, rows, rule)
                recorded = self._recorded([premise], rows, ready)
                derived = self._derived(premise, rows, rule)
                if derived and ready:
                    derived = self._filter(derived, ready)
                rows = dedupe(recorded + derived)
                filters = [f for f in filters if f not in ready]
            bound = set(rows[0].vals) if rows else bound
            rows = domains(rows, filters, bound)
            late = [f for f in filters if f.vars <= bound]
            if late and rows:
                rows = self._filter(rows, late)
                filters = [f for f in filters if f not in late]
        return rows

    def _derivable(self, rule: Rule, p: Premise) -> bool:
        if isinstance(p.p, Closure) or p.metadata:
            return False
        return bool(self._concluding(rule, p))

    def _concluding(self, parent: Rule | None, p: Premise) -> list[Rule]:
        """The rules that could conclude premise ``p`` of ``parent`` (remembered: rules are fixed)."""
        key = (parent.iri if parent else "", p)
        found = self._rules_for.get(key)
        if found is None:
            allowed = parent.domain(p.p.name) if parent and isinstance(p.p, Var) else None
            found = [r for r in self.rules.concluding(p.p, allowed) if parent is None or not parent.redundant_for(p, r)]
            self._rules_for[key] = found
        return found

    # ------------------------------------------------------------------ recorded facts

    def _recorded(
        self, premises: Sequence[Premise], rows: list[Row], filters: Sequence[Filter | NotExists]
    ) -> list[Row]:
        """Join ``rows`` with premises over the recorded facts, in one SELECT. A lone premise
        without filters is looked up through the question's cache (rules often share one)."""
        if not rows:
            return []
        used = set().union(*(p.vars() for p in premises), *(f.vars for f in filters))
        cols = sorted(v for v in rows[0].vals if v in used)
        keys: dict[tuple[Node, ...], list[Row]] = {}
        for row in rows:
            keys.setdefault(tuple(row.vals[c] for c in cols), []).append(row)
        if len(premises) == 1 and not filters:
            matches = self._lookup(premises[0], cols, list(keys))
        else:
            matches = self._query(premises, cols, list(keys), filters)
        out = []
        for key, hits in matches.items():
            for new, facts in hits:
                for row in keys[key]:
                    out.append(Row({**row.vals, **new}, row.sup + facts, row.tag))
        return out

    def _lookup(self, p: Premise, cols: list[str], keys: list[tuple[Node, ...]]) -> dict[tuple[Node, ...], list[Match]]:
        """A lone premise's matches, remembered by the premise's shape (variables by position),
        so rules that share a premise under other variable names share the lookup."""
        form, free = shape(p, cols)
        missing = [k for k in keys if (form, k) not in self._seen]
        if missing:
            self._remember(p, cols, missing, self._query([p], cols, missing, []))
        return {
            k: [(dict(zip(free, values, strict=True)), ((p.index, fact),)) for values, fact in self._seen[(form, k)]]
            for k in keys
        }

    def _remember(self, p: Premise, cols: list[str], keys: list[tuple[Node, ...]],
                  found: dict[tuple[Node, ...], list[Match]]) -> None:
        form, free = shape(p, cols)
        for k in keys:
            self._seen[(form, k)] = [
                (tuple(new[v] for v in free), fact)  # type: ignore[misc]
                for new, ((_, fact),) in found.get(k, [])
            ]

    def _prefetch(self, premise: Premise, rows: list[Row], parent: Rule | None) -> None:
        """Batched sub-goals: the lone lookups that evaluating ``premise`` over ``rows`` is about
        to make one query at a time (its recorded matches, and the first premise of each rule
        that could conclude it, under the bindings the rule would start from) fetched together,
        one query, into the lookup cache. What the engine then does is unchanged: only the
        number of round trips is."""
        if not rows:
            return
        wanted: list[tuple[Premise, list[str], list[tuple[Node, ...]]]] = []

        def want(p: Premise, vals: list[dict[str, Node]]) -> None:
            cols = sorted(v for v in vals[0] if v in p.vars()) if vals else []
            keys = list(dict.fromkeys(tuple(v[c] for c in cols) for v in vals))
            form, _ = shape(p, cols)
            missing = [k for k in keys if (form, k) not in self._seen]
            if missing:
                wanted.append((p, cols, missing))

        want(premise, [r.vals for r in rows])
        chains: list[tuple[str, Callable[[list[StoreRow]], None]]] = []
        for rule in self._concluding(parent, premise):
            for head in rule.head:
                inits = [i for i in (unify(head, premise, r.vals) for r in rows) if i is not None]
                # Over a network only, as closures four levels a query: in-process the larger
                # query costs more than the calls it saves (measured: docs/benchmarks.md).
                chained = self._chained(rule, inits[0]) if len(inits) == 1 and self.closure_levels > 1 else None
                first = self._first(rule, set(inits[0])) if inits and chained is None else None
                if chained is not None:
                    chains.append(chained)
                elif first is not None:
                    want(first, inits)
        if len(wanted) + len(chains) + len(self._rides) > 1:
            self._fetch(wanted, chains)

    def _chained(self, rule: Rule, init: dict[str, Node]) -> tuple[str, Callable[[list[StoreRow]], None]] | None:
        """For a rule body that starts with a lone lookup A, then a closure from what A binds,
        then a lone lookup B at the closure's end (inherit-kind: X's kinds, the kinds above them,
        what those have), the three in one query: A; the closure's edges up to
        :data:`CLOSURE_LEVELS` levels from A's nodes (as :meth:`_expand` fetches them); B at
        every node they reach. The pattern, and what keeps its solutions in the caches the body
        then reads (its lookups and the closure's edges); None when the body starts otherwise."""
        bound = set(init)
        a = self._first(rule, bound)
        if a is None or self.max_depth <= self._depth:
            return None
        rest = [p for p in rule.body if p is not a]
        after_a = bound | a.vars()
        c = self._next(rule, rest, after_a)
        if c is None or not isinstance(c.p, Closure):
            return None
        forward = not isinstance(c.s, Var) or c.s.name in after_a
        start, end = (c.s, c.o) if forward else (c.o, c.s)
        if not (isinstance(start, Var) and start.name in a.vars() - bound and isinstance(end, Var)
                and end.name not in after_a):
            return None
        rest = [p for p in rest if p is not c]
        b = self._first(rule, after_a | {end.name}, rest)
        if b is None:
            return None
        cols_a = sorted(v for v in a.vars() if v in bound)
        cols_b = sorted(v for v in b.vars() if v in after_a | {end.name})
        outs_a, outs_b = sorted(a.vars() - bound), sorted(b.vars() - set(cols_b))
        if not set(cols_b) <= bound | {end.name} or set(outs_b) & a.vars():
            return None
        key_a = tuple(init[c] for c in cols_a)
        values = values_block(cols_a, [key_a]) if cols_a else ""
        given = sorted(set(cols_b) - {end.name})
        values_b = values_block(given, [tuple(init[x] for x in given)])
        if values is None or values_b is None:
            return None
        closure, levels, start_var, end_var = c.p, CLOSURE_LEVELS, str(start), str(end)
        pred = closure.predicate
        first = start_var[1:]
        head = f"{values} {self._pattern(a, 'ga')} FILTER(!isBlank({start_var}))"
        parts = [f"{{ {values} {self._pattern(a, 'ga')} BIND(0 AS ?part) }}"]
        chains = self._chains(pred, forward, head, levels, first)
        parts += [f"{{ {branch[2:-2]} BIND(1 AS ?part) }}" for branch in chains]
        for depth in range(closure.min_len, levels + 1):
            chain = [first, *(f"v__m{i}" for i in range(1, depth + 1))]
            hops = " ".join(self._step(pred, forward, chain[i], chain[i + 1], f"h{i}") for i in range(depth))
            at = Var(chain[-1].removeprefix("v_"))  # B with the closure's end named as the chain's last node
            b_at = _renamed(b, {end.name: at})
            parts.append(f"{{ {head} {hops} {values_b} {self._pattern(b_at, 'gb')} BIND({at} AS {end_var}) "
                         f"BIND(2 AS ?part) }}")
        subs = self._sub_firsts(rule, b, init, end.name)
        for j, (first2, _, init2) in enumerate(subs):
            for depth in range(closure.min_len, levels + 1):
                chain = [first, *(f"v__m{i}" for i in range(1, depth + 1))]
                hops = " ".join(self._step(pred, forward, chain[i], chain[i + 1], f"h{i}") for i in range(depth))
                at = Var(chain[-1].removeprefix("v_"))
                names: dict[str, object] = {x: at if v is None else v for x, v in init2.items()}
                names |= {v: Var(f"s{j}_{v}") for v in first2.vars() - set(init2)}
                lookup = self._pattern(_renamed(first2, names), f"gs{j}")
                parts.append(f"{{ {head} {hops} {lookup} BIND({at} AS ?v__node) BIND({3 + j} AS ?part) }}")

        def keep(rows: list[StoreRow]) -> None:
            by = {n: [r for r in rows if r["part"].value == str(n)] for n in range(3)}  # type: ignore[union-attr]
            found_a: dict[tuple[Node, ...], list[Match]] = {}
            for r in by[0]:
                new = {v: r[f"v_{v}"] for v in outs_a}
                fact = Fact(ground(a, {**init, **new}), r["ga"])  # type: ignore[arg-type, dict-item]
                found_a.setdefault(key_a, []).append((new, ((a.index, fact),)))  # type: ignore[arg-type]
            self._remember(a, cols_a, [key_a], found_a)
            starts = {r[f"v_{start.name}"] for r in by[0]}
            edges = self._edges.setdefault((pred.value, forward), {})
            if starts & set(edges):
                return  # walked already in this question: the body reads those edges
            self._absorb(by[1], starts, edges, levels)  # type: ignore[arg-type]
            reached = {n for s0 in starts for n in reach(s0, edges, closure.min_len)}  # type: ignore[arg-type]
            found_b: dict[tuple[Node, ...], list[Match]] = {}
            seen: set[tuple[object, ...]] = set()
            for r in by[2]:
                key = tuple(r[f"v_{x}"] for x in cols_b)
                new = {v: r[f"v_{v}"] for v in outs_b}
                if (key, tuple(new.items()), r["gb"]) in seen or any(isinstance(t, ox.BlankNode) for t in key):
                    continue  # reached by several chains; or a key a query could not have written
                seen.add((key, tuple(new.items()), r["gb"]))
                fact = Fact(ground(b, {**dict(zip(cols_b, key, strict=True)), **new}), r["gb"])  # type: ignore[arg-type, dict-item]
                found_b.setdefault(key, []).append((new, ((b.index, fact),)))  # type: ignore[arg-type]
            keys = [tuple(n if x == end.name else init[x] for x in cols_b) for n in sorted(reached, key=str)]
            self._remember(b, cols_b, keys, found_b)
            for j, (first2, init2) in enumerate((f, i) for f, _, i in subs):
                cols2 = sorted(v for v in first2.vars() if v in init2)
                found2: dict[tuple[Node, ...], list[Match]] = {}
                kept: set[tuple[object, ...]] = set()
                outs2 = sorted(first2.vars() - set(cols2))
                for r in [r for r in rows if r["part"].value == str(3 + j)]:  # type: ignore[union-attr]
                    node = r["v__node"]
                    vals = {x: node if v is None else v for x, v in init2.items()}
                    key = tuple(vals[x] for x in cols2)
                    new = {v: r[f"v_s{j}_{v}"] for v in outs2}
                    if (key, tuple(new.items()), r[f"gs{j}"]) in kept or any(isinstance(t, ox.BlankNode) for t in key):
                        continue
                    kept.add((key, tuple(new.items()), r[f"gs{j}"]))
                    fact = Fact(ground(first2, {**vals, **new}), r[f"gs{j}"])  # type: ignore[arg-type, dict-item]
                    found2.setdefault(key, []).append((new, ((first2.index, fact),)))  # type: ignore[arg-type]
                keys2 = [tuple(n if init2[x] is None else init2[x] for x in cols2) for n in sorted(reached, key=str)]
                self._remember(first2, cols2, keys2, found2)  # type: ignore[arg-type]

        return "{ " + " UNION ".join(parts) + " }", keep

    def _next(self, rule: Rule, todo: Sequence[Premise], bound: set[str]) -> Premise | None:
        """The premise ``_body`` evaluates next of ``todo`` from these bindings."""
        return max(todo, key=lambda p: (bound_score(p, bound, self._derivable(rule, p)), -p.index)) if todo else None

    def _first(self, rule: Rule, bound: set[str], todo: Sequence[Premise] | None = None) -> Premise | None:
        """The premise ``_body`` evaluates first (of ``todo``, default the body) from these
        bindings, when it is a lone lookup (a premise a rule concludes, or one that joins no
        other; no filter yet ready: see ``_body``)."""
        todo = rule.body if todo is None else todo
        first = self._next(rule, todo, bound)
        if first is None or isinstance(first.p, Closure):
            return None
        if not self._derivable(rule, first) and any(
                not isinstance(o.p, Closure) and not self._derivable(rule, o) and o.vars() & (bound | first.vars())
                for o in todo if o is not first):
            return None  # pushed down with the premises it joins, in one query of its own
        known = bound | first.vars()
        domain = {f.domain[0] for f in rule.filters if f.domain and f.domain[0] in bound}  # applied in Python
        filters: list[Filter | NotExists] = [f for f in rule.filters if not (f.domain and f.domain[0] in domain)]
        if [f for f in [*filters, *rule.absences] if f.vars <= known]:
            return None
        return first

    def _sub_firsts(self, rule: Rule, b: Premise, init: dict[str, Node], end: str) -> list[
            tuple[Premise, list[str], dict[str, Node | None]]]:
        """The first lone lookup of each sub-goal premise ``b`` makes at a node the closure
        reaches (``end``): the premise, its bound columns and the sub-goal's bindings (None:
        the node), for :meth:`_chained`'s query; [] when one cannot be told before the query."""
        out: list[tuple[Premise, list[str], dict[str, Node | None]]] = []
        if not self._derivable(rule, b):
            return out
        for r2 in self._concluding(rule, b):
            for h2 in r2.head:
                slots = list(zip((h2.s, h2.p, h2.o), (b.s, b.p, b.o), strict=True))
                if any(t == Var(end) and not isinstance(h, Var) for h, t in slots):
                    return []  # a constant where the node goes: which nodes it fits is the body's to find
                init2: dict[str, Node | None] = {}
                for h, t in slots:
                    value: Node | None = (None if t == Var(end) else init.get(t.name) if isinstance(t, Var)
                                          else t)  # type: ignore[assignment]
                    if isinstance(h, Var) and (value is not None or t == Var(end)):
                        if h.name in init2 and init2[h.name] != value:
                            return []
                        init2[h.name] = value
                    elif not isinstance(h, Var) and value is not None and h != value:
                        init2 = {}
                        break
                else:
                    first2 = self._first(r2, set(init2))
                    if first2 is None:
                        return []
                    cols2 = sorted(v for v in first2.vars() if v in init2)
                    out.append((first2, cols2, init2))
        return out

    def _fetch(self, wanted: list[tuple[Premise, list[str], list[tuple[Node, ...]]]],
               chains: Sequence[tuple[str, Callable[[list[StoreRow]], None]]] = ()) -> None:
        """Several lone lookups in one query (a union, a branch each), into the lookup cache,
        with the callers' rides and the chained bodies (each a pattern and what keeps its rows)."""
        branches, parts = [], []
        for i, (p, cols, keys) in enumerate(wanted):
            values = values_block(cols, keys)
            if values is None:
                continue
            outs = sorted(p.vars() - set(cols))
            branches.append(f"{{ {values} {self._pattern(p, 'g0')} BIND({i} AS ?lookup) }}")
            parts.append((i, outs))
        rides, self._rides = self._rides, {}
        extra: list[tuple[str, Callable[[list[StoreRow]], None]]] = [
            *((pattern, functools.partial(self._ridden.__setitem__, k)) for k, pattern in rides.items()), *chains]
        branches += [f"{{ {pattern} BIND({-1 - j} AS ?lookup) }}" for j, (pattern, _) in enumerate(extra)]
        if not branches:
            return
        self.queries += 1
        found: dict[int, dict[tuple[Node, ...], list[Match]]] = {i: {} for i, _ in parts}
        outs_of = dict(parts)
        got: list[list[StoreRow]] = [[] for _ in extra]
        for sol in self.store.select(PREFIXES + f"SELECT * WHERE {{ {' UNION '.join(branches)} }}"):
            i = int(sol["lookup"].value)  # type: ignore[union-attr]
            if i < 0:
                got[-1 - i].append(sol)
                continue
            p, cols, _ = wanted[i]
            key = tuple(sol[f"v_{c}"] for c in cols)
            new = {v: sol[f"v_{v}"] for v in outs_of[i]}
            fact = Fact(ground(p, {**dict(zip(cols, key, strict=True)), **new}), sol["g0"])  # type: ignore[arg-type, dict-item]
            found[i].setdefault(key, []).append((new, ((p.index, fact),)))  # type: ignore[arg-type]
        for i, _ in parts:
            p, cols, keys = wanted[i]
            self._remember(p, cols, keys, found[i])
        for (_, keep), rows in zip(extra, got, strict=True):
            keep(rows)

    def _query(
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
        patterns = " ".join(self._pattern(p, f"g{i}") for i, p in enumerate(premises))
        conditions = " ".join(self._condition(f, len(premises) + i) for i, f in enumerate(filters))
        outs = sorted(set().union(*(p.vars() for p in premises)) - set(cols))
        select = " ".join([*(f"?v_{v}" for v in cols + outs), *(f"?g{i}" for i in range(len(premises)))])
        self.queries += 1
        out: dict[tuple[Node, ...], list[Match]] = {}
        for sol in self.store.select(PREFIXES + f"SELECT {select} WHERE {{ {values} {patterns} {conditions} }}"):
            key = tuple(sol[f"v_{c}"] for c in cols)
            new = {v: sol[f"v_{v}"] for v in outs}
            both = {**dict(zip(cols, key, strict=True)), **new}
            facts = tuple(
                (p.index, Fact(ground(p, both), sol[f"g{i}"]))  # type: ignore[arg-type]
                for i, p in enumerate(premises)
            )
            out.setdefault(key, []).append((new, facts))  # type: ignore[arg-type]
        return out

    def _pattern(self, p: Premise, g: str) -> str:
        """SPARQL for one premise over the facts this read sees, its record bound to ?g."""
        if p.metadata:  # a fact about a record: the record is its own source
            if isinstance(p.s, Var):
                subject, pre, post = str(p.s), "", f"BIND({p.s} AS ?{g})"
            else:
                subject, pre, post = f"?{g}", f"BIND({p.s} AS ?{g})", ""
            view = effective(subject, as_of=self.as_of)
            return f"{pre} GRAPH {META_GRAPH} {{ {subject} {p.p} {p.o} . {view} }} {post}"
        return f"GRAPH ?{g} {{ {p.s} {p.p} {p.o} }} GRAPH {META_GRAPH} {{ {effective('?' + g, as_of=self.as_of)} }}"

    def _condition(self, f: Filter | NotExists, n: int) -> str:
        if isinstance(f, Filter):
            return f"FILTER{f.sparql}" if f.sparql.startswith("(") else f"FILTER({f.sparql})"
        inner = " ".join(self._pattern(p, f"x{n}_{i}") for i, p in enumerate(f.premises))
        checks = " ".join(f"FILTER{c}" for c in f.filters)
        return f"FILTER NOT EXISTS {{ {inner} {checks} }}"

    def _filter(self, rows: list[Row], filters: Sequence[Filter | NotExists]) -> list[Row]:
        used = sorted(set().union(*(f.vars for f in filters)))
        keys = {tuple(r.vals[c] for c in used) for r in rows}
        values = values_block(used, sorted(keys, key=str))
        if values is None:
            return []
        conditions = " ".join(self._condition(f, i) for i, f in enumerate(filters))
        self.queries += 1
        rows_ok = {
            tuple(sol[f"v_{c}"] for c in used)
            for sol in self.store.select(
                PREFIXES + f"SELECT {' '.join(f'?v_{c}' for c in used)} WHERE {{ {values} {conditions} }}"
            )
        }
        return [r for r in rows if tuple(r.vals[c] for c in used) in rows_ok]

    # ------------------------------------------------------------------ closures

    def _closure(self, p: Premise, rows: list[Row]) -> list[Row]:
        assert isinstance(p.p, Closure)
        forward = not isinstance(p.s, Var) or p.s.name in rows[0].vals
        if not forward and isinstance(p.o, Var) and p.o.name not in rows[0].vals:
            self.incomplete = True  # neither end known: walking every chain is not goal-directed
            return []
        start_slot, end_slot = (p.s, p.o) if forward else (p.o, p.s)
        paths = self.walk(p.p.predicate, {value(start_slot, r.vals) for r in rows}, forward=forward,
                          min_len=p.p.min_len)
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
        self, predicate: ox.NamedNode, starts: set[Node], *, forward: bool = True, min_len: int = 0
    ) -> dict[Node, dict[Node, list[Fact]]]:
        """For each start, every node it reaches along ``predicate`` edges the read sees
        (backwards with ``forward=False``), with the shortest chain of recorded edges that gets
        there. One query per ``closure_levels`` levels of the walk (a property path would
        lose the edges' records, and pyoxigraph walks ``GRAPH ?g { p+ }`` over every graph);
        edges are remembered for the question."""
        edges = self._edges.setdefault((predicate.value, forward), {})
        frontier = {s for s in starts if s not in edges}
        depth = 0
        while frontier:
            if depth >= MAX_CLOSURE:
                self.incomplete = True
                break
            levels = min(self.closure_levels, MAX_CLOSURE - depth)
            depth += levels
            frontier = self._expand(predicate, forward, frontier, edges, levels)
        return {
            s: {
                end: [Fact((a, predicate, b) if forward else (b, predicate, a), g) for a, b, g in chain]
                for end, chain in reach(s, edges, min_len).items()
            }
            for s in starts
        }

    def _expand(self, pred: ox.NamedNode, forward: bool, nodes: set[Node],
                edges: dict[Node, list[tuple[Node, ox.NamedNode]]], levels: int) -> set[Node]:
        """Fetch the edges of ``nodes`` and of what they reach in fewer than ``levels`` steps, in
        one query (a union of chains, one a level); returns the nodes reached at ``levels``
        steps whose edges are still to fetch. The same edges as one query a level: each level's
        chain starts from a node the level before reached."""
        todo = sorted((n for n in nodes if not isinstance(n, ox.BlankNode)), key=str)
        if not todo:
            return self._absorb([], nodes, edges, levels)
        branches = self._chains(pred, forward, f"VALUES ?s {{ {' '.join(str(n) for n in todo)} }}", levels)
        self.queries += 1
        rows = self.store.select(PREFIXES + f"SELECT DISTINCT ?level ?a ?b ?g WHERE {{ {' UNION '.join(branches)} }}")
        return self._absorb(rows, nodes, edges, levels)

    def _step(self, pred: ox.NamedNode, forward: bool, a: str, b: str, g: str) -> str:
        """One edge of a closure's chain, from ?a to ?b, in an active record bound to ?g."""
        hop = f"?{a} {pred} ?{b}" if forward else f"?{b} {pred} ?{a}"
        return f"GRAPH ?{g} {{ {hop} }} GRAPH {META_GRAPH} {{ {effective('?' + g, as_of=self.as_of)} }}"

    def _chains(self, pred: ox.NamedNode, forward: bool, starts: str, levels: int, first: str = "s") -> list[str]:
        """A union's branches, one a level: the edges (?a ?b ?g) at ``level`` steps from the nodes
        ``starts`` binds to ``?first`` (named so, not bound to it: the engine would evaluate the
        chain on its own and join)."""
        out = []
        for level in range(levels):
            chain = [first, *(f"m{i}" for i in range(1, level + 1))]
            hops = " ".join(self._step(pred, forward, chain[i], chain[i + 1], f"h{i}") for i in range(level))
            out.append(f"{{ {starts} {hops} {self._step(pred, forward, chain[-1], 'b', 'g')} "
                       f"BIND(?{chain[-1]} AS ?a) BIND({level + 1} AS ?level) }}")
        return out

    def _absorb(self, rows: Sequence[StoreRow], nodes: set[Node], edges: dict[Node, list[tuple[Node, ox.NamedNode]]],
                levels: int) -> set[Node]:
        """Keep the edges :meth:`_chains` found from ``nodes`` (a blank node's are never asked:
        it cannot be written in a query); returns the nodes reached at ``levels`` steps whose
        edges are still to fetch."""
        known = set(edges)  # expanded earlier in this question: their edges are here already
        for n in nodes:
            edges.setdefault(n, [])
        found: set[tuple[Node, Node, ox.NamedNode]] = set()
        inner: set[Node] = set()  # reached in fewer than ``levels`` steps: expanded by this query
        last: set[Node] = set()
        for r in rows:
            a, b = r["a"], r["b"]
            if a in known:
                continue
            found.add((a, b, r["g"]))  # type: ignore[arg-type]
            (inner if r["level"].value != str(levels) else last).add(b)  # type: ignore[union-attr, arg-type]
        for n in inner:
            edges.setdefault(n, [])
        for a, b, g in found:
            edges.setdefault(a, []).append((b, g))
        for n in edges:
            edges[n].sort(key=lambda e: (str(e[0]), str(e[1])))
        return {n for n in last if n not in edges}

    # ------------------------------------------------------------------ sub-goals

    def _derived(self, premise: Premise, rows: list[Row], parent: Rule | None = None) -> list[Row]:
        out: list[Row] = []
        for rule in self._concluding(parent, premise):
            for hi, head in enumerate(rule.head):
                out += self._apply(rule, hi, head, premise, rows)
        return out

    def _apply(self, rule: Rule, hi: int, head: Premise, premise: Premise, rows: list[Row]) -> list[Row]:
        links: list[tuple[int, TableKey]] = []
        todo: dict[TableKey, dict[str, Node]] = {}
        for i, row in enumerate(rows):
            init = unify(head, premise, row.vals)
            if init is None:
                continue
            key = (rule.iri, hi, frozenset(init.items()))
            links.append((i, key))
            if self._stack:
                for reader in self._stack[-1]:
                    self._deps.setdefault(reader, set()).add(key)
            if key in self._done:
                continue
            if key in self._active:  # in progress (a cycle): read its table so far
                self._reads.append((key, len(self._tables.get(key, {}))))
                continue
            todo[key] = init
        if todo and self._depth >= self.max_depth:
            self._cut = True  # the depth bound: the answer says it may be incomplete
        elif todo:
            for key, init in todo.items():
                self._how[key] = (rule, hi, head, init)
            self._compute(rule, hi, head, list(todo.items()))
        out = []
        for i, key in links:
            row = rows[i]
            for triple, step in sorted(self._tables.get(key, {}).items(), key=_by_triple):
                vals = match(premise, triple, row.vals)
                if vals is not None:
                    out.append(Row(vals, row.sup + ((premise.index, step),), row.tag))
        return out

    def _compute(self, rule: Rule, hi: int, head: Premise, items: list[tuple[TableKey, dict[str, Node]]]) -> None:
        """Solve sub-goals of one rule conclusion together (one batch) into their tables."""
        keys = [k for k, _ in items]
        self._active.update(keys)
        self._stack.append(keys)
        self._depth += 1
        try:
            solutions = self._body(rule, [Row(dict(init), (), tag) for tag, (_, init) in enumerate(items)])
        finally:
            self._depth -= 1
            self._stack.pop()
            self._active.difference_update(keys)
        for sol in solutions:
            self._table(keys[sol.tag], rule, head, sol)
        self._done.update(keys)

    def _groups(self, keys: set[TableKey]) -> list[tuple[Rule, int, Premise, list[tuple[TableKey, dict[str, Node]]]]]:
        """Sub-goals to solve again, batched by rule conclusion and which variables are bound (a
        batch shares its bound variables), in a fixed order."""
        out: dict[tuple[str, int, tuple[str, ...]], tuple[Rule, int, Premise, list[tuple[TableKey, dict[str, Node]]]]]
        out = {}
        for key in sorted(keys, key=str):
            rule, hi, head, init = self._how[key]
            out.setdefault((rule.iri, hi, tuple(sorted(init))), (rule, hi, head, []))[3].append((key, init))
        return list(out.values())

    def _table(self, key: TableKey, rule: Rule, head: Premise, sol: Row) -> None:
        """Keep a solution's conclusion in the sub-goal's table, with the smaller proof."""
        triple = ground(head, sol.vals)
        step = Step(
            triple=triple,
            rule=rule,
            bindings=tuple(sorted((k, v) for k, v in sol.vals.items() if not k.startswith("_"))),
            premises=tuple(s for _, s in sorted(sol.sup, key=lambda x: x[0])),
            absences=tuple(
                (p, tuple(sorted((k, v) for k, v in sol.vals.items() if k in a.vars)))
                for a in rule.absences
                for p in a.premises
            ),
        )
        if triple in set(step.triples()):
            return  # a conclusion never supports itself
        table = self._tables.setdefault(key, {})
        current = table.get(triple)
        if current is None or better(step, current):
            table[triple] = step


def _by_triple(item: tuple[Triple, Step]) -> str:
    s, p, o = item[0]
    return f"{s} {p} {o}"


def _renamed(p: Premise, names: dict[str, object]) -> Premise:
    """``p`` with some variables replaced (by a value or another variable), for a chained query."""
    def term(t: object) -> object:
        return names.get(t.name, t) if isinstance(t, Var) else t

    return Premise(term(p.s), term(p.p), term(p.o), p.index)  # type: ignore[arg-type]
