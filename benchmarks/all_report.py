"""``bench all``'s report: one summary table (Workbench ÷ each peer), the notes that say how to
read it, the log-log chart, and each part's own printout under Details."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from benchmarks import svg
from benchmarks.ask_owlrl import CAN_ANSWER
from benchmarks.ask_peers import PEER_TIERS, PEERS, PeerRun
from benchmarks.ask_results import TIERS, _ms, _x
from benchmarks.load import CONTENDERS as LOAD_CONTENDERS

if TYPE_CHECKING:
    from benchmarks.all import AllRun

UP_FRONT = "ask: before the first answer"
SERVE_NAMES = {"workbench": "workbench serve (access control on)", "oxigraph": "oxigraph serve (bare)"}
INDEX_NAMES = {"exact": "exact (flat)", "ivf": "IVF", "hnsw": "HNSW (the peer)"}


@dataclass(frozen=True)
class Row:
    """One line of the summary: a contender's figure in one part at one size, and Workbench ÷ it."""

    part: str
    size: str
    contender: str
    figure: str
    checked: str = ""
    rss_mib: float | None = None
    ratio: str = ""
    rss_ratio: str = ""
    value: float = math.nan  # the figure's number, for the JSON (seconds or milliseconds)


def _rss(x: float | None) -> str:
    return "" if x is None or x != x else f"{x:,.0f}"


def _rss_x(wb: float | None, it: float | None) -> str:
    return _x(wb, it) if wb is not None and it is not None else ""


def _peer_of(run: AllRun, peer: str, label: str) -> PeerRun | None:
    return next((r for r in run.peers.get(peer, []) if r.size.label == label), None)


def load_rows(run: AllRun) -> Iterator[Row]:
    for r in run.load:
        wb = r.results["workbench"]
        for name in ("workbench", *(c for c in LOAD_CONTENDERS if c != "workbench")):
            res, label = r.results.get(name), LOAD_CONTENDERS[name][0]
            if res is None:
                continue
            me = name == "workbench"
            yield Row("load: seconds", r.size.label, "Workbench import (provenance)" if me else label,
                      f"{res.seconds:,.2f} s", "every triple" if not me else "1 assertion a world", res.rss_mib,
                      "" if me else _x(wb.seconds, res.seconds), "" if me else _x(wb.rss_mib, res.rss_mib),
                      res.seconds)


def _peer_row(part: str, peer: PeerRun, tier: str, wb_ms: float, wb_rss: float | None) -> Row:
    t = peer.tiers[tier]
    up_front = peer.figures["parse_s"] + peer.figures["materialise_s"]
    return Row(part, peer.size.label, f"{PEERS[peer.peer]}: lookup",
               f"{_ms(peer.p50(tier))} ms, after {up_front:,.1f} s",
               f"{t['right']}/{t['questions']}", peer.peak_rss_mib,
               "not asked of Workbench" if wb_ms != wb_ms else _x(wb_ms, peer.p50(tier)) if t["right"] == t["questions"]
               else f"n/a: {t['questions'] - t['right']} answers wrong", _rss_x(wb_rss, peer.peak_rss_mib),
               peer.p50(tier))


def ask_rows(run: AllRun) -> Iterator[Row]:
    for tier, words in PEER_TIERS.items():
        part = f"ask p50: {words}"
        for size in run.sizes:
            asked = next((a for a in run.ask if a.size == size), None)
            wb_ms, wb_rss = (asked.p50(tier, "workbench"), asked.peak_rss_mib) if asked and tier in TIERS else (
                math.nan, None)
            if asked and tier in TIERS:
                right = "{}/{}".format(*asked.right(tier, "workbench"))
                yield Row(part, size.label, "Workbench `ask`", f"{_ms(wb_ms)} ms", right, wb_rss, value=wb_ms)
                floor = asked.p50(tier, "floor")
                yield Row(part, size.label, "floor (bare SPARQL)", f"{_ms(floor)} ms",
                          "{}/{}".format(*asked.right(tier, "floor")), None, _x(wb_ms, floor), "same process",
                          floor)
            for peer in PEERS:  # where a peer gave up, 'ask: before the first answer' says so once
                p = _peer_of(run, peer, size.label)
                if p is not None and p.status == "ok":
                    yield _peer_row(part, p, tier, wb_ms, wb_rss)


