"""kg's ontology, shipped inside the wheel as the data package kg.ontology (see pyproject.toml)."""
