from tests.conftest import dump
from workbench.service import Workbench


def test_sample_loads_on_every_backend(sample: Workbench) -> None:
    stats = sample.stats()
    assert stats["records"] == 21
    assert stats["by_status"] == {"active": 20, "superseded": 1}
    assert sample.resolve("巴黎").entities == ("urn:wb:entity:paris",)


def test_sample_twice_changes_nothing(sample: Workbench) -> None:
    before = dump(sample.store)
    sample.load_sample()
    assert dump(sample.store) == before
