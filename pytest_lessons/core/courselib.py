"""The course library: a package of reference building blocks beside the lessons, which
learner, reference and mistake code may import (``from course_lib import triu``).

```toml
# course.toml
[library]
folder = "course_lib"                      # a package beside course.toml; its name is the import
parts = { triu = "triu", block = "residual_block" }   # name in the package -> the lesson it solves
given = { train_steps = ["gpt_forward"] }  # optional: a lesson that may use a later lesson's part
shared = ["sub", "load_weights"]           # the callables that are no lesson's answer
```

A later lesson then runs on the reference's parts, so one early bug does not fail every
later lesson. A lesson that says ``parts = "own"`` in ``[exercise]`` runs the learner's code
on the learner's own solutions instead: each part of an earlier lesson becomes the entry
function of the learner's file of that lesson (the reference and the mistakes still run on
the library).

**Each part belongs to the lesson it solves**: the name ``parts`` gives it, or else the
lesson whose folder has the part's name (``layer_norm`` is lesson ``layer_norm``'s). A lesson's
code sees the parts of the lessons before it in the course, never its own lesson's nor a
later one's (unless ``given`` lends that one to it), and never a definition of the library
that uses a hidden part (``gpt_forward`` calls ``block``: where ``block`` is hidden, so is
``gpt_forward``). :func:`view` cuts those definitions out of the source before it travels:
the code that runs the lesson never holds them, and an import of one is told which lesson it
belongs to. Every other public callable of the library is named in ``shared``: no lesson's
answer, so every lesson may import it. The lesson check refuses a library with a callable
that is neither (:func:`undeclared`): a wrapper of an undeclared part (``def solve(...):
return mlp(...)``) would answer its lesson from a name no lesson owns. It also grades every
callable a lesson can import as its entry (``--lesson-check``), so a shared one, or an
earlier lesson's part, that answers it is found.

The grader reads the package's ``.py`` files here, and the job carries them as text
(:class:`pytest_lessons.isolation.library.Library`): the sandbox opens nothing new, so the
lessons' folders, the references and ``mistakes.py`` stay out of reach, and no learner code
can change the library's files through it.
"""

from __future__ import annotations

import ast
import json
import os
import symtable
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_lessons.core import model

#: ``exercise.parts``: which parts a lesson's learner code imports from the course library.
PARTS = ("library", "own")
#: The most library source the grader reads and sends with every job.
MAX_LIBRARY_BYTES = 1 << 20


@dataclass(frozen=True)
class CourseLibrary:
    """``[library]`` of a ``course.toml``, checked."""

    folder: Path
    """The package's folder (absolute); its name is the import name."""
    parts: tuple[tuple[str, Path], ...] = ()
    """(name in the package, the ``exercise.toml`` of the lesson it solves), as declared."""
    given: tuple[tuple[Path, tuple[str, ...]], ...] = ()
    """(a lesson's ``exercise.toml``, the parts of later lessons its code may import)."""
    shared: tuple[str, ...] = ()
    """The callables declared no lesson's answer, which every lesson may import."""

    @property
    def package(self) -> str:
        """The name learner code imports."""
        return self.folder.name


