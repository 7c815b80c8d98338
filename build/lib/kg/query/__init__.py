"""Queries: the named SPARQL queries in queries/, remote SPARQL endpoints, and store statistics."""
