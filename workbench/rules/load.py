"""Loading rules from Turtle files (``rules/*.ttl``) and checking them before any use.

A rule file holds SHACL-AF rules and nothing else: a shape with one target and ``sh:rule``,
and the rule (``sh:SPARQLRule`` with ``sh:construct``, or ``sh:TripleRule``) carrying its id,
version, author, reading, status and test cases. Loading refuses, naming file and rule: Turtle
or SPARQL syntax errors (with line and column), SPARQL Update, SERVICE, data triples in a rule
file, conclusions that would write record metadata or provenance, free conclusion predicates,
unbound or unconnected variables, and closures or NOT EXISTS over what rules conclude.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pyoxigraph as ox

from workbench import limits
from workbench.errors import Invalid, ParseError
from workbench.rules.compile import Body, _Fresh, parse_construct, path_premises
from workbench.sparqlcheck import MAX_DEPTH
from workbench.values.rules import THIS, Closure, Premise, Rule, RuleSet, TestCase, Var
from workbench.vocab import DCTERMS, RDF, RDFS, SH, WB

_STATUS = {WB.Active.value: "active", WB.Draft.value: "draft", WB.Retired.value: "retired"}
_RULE_META = {
    RDF.type,
    SH.construct,
    SH.subject,
    SH.predicate,
    SH.object,
    SH.order,
    SH.deactivated,
    SH.condition,
    DCTERMS.identifier,
    DCTERMS.creator,
    WB.ruleVersion,
    WB.reading,
    WB.ruleStatus,
    WB.testCase,
    RDFS.label,
    RDFS.comment,
    SH.prefixes,
}


def load_rules(paths: Iterable[Path], *, relations: frozenset[str] = frozenset()) -> RuleSet:
    """Every rule in these files, checked one by one and as a set. ``relations`` are the
    predicates declared as wb:Relation; conclusions must use one of them, rdf:type or
    rdfs:subClassOf."""
    rules: list[Rule] = []
    for path in sorted(paths):
        rules.extend(load_file(path, relations=relations))
    seen: dict[tuple[str, int], str] = {}
    for r in rules:
        key = (r.id, r.version)
        if key in seen:
            raise Invalid(f"rule {r.id} version {r.version} is defined twice ({seen[key]} and {r.file})", where=r.file)
        seen[key] = r.file
    ruleset = RuleSet(tuple(sorted(rules, key=lambda r: (r.id, r.version))))
    check_set(ruleset)
    return ruleset


def load_file(path: Path, *, relations: frozenset[str] = frozenset()) -> list[Rule]:
    where = str(path)
    try:
        limits.check_lines(path)
        triples = [q.triple for q in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)]
    except SyntaxError as exc:
        raise ParseError(f"Turtle syntax error: {exc}", where=where) from None
    except MemoryError:  # a token past pyoxigraph's buffer
        raise limits.parser_buffer_error(ox.RdfFormat.TURTLE, where) from None
    except OSError as exc:
        raise Invalid(f"cannot read the rule file: {exc}", where=where) from None
    g = _Graph(triples)
    shapes = sorted({t.subject for t in triples if t.predicate == SH.rule}, key=str)
    if not shapes:
        raise Invalid("no rule here: a rule file declares a shape with sh:rule", where=where)
    used: set[object] = set()
    rules = []
    for shape in shapes:
        target = _target(g, shape, where, used)
        for node in g.objects(shape, SH.rule):
            rules.append(_rule(g, node, target, where, relations, used))
        used.add(shape)
    for t in triples:
        if t.subject not in used and not isinstance(t.subject, ox.BlankNode):
            raise Invalid(
                f"a rule file holds rules only; the triple {t.subject} {t.predicate} {t.object} is data "
                "(facts go through imports and review)",
                where=where,
            )
    return rules


class _Graph:
    def __init__(self, triples: list[ox.Triple]) -> None:
        self.triples = triples

    def objects(self, s: object, p: ox.NamedNode) -> list[ox.NamedNode | ox.Literal | ox.BlankNode]:
        return [t.object for t in self.triples if t.subject == s and t.predicate == p]  # type: ignore[misc]

    def one(self, s: object, p: ox.NamedNode, what: str, where: str) -> ox.NamedNode | ox.Literal | ox.BlankNode:
        found = self.objects(s, p)
        if len(found) != 1:
            raise Invalid(f"{what} needs exactly one {p}, found {len(found)}", where=where)
        return found[0]

    def items(self, node: object) -> list[object]:
        out: list[object] = []
        while node != RDF.nil:
            out.append(self.one(node, RDF.first, "a list", ""))
            node = self.one(node, RDF.rest, "a list", "")
        return out


def _target(g: _Graph, shape: object, where: str, used: set[object]) -> Premise | None:
    found = [
        (p, o)
        for p in (SH.targetSubjectsOf, SH.targetObjectsOf, SH.targetClass, SH.targetNode, SH.target)
        for o in g.objects(shape, p)
    ]
    if len(found) != 1:
        raise Invalid(
            f"the rule shape {shape} needs exactly one target (sh:targetSubjectsOf, sh:targetObjectsOf, "
            f"sh:targetClass or sh:targetNode); it has {len(found)}",
            where=where,
        )
    kind, value = found[0]
    if not isinstance(value, ox.NamedNode) or kind == SH.target:
        raise Invalid("SPARQL-based targets are not supported; name a relation, class or node", where=where)
    if kind == SH.targetSubjectsOf:
        return Premise(THIS, value, Var("_target"), index=-1)
    if kind == SH.targetObjectsOf:
        return Premise(Var("_target"), value, THIS, index=-1)
    if kind == SH.targetClass:
        return Premise(THIS, RDF.type, Var("_target"), index=-1)  # checked with the class below
    return Premise(THIS, ox.NamedNode("urn:wb:rules:is"), value, index=-1)


def _rule(
    g: _Graph, node: object, target: Premise | None, where: str, relations: frozenset[str], used: set[object]
) -> Rule:
    used.add(node)
    types = set(g.objects(node, RDF.type))
    ident = g.objects(node, DCTERMS.identifier)
    if len(ident) != 1 or not isinstance(ident[0], ox.Literal):
        raise Invalid(
            f"the rule {node} needs exactly one dcterms:identifier (its stable id), found {len(ident)}", where=where
        )
    rid = ident[0].value
    where = f"{where}: rule {rid}"
    for t in (t for t in g.triples if t.subject == node and t.predicate not in _RULE_META):
        raise Invalid(f"unexpected property {t.predicate} on a rule", where=where)
    version = g.one(node, WB.ruleVersion, "a rule", where)
    try:
        number = int(version.value)
    except ValueError:
        raise Invalid(f"wb:ruleVersion must be a whole number, not {version.value!r}", where=where) from None
    status = g.one(node, WB.ruleStatus, "a rule", where)
    if status.value not in _STATUS:
        raise Invalid(f"wb:ruleStatus must be wb:Active, wb:Draft or wb:Retired, not {status}", where=where)
    if g.objects(node, SH.condition):
        raise Invalid("sh:condition is not supported; put the condition in the rule's body", where=where)
    fresh = _Fresh()
    if SH.SPARQLRule in types:
        text = g.one(node, SH.construct, "a SPARQL rule", where).value
        head, body = parse_construct(text, where)
        kind = "sparql"
    elif SH.TripleRule in types:
        head, body, text = _triple_rule(g, node, fresh, where, used)
        kind = "triple"
    else:
        raise Invalid("a rule must be an sh:SPARQLRule or an sh:TripleRule", where=where)
    if target is not None:
        _add_target(body, target, g, fresh, where)
    body.premises = _from_this(body.premises)
    rule = Rule(
        iri=str(node),
        id=rid,
        version=number,
        author=g.one(node, DCTERMS.creator, "a rule", where).value,
        reading=g.one(node, WB.reading, "a rule", where).value,
        status=_STATUS[status.value],
        kind=kind,
        head=tuple(head),
        body=tuple(body.premises),
        filters=tuple(body.filters),
        absences=tuple(body.absences),
        concludes=_concludes(head, body),
        domains=tuple(sorted(body.domains.items())),
        extends=_extends(head, body),
        fed=_fed(head, body),
        text=text,
        file=where.split(": rule ")[0],
        tests=tuple(_tests(g, node, where, used)),
    )
    if g.objects(node, SH.deactivated) and g.objects(node, SH.deactivated)[0].value == "true":
        rule = Rule(**{**rule.__dict__, "status": "retired"})
    check_rule(rule, relations, where)
    return rule


def _triple_rule(
    g: _Graph, node: object, fresh: _Fresh, where: str, used: set[object]
) -> tuple[list[Premise], Body, str]:
    body = Body()

    def expr(value: object) -> ox.NamedNode | ox.Literal | Var:
        if value == SH.this:
            return THIS
        if isinstance(value, ox.NamedNode | ox.Literal):
            return value
        path = g.objects(value, SH.path)
        if len(path) != 1:
            raise Invalid(
                "a triple rule's node expression must be sh:this, an IRI, a literal or [ sh:path ... ]", where=where
            )
        out = fresh()
        body.premises.extend(path_premises(THIS, _path(g, path[0], where, used), out, fresh, where))
        used.add(value)
        return out

    s = expr(g.one(node, SH.subject, "a triple rule", where))
    p = g.one(node, SH.predicate, "a triple rule", where)
    o = expr(g.one(node, SH.object, "a triple rule", where))
    if not isinstance(p, ox.NamedNode):
        raise Invalid("a triple rule's sh:predicate must be an IRI", where=where)
    body.premises = [Premise(x.s, x.p, x.o, index=i) for i, x in enumerate(body.premises)]
    return [Premise(s, p, o)], body, f"{s} {p} {o} ← " + " . ".join(str(x) for x in body.premises)


def _path(g: _Graph, node: object, where: str, used: set[object], depth: int = 0) -> object:
    """A SHACL path as rdflib path objects, so SPARQL and SHACL rules share one compiler.
    Nested at most MAX_DEPTH deep (a path that contains itself is nested without end)."""
    from rdflib import URIRef
    from rdflib.paths import InvPath, MulPath, SequencePath

    if depth > MAX_DEPTH:
        raise Invalid(f"a SHACL path nested more than {MAX_DEPTH} deep (the limit), or one that contains itself",
                      where=where)
    used.add(node)
    if isinstance(node, ox.NamedNode):
        return URIRef(node.value)
    if g.objects(node, RDF.first):
        return SequencePath(*[_path(g, x, where, used, depth + 1) for x in g.items(node)])  # type: ignore[arg-type]
    for prop, make in (
        (SH.inversePath, InvPath),
        (SH.zeroOrMorePath, lambda p: MulPath(p, "*")),
        (SH.oneOrMorePath, lambda p: MulPath(p, "+")),
    ):
        inner = g.objects(node, prop)
        if inner:
            return make(_path(g, inner[0], where, used, depth + 1))  # type: ignore[arg-type]
    raise Invalid(
        "this SHACL path is not supported (use IRIs, lists, sh:inversePath, sh:zeroOrMorePath, sh:oneOrMorePath)",
        where=where,
    )


def _add_target(body: Body, target: Premise, g: _Graph, fresh: _Fresh, where: str) -> None:
    """The shape's target as a first premise, unless the body already implies it."""
    if target.p == ox.NamedNode("urn:wb:rules:is"):
        from workbench.values.rules import Filter

        body.filters.insert(0, Filter(sparql=f"(?v_this = {target.o})", vars=frozenset({"this"})))
        return
    for p in body.premises:
        if p.p == target.p and ((target.s == THIS and p.s == THIS) or (target.o == THIS and p.o == THIS)):
            return
    body.premises.insert(0, target)