def read_library(course: Path, raw: Any, lessons: tuple[Path, ...]) -> CourseLibrary:
    """``[library]`` of the course file *course*, whose lessons are *lessons*; raises
    ValueError naming the file and the problem."""
    if not isinstance(raw, dict):
        raise ValueError(f"{course}: [library] must be a table with a folder")
    unknown = sorted(set(raw) - {"folder", "parts", "given", "shared"})
    if unknown:
        raise ValueError(
            f"{course}: unknown key library.{unknown[0]} (known: folder, parts, given, shared)"
        )
    name = raw.get("folder")
    if not isinstance(name, str) or not name.isidentifier() or "/" in name:
        raise ValueError(
            f"{course}: library.folder must name a folder beside course.toml whose name is a "
            'Python name, such as "course_lib": learner code imports it by that name'
        )
    folder = course.parent / name
    if not (folder / "__init__.py").is_file():
        raise ValueError(f"{course}: library.folder {name!r} needs an __init__.py (a package)")
    table = raw.get("parts", {})
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and k.isidentifier() and isinstance(v, str) for k, v in table.items()
    ):
        raise ValueError(f'{course}: library.parts must be a table of name = "lesson folder"')
    parts = [
        (part, _lesson(course, lesson, lessons, f"library.parts.{part}"))
        for part, lesson in table.items()
    ]
    given_table = raw.get("given", {})
    if not isinstance(given_table, dict) or not all(
        isinstance(v, list) and all(isinstance(n, str) and n.isidentifier() for n in v)
        for v in given_table.values()
    ):
        raise ValueError(
            f'{course}: library.given must be a table of "lesson folder" = [part names], '
            'such as given = { train_steps = ["gpt_forward"] }'
        )
    given = [
        (_lesson(course, lesson, lessons, f"library.given.{lesson}"), tuple(names))
        for lesson, names in given_table.items()
    ]
    shared = raw.get("shared", [])
    if not isinstance(shared, list) or not all(
        isinstance(n, str) and n.isidentifier() for n in shared
    ):
        raise ValueError(
            f"{course}: library.shared must be a list of the library's names that are no "
            'lesson\'s answer, such as shared = ["sub", "load_weights"]'
        )
    folders = {lesson.parent.name for lesson in lessons}
    for name in shared:
        if name in table:
            raise ValueError(
                f"{course}: take {name!r} out of library.shared or out of library.parts: "
                f"a name is either a lesson's part (parts gives it to {table[name]!r}) or "
                "no lesson's (shared), not both"
            )
        if name in folders:
            raise ValueError(
                f"{course}: take {name!r} out of library.shared: it is the part of lesson "
                f"{name!r}, whose folder has its name"
            )
    return CourseLibrary(folder.resolve(), tuple(parts), tuple(given), tuple(shared))


def _lesson(course: Path, lesson: str, lessons: tuple[Path, ...], key: str) -> Path:
    file = (course.parent / lesson / model.EXERCISE_FILE).resolve()
    if file not in lessons:
        raise ValueError(f"{course}: {key} names {lesson!r}, which is not a lesson of the course")
    return file


#: Each library read so far: its folder -> (its files' stamps, the modules).
_READ: dict[Path, tuple[tuple[Any, ...], tuple[tuple[str, str, str], ...]]] = {}


def modules(library: CourseLibrary) -> tuple[tuple[str, str, str], ...]:
    """(module name, file, source) of every module of the package, read again only once a
    file changed (a notebook kernel lives for hours)."""
    files, stamps = _walk(library.folder)
    known = _READ.get(library.folder)
    if known is not None and known[0] == stamps:
        return known[1]
    found = []
    total = 0
    for path in files:
        relative = path.relative_to(library.folder).with_suffix("")
        names = [library.package, *relative.parts]
        if names[-1] == "__init__":
            names.pop()
        source = path.read_text(encoding="utf-8")
        total += len(source)
        if total > MAX_LIBRARY_BYTES:
            raise ValueError(f"{library.folder}: the course library holds more than 1 MiB")
        found.append((".".join(names), str(path), source))
    result = tuple(found)
    _READ[library.folder] = (stamps, result)
    return result


def _walk(folder: Path) -> tuple[list[Path], tuple[Any, ...]]:
    """The package's module files below *folder* (names Python can import; no
    ``__pycache__``), in order, and a stamp of each file and folder (its time and size)."""
    files: list[Path] = []
    stamps: list[Any] = []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            name, _, suffix = entry.name.partition(".")
            if not name.isidentifier() or entry.is_symlink():
                continue
            if entry.is_dir():
                inner, marks = _walk(Path(entry.path))
                files += inner
                stamps += [entry.name, entry.stat().st_mtime_ns, marks]
            elif suffix == "py" and entry.is_file():
                found = entry.stat()
                files.append(Path(entry.path))
                stamps += [entry.name, found.st_mtime_ns, found.st_size]
    return files, tuple(stamps)


