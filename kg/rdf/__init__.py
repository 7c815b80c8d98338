"""RDF foundations: the vocabulary, terms, query results, formats and the store.

`kg.rdf.engine` is the only module in kg that imports pyoxigraph; everything above it speaks
N-Quads text, format names and `kg.rdf.results` terms. The store (`kg.rdf.store.GraphStore`)
is built from rooms of its own: the merge (`kg.rdf.merge`), the journal and recovery
(`kg.rdf.journal`) and the snapshots (`kg.rdf.snapshots`)."""
