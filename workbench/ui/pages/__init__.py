"""The pages, in the order of the navigation, each with the role it needs (None: anyone signed
in). A page module has one function, ``render()``."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.access.users import Role


@dataclass(frozen=True)
class PageSpec:
    module: str  # workbench.ui.pages.<module>, with a render() function
    title: str
    icon: str  # a Material icon, as st.Page takes it
    role: Role | tuple[Role, ...] | None = None  # any of these (None: anyone signed in)
    section: str = "Knowledge"


PAGES = (
    PageSpec("ask", "Ask", ":material/question_answer:"),
    PageSpec("overview", "Overview", ":material/dashboard:"),
    PageSpec("entities", "Entities", ":material/badge:"),
    PageSpec("sources", "Sources and history", ":material/history:"),
    PageSpec("sparql", "SPARQL", ":material/code:"),
    PageSpec("review", "Review queue", ":material/fact_check:", Role.CURATOR, "Curation"),
    PageSpec("rules", "Rules", ":material/rule:", (Role.CURATOR, Role.REVIEWER), "Curation"),
    PageSpec("signoff", "Sign-off", ":material/verified:", Role.REVIEWER, "Curation"),
)
