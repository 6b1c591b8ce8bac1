"""What ships is what users run: the built wheel holds no test support and no module that only
tests import.

The wheel is built from this tree as ``pip`` builds it for a user (hatchling, offline: no build
isolation). From its entry points (the console script's module, every ``__main__`` module
``python -m`` runs, every ``plangate.commands.*`` verb and every ``plangate.hooks.*`` module
that ``plangate setup`` registers) the import graph is followed through every ``import`` in a
module, the lazy ones inside functions included, and the names a package loads on first use
(declared in its ``if TYPE_CHECKING:`` block, as :mod:`plangate.plan` does). Imports under
``TYPE_CHECKING`` alone reach nothing. Every ``plangate/*.py`` in the wheel must be reached: a
module nothing reaches is test-only or dead, and belongs in ``testkit/`` or nowhere.

Below the modules, the functions: vulture reads ``src``, ``tests``, ``testkit`` and
``benchmarks`` and every function, method, property or class that nothing names is dead
(a test that calls it counts as a caller). The only exceptions are the entry points and
framework callbacks in :data:`CALLED_FROM_OUTSIDE`, each with the reason, and pytest's own
(fixtures, ``pytest_*`` hooks).

Then the wheel is installed the ways the README tells users to, each into a fresh HOME:
``uv tool install`` and ``pipx install`` (uv and pipx come with the test extras), followed by
``plangate setup``, ``plangate doctor`` against the real Claude Code CLI and ``plangate
demo``; ``uvx`` (uv's cache) is refused by setup.
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from plangate.claude_cli import ClaudeNotFoundError, find_claude

REPO = Path(__file__).resolve().parents[1]
ROOT_PACKAGES = ("plangate.commands.", "plangate.hooks.")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet"]
        + ["--wheel-dir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (
        f"the wheel did not build (hatchling comes with `pip install -e '.[test]'`, which "
        f"`make setup` runs):\n{done.stdout}\n{done.stderr}"
    )
    (built,) = out.glob("plangate-*.whl")
    return built


def _module_name(path: str) -> str:
    name = path.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class Graph:
    """The modules of the wheel and what each imports."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.trees = {_module_name(path): ast.parse(text) for path, text in sources.items()}
        self.packages = {_module_name(path) for path in sources if path.endswith("__init__.py")}
        self.lazy = {package: self._lazy_names(package) for package in self.packages}

    def _absolute(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = module.split(".") if module in self.packages else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join([*base, *([node.module] if node.module else [])])

    def _type_checking_imports(self, module: str) -> tuple[set[int], list[ast.ImportFrom]]:
        skipped: set[int] = set()
        declared: list[ast.ImportFrom] = []
        for node in ast.walk(self.trees[module]):
            if isinstance(node, ast.If) and _type_checking(node):
                for statement in node.body:
                    for inner in ast.walk(statement):
                        skipped.add(id(inner))
                        if isinstance(inner, ast.ImportFrom):
                            declared.append(inner)
        return skipped, declared

    def _lazy_names(self, package: str) -> dict[str, str]:
        """Names a package declares under TYPE_CHECKING as coming from its own modules: those
        its ``__getattr__`` loads on first use."""
        _, declared = self._type_checking_imports(package)
        names: dict[str, str] = {}
        for node in declared:
            source = self._absolute(package, node)
            if source.startswith(package + ".") and source in self.trees:
                for alias in node.names:
                    names[alias.asname or alias.name] = source
        return names

    def imports(self, module: str) -> set[str]:
        skipped, _ = self._type_checking_imports(module)
        named: set[str] = set()
        for node in ast.walk(self.trees[module]):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                source = self._absolute(module, node)
                named.add(source)
                for alias in node.names:
                    named.add(f"{source}.{alias.name}")
                    if alias.name in self.lazy.get(source, {}):
                        named.add(self.lazy[source][alias.name])
        found: set[str] = set()
        for name in named:
            parts = name.split(".")
            found.update(
                ".".join(parts[:end])
                for end in range(1, len(parts) + 1)
                if ".".join(parts[:end]) in self.trees
            )
        return found

    def reached(self, roots: set[str]) -> set[str]:
        seen: set[str] = set()
        todo = list(roots)
        while todo:
            module = todo.pop()
            if module in seen:
                continue
            seen.add(module)
            parts = module.split(".")
            todo += [".".join(parts[:end]) for end in range(1, len(parts))]  # its packages
            todo += sorted(self.imports(module) - seen)
        return seen


def _contents(wheel: Path) -> tuple[list[str], dict[str, str], str]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        sources = {
            name: archive.read(name).decode("utf-8")
            for name in names
            if name.startswith("plangate/") and name.endswith(".py")
        }
        (entry_points,) = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        return names, sources, archive.read(entry_points).decode("utf-8")


def test_the_wheel_holds_no_test_support(wheel: Path) -> None:
    names, _, _ = _contents(wheel)
    outside = [name for name in names if not name.startswith("plangate/")]
    assert outside and all(".dist-info/" in name for name in outside), outside
    assert not [
        name for name in names if name.startswith(("plangate/testing/", "plangate/standin/"))
    ]
    assert "plangate/harness/standin/server.py" in names  # what `plangate demo` runs ships


def test_every_module_in_the_wheel_is_reached_from_an_entry_point(wheel: Path) -> None:
    _, sources, entry_points = _contents(wheel)
    graph = Graph(sources)
    parser = configparser.ConfigParser()
    parser.read_string(entry_points)
    scripts = {value.split(":")[0].strip() for value in parser["console_scripts"].values()}
    assert scripts == {"plangate.cli"}
    roots = scripts | {
        module
        for module in graph.trees
        if module.startswith(ROOT_PACKAGES) or module.endswith(".__main__")
    }
    assert {"plangate.__main__", "plangate.hooks.pre_tool_use"} <= roots
    unreached = sorted(set(graph.trees) - graph.reached(roots))
    assert not unreached, f"modules in the wheel that no entry point imports: {unreached}"


# -- every function is called ----------------------------------------------------------------

CALLED_FROM_OUTSIDE = {
    ("src/plangate/journal/__init__.py", "__getattr__"): "Python calls it: lazy module names",
    ("src/plangate/plan/__init__.py", "__getattr__"): "Python calls it: lazy module names",
    ("src/plangate/plan/__init__.py", "__dir__"): "Python calls it: dir() of the package",
    ("src/plangate/journal/window.py", "__class_getitem__"): "Python calls it: Fold[...]",
    ("src/plangate/harness/standin/server.py", "log_message"): "http.server calls it",
    ("src/plangate/harness/standin/server.py", "do_GET"): "http.server calls it",
    ("src/plangate/harness/standin/server.py", "do_HEAD"): "http.server calls it",
    ("src/plangate/harness/standin/server.py", "do_DELETE"): "http.server calls it",
    ("src/plangate/harness/standin/server.py", "do_CONNECT"): "http.server calls it",
}
_CODE = ("src/plangate", "tests", "testkit", "benchmarks")


def test_every_function_is_called_from_somewhere() -> None:
    import vulture  # type: ignore[import-untyped]  # vulture ships no type information

    finder = vulture.Vulture(ignore_names=["pytest_*"], ignore_decorators=["@pytest.fixture"])
    finder.scavenge([str(REPO / folder) for folder in _CODE])
    unused = {
        (Path(item.filename).resolve().relative_to(REPO).as_posix(), item.name): item
        for item in finder.get_unused_code(min_confidence=60)
        if item.typ in ("function", "method", "property", "class")
    }
    assert set(CALLED_FROM_OUTSIDE) <= set(unused), "a listed exception is called now: unlist it"
    dead = sorted(
        f"{path}:{item.first_lineno} {item.typ} {name}"
        for (path, name), item in unused.items()
        if (path, name) not in CALLED_FROM_OUTSIDE
    )
    assert not dead, f"nothing calls these (delete them, or name the caller): {dead}"


# -- installed as a user installs it --------------------------------------------------------

_PASSED_ON = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_", "UV_", "HTTP")


def _tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    if not path.is_file():
        pytest.fail(
            f"{name} is missing: `pip install -e '.[test]'` (which `make setup` runs) installs it",
            pytrace=False,
        )
    return str(path)


def _claude() -> Path:
    try:
        return find_claude()
    except ClaudeNotFoundError as error:
        pytest.fail(f"the Claude Code CLI is missing: {error}", pytrace=False)


def _user_env(home: Path, **extra: str) -> dict[str, str]:
    """A fresh user's environment: HOME, a PATH with uv and the system, the installers'
    own settings (certificates, indexes) and nothing of plangate's or Claude Code's."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key.upper().startswith(_PASSED_ON) and key != "UV_CACHE_DIR"
    }
    if "SSL_CERT_FILE" not in env and Path("/etc/ssl/certs/ca-certificates.crt").is_file():
        env["SSL_CERT_FILE"] = "/etc/ssl/certs/ca-certificates.crt"  # uv: the system's CAs
    env.update(
        HOME=str(home),
        PATH=os.pathsep.join(
            [str(home / ".local" / "bin"), str(Path(_tool("uv")).parent), "/usr/bin", "/bin"]
        ),
        LANG="C.UTF-8",
    )
    env.update(extra)
    return env


def _run(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def _installed(installer: str, wheel: Path, home: Path) -> tuple[Path, dict[str, str]]:
    home.mkdir()
    env = _user_env(home)
    if installer == "uv":
        done = _run([_tool("uv"), "tool", "install", str(wheel)], env, home)
    elif installer == "uv-clone":  # the README's route: `uv tool install .` in a clone
        done = _run([_tool("uv"), "tool", "install", "."], env, REPO)
    else:
        env["PIPX_HOME"] = str(home / ".local" / "share" / "pipx")
        env["PIPX_BIN_DIR"] = str(home / ".local" / "bin")
        done = _run([_tool("pipx"), "install", "--python", sys.executable, str(wheel)], env, home)
    assert done.returncode == 0, done.stdout + done.stderr
    plangate = home / ".local" / "bin" / "plangate"
    assert plangate.exists(), done.stdout + done.stderr
    return plangate, env


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("installer", ["uv", "pipx", "uv-clone"])
def test_installed_as_a_tool_sets_up_and_is_healthy(
    wheel: Path, tmp_path: Path, installer: str
) -> None:
    home = tmp_path / "home"
    plangate, env = _installed(installer, wheel, home)
    version = _run([str(plangate), "--version"], env, home)
    assert version.returncode == 0 and version.stdout.startswith("plangate "), version.stderr
    setup = _run([str(plangate), "setup"], env, home)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    groups = settings["hooks"]["PreToolUse"]  # the guard's, and the workflow contracts'
    commands = [hook["command"] for group in groups for hook in group["hooks"]]
    assert any("plangate.hooks.pre_tool_use " in command for command in commands), commands
    tools = (
        ".local/share/uv/tools/plangate/"
        if installer.startswith("uv")
        else ".local/share/pipx/venvs/plangate/"
    )
    for command in commands:
        assert command.startswith(f'"{home}/{tools}bin/python" -S -c '), command
        assert str(Path(__file__).resolve().parents[1]) not in command  # not this checkout
    skill = (home / ".claude" / "skills" / "autoplan" / "SKILL.md").read_text(encoding="utf-8")
    assert f"{home}/.local/" in skill and "{{PLANGATE}}" not in skill

    claude = _claude()
    healthy = _run([str(plangate), "doctor"], {**env, "PLANGATE_CLAUDE_BIN": str(claude)}, home)
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert "ok      hooks" in healthy.stdout and "(verified)" in healthy.stdout

    removed = _run([str(plangate), "setup", "--uninstall"], env, home)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not (home / ".claude" / "skills").exists()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_demo_from_a_uv_tool_finds_the_cli_or_names_npm(wheel: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    plangate, env = _installed("uv", wheel, home)
    missing = _run([str(plangate), "demo"], env, home)
    assert missing.returncode == 1, missing.stdout + missing.stderr
    assert "npm install -g @anthropic-ai/claude-code@2.1.332" in missing.stderr
    assert "make setup" not in missing.stderr
    demo = _run([str(plangate), "demo"], {**env, "PLANGATE_CLAUDE_BIN": str(_claude())}, home)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "enter Design (too early)   deny publication_missing" in demo.stdout


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_setup_from_uvx_is_refused(wheel: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _user_env(home)
    done = _run([_tool("uvx"), "--from", str(wheel), "plangate", "setup"], env, home)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "plangate runs from uv's cache" in done.stderr
    assert "`uv tool install <plangate folder>`" in done.stderr  # the route that works today
    assert "uv tool install plangate`" not in done.stderr  # not on PyPI yet (issue 34)
    assert not (home / ".claude" / "settings.json").exists()
    assert not (home / ".claude" / "skills").exists()