# --- what the library defines, and what each definition uses ------------------------------


@dataclass(frozen=True)
class Definition:
    """A callable the library defines at the top of one of its modules: what a lesson's code
    could import."""

    name: str
    module: str
    """The module that defines it (``course_lib.gpt``)."""
    file: str
    line: int
    arity: tuple[int, int] | None = None
    """(the positional arguments it needs, the most it takes; -1: any number) for a plain
    function, None where that cannot be read from its ``def`` (a class, a decorated
    function, an alias)."""


@dataclass(frozen=True)
class _Statement:
    """One statement at the top of a library module."""

    first: int
    last: int
    """Its lines (decorators included)."""
    binds: frozenset[str]
    """The module's names it binds."""
    uses: frozenset[str]
    """The module's names it reads (its functions' bodies included)."""
    node: ast.stmt
    aliases: tuple[tuple[str, str], ...] = ()
    """An import from the package itself: (the name it binds, the name it imports)."""
    listed: tuple[str, ...] | None = None
    """``__all__ = [...]``: the names listed."""


@dataclass(frozen=True)
class _Module:
    name: str
    file: str
    source: str
    statements: tuple[_Statement, ...]


#: Each library analysed so far: its folder -> (the modules as read, their analysis).
_ANALYSED: dict[Path, tuple[tuple[tuple[str, str, str], ...], tuple[_Module, ...]]] = {}
#: Each library's views so far: its folder -> (the modules as read, hidden names -> view).
_VIEWS: dict[
    Path,
    tuple[
        tuple[tuple[str, str, str], ...],
        dict[frozenset[str], tuple[tuple[tuple[str, str, str], ...], dict[str, str]]],
    ],
] = {}


def _analysed(library: CourseLibrary) -> tuple[_Module, ...]:
    read = modules(library)
    known = _ANALYSED.get(library.folder)
    if known is not None and known[0] is read:
        return known[1]
    result = tuple(_analyse(library.package, *module) for module in read)
    _ANALYSED[library.folder] = (read, result)
    return result


def definitions(library: CourseLibrary) -> tuple[Definition, ...]:
    """Every public callable the library defines (a function, a class, a name bound to an
    expression that may be one), each name once, where it is defined (not re-exported), in
    module order."""
    found: dict[str, Definition] = {}
    for module in _analysed(library):
        for statement in module.statements:
            node = statement.node
            if statement.aliases or statement.listed is not None:
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue  # another package's names: learner code can import them itself
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and _literal(node.value):
                continue  # a constant cannot stand for a lesson's entry
            for name in sorted(statement.binds):
                if name.startswith("_") or name in found:
                    continue
                arity = _arity(node) if getattr(node, "name", None) == name else None
                found[name] = Definition(name, module.name, module.file, statement.first, arity)
    return tuple(found.values())


def undeclared(library: CourseLibrary, lessons: Iterable[Path]) -> tuple[Definition, ...]:
    """The public callables of *library* that are neither a lesson's part (in ``parts``, or
    named like a lesson of *lessons*, their ``exercise.toml`` files) nor declared ``shared``:
    a lesson's code could import them, and nothing says whose answer they are."""
    declared = {name for name, _ in library.parts} | set(library.shared)
    declared |= {Path(lesson).parent.name for lesson in lessons}
    return tuple(d for d in definitions(library) if d.name not in declared)


