"""Entities: find one by a name (bound exactly, as answering binds it) or in the list; its names
and aliases with their languages; register an alias; merge and split (curators, with a reason);
and possible duplicates, suggested by spelling for a person to decide.

The duplicates are computed here, from the entity list, with difflib ratios of the name keys:
the API has no route for name suggestions (recall bundles carry "did you mean" only for names
in a question). They are suggestions only: each pair offers a "Merge…" that fills in the merge
form, and nothing merges until a curator gives a reason and presses Merge.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st

from workbench.access.users import Role
from workbench.client import Client
from workbench.errors import WorkbenchError
from workbench.names.keys import name_key
from workbench.presentation.notebook import frame
from workbench.ui import session
from workbench.ui.common import acting, explain
from workbench.ui.md import code, md
from workbench.values.records import Entity

ALIKE = 0.85  # the default difflib ratio at which two names are suggested as duplicates
MAX_NAMES = 1000  # more names than this: filter the list first
MAX_PAIRS = 50
DUPLICATE_NOTE = "Possible duplicates — a person decides. Nothing is merged unless a curator merges it."


@dataclass(frozen=True)
class Pair:
    """Two entities with names spelled alike: ``keep`` has more names (the one to keep, by default)."""

    keep: Entity
    other: Entity
    keep_name: str
    other_name: str
    score: float  # 1.0: the same name (it binds to neither)


def label(entity: Entity) -> str:
    return entity.names[0] if entity.names else entity.iri


def names_of(entity: Entity) -> list[str]:
    return [*entity.names, *(a for a, _ in entity.aliases)]


def matches(entity: Entity, text: str) -> bool:
    """Whether any name, alias or the IRI contains ``text`` (case and spacing aside)."""
    if not text.strip():
        return True
    key = name_key(text)
    return any(key in name_key(n) for n in [*names_of(entity), entity.iri])


def possible_duplicates(entities: Sequence[Entity], alike: float = ALIKE) -> list[Pair]:
    """Pairs of entities (merged ones left out) whose name keys are at least ``alike`` similar
    (difflib's ratio), most alike first; one pair per two entities, by their most alike names."""
    keyed = [(name_key(n), n, e) for e in entities if e.merged_into is None for n in names_of(e)]
    best: dict[tuple[str, str], Pair] = {}
    for (ka, na, ea), (kb, nb, eb) in itertools.combinations(keyed, 2):
        if ea.iri == eb.iri or 2 * min(len(ka), len(kb)) / ((len(ka) + len(kb)) or 1) < alike:
            continue  # the same entity, or too different in length to be alike
        score = 1.0 if ka == kb else difflib.SequenceMatcher(None, ka, kb, autojunk=False).ratio()
        if score < alike:
            continue
        if (-len(names_of(eb)), eb.iri) < (-len(names_of(ea)), ea.iri):
            ea, na, eb, nb = eb, nb, ea, na  # keep the one with more names (or the first IRI)
        pair = (ea.iri, eb.iri)
        if pair not in best or score > best[pair].score:
            best[pair] = Pair(ea, eb, na, nb, score)
    return sorted(best.values(), key=lambda p: (-p.score, p.keep.iri, p.other.iri))


@st.cache_data(max_entries=8, show_spinner=False)
def _duplicates(entities: tuple[Entity, ...], alike: float) -> list[Pair]:
    return possible_duplicates(entities, alike)


# ---------------------------------------------------------------------- acting


def _done(slot: str, act: Callable[[], str], clear: Sequence[str] = ()) -> None:
    """Run a write in a widget callback and keep its outcome for the page to show at ``slot``;
    on success clear the inputs ``clear``, on an error keep what the person typed."""
    try:
        st.session_state[f"ent_done_{slot}"] = ("ok", act())
    except WorkbenchError as exc:
        st.session_state[f"ent_done_{slot}"] = ("error", explain(exc))
        return
    for key in clear:
        st.session_state[key] = ""


def _outcome(slot: str) -> None:
    found = st.session_state.pop(f"ent_done_{slot}", None)
    if found:
        kind, message = found
        if kind == "ok":
            st.success(message, icon=":material/check_circle:")
        elif kind == "note":
            st.info(message, icon=":material/edit_note:")
        else:
            st.error(message, icon=":material/error:")


def _needs_curator(what: str) -> None:
    who = session.user()
    if who is None:
        signed = "This store has no users, so it is read only here."
    else:
        signed = f"You are signed in as {who.name} ({', '.join(sorted(r.value for r in who.roles))})."
    st.info(f"{what} needs the curator role. {signed} Ask a curator to do it, or an admin to give you the role.",
            icon=":material/lock:")


def _register_alias(wb: Client, iri: str, slot: str) -> None:
    alias = st.session_state.get(f"alias_{slot}", "").strip()
    lang = st.session_state.get(f"alias_lang_{slot}", "").strip() or None
    if not alias:
        st.session_state[f"ent_done_{slot}"] = ("error", "Please type the new alias.")
        return
    tagged = f"“{md(alias)}”" + (f" ({md(lang)})" if lang else "")
    _done(slot, lambda: f"{tagged} is now an alias of {code(wb.add_alias(iri, alias, lang=lang).value)}.",
          clear=(f"alias_{slot}", f"alias_lang_{slot}"))


def _merge(wb: Client) -> None:
    keep, other = st.session_state.get("merge_keep", "").strip(), st.session_state.get("merge_other", "").strip()
    reason = st.session_state.get("merge_reason", "").strip()
    if not (keep and other and reason):
        st.session_state["ent_done_merge"] = ("error", "Please name both entities and say why they are the same.")
        return
    def act() -> str:
        done = wb.merge(keep, other, reason=reason)
        return f"Merged: {code(other)} is now the same as {code(keep)} (act {code(done.value)}). A split undoes it."

    _done("merge", act, clear=("merge_keep", "merge_other", "merge_reason"))


def _split(wb: Client) -> None:
    ref, reason = st.session_state.get("split_entity"), st.session_state.get("split_reason", "").strip()
    if not (ref and reason):
        st.session_state["ent_done_split"] = ("error", "Please choose the merged entity and say why they differ.")
        return
    def act() -> str:
        done = wb.split(ref, reason=reason)
        return f"Split: {code(ref)} is its own entity again (act {code(done.value)})."

    _done("split", act, clear=("split_reason",))


def _prefill(pair: Pair) -> None:
    st.session_state["merge_keep"], st.session_state["merge_other"] = pair.keep.iri, pair.other.iri
    st.session_state["merge_reason"] = ""
    st.session_state["ent_done_merge"] = (
        "note", f"Filled in from possible duplicates: keep {md(pair.keep_name)}, merge {md(pair.other_name)} into it. "
              "Check that they are the same, give the reason, then press Merge.")


# ---------------------------------------------------------------------- sections


def _show(wb: Client, entity: Entity, entities: Sequence[Entity], curator: bool, slot: str) -> None:
    """One entity: its names and aliases (with languages), merges, and registering an alias."""
    st.markdown(f"**{md(label(entity))}** · {code(entity.iri)}")
    if entity.merged_into:
        into = next((label(e) for e in entities if e.iri == entity.merged_into), entity.merged_into)
        st.info(f"Merged into {md(into)} ({code(entity.merged_into)}): its names bind to that entity now. "
                "A curator can split it off again under Merge and split.")
    folded = [label(e) for e in entities if e.merged_into == entity.iri]
    if folded:
        st.caption("Merged into this one: " + ", ".join(md(f) for f in folded))
    rows = ([{"name": n, "kind": "name", "language": "—"} for n in entity.names]
            + [{"name": a, "kind": "alias", "language": lang or "—"} for a, lang in entity.aliases])
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch")
    else:
        st.caption("No names registered.")
    if not curator:
        return
    _outcome(slot)
    with st.form(f"alias_form_{slot}", border=False):
        cols = st.columns([3, 1])
        cols[0].text_input("New alias", key=f"alias_{slot}", placeholder="巴黎")
        cols[1].text_input("Language (optional)", key=f"alias_lang_{slot}", placeholder="zh", max_chars=35,
                           help="A language tag such as en, zh or fr-CA.")
        st.form_submit_button("Register alias", on_click=_register_alias, args=(wb, entity.iri, slot))


def _find(wb: Client, entities: Sequence[Entity], curator: bool) -> None:
    st.subheader("Find by name")
    name = st.text_input("A name or alias", key="ent_find", placeholder="Paris, 巴黎, my advisor")
    if not name.strip():
        return
    with acting():
        found = wb.resolve(name)
        if found.outcome == "bound" and found.entity:
            st.success(f"“{md(name)}” binds to {code(found.entity)}.", icon=":material/link:")
            _show(wb, wb.entity(found.entity), entities, curator, "find")
        elif found.outcome == "ambiguous":
            st.warning(f"“{md(name)}” is a name of {len(found.entities)} entities, so it binds to none of them. "
                       "If they are the same, a curator can merge them; if not, register a distinct alias "
                       "for each.", icon=":material/call_split:")
            by_iri = {e.iri: e for e in entities}
            for iri in found.entities:
                st.markdown(f"- {code(iri)}: {', '.join(md(n) for n in names_of(by_iri.get(iri, Entity(iri, ()))))}")
        else:
            st.info(f"“{md(name)}” binds to no entity. Names bind only exactly or through a registered alias.")
            spelled = {name_key(n): n for e in entities for n in names_of(e)}
            alike = difflib.get_close_matches(name_key(name), list(spelled), n=5, cutoff=0.6)
            if alike:
                st.caption("Spelled alike (a suggestion, never a binding): " + ", ".join(md(spelled[k]) for k in alike))


def _browse(wb: Client, entities: Sequence[Entity], curator: bool) -> list[Entity]:
    st.subheader("All entities")
    cols = st.columns([3, 1])
    text = cols[0].text_input("Filter by name, alias or IRI", key="ent_filter")
    merged = cols[1].toggle("Show merged ones", key="ent_merged")
    shown = [e for e in entities if matches(e, text) and (merged or e.merged_into is None)]
    if shown:
        st.dataframe(frame(shown), hide_index=True, width="stretch")
    st.caption(f"{len(shown)} of {len(entities)} entities")
    by_iri = {e.iri: e for e in shown}
    pick = st.selectbox("Open an entity", list(by_iri), index=None, key="ent_pick", placeholder="Choose one",
                        format_func=lambda iri: f"{label(by_iri[iri])}  ·  {iri}")
    if pick:
        _show(wb, by_iri[pick], entities, curator, "pick")
    return shown


def _merge_and_split(wb: Client, entities: Sequence[Entity], curator: bool) -> None:
    st.subheader("Merge and split")
    st.caption("A merge says that two entities are one: the other's names then bind to the one kept. It is "
               "attributed to you with your reason, and a split undoes it. A possible duplicate's Merge… "
               "fills in this form.")
    if not curator:
        _needs_curator("Merging and splitting entities")
        return
    _outcome("merge")
    with st.form("merge_form"):
        cols = st.columns(2)
        cols[0].text_input("Keep this entity (a name or IRI)", key="merge_keep")
        cols[1].text_input("…and merge this one into it (a name or IRI)", key="merge_other")
        st.text_input("Why they are the same", key="merge_reason")
        st.form_submit_button("Merge", type="primary", on_click=_merge, args=(wb,))
    merged = {e.iri: e for e in entities if e.merged_into}
    _outcome("split")
    if not merged:
        st.caption("No merged entities to split.")
        return
    with st.form("split_form"):
        st.selectbox("Split this entity off again", list(merged), key="split_entity",
                     format_func=lambda iri: f"{label(merged[iri])}  ·  merged into {merged[iri].merged_into}")
        st.text_input("Why they are not the same", key="split_reason")
        st.form_submit_button("Split", on_click=_split, args=(wb,))


def _possible_duplicates(shown: Sequence[Entity], curator: bool) -> None:
    st.subheader("Possible duplicates")
    st.caption(f"{DUPLICATE_NOTE} Entities of the list above whose names are spelled alike (difflib's ratio of "
               "their name keys): a look-alike is often someone else, as Paris is not Paris Hilton. Merge… "
               "only fills in the merge form below.")
    alike = st.slider("How alike the names must be", 0.5, 1.0, ALIKE, 0.01, key="dup_alike")
    if sum(len(names_of(e)) for e in shown) > MAX_NAMES:
        st.info(f"More than {MAX_NAMES} names to compare: filter the list above first.")
        return
    pairs = _duplicates(tuple(shown), alike)
    if not pairs:
        st.caption("No names this alike.")
    for pair in pairs[:MAX_PAIRS]:
        cols = st.columns([5, 1], vertical_alignment="center")
        how = "the same name (it binds to neither)" if pair.score == 1.0 else f"{pair.score:.0%} alike"
        cols[0].markdown(f"**{md(pair.keep_name)}** and **{md(pair.other_name)}**: {how}  \n"
                         f"{code(pair.keep.iri)} · {code(pair.other.iri)}")
        if curator:
            cols[1].button("Merge…", key=f"dup_{pair.keep.iri}_{pair.other.iri}", on_click=_prefill, args=(pair,),
                           help="Fill in the merge form with these two; nothing merges yet.")
    if len(pairs) > MAX_PAIRS:
        st.caption(f"…and {len(pairs) - MAX_PAIRS} more: raise the bar or filter the list.")


def render() -> None:
    st.title("Entities")
    st.caption("An entity is a stable IRI; its names and aliases point to it. A name binds only exactly (case "
               "and spacing aside) or through an alias a person registered: never to a look-alike.")
    wb = session.client()
    curator = session.may(Role.CURATOR)
    try:
        entities = wb.entities()
    except WorkbenchError as exc:
        st.error(explain(exc), icon=":material/error:")
        return
    _find(wb, entities, curator)
    shown = _browse(wb, entities, curator)
    _possible_duplicates(shown, curator)
    _merge_and_split(wb, entities, curator)
