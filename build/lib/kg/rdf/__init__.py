"""RDF foundations: the vocabulary, terms, query results, formats and the store.

`kg.rdf.store` is the only module in kg that imports pyoxigraph; everything above it speaks
N-Quads text, format names and `kg.rdf.results` terms."""
