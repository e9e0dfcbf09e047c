"""The package's modules import each other without a cycle.

Every module of ``src/optimist`` is parsed with :mod:`ast` (not imported), and every import
statement counts, wherever it is: at the top, inside a function (a lazy import), under
``if TYPE_CHECKING:``, in a ``try``. A cycle, even one that Python resolves at run time
because one side imports lazily or only for the type checker, is a knot in the layering: the
fix is to move what both sides need into a lower module (as ``_callbacks`` holds what
``_store``, ``_subscriptions`` and ``_sync`` share).
"""

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set

PACKAGE = "optimist"
PACKAGE_DIR = Path(__file__).resolve().parent.parent / "src" / PACKAGE

#: Suffixes of extension modules: their C source (``_speedups.c``) or a built copy.
_EXTENSION_SUFFIXES = (".c", ".so", ".pyd")


def package_modules(directory: Path, package: str) -> Dict[str, Optional[Path]]:
    """The modules of ``package`` (rooted at ``directory``), by dotted name, with the path of
    their Python source; extension modules (no Python source) map to None."""
    modules: Dict[str, Optional[Path]] = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(directory).parts)
        stem = parts[-1].split(".", 1)[0]  # _speedups.cpython-311-x86_64-linux-gnu.so -> _speedups
        if path.suffix == ".py":
            parts[-1] = path.stem
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package] + parts)] = path
        elif path.suffix in _EXTENSION_SUFFIXES:
            parts[-1] = stem
            modules.setdefault(".".join([package] + parts), None)
    return modules


def _is_inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _resolve(module: str, is_package: bool, level: int, name: Optional[str]) -> Optional[str]:
    """The absolute name a ``from`` import of ``level`` dots and ``name`` means in
    ``module`` (None: above the top package)."""
    if level == 0:
        return name
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level - 1 > len(base) - 1:
        return None
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _imports_of(tree: ast.AST, module: str, is_package: bool,
                known: Set[str], package: str) -> Set[str]:
    """The modules of ``package`` that ``tree`` (the source of ``module``) imports."""
    out: Set[str] = set()

    def add_module(target: str) -> None:
        # ``import optimist._x.y`` imports optimist._x.y; the nearest module the package has.
        while target and target not in known and "." in target:
            target = target.rsplit(".", 1)[0]
        if _is_inside(target, package):
            out.add(target)

    def add_from(target: Optional[str], names: List[str]) -> None:
        if target is None or not _is_inside(target, package):
            return
        needs_target = False
        for n in names:
            sub = f"{target}.{n}"
            if sub in known:
                out.add(sub)  # ``from . import _ffi``: the submodule
            else:
                needs_target = True  # ``from ._json import loads``, ``from . import *``: an attribute
        if needs_target or target != package:
            # ``from X import ...`` always imports X; only the package itself (its
            # ``__init__``, already being imported by then) is left out when every name is
            # a submodule.
            out.add(target)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add_module(alias.name)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node.level, node.module)
            add_from(target, [alias.name for alias in node.names])
        elif isinstance(node, ast.Call) and node.args:
            # importlib.import_module("optimist._x") / import_module("._x", "optimist"),
            # __import__("optimist._x"): with constant names only.
            fn = node.func
            fname = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else None
            first = node.args[0]
            if fname in ("import_module", "__import__") and isinstance(first, ast.Constant) \
                    and isinstance(first.value, str):
                text = first.value
                dots = len(text) - len(text.lstrip("."))
                if dots:
                    target = _resolve(module, is_package, dots, text[dots:] or None)
                    if target is not None:
                        add_module(target)
                else:
                    add_module(text)
    out.discard(module)
    return out


def import_graph(directory: Path = PACKAGE_DIR, package: str = PACKAGE) -> Dict[str, Set[str]]:
    """Module -> the modules of the package it imports (extension modules: no edges)."""
    modules = package_modules(directory, package)
    known = set(modules)
    graph: Dict[str, Set[str]] = {}
    for name, path in modules.items():
        if path is None:
            graph[name] = set()
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = _imports_of(tree, name, path.name == "__init__.py", known, package)
    for targets in list(graph.values()):
        for t in targets:
            graph.setdefault(t, set())  # e.g. _version.py, written by pip install only
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """A cycle of ``graph`` as ``[a, b, ..., a]``, or None when it has none."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = {node: WHITE for node in graph}
    stack: List[str] = []

    def visit(node: str) -> Optional[List[str]]:
        color[node] = GREY
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if color.get(nxt, WHITE) == GREY:
                return stack[stack.index(nxt):] + [nxt]
            if color.get(nxt, WHITE) == WHITE:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        color[node] = BLACK
        return None

    for node in sorted(graph):
        if color[node] == WHITE:
            found = visit(node)
            if found:
                return found
    return None


def describe(graph: Dict[str, Set[str]]) -> str:
    return "\n".join(f"  {m} -> {', '.join(sorted(graph[m])) or '(nothing)'}" for m in sorted(graph))


def test_package_imports_form_no_cycle():
    graph = import_graph()
    cycle = find_cycle(graph)
    if cycle:
        print("import cycle: " + " -> ".join(cycle))
        print("import graph:\n" + describe(graph))
    assert cycle is None, "the package's modules import each other in a circle: " + " -> ".join(cycle) + \
        "\n(fix: move what they share into a lower module)\nimport graph:\n" + describe(graph)


def test_graph_covers_the_package():
    """The parser sees every module and the imports that matter (not an empty graph)."""
    graph = import_graph()
    for path in PACKAGE_DIR.glob("*.py"):
        name = PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"
        assert name in graph, name
    assert {"optimist._store", "optimist._subscriptions"} <= graph["optimist"]
    assert {"optimist._callbacks", "optimist._subscriptions", "optimist._sync"} <= graph["optimist._store"]
    assert "optimist._speedups" in graph["optimist._fast"]  # a lazy import, inside a function


def _write(directory: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_every_kind_of_import_counts(tmp_path):
    """Lazy imports, ``TYPE_CHECKING`` imports, absolute and relative, ``import_module``."""
    pkg = tmp_path / "pkg"
    _write(pkg, {
        "__init__.py": "from .a import A\n",
        "a.py": "def f():\n    from . import b\n    return b\nA = 1\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n",
        "c.py": "import pkg.d\nC = 1\n",
        "d.py": "import importlib\nimportlib.import_module('._ext', 'pkg')\nfrom pkg import e\n",
        "e.py": "from . import *\n",
        "_ext.c": "/* an extension module */\n",
    })
    graph = import_graph(pkg, "pkg")
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg.c"},
        "pkg.c": {"pkg.d"},
        "pkg.d": {"pkg._ext", "pkg.e"},
        "pkg.e": {"pkg"},  # ``from . import *`` reads the package's __init__
        "pkg._ext": set(),
    }
    assert find_cycle(graph) == ["pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d", "pkg.e", "pkg"]
    graph["pkg.e"] = set()
    assert find_cycle(graph) is None
    graph["pkg.b"].add("pkg.a")  # the circle the package used to have: a <-> b under TYPE_CHECKING
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]
