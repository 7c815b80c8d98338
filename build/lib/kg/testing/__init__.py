"""Synthetic generators of records and dumps whose distributions follow the archive, for tests
and benchmarks."""
