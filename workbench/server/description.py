"""What ``GET /sparql`` without a query answers: a SPARQL 1.1 Service Description in Turtle
for programs, or a small HTML page with a query form for people.

The description is built as triples and serialised by pyoxigraph, so nothing a client sends
(the Host header ends up in the endpoint IRI) can break out of it.
"""

from __future__ import annotations

import pyoxigraph as ox

from workbench.formats import GRAPHS, RESULTS

SD = "http://www.w3.org/ns/sparql-service-description#"


def service_description(endpoint: str, *, updates: bool = False) -> bytes:
    """The Service Description of the endpoint at ``endpoint`` (an absolute URL), in Turtle.
    With ``updates`` (asked by a curator or an admin) it also lists SPARQL 1.1 Update, which the
    same URL accepts from them (INSERT DATA into record graphs only).

    >>> b"sd:SPARQL11Query" in service_description("http://127.0.0.1:7000/sparql")
    True
    >>> b"sd:SPARQL11Update" in service_description("http://127.0.0.1:7000/sparql")
    False
    >>> b"sd:SPARQL11Update" in service_description("http://127.0.0.1:7000/sparql", updates=True)
    True
    """
    try:
        service = ox.NamedNode(endpoint)
    except ValueError:
        service = ox.NamedNode("http://localhost/sparql")
    rdf_type = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    comment = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#comment")
    dataset, graph = ox.BlankNode(), ox.BlankNode()

    def sd(term: str) -> ox.NamedNode:
        return ox.NamedNode(SD + term)

    if updates:
        said = ("SPARQL 1.1 Query; and SPARQL 1.1 Update at the same URL, for curators and admins, accepting "
                "only INSERT DATA into record graphs (GRAPH <urn:wb:record:ID>), landed as an import with "
                "validation and provenance")
    else:
        said = "read-only SPARQL 1.1 Query; SPARQL Update is accepted only from curators and admins"
    triples = [
        ox.Triple(service, rdf_type, sd("Service")),
        ox.Triple(service, sd("endpoint"), service),
        ox.Triple(service, sd("supportedLanguage"), sd("SPARQL11Query")),
        ox.Triple(service, sd("defaultEntailmentRegime"), ox.NamedNode("http://www.w3.org/ns/entailment/Simple")),
        ox.Triple(service, sd("defaultDataset"), dataset),
        ox.Triple(dataset, rdf_type, sd("Dataset")),
        ox.Triple(dataset, sd("defaultGraph"), graph),
        ox.Triple(graph, rdf_type, sd("Graph")),
        ox.Triple(
            service,
            comment,
            ox.Literal(
                f"Workbench: {said}. Records are named graphs; a source's description, and the metadata of the "
                "records taken from it, are in the source's graph, <urn:wb:source:ID>. "
                "SERVICE is refused."
            ),
        ),
    ]
    if updates:
        triples.append(ox.Triple(service, sd("supportedLanguage"), sd("SPARQL11Update")))
    for fmt in (*RESULTS, *GRAPHS):
        iri = ox.NamedNode(fmt.w3c_iri)
        triples.append(ox.Triple(service, sd("resultFormat"), iri))
    return ox.serialize(triples, format=ox.RdfFormat.TURTLE, prefixes={"sd": SD}) or b""