def _from_this(premises: list[Premise]) -> list[Premise]:
    """Premises in reading order: outward from $this, as written where the distance ties."""
    out: list[Premise] = []
    reached = {"this"}
    pending = list(premises)
    while pending:
        nxt = [p for p in pending if p.vars() & reached or not p.vars()] or pending[:1]
        for p in nxt:
            reached |= p.vars()
            pending.remove(p)
        out.extend(nxt)
    return [Premise(p.s, p.p, p.o, index=i) for i, p in enumerate(out)]


def _extends(head: list[Premise], body: Body) -> tuple[str, str] | None:
    """(P, Q) if the rule is exactly "$this P ?z <- $this P ?y . ?y Q+ ?z" (or Q*)."""
    if len(head) != 1 or body.filters or body.absences or len(body.premises) != 2:
        return None
    h, (a, c) = head[0], body.premises
    if not (h.s == THIS and isinstance(h.p, ox.NamedNode) and isinstance(h.o, Var)):
        return None
    chained = a.s == THIS and a.p == h.p and isinstance(a.o, Var) and isinstance(c.p, Closure)
    if chained and c.s == a.o and c.o == h.o and a.o != h.o:
        return (h.p.value, c.p.predicate.value)  # type: ignore[union-attr]
    return None


def _fed(head: list[Premise], body: Body) -> tuple[tuple[int, str, str], ...]:
    """Premises "X P ?k" whose ?k is used only as the start of a Q closure (and nowhere else:
    not in other premises, filters, absences or the conclusion)."""
    out = []
    for a in body.premises:
        if not (isinstance(a.p, ox.NamedNode) and isinstance(a.o, Var)) or a.s == a.o:
            continue
        k = a.o.name
        closures = [c for c in body.premises if isinstance(c.p, Closure) and c.s == a.o and c.o != a.o]
        others = [q for q in body.premises if q is not a and k in q.vars() and q not in closures]
        used = any(k in f.vars for f in body.filters) or any(k in n.vars for n in body.absences)
        if len(closures) == 1 and not others and not used and all(k not in h.vars() for h in head):
            out.append((a.index, a.p.value, closures[0].p.predicate.value))  # type: ignore[union-attr]
    return tuple(out)


