"""Versioned extraction prompts, each with the typed schema of the output it asks for.

A prompt's text lives in ``prompts/<id>.md`` (a "System" and a "User" section, in Markdown, so a
reviewer reads it as prose). A candidate's provenance names the version it was extracted with, so
a version is immutable: its file's SHA-256 is recorded here and :func:`load` refuses a file that
no longer matches. A better prompt is a new version with a new file and a new entry in
:data:`VERSIONS`.

The output schema is a TypedDict per version; extraction validates the model's JSON against its
required and allowed keys (:func:`keys`), so what the prompt asks for and what is checked cannot
drift apart.

>>> p = load("facts-v1")
>>> p.id, keys(p.fact)
('facts-v1', (('span', 'statement', 'type'), ('about', 'effective_from', 'effective_to', 'scope', 'triples')))
>>> [m["role"] for m in p.messages(transcript="[1] Ann: hi", relations="owns", types="event")]
['system', 'user']
>>> DEFAULT, keys(load("facts-v2").rule)
('facts-v2', (('reading', 'turtle'), ()))
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, TypedDict

from workbench.errors import Invalid, NotFound
from workbench.resources import PROMPTS_DIR

_PLACEHOLDER = re.compile(r"\{(transcript|relations|types)\}")
_SECTION = re.compile(r"^## (System|User)[ \t]*$", re.MULTILINE)


# ---------------------------------------------------------------------- facts-v1 output


class _FactV1Required(TypedDict):
    statement: str
    type: str  # a workbench.values.records.RecordType value
    span: str  # the exact text of the transcript the fact came from


class FactV1(_FactV1Required, total=False):
    about: list[str]
    triples: list[list[Any]]  # [subject, relation label, object], as in memory records
    effective_from: str
    effective_to: str
    scope: list[str]  # becomes the record's applies_to


class _RuleV1Required(TypedDict):
    turtle: str  # a SHACL-AF rule
    reading: str  # the rule in plain words


class RuleV1(_RuleV1Required, total=False):
    tests: list[Any]


class _FactsV1Required(TypedDict):
    facts: list[FactV1]


class FactsV1(_FactsV1Required, total=False):
    rules: list[RuleV1]


# ---------------------------------------------------------------------- facts-v2 output: facts as in v1


class RuleV2(TypedDict):
    turtle: str  # one complete Turtle document in Workbench's rule format, test cases included
    reading: str  # the rule in plain words


class _FactsV2Required(TypedDict):
    facts: list[FactV1]


class FactsV2(_FactsV2Required, total=False):
    rules: list[RuleV2]


def keys(schema: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The required and the optional keys of a TypedDict schema, sorted."""
    return tuple(sorted(schema.__required_keys__)), tuple(sorted(schema.__optional_keys__))


# ---------------------------------------------------------------------- versions


@dataclass(frozen=True)
class _Spec:
    file: str
    sha256: str  # of the file's bytes: the version is this exact text
    output: Any  # the TypedDict of the whole answer
    fact: Any
    rule: Any


VERSIONS: dict[str, _Spec] = {
    "facts-v1": _Spec(
        "facts-v1.md", "077a2925278e546fa8c96861d56c1a773f6b5d44dff1ab8a4afa241167d321ec", FactsV1, FactV1, RuleV1
    ),
    "facts-v2": _Spec(
        "facts-v2.md", "ce74217617aa61a1157737dec8e94f01a67a62a27a80d19bda4d2e8a4699a760", FactsV2, FactV1, RuleV2
    ),
}
DEFAULT = "facts-v2"  # what `workbench extract` uses unless told otherwise


@dataclass(frozen=True)
class PromptVersion:
    """One prompt version: its text, and the schema of the answer it asks for."""

    id: str
    system: str
    user: str
    output: Any
    fact: Any
    rule: Any

    def messages(self, *, transcript: str, relations: str, types: str) -> list[dict[str, str]]:
        """The chat messages for one piece of transcript. Each placeholder is filled once, in one
        pass, so braces in a transcript (or a placeholder's name typed in it) stay as written."""
        values = {"transcript": transcript, "relations": relations, "types": types}

        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)

        return [{"role": "system", "content": fill(self.system)}, {"role": "user", "content": fill(self.user)}]


def load(version: str) -> PromptVersion:
    """A prompt version by its id. Raises NotFound for an unknown id, Invalid for a file that was
    edited after its version was fixed or lacks its sections."""
    spec = VERSIONS.get(version)
    if spec is None:
        raise NotFound(f"no prompt version {version!r}; known: {', '.join(sorted(VERSIONS))}")
    path = PROMPTS_DIR / spec.file
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        raise Invalid(
            f"prompt {version} was edited: its text no longer matches the digest its version was fixed with. "
            "Candidates name the version they came from, so a changed prompt is a new version: save it as a "
            "new file and register it in workbench/extraction/prompts.py",
            where=str(path),
        )
    parts = _SECTION.split(data.decode("utf-8"))
    sections = dict(zip(parts[1::2], (p.strip("\n") for p in parts[2::2]), strict=True))
    if set(sections) != {"System", "User"} or "{transcript}" not in sections["User"]:
        raise Invalid("a prompt needs a '## System' and a '## User' section, the latter with {transcript}",
                      where=str(path))
    return PromptVersion(version, sections["System"], sections["User"], spec.output, spec.fact, spec.rule)