def up_front_rows(run: AllRun) -> Iterator[Row]:
    """What each does before its first answer: Workbench imports; the peers parse and materialise."""
    for size in run.sizes:
        loaded = next((r for r in run.load if r.size == size), None)
        wb = loaded.results["workbench"] if loaded else None
        if wb is not None:
            yield Row(UP_FRONT, size.label, "Workbench import (provenance)", f"{wb.seconds:,.2f} s",
                      rss_mib=wb.rss_mib, value=wb.seconds)
        for peer in PEERS:
            p = _peer_of(run, peer, size.label)
            if p is None:
                continue
            why = p.why(run.peer_timeout, run.peer_memory_gib)
            if why:
                yield Row(UP_FRONT, size.label, PEERS[peer], why,
                          rss_mib=p.peak_rss_mib if p.gave_up else None)
                continue
            f = p.figures
            s = f["parse_s"] + f["materialise_s"]
            yield Row(UP_FRONT, size.label, f"{PEERS[peer]}: parse + materialise",
                      f"{s:,.1f} s ({f['triples_before']:,.0f} → {f['triples_after']:,.0f} triples)", "",
                      p.peak_rss_mib, _x(wb.seconds, s) if wb else "", _rss_x(wb.rss_mib if wb else None,
                                                                             p.peak_rss_mib), s)


def serve_rows(run: AllRun) -> Iterator[Row]:
    for r in run.serve:
        for n in r.clients:
            part = f"serve p50: point query, {n} client{'s' * (n > 1)}"
            wb = r.cell("workbench", "point", n)
            for name in ("workbench", "oxigraph"):
                c = r.cell(name, "point", n)
                rss = r.peak_rss_mib.get(name)
                me = name == "workbench"
                yield Row(part, r.size.label, SERVE_NAMES[name], f"{_ms(c.p50)} ms",
                          f"{len(c.ms) - c.errors:,}/{len(c.ms):,} answered", rss,
                          "" if me else _x(wb.p50, c.p50), "" if me else _rss_x(r.peak_rss_mib.get("workbench"), rss),
                          c.p50)


def recall_rows(run: AllRun) -> Iterator[Row]:
    from workbench.vectors.index import EXACT_LIMIT

    for d in run.recall:
        ours = "exact" if d.n <= EXACT_LIMIT else "ivf"
        part = f"recall index p50 (1 thread), {d.n:,} vectors"
        wb = d.results.get(ours)
        for kind in (ours, *(k for k in INDEX_NAMES if k != ours)):
            r = d.results.get(kind)
            name = f"Workbench's index: {INDEX_NAMES[kind]}" if kind == ours else INDEX_NAMES[kind]
            if r is None:
                yield Row(part, d.label, name, d.skipped.get(kind, "skipped"))
                continue
            rss = r.get("peak_rss_mib")
            yield Row(part, d.label, name, f"{_ms(r['p50_1t'])} ms (build {r['build_s']:,.2f} s)",
                      f"recall@10 {r['recall']:.3f}", rss, "" if kind == ours or wb is None else _x(wb["p50_1t"],
                                                                                                   r["p50_1t"]),
                      "" if kind == ours or wb is None else _rss_x(wb.get("peak_rss_mib"), rss), r["p50_1t"])


