"""The course library inside the process that runs learner code: a package of reference
building blocks (``from course_lib import triu``) served from bytes that travel in the job.

The grader reads the library's files (the course's own, read-only) and, for a lesson whose
parts are the learner's own (``parts = "own"`` in ``exercise.toml``), the learner's solution
files of the earlier lessons, beneath the learner's folder with no link followed
(:func:`pytest_lessons.isolation.files.read_beneath`). Both travel in the job as text, like the
learner's own file: the sandbox opens nothing new, so no path of the course becomes readable
and nothing on disk can be changed through the package. :func:`install` puts a finder first on
``sys.meta_path`` that loads those modules from the job's bytes (never a ``.pyc``); with own
parts, each named part of the package is then the learner's function of that lesson. A part
the lesson may not use (its own answer, a later lesson's) is not in the job's bytes at all:
the grader cut it out, and importing it raises an ImportError with the grader's words.

This module imports neither pytest nor torch: it runs next to learner code.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from pytest_lessons.isolation.files import Unreadable, read_beneath


@dataclass(frozen=True)
class OwnPart:
    """A learner's solution that stands for one name of the library."""

    name: str
    """The library's name it replaces (``triu``)."""
    folder: Path
    """The learner's folder the file is read beneath (no link followed)."""
    relative: Path
    """The file, relative to *folder* (``triu/solution.py``)."""
    entry: str
    """The function of that file that the name becomes (``solve``)."""
    lesson: str
    """The lesson, as the learner knows it (its folder's name), for the message."""


@dataclass(frozen=True)
class Library:
    """The course library as one job carries it (plain, hashable data)."""

    package: str
    """The import name (``course_lib``)."""
    modules: tuple[tuple[str, str, str], ...]
    """(module name, file name shown in tracebacks, source text) of each module."""
    own: tuple[OwnPart, ...] = ()
    """The learner's own parts, read when the job is sent (empty: the library's parts)."""
    hidden: tuple[tuple[str, str], ...] = ()
    """(name, what an import of it raises) for each name cut out of :attr:`modules`: a part
    the lesson may not use (another lesson's answer), so the learner is told why it is not
    there."""

    def request(self) -> dict[str, Any]:
        """The job's ``library`` entry: JSON data, the own parts' bytes read now."""
        own = []
        for part in self.own:
            shown = str(part.folder / part.relative)
            try:
                data = read_beneath(part.folder, part.relative)
                text: str | None = data.decode("utf-8", errors="replace")
                problem = ""
            except Unreadable as why:
                text, problem = None, why.problem
            own.append([part.name, shown, text, part.entry, part.lesson, problem])
        return {
            "package": self.package,
            "modules": [list(m) for m in self.modules],
            "own": own,
            "hidden": [list(h) for h in self.hidden],
        }


#: Why an own part's file could not be read, as the learner is told.
_PROBLEMS = {
    "missing": "is missing",
    "link": "is a link, which the grader does not follow",
    "hard_link": "is a hard link, which the grader does not read",
    "not_file": "is not a file",
    "too_large": "is larger than 1 MiB",
}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds and loads the library's modules from the job's bytes."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.package = str(spec["package"])
        self.modules = {str(m[0]): (str(m[1]), str(m[2])) for m in spec.get("modules", [])}
        self.own: list[Sequence[Any]] = list(spec.get("own", []))
        self.hidden = {str(h[0]): str(h[1]) for h in spec.get("hidden", [])}

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.modules:
            return None
        shown, _ = self.modules[fullname]
        package = fullname == self.package or shown.endswith("__init__.py")
        found = importlib.util.spec_from_loader(fullname, self, origin=shown, is_package=package)
        if found is not None:
            found.has_location = True
            if package:
                found.submodule_search_locations = []
        return found

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        shown, source = self.modules[name]
        module.__file__ = shown
        _run(module, shown, source)
        if self.hidden:
            module.__getattr__ = self._kept(module)  # type: ignore[method-assign]
        if name == self.package:
            for part in self.own:
                setattr(module, str(part[0]), self._own(part))

    def _kept(self, module: ModuleType) -> Callable[[str], Any]:
        """The module's ``__getattr__`` (PEP 562): a name cut out of the library raises an
        ImportError that says why (``from course_lib import block`` raises it as it is),
        any other goes to the module's own ``__getattr__``, if it has one."""
        hidden = self.hidden
        own = module.__dict__.get("__getattr__")
        label = module.__name__

        def __getattr__(name: str) -> Any:
            if name in hidden:
                raise ImportError(hidden[name], name=label)
            if callable(own):
                return own(name)
            raise AttributeError(f"module {label!r} has no attribute {name!r}")

        return __getattr__

    def _own(self, part: Sequence[Any]) -> Callable[..., Any]:
        """The learner's function of an earlier lesson, loaded as a module of its own."""
        name, shown, source, entry, lesson, problem = part
        if source is None:
            raise ImportError(
                f"Write lesson {lesson} first: this lesson runs on your own solutions, and "
                f"{self.package}.{name} is your {entry} of {shown}, which "
                f"{_PROBLEMS.get(problem, 'cannot be read')}."
            )
        module = ModuleType(f"{self.package}._own_{name}")
        module.__file__ = shown
        sys.modules[module.__name__] = module
        _run(module, shown, source)
        function = getattr(module, entry, None)
        if not callable(function):
            raise ImportError(
                f"Define {entry} in {shown}: this lesson runs on your own solutions, and "
                f"{self.package}.{name} is your {entry} of lesson {lesson}."
            )
        return function  # type: ignore[no-any-return]


def _run(module: ModuleType, shown: str, source: str) -> None:
    # Tracebacks and inspect.getsource read these lines: the file itself is not opened.
    linecache.cache[shown] = (len(source), None, source.splitlines(keepends=True), shown)
    exec(compile(source, shown, "exec", dont_inherit=True), module.__dict__)


def install(spec: dict[str, Any] | None) -> Callable[[], None]:
    """Serve the library of a job's *spec* (``library`` of the request; None: none) to the
    code this process runs. Returns what undoes it (for the in-process runner, which shares
    pytest's process): the finder and every module it loaded go."""
    if not spec:
        return lambda: None
    finder = _Finder(spec)
    sys.meta_path.insert(0, finder)
    package = finder.package

    def undo() -> None:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]

    return undo
