"""Clients of other services: the archive's downloads and the live API."""
