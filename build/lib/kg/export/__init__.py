"""Export: the graph in every standard RDF format, its VoID description, and SHACL validation."""
