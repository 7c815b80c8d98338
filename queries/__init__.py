"""kg's named queries, shipped inside the wheel as the data package kg.queries (see pyproject.toml)."""
