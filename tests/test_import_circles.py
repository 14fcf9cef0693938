"""No import circles among cgu_lab's modules, so that they never come back (issue 24 item 2).

A circle is two or more modules that import one another, directly or through others, at
module level: at the top of the file, in a class body, or under `if TYPE_CHECKING:` (a
type-only import still means the two files cannot be read, moved or deleted apart). An
import inside a function body is left out: it runs when called, not when the module is
loaded. An import counts towards the module it names (`from .a import b` is an edge to
`a.b` when that is a module, else to `a`); the packages above it, which Python loads on
the way, do not, or every module would be in a circle with its package's `__init__`.
The source is read with `ast`, so nothing is imported and a circle Python happens to
survive today (a late import, a type-only one) is found too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import cgu_lab

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def modules_of(root: Path) -> dict[str, Path]:
    """Every module of the package at `root` by its dotted name (a package by its own)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def load_time_imports(tree: ast.Module):
    """The import statements that run when the module is loaded: all but those in
    function bodies (a class body, an `if`, a `try` at module level all run)."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        pending.extend(
            child for child in ast.iter_child_nodes(node) if not isinstance(child, FUNCTIONS)
        )


def named_modules(node: ast.Import | ast.ImportFrom, name: str, is_package: bool, known: set):
    """The modules of `known` that an import statement in module `name` names."""

    def nearest(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    if isinstance(node, ast.Import):
        return {nearest(alias.name) for alias in node.names} - {None}
    base = node.module or ""
    if node.level:  # relative: from the module's package, one level up per extra dot
        package = name if is_package else name.rpartition(".")[0]
        anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    named = set()
    for alias in node.names:
        module = f"{base}.{alias.name}"
        named.add(module if module in known else nearest(base))
    return named - {None}


def import_graph(root: Path) -> dict[str, set[str]]:
    """Which modules each module of the package imports when it is loaded."""
    modules = modules_of(root)
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        targets = set()
        for node in load_time_imports(tree):
            targets |= named_modules(node, name, is_package, known)
        graph[name] = targets - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that reach one another (each a circle), sorted; by
    reachability from each module, plain to read and quick for a few hundred modules."""
    reach = {}
    for start in graph:
        seen, pending = set(), [start]
        while pending:
            for target in graph.get(pending.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    pending.append(target)
        reach[start] = seen
    groups = {frozenset(m for m in reach[start] if start in reach[m]) for start in graph}
    return sorted(sorted(group) for group in groups if len(group) > 1)


def describe(group: list[str], graph: dict[str, set[str]]) -> str:
    edges = [f"{a} -> {b}" for a in group for b in sorted(graph[a]) if b in group]
    return f"{len(group)} modules: " + ", ".join(edges)


def test_cgu_lab_has_no_import_circle():
    graph = import_graph(Path(cgu_lab.__file__).parent)
    assert len(graph) > 100  # the walk found the package, not an empty folder
    found = [describe(group, graph) for group in circles(graph)]
    assert not found, "import circles (cut where the data flows one way):\n" + "\n".join(found)


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_the_walk_finds_type_only_and_class_level_circles_and_skips_function_imports(tmp_path):
    """The detector itself, on a made-up package: what counts and what does not."""
    package = write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            # a type-only back-reference: a circle
            "pkg/service.py": "from .parts import piece\n",
            "pkg/parts/__init__.py": "",
            "pkg/parts/piece.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from ..service import Service\n"
            ),
            # a class body runs at load time: a circle
            "pkg/a.py": "class A:\n    from . import b\n",
            "pkg/b.py": "import pkg.a\n",
            # an import inside a function runs later: no circle
            "pkg/late.py": "from . import lazy\n",
            "pkg/lazy.py": "def f():\n    from . import late\n",
            # a module importing its own package's names, and the package its module:
            # a circle through the __init__
            "pkg/sub/__init__.py": "from .inner import VALUE\n",
            "pkg/sub/inner.py": "from pkg.sub import OTHER\nVALUE = 1\n",
            # a module of a package is not in a circle with the packages above it
            "pkg/deep/__init__.py": "",
            "pkg/deep/leaf.py": "from pkg import service\n",
        },
    )
    graph = import_graph(package)
    assert circles(graph) == [
        ["pkg.a", "pkg.b"],
        ["pkg.parts.piece", "pkg.service"],
        ["pkg.sub", "pkg.sub.inner"],
    ]


def test_the_controller_side_imports_nothing_of_the_notebook_side():
    """The notebook server extension (`cgu_lab.notebook`) runs in every notebook, the rest
    in the controller: code both use lives in `core/`, `files/` or `rfb/` (issue 24 item 8).
    Every import counts here, a late one in a function body too: it would load the notebook
    side into the controller when called. The package's own entry point for Jupyter, which
    names the server extension, is the one place that may."""
    root = Path(cgu_lab.__file__).parent
    modules = modules_of(root)
    known = set(modules)
    found = []
    for name, path in modules.items():
        if name == "cgu_lab" or name.startswith("cgu_lab.notebook"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = named_modules(node, name, path.name == "__init__.py", known)
                found += [
                    f"{name} -> {t}" for t in sorted(targets) if t.startswith("cgu_lab.notebook")
                ]
    assert len(modules) > 100
    assert not found, "the controller side imports the notebook side:\n" + "\n".join(found)
