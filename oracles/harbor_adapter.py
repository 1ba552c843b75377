"""The harbor oracle: harbor's own scoring code behind the candidate protocol.

Runs inside a cached virtualenv holding one harbor release (see
``conformance.oracle.environments``), started as

    <venv>/bin/python -I -X utf8 harbor_adapter.py <the candidate kit's folder> NAME=FOLDER...

or, to measure which of harbor's lines it runs (``conformance.oracle.coverage``),
in a second environment that also has coverage.py, as
``python -I -X utf8 -m coverage run --branch ... harbor_adapter.py <same arguments>``.

Each ``NAME=FOLDER`` is a surface and its folder: the folder's ``harbor.py``
is loaded by path and its ``serve(context)`` returns the handler for that
surface (see :class:`Context`). The adapter itself knows no surface.

It serves through the suite's own candidate kit (``conformance/kit/``,
standard library only, loaded by path so nothing else of the harness enters
harbor's environment): the oracle is just another
candidate. Nothing of harbor is re-implemented on this side: each surface
builds harbor's own objects and calls harbor's own functions; an exception
harbor raises is the output (``raised``), never a failure of the adapter.

The same adapter serves every harbor release the upgrade gate runs
(``harbor==VERSION``, 0.13.0 to 0.26.0). Where a later release needs
something of it, the adapter does it in a way every release accepts, so
there is one code path, and says so here (tests/test_adapter_releases.py
runs each against the releases that need it):

* from 0.23.0, ``BaseAgent.parse_options`` calls ``cls.name()`` on the agent
  class before an instance exists: ``ScriptedAgent.name`` answers on the
  class too (harbor_job.py);
* from 0.25.0, the verifier clears stale reward files with ``rm -f --``
  before the tests run, checks the command's return code, and asks the
  environment ``is_path_mounted``: both sandboxes carry the removal out on
  their mounted folders, as a bind mount would (``remove_mounted`` in
  harbor_job.py), and reward.parse's reward files are written when the
  test script runs, not before ``verify()``, as a real test script writes
  them (``_Sandbox`` in its folder's harbor.py);
* from 0.25.0, a trial hook event's ``trial_id`` is the trial's UUID: a
  cancelled job's trials are found by ``event.config.trial_name``, which
  every release has (harbor_job.py);
* from 0.16.0, a resume skips a trial folder whose result.json it cannot
  read (a warning), where 0.13.1 raises a ValidationError, and runs that
  trial again: job.result's ``resumed`` lists such a trial neither as kept
  nor as removed (its folder stays), and its ``trials`` leave it out
  (job_result/harbor.py).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import platform
import sys
import traceback
import types
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # loaded by path below; the type check sees them under the names they are loaded as
    import harbor_job
    from conformance_kit import candidate as kit


def _load_kit(kit_dir: str) -> types.ModuleType:
    """The suite's candidate kit (standard library only), imported from its folder as the package
    ``conformance_kit``: nothing else of the harness enters harbor's environment."""
    init = Path(kit_dir) / "__init__.py"
    spec = importlib.util.spec_from_file_location("conformance_kit", init, submodule_search_locations=[kit_dir])
    assert spec is not None and spec.loader is not None, kit_dir
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package  # the kit's relative imports resolve through it
    spec.loader.exec_module(package)
    return package


def _load_path(name: str, path: Path) -> types.ModuleType:
    """The module at ``path`` under ``name`` (``-I`` keeps its folder off sys.path), registered in sys.modules
    first: harbor imports the scripted environment class by name (``harbor_job:ScriptedEnvironment``)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


if not TYPE_CHECKING:
    conformance_kit = _load_kit(sys.argv[1])
    kit = conformance_kit.candidate
    harbor_job = _load_path("harbor_job", Path(__file__).resolve().with_name("harbor_job.py"))

HARBOR_VERSION = importlib.metadata.version("harbor")


class Kit(Protocol):
    """What a surface's oracle side uses of the candidate kit (the module ``conformance_kit.candidate``)."""

    def working_folder(self, files: dict[str, bytes] | None) -> AbstractContextManager[Path]: ...

    def reads_files(self, metric: Any, files: dict[str, bytes] | None) -> bool: ...


class Context:
    """What a surface's ``serve(context)`` is given: the kit, a folder of its own, the shared trial runner,
    and the other surfaces' oracle-side modules.

    A surface's ``harbor.py`` names it for the type check only (``if TYPE_CHECKING: from harbor_adapter
    import Context``): at run time the adapter is ``__main__`` and nothing imports it.
    """

    def __init__(self, name: str, folders: dict[str, Path], workdir: Path,
                 shared: dict[str, harbor_job.TrialRunner]) -> None:
        self.kit: Kit = kit
        self.workdir = workdir / name
        self._folders = folders
        self._shared = shared

    def runner(self) -> harbor_job.TrialRunner:
        """The one harbor_job.TrialRunner every surface that runs real trials shares (one event loop)."""
        if "runner" not in self._shared:
            self._shared["runner"] = harbor_job.TrialRunner(self.workdir.parent / "trials")
        return self._shared["runner"]

    def load(self, surface: str, module: str = "harbor") -> types.ModuleType:
        """A module of a surface's folder (its ``harbor.py`` by default), loaded once."""
        name = f"surface_{surface.replace('.', '_')}_{module}"
        if name not in sys.modules:
            _load_path(name, self._folders[surface] / f"{module}.py")
        return sys.modules[name]


def surface_folders(arguments: list[str]) -> dict[str, Path]:
    """``NAME=FOLDER`` arguments: each surface the oracle serves, and its folder."""
    folders: dict[str, Path] = {}
    for argument in arguments:
        name, _, folder = argument.partition("=")
        folders[name] = Path(folder)
    return folders


def build(workdir: Path, folders: dict[str, Path]) -> kit.Candidate:
    deps = {name: importlib.metadata.version(name) for name in ("harbor", "pydantic", "pydantic-core")}
    deps["python"] = platform.python_version()
    oracle = kit.Candidate("harbor", HARBOR_VERSION, homepage="https://pypi.org/project/harbor/", dependencies=deps)
    shared: dict[str, harbor_job.TrialRunner] = {}
    for name in folders:
        context = Context(name, folders, workdir, shared)
        context.workdir.mkdir(parents=True)
        try:
            serve: Callable[[Context], kit.Handler] = context.load(name).serve
            handler = serve(context)
        except Exception as error:  # one surface's oracle side that does not load: the others are still served
            handler = _not_loaded(name, folders[name], error)
        oracle.surface(name)(handler)
    return oracle


def _not_loaded(name: str, folder: Path, error: Exception) -> kit.Handler:
    """A surface whose oracle side does not load answers ``skipped`` with why (the run counts its inputs as errors
    of the oracle), its traceback on stderr; a wrong answer it is never."""
    traceback.print_exception(error, file=sys.stderr)
    reason = f"the oracle side of {name} ({folder / 'harbor.py'}) does not load: {type(error).__name__}: {error}"

    def skipped(request: dict[str, Any]) -> Any:
        raise kit.SkipSurface(reason)

    return skipped


def main() -> None:
    # serve() returns on `stop` or end of input, and the interpreter then exits
    # normally: under `coverage run` that is when the data file is written (an
    # exit hook, which os._exit or a kill would skip).
    with kit.held_folder("harbor-oracle-") as workdir:  # the jobs' trial folders too
        build(workdir, surface_folders(sys.argv[2:])).serve()


if __name__ == "__main__":
    main()
