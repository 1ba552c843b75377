"""One mutant as a candidate process: ``python -m conformance.mutation.serve MUTANT_ID``.

The reference candidate is served as ``python -m conformance.reference``
serves it, except that one of its modules is compiled from the mutated
source: an import hook answers for that module alone, so every other
module, and every module that imports the mutated one, is the reference's
own. The reference is named by a string here, as the harness names it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import runpy
import sys
from collections.abc import Sequence
from types import ModuleType

from conformance.mutation.mutants import Mutant, named


class MutatedModule(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds and loads the mutant's module from the mutant's source."""

    def __init__(self, mutant: Mutant) -> None:
        self.name = mutant.module
        self.path = mutant.path  # found before the hook is in place
        self.mutant = mutant

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(fullname, self.path, loader=self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        exec(compile(self.mutant.source(), str(self.path), "exec"), module.__dict__)  # noqa: S102


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m conformance.mutation.serve MUTANT_ID")
    sys.meta_path.insert(0, MutatedModule(named(args[0])))
    runpy.run_module("conformance.reference", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
