"""The tool's shape: imports run one way, from the CLI down through measure,
the API and the guest to the build, with no cycle."""
import ast
from pathlib import Path

import ukl

PACKAGE = Path(ukl.__file__).parent
# Later stages may import earlier ones, never the reverse.
STAGES = ["foundation", "build", "guest", "api", "oci", "deploy", "measure", "cli"]
FOUNDATION = {"ukl", "ukl.errors", "ukl.layout", "ukl.proc", "ukl.configs", "ukl.symbols"}


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return mods


def _stage(module: str) -> int:
    if module in FOUNDATION:
        return 0
    return STAGES.index(module.split(".")[1])


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The ukl modules MODULE imports."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            target = ".".join(p for p in (base, node.module) if p)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m in known and m != module}


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {m: _imports(m, p, set(mods)) for m, p in mods.items()}


def test_no_module_imports_a_later_stage():
    wrong = [(m, i) for m, imps in _graph().items() for i in imps if _stage(i) > _stage(m)]
    assert not wrong, wrong


def test_no_import_cycle():
    graph, done, path = _graph(), set(), []

    def visit(m):
        assert m not in path, " -> ".join(path[path.index(m):] + [m])
        if m in done:
            return
        path.append(m)
        for i in graph[m]:
            visit(i)
        path.pop()
        done.add(m)
    for m in graph:
        visit(m)


def test_the_graph_is_real():
    """The checks above see the imports they are meant to judge."""
    graph = _graph()
    assert "ukl.api" in graph["ukl.measure.bench"]
    assert "ukl.build.kernel" in graph["ukl.api"]
    assert "ukl.guest.console" in graph["ukl.guest.qemu"]
