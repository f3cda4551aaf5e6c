"""Who may do what, checked by the service for Python callers as the server checks it for HTTP
(:mod:`workbench.access.policy`): a named user without the role is refused in plain words and
nothing changes; the store's owner and anyone on a store with no users may act."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import dump
from workbench.access.policy import ACTS
from workbench.access.users import Role
from workbench.errors import Forbidden
from workbench.server.routes import TABLE
from workbench.service import Workbench

RECORD = {"id": "m-new-1", "statement": "Zoltan keeps bees on the roof.", "type": "observation",
          "about": ["Zoltan"], "source": {"id": "chat-new", "said_by": "me"}}


def test_routes_ask_for_the_roles_the_policy_names() -> None:
    """One table: every route that names a role for an act names the policy's role for it, and
    every act in the policy is one a route offers."""
    named = {r.act: Role(r.role) for r in TABLE if r.role and r.act in ACTS}
    assert named == ACTS


@pytest.fixture()
def people(sample: Workbench) -> Workbench:
    sample.add_user("root", ["admin"])
    sample.acting_as("root").add_user("cora", ["curator"])
    sample.acting_as("root").add_user("vic", ["viewer"])
    return sample


def _acts(wb: Workbench, tmp_path: Path) -> dict[str, object]:
    records = tmp_path / "new.jsonl"
    records.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    rdf = tmp_path / "new.ttl"
    rdf.write_text("<urn:x:a> <urn:x:b> <urn:x:c> .\n", encoding="utf-8")
    return {
        "add entities": lambda: wb.add_entity("Quillbrook"),
        "register aliases": lambda: wb.add_alias("Paris", "Lutetia"),
        "merge entities": lambda: wb.merge("Paris", "France", reason="test"),
        "split entities": lambda: wb.split("Paris", reason="test"),
        "import records": lambda: wb.import_files([records]),
        "import RDF": lambda: wb.import_files([rdf]),
        "supersede records": lambda: wb.supersede("m-pref-1", "m-pref-2", reason="test"),
        "retract records": lambda: wb.retract("m-pref-1", reason="test"),
        "erase records": lambda: wb.erase("m-pref-1", reason="test"),
        "list users": lambda: wb.users(),
    }


@pytest.mark.parametrize("act", sorted(ACTS))
def test_a_viewer_is_refused_every_act_and_nothing_changes(people: Workbench, tmp_path: Path, act: str) -> None:
    before = dump(people.store)
    with pytest.raises(Forbidden) as refused:
        _acts(people.acting_as("vic"), tmp_path)[act]()
    assert f"vic cannot {act}: that needs the {ACTS[act].value} role (they have viewer)" == refused.value.message
    assert dump(people.store) == before


@pytest.mark.parametrize("act", ["erase records", "list users"])
def test_a_curator_may_not_do_an_admins_acts(people: Workbench, tmp_path: Path, act: str) -> None:
    before = dump(people.store)
    with pytest.raises(Forbidden, match="needs the admin role"):
        _acts(people.acting_as("cora"), tmp_path)[act]()
    assert dump(people.store) == before


def test_someone_not_a_user_is_told_how_to_become_one(people: Workbench, tmp_path: Path) -> None:
    with pytest.raises(Forbidden, match="'zed' is not a user of this store, so cannot import records"):
        _acts(people.seen_by("zed"), tmp_path)["import records"]()


def test_the_curator_the_admin_and_the_owner_may_act(people: Workbench, tmp_path: Path) -> None:
    _acts(people.acting_as("cora"), tmp_path)["import records"]()
    assert people.record("m-new-1").source.id == "chat-new"
    assert {u.name for u in _acts(people.acting_as("root"), tmp_path)["list users"]()} == {"root", "cora", "vic"}
    assert _acts(people, tmp_path)["retract records"]() is None  # the owner: no named user


def test_a_store_with_no_users_is_open(sample: Workbench, tmp_path: Path) -> None:
    """As the server treats it: nobody holds a role yet, so a named person may act."""
    _acts(sample.acting_as("anyone"), tmp_path)["import records"]()
    assert sample.record("m-new-1").statement == RECORD["statement"]
