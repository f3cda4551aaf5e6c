"""Goal-directed evaluation: a question's goal, the rules that could conclude it, their bodies
evaluated by the store's own SPARQL engine, and the proof of every conclusion.

How a goal ``(s, p, o?)`` is solved:

- recorded: one SELECT over the facts the read sees (content of active records, or of records
  effective on the as-of date; record metadata for the metadata predicates);
- derived: every active rule whose conclusion unifies with the goal; its body is evaluated
  premise by premise over a batch of bindings (one SELECT per step, with VALUES), runs of
  premises no rule concludes are pushed down together, premises a rule concludes become
  sub-goals, closures (``p*``, ``p+``) are walked breadth first (a level a query on an embedded
  store, :data:`~workbench.rules.reads.CLOSURE_LEVELS` levels a query where each query is a round trip) and remembered
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

from collections.abc import Callable, Sequence

import pyoxigraph as ox

from workbench.rules.bindings import (
    bound_score,
    dedupe,
    domains,
    ground,
    match,
    unify,
)
from workbench.rules.proof import Fact, Result, Row, Step, Triple, better
from workbench.rules.reads import Lookup, Reads
from workbench.store import Store
from workbench.store.base import Row as StoreRow
from workbench.values.rules import Closure, Filter, Node, NotExists, Premise, Rule, RuleSet, Var

TableKey = tuple[str, int, frozenset[tuple[str, Node]]]
MAX_DEPTH = 8
MAX_PASSES = 16


class Engine:
    """Answers goals over one store, for one read (now, or as of a date). Not thread-safe;
    make one per question: it remembers lookups, closure edges and sub-goal answers (tables)
    for the question's lifetime, never longer."""

    def __init__(self, store: Store, rules: RuleSet, *, as_of: str | None = None, max_depth: int = MAX_DEPTH,
                 deadline: float | None = None) -> None:
        self.store = store
        self.rules = rules
        self.as_of = as_of
        self.max_depth = max_depth
        # Lookups, closures' edges, batches: remembered here; no query past ``deadline`` (monotonic).
        self.reads = Reads(store, as_of=as_of, deadline=deadline)
        self._incomplete = False
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
        # A closure's walk fetches what the body looks up next about its nodes (_ahead): a query
        # fewer where each is a round trip; where quad patterns are cheap, the same patterns the
        # lookups would read, kept with the walk for the store's version (rules/walked), so the
        # next question about those kinds reads none of them (docs/benchmarks.md, "Fetching ahead").
        self.ahead = store.capabilities.round_trips or store.cheap_patterns

    @property
    def queries(self) -> int:  # store calls so far
        return self.reads.queries

    @property
    def incomplete(self) -> bool:  # the depth bound cut, or a closure's walk
        return self._incomplete or self.reads.incomplete

    @incomplete.setter
    def incomplete(self, value: bool) -> None:
        self._incomplete = value

    @property
    def closure_levels(self) -> int:  # levels of a closure a query: more where each is a round trip
        return self.reads.closure_levels

    @closure_levels.setter
    def closure_levels(self, value: int) -> None:
        self.reads.closure_levels = value

    def ride(self, pattern: str) -> Callable[[], list[StoreRow]]:
        """See :meth:`Reads.ride`: what a question needs beside the goal, sent with its first query."""
        return self.reads.ride(pattern)

    def walk(self, predicate: ox.NamedNode, starts: set[Node], *, forward: bool = True,
             min_len: int = 0) -> dict[Node, dict[Node, Sequence[Fact]]]:
        """See :meth:`Reads.walk`."""
        return self.reads.walk(predicate, starts, forward=forward, min_len=min_len)

    # ------------------------------------------------------------------ goals

    def solve(self, s: Node | Var, p: ox.NamedNode, o: Node | None = None, *, derive: bool = True) -> Result:
        """Every fact matching ``s p o`` (s a variable or o None: open), recorded and, with ``derive``, derived."""
        goal = Premise(s, p, Var("o") if o is None else o)
        start = [Row({}, ())]
        if derive:
            self._prefetch(goal, start, None)
        rows = self.reads.recorded([goal], start, [])
        # A ground goal found recorded is answered: a recorded fact's proof (size 1) is smaller
        # than any derivation of it (a rule with a premise), so deriving it again could only cost
        # queries (the closures and premises a rule would walk).
        settled = rows and o is not None and not isinstance(s, Var) and all(
            r.body for r in self._concluding(None, goal))
        derived = self._derived(goal, [Row({}, ())]) if derive and not settled else []
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
        if not keys:
            return set()
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
            premise = self._next(rule, todo, bound)
            todo.remove(premise)
            if isinstance(premise.p, Closure):
                rows = self.reads.closure(premise, rows, self._ahead(rule, premise, todo, bound, rows))
            elif not self._derivable(rule, premise):
                group = [premise]
                known = bound | premise.vars()
                for other in list(todo):
                    if not isinstance(other.p, Closure) and not self._derivable(rule, other) and other.vars() & known:
                        group.append(other)
                        todo.remove(other)
                        known |= other.vars()
                ready = [f for f in filters if f.vars <= known]
                rows = self.reads.recorded(group, rows, ready)
                filters = [f for f in filters if f not in ready]
            else:
                ready = [f for f in filters if f.vars <= bound | premise.vars()]
                if not ready:
                    self._prefetch(premise, rows, rule)
                recorded = self.reads.recorded([premise], rows, ready)
                derived = self._derived(premise, rows, rule)
                if derived and ready:
                    derived = self.reads.filter(derived, ready)
                rows = dedupe(recorded + derived)
                filters = [f for f in filters if f not in ready]
            bound = set(rows[0].vals) if rows else bound
            rows = domains(rows, filters, bound)
            late = [f for f in filters if f.vars <= bound]
            if late and rows:
                rows = self.reads.filter(rows, late)
                filters = [f for f in filters if f not in late]
        return rows

    def _derivable(self, rule: Rule, p: Premise) -> bool:
        return self.rules.derivable(rule, p)

    def _next(self, rule: Rule, todo: list[Premise], bound: set[str]) -> Premise:
        """The premise of ``todo`` to evaluate next with ``bound`` known (:func:`bound_score`,
        then the order written): worked out once for the rules."""
        key = ("next", rule.iri, *todo, frozenset(bound))
        found: Premise | None = self.rules.plans.get(key)
        if found is None:
            found = self.rules.plans[key] = max(
                todo, key=lambda p: (bound_score(p, bound, self._derivable(rule, p)), -p.index))
        return found

    def _concluding(self, parent: Rule | None, p: Premise) -> list[Rule]:
        return self.rules.concluding_premise(parent, p)

    # ------------------------------------------------------------------ recorded facts

    def _prefetch(self, premise: Premise, rows: list[Row], parent: Rule | None) -> None:
        """Batched sub-goals: the lone lookups that evaluating ``premise`` over ``rows`` is about
        to make one query at a time (its recorded matches, and the first premise of each rule
        that could conclude it, under the bindings the rule would start from) fetched together,
        one query, into the lookup cache. What the engine then does is unchanged: only the
        number of round trips is."""
        if self.reads.patterns:
            # lone lookups are read by quad patterns here (Reads.natively): finding what to batch
            # cost more than it saved (bench ask at 1.27M, 2026-12-07: 0.04-0.08 ms a question)
            return
        wanted = self._wanted(premise, rows, parent)
        if len(wanted) + len(self.reads.rides) > 1:
            self.reads.fetch(wanted)

    def first_lookups(self, s: Node, p: ox.NamedNode, o: Node | None) -> list[Lookup]:
        """The lone lookups :meth:`solve` starts with for this goal (its recorded matches and
        each concluding rule's first premise), for a caller that sends them before the
        question's names are bound (``rules/primed``), with stand-ins for the names."""
        return self._wanted(Premise(s, p, Var("o") if o is None else o), [Row({}, ())], None)

    def _wanted(self, premise: Premise, rows: list[Row], parent: Rule | None) -> list[Lookup]:
        if not rows:
            return []
        wanted: list[Lookup] = []

        def want(p: Premise, vals: list[dict[str, Node]]) -> None:
            cols = sorted(v for v in vals[0] if v in p.vars()) if vals else []
            keys = list(dict.fromkeys(tuple(v[c] for c in cols) for v in vals))
            missing = [k for k in keys if not self.reads.known(p, cols, k)]
            if missing:
                wanted.append((p, cols, missing))

        want(premise, [r.vals for r in rows])
        for rule in self._concluding(parent, premise):
            for head in rule.head:
                inits = [i for i in (unify(head, premise, r.vals) for r in rows) if i is not None]
                first = self._first(rule, set(inits[0])) if inits else None
                if first is not None:
                    want(first, inits)
        return wanted

    def _ahead(self, rule: Rule, closure: Premise, todo: list[Premise], bound: set[str],
               rows: list[Row]) -> frozenset[str]:
        """Predicates of what the body looks up next about each node a forward ``closure``
        reaches: its next premise, when the closure's end is that premise's subject, and the
        first premises of the rules that could conclude it, about the same node. The walk
        fetches those facts with its edges (Reads.expand), a query fewer per step. Worked out
        once for the rules, but for a predicate the rows bind."""
        if not (self.ahead and todo and rows):
            return frozenset()
        key = ("ahead", rule.iri, closure, *todo, frozenset(bound))
        plan: tuple[str | None, frozenset[str]] | None = self.rules.plans.get(key)
        if plan is None:
            plan = self.rules.plans[key] = self._ahead_plan(rule, closure, todo, bound)
        var, preds = plan
        if var is None:
            return preds
        return preds | {v.value for r in rows if isinstance(v := r.vals[var], ox.NamedNode)}

    def _ahead_plan(self, rule: Rule, closure: Premise, todo: list[Premise],
                    bound: set[str]) -> tuple[str | None, frozenset[str]]:
        """:meth:`_ahead` from the rules alone: the variable whose values in the rows are
        predicates to fetch too (None: none), and the predicates known already."""
        end = closure.o
        forward = not isinstance(closure.s, Var) or closure.s.name in bound
        if not (forward and isinstance(end, Var) and end.name not in bound):
            return None, frozenset()
        known = bound | closure.vars()
        after = self._next(rule, todo, known)
        if isinstance(after.p, Closure) or after.metadata or after.s != end:
            return None, frozenset()
        var = None
        preds: set[ox.NamedNode] = set()
        if isinstance(after.p, Var):
            if after.p.name not in known:
                return None, frozenset()  # every fact about each node: not worth fetching ahead
            var = after.p.name
        else:
            preds.add(after.p)
        if self._derivable(rule, after):
            for other in self._concluding(rule, after):
                for head in other.head:
                    names = {h.name for h, g in zip((head.s, head.p, head.o), (after.s, after.p, after.o), strict=True)
                             if isinstance(h, Var) and (not isinstance(g, Var) or g.name in known)}
                    first = self._first(other, names)
                    if (first is not None and not first.metadata and isinstance(head.s, Var) and first.s == head.s
                            and isinstance(first.p, ox.NamedNode)):
                        preds.add(first.p)
        return var, frozenset(p.value for p in preds)

    def _first(self, rule: Rule, bound: set[str]) -> Premise | None:
        """The premise ``_body`` evaluates first from these bindings, when it is a lone lookup (a
        premise a rule concludes, or one that joins no other; no filter yet ready: see ``_body``)."""
        if not rule.body:
            return None
        first = self._next(rule, list(rule.body), bound)
        if isinstance(first.p, Closure):
            return None
        if not self._derivable(rule, first) and any(
                not isinstance(o.p, Closure) and not self._derivable(rule, o) and o.vars() & (bound | first.vars())
                for o in rule.body if o is not first):
            return None  # pushed down with the premises it joins, in one query of its own
        known = bound | first.vars()
        domain = {f.domain[0] for f in rule.filters if f.domain and f.domain[0] in bound}  # applied in Python
        filters: list[Filter | NotExists] = [f for f in rule.filters if not (f.domain and f.domain[0] in domain)]
        if [f for f in [*filters, *rule.absences] if f.vars <= known]:
            return None
        return first

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
            table = self._tables.get(key)
            if not table:
                continue
            row = rows[i]
            for triple, step in sorted(table.items(), key=_by_triple) if len(table) > 1 else table.items():
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
        if any(t == triple for t in step.triples()):
            return  # a conclusion never supports itself
        table = self._tables.setdefault(key, {})
        current = table.get(triple)
        if current is None or better(step, current):
            table[triple] = step


def _by_triple(item: tuple[Triple, Step]) -> str:
    s, p, o = item[0]
    return f"{s} {p} {o}"

