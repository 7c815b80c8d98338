"""Ingest: read record and dump files, map each item to RDF, and write batches to the store."""