def view(
    library: CourseLibrary, hidden: Iterable[str]
) -> tuple[tuple[tuple[str, str, str], ...], dict[str, str]]:
    """The library as a lesson sees it with the parts *hidden* kept from it: its modules with
    every definition cut out that binds a hidden name or uses one (and so on, until nothing
    more uses one), each line where it was (tracebacks show the library's own lines); and
    each name cut out -> the hidden part it stands for (itself, or one it is built on)."""
    read = modules(library)
    wanted = frozenset(hidden)
    known = _VIEWS.get(library.folder)
    if known is None or known[0] is not read:
        known = (read, {})
        _VIEWS[library.folder] = known
    if wanted not in known[1]:
        analysed = _analysed(library)
        roots = _closure(analysed, {name: name for name in wanted})
        cut = tuple((m.name, m.file, _cut(m, roots)) for m in analysed)
        known[1][wanted] = (cut, roots)
    return known[1][wanted]


def _closure(analysed: tuple[_Module, ...], roots: dict[str, str]) -> dict[str, str]:
    """*roots* (a hidden name -> the part it stands for) with every name whose definition
    binds or uses a hidden one: a definition that calls a hidden part would hand it on."""
    changed = True
    while changed:
        changed = False
        for module in analysed:
            for statement in module.statements:
                if statement.listed is not None:
                    continue
                if isinstance(statement.node, ast.ImportFrom):  # name by name
                    for bound, imported in statement.aliases:
                        if imported in roots and bound not in roots:
                            roots[bound] = roots[imported]
                            changed = True
                    continue
                touched = sorted((statement.binds | statement.uses) & roots.keys())
                if not touched:
                    continue
                for name in statement.binds - roots.keys():
                    roots[name] = roots[touched[0]]
                    changed = True
    return roots


def _cut(module: _Module, hidden: Mapping[str, str]) -> str:
    """The module's source with the definitions of *hidden* names blanked out, an import of
    some and ``__all__`` rewritten on their first line; every other line as it was."""
    if not hidden:
        return module.source
    lines = module.source.splitlines(keepends=True)
    statements = module.statements
    for index, statement in enumerate(statements):
        node = statement.node
        text: str | None = None
        if statement.listed is not None:
            kept = [name for name in statement.listed if name not in hidden]
            if len(kept) == len(statement.listed):
                continue
            text = f"__all__ = {kept!r}"
        elif isinstance(node, ast.ImportFrom):
            names = [a for a in node.names if (a.asname or a.name) not in hidden]
            if len(names) == len(node.names):
                continue
            if names:
                text = ast.unparse(
                    ast.ImportFrom(module=node.module, names=names, level=node.level)
                )
        elif not ((statement.binds | statement.uses) & hidden.keys()):
            continue
        before = statements[index - 1].last if index else 0
        after = statements[index + 1].first if index + 1 < len(statements) else len(lines) + 1
        if before == statement.first or after == statement.last:
            raise ValueError(
                f"{module.file}, line {statement.first}: put this statement on lines of its "
                "own (no `;`): the grader cuts it out for the lessons that may not use "
                f"{', '.join(sorted((statement.binds | statement.uses) & hidden.keys()))}"
            )
        for number in range(statement.first, statement.last + 1):
            lines[number - 1] = "\n"
        if text is not None:
            lines[statement.first - 1] = text + "\n"
    return "".join(lines)


def _analyse(package: str, name: str, file: str, source: str) -> _Module:
    try:
        tree = ast.parse(source, file)
        table = symtable.symtable(source, file, "exec")
    except (SyntaxError, ValueError) as error:
        raise ValueError(f"{file}: the course library's module cannot be read ({error})") from None
    scopes = {(t.get_name(), t.get_lineno()): t for t in table.get_children()}
    found = []
    for node in tree.body:
        lines = [node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]
        first, last = min(lines), node.end_lineno or node.lineno
        aliases: tuple[tuple[str, str], ...] = ()
        listed = None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds = {node.name}
            scope = scopes.get((node.name, node.lineno))
            outside: list[ast.AST | None] = [*node.decorator_list]
            if isinstance(node, ast.ClassDef):
                outside += [*node.bases, *node.keywords]
            else:  # evaluated where the function is defined, not inside it
                arguments = node.args
                every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
                outside += [*arguments.defaults, *arguments.kw_defaults, node.returns]
                outside += [a.annotation for a in every]
            uses = _names(outside)
            uses |= _globals(scope) if scope is not None else _names(node.body)
        elif isinstance(node, ast.Import):
            binds = {(a.asname or a.name).split(".")[0] for a in node.names}
            uses = set()
        elif isinstance(node, ast.ImportFrom):
            binds = {a.asname or a.name for a in node.names if a.name != "*"}
            uses = set()
            if (
                node.level
                or node.module == package
                or (node.module or "").startswith(package + ".")
            ):
                aliases = tuple((a.asname or a.name, a.name) for a in node.names if a.name != "*")
        else:
            binds, uses = _bound(node), _names([node])
            listed = _all_list(node)
        found.append(
            _Statement(first, last, frozenset(binds), frozenset(uses), node, aliases, listed)
        )
    return _Module(name, file, source, tuple(found))


