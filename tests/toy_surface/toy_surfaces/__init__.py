"""A package of surfaces of its own: each folder is one surface (docs/extending.md walks through this one)."""
