"""Serve: the SPARQL 1.1 endpoint over HTTP, its query worker pool, Linked Data pages and
content negotiation."""