def _pc(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def quality_rows(run: AllRun) -> Iterator[Row]:
    for label, wb, plain in run.quality:
        part = f"recall quality: {label.replace('`', '')}"
        for name, t in (("Workbench `recall`", wb), ("plain vector RAG (top 10)", plain)):
            me = t is wb
            ratio = "" if me else (f"hit@1 {_x(wb.hit_at_1 or 0, t.hit_at_1 or 0)}, context "
                                   f"{_x(wb.mean_chars, t.mean_chars)}")
            yield Row(part, "dev set", name, f"hit@1 {_pc(t.hit_at_1)}, hit@5 {_pc(t.hit_at_5)}, abstains "
                      f"{_pc(t.abstention)}, {t.mean_chars:,.0f} chars", f"stale {t.stale_returned}", ratio=ratio,
                      value=t.hit_at_1 if t.hit_at_1 is not None else math.nan)


def rows(run: AllRun) -> list[Row]:
    return [*load_rows(run), *up_front_rows(run), *ask_rows(run), *serve_rows(run), *recall_rows(run),
            *quality_rows(run)]


def table(all_rows: list[Row]) -> list[str]:
    lines = ["| part | size | contender | figure | checked | peak RSS (MiB) | Workbench ÷ it: time "
             "| Workbench ÷ it: peak RSS |", "|---|---|---|---|---|---:|---:|---:|"]
    for r in all_rows:
        rss = _rss(r.rss_mib) if r.rss_mib is not None else ""
        lines.append(f"| {r.part} | {r.size} | {r.contender} | {r.figure} | {r.checked} | {rss} | {r.ratio} "
                     f"| {r.rss_ratio} |")
    return lines


def glance(run: AllRun) -> list[str]:
    """One line per size: Workbench ÷ the main peer of each part, in words."""
    from workbench.vectors.index import EXACT_LIMIT

    out = []
    for size in run.sizes:
        said = []
        loaded = next((r for r in run.load if r.size == size), None)
        if loaded:
            wb, res = loaded.results["workbench"], loaded.results
            said.append(f"load {_x(wb.seconds, res['floor-nt'].seconds)} the bare bulk load's time"
                        + (f" ({_x(wb.seconds, res['rdflib'].seconds)} rdflib's parse)" if "rdflib" in res else ""))
        asked = next((a for a in run.ask if a.size == size), None)
        if asked:
            said.append(f"a derived answer {_x(asked.p50('derived', 'workbench'), asked.p50('derived', 'floor'))} "
                        "the bare query's p50")
        peers = []
        for peer in PEERS:
            p = _peer_of(run, peer, size.label)
            if p is not None:
                up = p.figures.get("parse_s", 0) + p.figures.get("materialise_s", 0)
                peers.append(f"{PEERS[peer].split(' ')[0]} {up:,.0f} s" if p.status == "ok"
                             else f"{PEERS[peer].split(' ')[0]} {p.why(run.peer_timeout, run.peer_memory_gib)}")
        if peers:
            wb_import = [f"Workbench's import {loaded.results['workbench'].seconds:,.1f} s"] if loaded else []
            said.append("before a first answer: " + ", ".join(wb_import + peers))
        served = next((r for r in run.serve if r.size == size), None)
        if served:
            said.append(f"serve {served.ratios('point', 1)[0]:.2f}× oxigraph serve's p50 (1 client)")
        index = next((d for d in run.recall if d.label == size.label), None)
        if index:
            ours = "exact" if index.n <= EXACT_LIMIT else "ivf"
            peer = "hnsw" if "hnsw" in index.results else "exact"
            if ours in index.results and peer in index.results and peer != ours:
                said.append(f"recall index: Workbench's {INDEX_NAMES[ours].split(' ')[0]} "
                            f"{_x(index.results[ours]['p50_1t'], index.results[peer]['p50_1t'])} "
                            f"{INDEX_NAMES[peer].split(' ')[0]}'s p50")
        if said:
            out.append(f"- **{size.label}**: " + "; ".join(said) + ".")
    for _, wb, plain in run.quality[:1]:
        out.append(f"- **recall quality**, the development set: hit@1 {_pc(wb.hit_at_1)} against the plain "
                   f"recipe's {_pc(plain.hit_at_1)}, {wb.stale_returned} stale records against {plain.stale_returned}, "
                   f"{wb.mean_chars:,.0f} characters of context against {plain.mean_chars:,.0f}.")
    return out


def notes(run: AllRun) -> list[str]:
    """How the table was measured and how to read it, with this run's settings."""
    out = ["Ratios are Workbench ÷ the contender on the row's own measure (above 1×: Workbench takes longer, or "
           "holds more memory); each part is one of the benchmarks of [benchmarks.md](benchmarks.md), run by its own "
           "code in this run, where each has its full table and reading. Peak RSS is each contender's own process "
           "(the kernel's high-water mark)."]
    if run.load:
        out.append("- **load**: one run per contender in a fresh process (bench load's `--repeat` gives medians); "
                   "checked: the store or graph holds every triple, Workbench's one assertion with provenance per "
                   "world.")
    if run.ask or run.peers:
        questions = next((a.right("recorded", "workbench")[1] for a in run.ask), None)
        out.append("- **ask**: p50 per question" + (f" over {questions} questions per tier" if questions else "")
                   + "; `Workbench.ask` with names, proof and sources; the floor is the bare store's SPARQL in the "
                   "same process (so it shares the peak RSS); the peers look each question up in their materialised "
                   "rdflib graph, after the up-front work in 'ask: before the first answer'. Checked: answers that "
                   "match the worlds' ground truth. Kind membership (\"is T a J?\", J a kind above T's) is asked of "
                   "the peers only.")
    if run.peers:
        out.append(f"- **peers' budget**: each peer runs in a child process with {run.peer_timeout:g} s of wall time "
                   f"(start-up, parse and materialisation included) and {run.peer_memory_gib:g} GiB of resident "
                   "memory; past either it is stopped and not tried at larger sizes: \"gave up at SIZE\".")
        for peer, runs in run.peers.items():
            done = [r.size.label for r in runs if r.status == "ok"]
            stopped = next((r.why(run.peer_timeout, run.peer_memory_gib) for r in runs if r.status != "ok"), "")
            out.append(f"  - {PEERS[peer]}: answered at {', '.join(done) or 'no size'}"
                       + (f"; {stopped}" if stopped else "; never gave up") + ".")
        out.append(f"- **owlrl** answers {CAN_ANSWER}. Its wrong answers are counted, not hidden; 'no evidence' is "
                   "right only because it concludes nothing about those facts.")
        wrong = next((w for r in run.peers.get("owlrl", []) if r.status == "ok"
                      for w in r.tiers["derived"]["wrong"]), "")
        if wrong:
            out.append(f"  For instance it answers \"{wrong}\" with nothing: the fact is inherited from a kind.")
    if run.serve:
        out.append("- **serve**: the point query on a different subject each request, as `bench serve` sends it; p50 "
                   "as a client sees it; peak RSS is the server process's after the cells.")
    if run.recall:
        out.append("- **recall index**: as many vectors as the size has relations (synthetic record statements, the "
                   "hashing encoder); Workbench's index is exact up to 200,000 vectors and IVF above; p50 of a single "
                   "search on one thread, as `VectorIndex` searches; peak RSS of the child that built, queried, "
                   "saved and loaded the index.")
    if run.quality:
        out.append("- **recall quality**: the development set (`data/eval/dev.jsonl`) on a scratch store, plain and "
                   "with distractors; it does not change with the size.")
    return out


def render(run: AllRun, *, chart: str | None) -> str:
    """The whole of docs/bench-all.md."""
    sizes = "; ".join(f"{s.label} = {s.worlds:,} worlds, {run.relations(s):,} relations" for s in run.sizes)
    lines = ["# All benchmarks at once", "",
             "Generated by `workbench bench all` (edits are lost on the next run). The benchmarks one by one, "
             "with their readings: [benchmarks.md](benchmarks.md).", "",
             f"Command: `{run.command}`  ", f"Machine: {run.machine}{_busy(run)}  ", f"Code: {run.code}  ",
             f"Date: {run.date}",
             "", f"Sizes: {sizes}.", "", "## Summary", "", "Workbench ÷ its peers, at a glance:", "",
             *glance(run), "", *table(rows(run)), "", *notes(run)]
    if chart:
        lines += ["", f"![latency and peak RSS against size, log-log]({chart})"]
    lines += ["", "## Details", ""]
    if run.peers:
        lines += ["<details><summary>peers, size by size</summary>", "", *peer_table(run), "", "</details>", ""]
    for part, text in run.printed.items():
        lines += [f"<details><summary>what bench {part} printed</summary>", "", text.strip(), "", "</details>", ""]
    return "\n".join(lines)


def _busy(run: AllRun) -> str:
    if not run.load_average:
        return ""
    return (" (1-minute load average " + " → ".join(f"{x:.1f}" for x in run.load_average) + " from start to end: "
            "a shared machine; ratios within the run are what count)")


def peer_table(run: AllRun) -> list[str]:
    lines = ["| peer | size | status | wall (s) | peak RSS (MiB) | parse (s) | materialise (s) | triples after | "
             + " | ".join(f"right: {w}" for w in PEER_TIERS.values()) + " |",
             "|---|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(PEER_TIERS)]
    for peer, runs in run.peers.items():
        for r in runs:
            f, why = r.figures, r.why(run.peer_timeout, run.peer_memory_gib) or "answered"
            right = " | ".join(f"{r.tiers[t]['right']}/{r.tiers[t]['questions']}" if t in r.tiers else ""
                               for t in PEER_TIERS)
            wall = "" if r.seconds != r.seconds else f"{r.seconds:,.1f}"
            lines.append(f"| {PEERS[peer]} | {r.size.label} | {why} | {wall} | {_rss(r.peak_rss_mib)} | "
                         + (f"{f['parse_s']:,.2f} | {f['materialise_s']:,.1f} | {f['triples_after']:,.0f}" if f
                            else " | | ") + f" | {right} |")
    return lines


def summary_json(run: AllRun) -> dict[str, Any]:
    return {"command": run.command, "machine": run.machine, "code": run.code, "date": run.date,
            "sizes": [{"label": s.label, "worlds": s.worlds, "relations": run.relations(s)} for s in run.sizes],
            "rows": [asdict(r) for r in rows(run)],
            "peers": {p: [r.to_json() for r in runs] for p, runs in run.peers.items()}}


# ---------------------------------------------------------------- the chart

WIDTH, HEIGHT = 680, 380  # each panel's; the legend needs the 200 px right margin
#: One colour per contender across the panels; Workbench's own lines dark, the pyoxigraph floor blue.
COLOURS = {"workbench": "#333333", "floor-nt": "#1f77b4", "floor": "#1f77b4", "oxigraph": "#1f77b4",
           "floor-nq": "#17becf", "rdflib": "#9467bd", "pyshacl": "#d62728", "owlrl": "#2ca02c", "exact": "#333333",
           "ivf": "#8c564b", "hnsw": "#ff7f0e"}


def _panel(lines: list[svg.Line], *, title: str, x_label: str, y_unit: str = "ms",
           marks: Sequence[svg.Mark] = ()) -> list[str]:
    return svg.loglog(lines, title=title, x_label=x_label, y_unit=y_unit, marks=marks, width=WIDTH, height=HEIGHT,
                      margins=(70, 200, 30, 50))


def _line(points: list[tuple[float, float]], key: str, label: str, dash: str = "") -> svg.Line:
    return svg.Line(points, COLOURS[key], dash, label)


def chart(run: AllRun) -> str:
    """Log-log panels against size: load seconds, ask p50, the peers' up-front work, serve p50,
    recall index p50, peak RSS; a cross where a peer gave up."""
    x = {s.label: float(run.relations(s)) for s in run.sizes}
    xl = "relations (synthetic worlds)"
    panels: list[list[str]] = []
    if run.load:
        lines = [_line([(x[r.size.label], r.results[c].seconds) for r in run.load if c in r.results], c, label)
                 for c, (label, _) in LOAD_CONTENDERS.items()]
        panels.append(_panel(lines, title="load: seconds", x_label=xl, y_unit="s"))
    if run.ask or run.peers:
        lines = [_line([(x[a.size.label], a.p50("derived", c)) for a in run.ask], c, label)
                 for c, label in (("workbench", "Workbench ask"), ("floor", "floor (bare SPARQL)"))]
        for peer, tier, dash in (("pyshacl", "derived", ""), ("owlrl", "recorded", "2,3")):
            pts = [(x[r.size.label], r.p50(tier)) for r in run.peers.get(peer, []) if r.status == "ok"]
            lines.append(_line(pts, peer, f"{peer} lookup" + (" (recorded)" if tier == "recorded" else ""), dash))
        panels.append(_panel(lines, title="ask: p50 of a derived answer (owlrl: recorded, dotted)", x_label=xl))
    if run.peers:
        lines = []
        marks: list[svg.Mark] = []
        if run.load:
            lines.append(_line([(x[r.size.label], r.results["workbench"].seconds) for r in run.load], "workbench",
                               "Workbench import"))
        for peer, runs in run.peers.items():
            lines.append(_line([(x[r.size.label], r.figures["parse_s"] + r.figures["materialise_s"])
                                for r in runs if r.status == "ok"], peer, f"{peer}: materialise"))
            marks += [svg.Mark(x[r.size.label], r.seconds, COLOURS[peer], f"{peer} gave up",
                               14.0 * sum(m.x == x[r.size.label] for m in marks)) for r in runs if r.gave_up]
        panels.append(_panel(lines, title="before the first answer: seconds", x_label=xl, y_unit="s",
                                 marks=marks))
    if run.serve:
        top = max(run.serve[0].clients)
        lines = [_line([(x[r.size.label], r.cell(s, "point", n).p50) for r in run.serve], s,
                       f"{s} serve" if n == 1 else "", "" if n == 1 else "2,3")
                 for s in ("workbench", "oxigraph") for n in sorted({1, top})]
        panels.append(_panel(lines, title=f"serve: point query p50, 1 client ({top} dotted)", x_label=xl))
    if run.recall:
        lines = [_line([(float(d.n), d.results[k]["p50_1t"]) for d in run.recall if k in d.results], k, label)
                 for k, label in INDEX_NAMES.items()]
        panels.append(_panel(lines, title="recall index: p50 of a search, 1 thread", x_label="vectors"))
    rss = _rss_lines(run, x)
    if rss:
        panels.append(_panel(rss, title="peak RSS", x_label=xl, y_unit="MiB"))
    return svg.document(panels, width=WIDTH, height=HEIGHT, columns=2)


def _rss_lines(run: AllRun, x: dict[str, float]) -> list[svg.Line]:
    """Peak RSS per contender; Workbench's import solid, its asking dashed, its server dotted."""
    series: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for r in run.load:
        for c in ("workbench", "floor-nt", "rdflib"):
            if c in r.results:
                key = (c, f"{LOAD_CONTENDERS[c][0]} load", "")
                series.setdefault(key, []).append((x[r.size.label], r.results[c].rss_mib))
    for a in run.ask:
        series.setdefault(("workbench", "Workbench ask", "6,3"), []).append((x[a.size.label], a.peak_rss_mib))
    for peer, runs in run.peers.items():
        series[(peer, peer, "")] = [(x[r.size.label], r.peak_rss_mib) for r in runs if r.status == "ok"]
    for s in run.serve:
        for name in ("workbench", "oxigraph"):
            if s.peak_rss_mib.get(name) is not None:
                series.setdefault((name, f"{name} serve", "2,3"), []).append((x[s.size.label], s.peak_rss_mib[name]))
    return [_line(pts, key, label, dash) for (key, label, dash), pts in series.items()]