def _concludes(head: list[Premise], body: Body) -> frozenset[str] | None:
    out: set[str] = set()
    for h in head:
        if isinstance(h.p, ox.NamedNode):
            out.add(h.p.value)
        else:
            domain = body.domains.get(h.p.name)  # type: ignore[union-attr]
            if domain is None:
                return None
            out |= domain
    return frozenset(out)


def _tests(g: _Graph, node: object, where: str, used: set[object]) -> list[TestCase]:
    out = []
    for i, case in enumerate(g.objects(node, WB.testCase)):
        used.add(case)

        def text(p: ox.NamedNode, case: object = case) -> str:
            found = g.objects(case, p)
            return found[0].value if found else ""

        if not text(WB.given):
            raise Invalid(f"test case {i + 1} has no wb:given facts", where=where)
        label = g.objects(case, RDFS.label)
        out.append(
            TestCase(
                name=label[0].value if label else f"case {i + 1}",
                given=text(WB.given),
                expect=text(WB.expect),
                expect_not=text(WB.expectNot),
            )
        )
    if not out:
        raise Invalid("a rule needs test cases (wb:testCase with wb:given and wb:expect / wb:expectNot)", where=where)
    return out


def check_rule(rule: Rule, relations: frozenset[str], where: str) -> None:
    """One rule's own checks: safe variables, a connected body, conclusions it may draw."""
    body_vars = frozenset().union(*(p.vars() for p in rule.body))
    for h in rule.head:
        missing = h.vars() - body_vars
        if missing:
            raise Invalid(f"the conclusion uses ?{sorted(missing)[0]}, which the body never binds", where=where)
        if THIS not in (h.s, h.o) and "this" not in h.vars():
            raise Invalid("a conclusion must be about $this (goal-directed evaluation binds it)", where=where)
        allowed = rule.concludes
        if allowed is None:
            raise Invalid(
                "a conclusion with a free predicate could write anything; restrict it with FILTER(?p IN (...))",
                where=where,
            )
        for p in sorted(allowed):
            if p not in relations and p not in (RDF.type.value, RDFS.subClassOf.value):
                raise Invalid(
                    f"the conclusion would write {p}, which is not a relation rules may conclude: a declared "
                    "relation (wb:Relation), rdf:type or rdfs:subClassOf (record metadata, provenance, names "
                    "and identity are never derived)",
                    where=where,
                )
    for f in rule.filters:
        if f.vars - body_vars:
            raise Invalid(f"a FILTER uses ?{sorted(f.vars - body_vars)[0]}, which the body never binds", where=where)
    reached = {"this"}
    pending = list(rule.body)
    while pending:
        nxt = [p for p in pending if p.vars() & reached or not p.vars()]
        if not nxt:
            raise Invalid(f"the premise {pending[0]} does not connect to $this", where=where)
        for q in nxt:
            reached |= q.vars()
            pending.remove(q)


def check_set(rules: RuleSet) -> None:
    """Checks across rules: closures and NOT EXISTS may only read what no rule concludes."""
    for rule in rules.active():
        where = f"{rule.file}: rule {rule.id}"
        for p in rule.body:
            if isinstance(p.p, Closure) and rules.concluding(p.p):
                other = rules.concluding(p.p)[0]
                raise Invalid(
                    f"the path {p.p} runs over recorded facts only, but rule {other.id} concludes {p.p.predicate}",
                    where=where,
                )
        for absence in rule.absences:
            for p in absence.premises:
                if isinstance(p.p, Closure) or rules.concluding(
                    p.p, rule.domain(p.p.name) if isinstance(p.p, Var) else None
                ):
                    raise Invalid(
                        f"FILTER NOT EXISTS may only look at recorded facts, and a rule concludes what {p} asks about",
                        where=where,
                    )