def _names(nodes: Iterable[ast.AST | None]) -> set[str]:
    """Every name the expressions or statements *nodes* read, however deep."""
    return {
        n.id
        for node in nodes
        if node is not None
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def _globals(table: symtable.SymbolTable) -> set[str]:
    """The module's names that the scope *table* and the scopes inside it read."""
    found = {s.get_name() for s in table.get_symbols() if s.is_global() and s.is_referenced()}
    for child in table.get_children():
        found |= _globals(child)
    return found


def _bound(node: ast.AST) -> set[str]:
    """The module's names that the statement *node* binds, outside any function or class
    inside it (whose own names are its own)."""
    found: set[str] = set()
    for child in _outside_scopes(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            found.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(child.name)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in child.names if a.name != "*"}
    return found


def _outside_scopes(node: ast.AST) -> Iterator[ast.AST]:
    yield node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return
    for child in ast.iter_child_nodes(node):
        yield from _outside_scopes(child)


def _all_list(node: ast.stmt) -> tuple[str, ...] | None:
    """The names of ``__all__ = [...]`` (a list or tuple of strings), else None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target, value = node.target, node.value
    else:
        return None
    if not (isinstance(target, ast.Name) and target.id == "__all__"):
        return None
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    items = value.elts
    if not all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
        return None
    return tuple(str(i.value) for i in items if isinstance(i, ast.Constant))


def _literal(value: ast.expr | None) -> bool:
    """Whether *value* is written as plain data (a number, a string, a table of them)."""
    try:
        ast.literal_eval(value) if value is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _arity(node: ast.stmt) -> tuple[int, int] | None:
    """(the positional arguments a plain function needs, the most it takes; -1: any)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.decorator_list:
        return None
    arguments = node.args
    if any(d is None for d in arguments.kw_defaults):
        return None  # a keyword it needs: no positional call binds
    positional = len(arguments.posonlyargs) + len(arguments.args)
    needed = positional - len(arguments.defaults)
    return needed, -1 if arguments.vararg is not None else positional


def export(library: CourseLibrary | None, target: Path, copied: dict[Path, str]) -> list[str]:
    """Copy *library* into the learners' course folder *target* (``--lesson-export``), and
    the lines of its ``[library]`` table; *copied* maps each lesson copied to its folder
    there (a part or a loan whose lesson is not copied is left out)."""
    if library is None:
        return []
    for _, file, source in modules(library):
        copy = target / library.package / Path(file).relative_to(library.folder)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(source, encoding="utf-8")
    lines = ["", "[library]", f'folder = "{library.package}"']
    kept = [(name, copied[file]) for name, file in library.parts if file in copied]
    if kept:
        lines.append("parts = { " + ", ".join(f'{n} = "{s}"' for n, s in kept) + " }")
    lent = [(copied[file], names) for file, names in library.given if file in copied]
    if lent:
        # JSON's strings and lists are TOML's too.
        items = ", ".join(f"{json.dumps(s)} = {json.dumps(list(names))}" for s, names in lent)
        lines.append("given = { " + items + " }")
    if library.shared:
        lines.append(f"shared = {json.dumps(list(library.shared))}")
    return lines
