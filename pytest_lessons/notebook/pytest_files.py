"""pytest's own files, read and written as pytest does, without importing pytest: the root
folder of a run and its ini options (:func:`pytest_root`), and the cache folder
(:class:`PytestCache`) where hints, passes and progress are kept, shared with every pytest
run of the course."""

from __future__ import annotations

import configparser
import json
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on old Pythons only
    import tomli as tomllib


#: The files pytest puts in a new cache folder (``_pytest.cacheprovider``): git ignores the
#: folder, and backup tools skip it, whichever of the two made it first.
_CACHEDIR_FILES = {
    "README.md": (
        "# pytest cache directory #\n\n"
        "This directory contains data from the pytest's cache plugin,\n"
        "which provides the `--lf` and `--ff` options, as well as the `cache` fixture.\n\n"
        "**Do not** commit this to version control.\n\n"
        "See [the docs](https://docs.pytest.org/en/stable/how-to/cache.html) for more "
        "information.\n"
    ),
    ".gitignore": "# Created by pytest automatically.\n*\n",
    "CACHEDIR.TAG": (
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by pytest.\n"
        "# For information about cache directory tags, see:\n"
        "#\thttps://bford.info/cachedir/spec.html\n"
    ),
}


class PytestCache:
    """pytest's cache folder (``config.cache``), as its ``get`` and ``set`` read and write
    it: each key a JSON file under ``v/``. The :class:`~pytest_lessons.core.summary.Cache` that
    hints, passes and progress are kept in, shared with every pytest run of the course."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        path = (self.folder / "v" / key).resolve()
        if self.folder.resolve() / "v" not in path.parents:
            raise ValueError(f"cache key {key!r} leads outside the cache")
        return path

    def get(self, key: str, default: Any) -> Any:
        try:
            with self._path(key).open(encoding="utf-8") as handle:
                return json.load(handle)
        except (ValueError, OSError):
            return default

    def set(self, key: str, value: Any) -> None:
        path = self._path(key)
        try:
            if not self.folder.is_dir():
                self.folder.mkdir(parents=True)
                for name, text in _CACHEDIR_FILES.items():
                    (self.folder / name).write_text(text, encoding="utf-8")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value, ensure_ascii=False, indent=2), encoding="utf-8")
        except OSError:
            pass  # as pytest: a cache that cannot be written only forgets


#: pytest's configuration files, in the order it looks for them in each folder.
_INI_FILES = (
    "pytest.toml",  # pytest 9
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)


def _ini_of(path: Path) -> dict[str, Any] | None:
    """The pytest options of a configuration file, or None when it is not pytest's."""
    try:
        if path.name in ("pytest.toml", ".pytest.toml"):  # always pytest's, even empty
            table = tomllib.loads(path.read_text(encoding="utf-8")).get("pytest", {})
            return dict(table) if isinstance(table, dict) else {}
        if path.name == "pyproject.toml":
            table = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {})
            options = table.get("pytest", {})
            if isinstance(options, dict) and "ini_options" in options:
                options = options["ini_options"]
            return dict(options) if "pytest" in table else None
        parser = configparser.ConfigParser(interpolation=None)
        parser.read(path, encoding="utf-8")
    except (OSError, ValueError, configparser.Error, tomllib.TOMLDecodeError):
        return None
    section = {"setup.cfg": "tool:pytest"}.get(path.name, "pytest")
    if parser.has_section(section):
        return dict(parser.items(section))
    return {} if path.name in ("pytest.ini", ".pytest.ini") else None


def pytest_root(start: Path) -> tuple[Path, dict[str, Any]]:
    """pytest's root folder for a run given *start* (a lesson folder), and its ini options:
    the first folder from *start* up with a pytest configuration file; else the first with a
    ``pyproject.toml``, else with a ``setup.py``; else *start* itself (pytest's rules)."""
    start = start.resolve()
    folders = [start, *start.parents]
    for folder in folders:
        for name in _INI_FILES:
            candidate = folder / name
            if candidate.is_file():
                options = _ini_of(candidate)
                if options is not None:
                    return folder, options
    for marker in ("pyproject.toml", "setup.py"):
        for folder in folders:
            if (folder / marker).is_file():
                return folder, {}
    return start, {}


def cache_of(lesson_folder: Path) -> PytestCache:
    """The cache a pytest run of *lesson_folder* uses (``cache_dir`` honoured)."""
    root, options = pytest_root(lesson_folder)
    return PytestCache(root / str(options.get("cache_dir") or ".pytest_cache"))
