"""The mutants, one module per surface, each a ``MUTANTS`` list (see :mod:`conformance.mutation.mutants`)."""
