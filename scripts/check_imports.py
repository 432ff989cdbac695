"""Import rules that import-linter's contracts cannot state; run by `make lint`.

    python scripts/check_imports.py        # from the repository root; exit 1 on a problem

1. No import cycle between modules of envfactory, sandboxes, verifiers or workflows.
   Every import statement counts, inside functions and under TYPE_CHECKING too: an import
   moved into a function hides a cycle from Python, not from this check. (The built-in
   `acyclic_siblings` contract sees cycles between siblings only, not a module that
   imports its own package's `__init__` while that imports it.)
2. Every subpackage of `envfactory` is a layer of the `layers` contract: a new or renamed
   package cannot escape it (a missing one already breaks the contract).
3. `envfactory.core` imports the standard library, pydantic and pydantic_settings only
   (STYLE.md), except the imports listed in EXCEPTIONS; the `core-is-ground-floor`
   contract names the known third-party packages, this catches any other.

The graph comes from grimp, the library under import-linter; it is built from the source
files here, never by importing them.
"""

from __future__ import annotations

import configparser
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("envfactory", "sandboxes", "verifiers", "workflows")
CORE_ALLOWED = {"pydantic", "pydantic_settings"}
#: (importer, imported top-level package): the reason is in .importlinter
EXCEPTIONS = {("envfactory.core.bounded_yaml", "yaml")}


def cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & modules) for m in modules}
    tarjan = _Tarjan(edges)
    for start in sorted(modules):
        if start not in tarjan.index:
            tarjan.visit(start)
    return tarjan.found


class _Tarjan:
    def __init__(self, edges: dict[str, list[str]]) -> None:
        self.edges = edges
        self.index: dict[str, int] = {}
        self.low: dict[str, int] = {}
        self.stack: list[str] = []
        self.on_stack: set[str] = set()
        self.found: list[list[str]] = []

    def visit(self, start: str) -> None:
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                self.index[node] = self.low[node] = len(self.index)
                self.stack.append(node)
                self.on_stack.add(node)
            if i < len(self.edges[node]):
                work.append((node, i + 1))
                nxt = self.edges[node][i]
                if nxt not in self.index:
                    work.append((nxt, 0))
                elif nxt in self.on_stack:
                    self.low[node] = min(self.low[node], self.index[nxt])
                continue
            if work:  # node is done: pass its low link up to the caller
                parent = work[-1][0]
                self.low[parent] = min(self.low[parent], self.low[node])
            if self.low[node] == self.index[node]:
                self._component(node)

    def _component(self, root: str) -> None:
        component = []
        while True:
            member = self.stack.pop()
            self.on_stack.discard(member)
            component.append(member)
            if member == root:
                break
        if len(component) > 1:
            self.found.append(sorted(component))


def layer_names(config: Path) -> set[str]:
    parser = configparser.ConfigParser()
    parser.read(config)
    text = parser["importlinter:contract:layers"]["layers"]
    return {name.strip() for line in text.splitlines() for name in line.split("|") if name.strip()}


def core_problems(graph: grimp.ImportGraph) -> list[str]:
    stdlib = set(sys.stdlib_module_names)
    problems = []
    for module in sorted(graph.find_descendants("envfactory.core") | {"envfactory.core"}):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            top = imported.split(".")[0]
            if top in stdlib or top in CORE_ALLOWED or top == "envfactory":
                continue
            if (module, top) not in EXCEPTIONS:
                problems.append(f"{module} imports {imported} (core is stdlib + pydantic)")
    return problems


def main() -> int:
    sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed copy
    graph = grimp.build_graph(*PACKAGES, include_external_packages=True, cache_dir=None)
    ours = {m for m in graph.modules if m.split(".")[0] in PACKAGES}
    problems = [f"import cycle: {' <-> '.join(c)}" for c in cycles(graph, ours)]
    layers = layer_names(ROOT / ".importlinter")
    subpackages = [
        c for c in graph.find_children("envfactory") if (ROOT / c.replace(".", "/")).is_dir()
    ]
    problems += [
        f"{name} is in no layer of the `layers` contract (.importlinter)"
        for name in sorted(subpackages)
        if name not in layers
    ]
    problems += core_problems(graph)
    for line in problems:
        print(line)
    print(f"{len(ours)} modules: {'no' if not problems else len(problems)} import problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
