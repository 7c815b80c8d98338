"""kg: a knowledge graph of machine-learning research, as RDF in Oxigraph."""

__version__ = "0.1.0"
