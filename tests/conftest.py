"""Every test runs against state of its own: never the real ``~/.plangate`` or ``~/.claude``.

Tests that need another state root or config folder set their own; those that test the
defaults remove these variables themselves. Git commits made by tests get an identity even on
a machine without a global git configuration. The suite's journals are small, below the size
from which hook reads keep a journal index; the threshold is set to 0 so that every hook read
in the suite, the real Claude Code sessions included, goes on from the index an earlier read
saved, and the suite proves that path gives the same decisions.

**Nothing CI has may be skipped.** With ``PLANGATE_REQUIRE_ALL=1`` (``.ci/run`` sets it), a
test or a test module skipped for want of something CI provides (:data:`CI_NEEDS`: the
transcript corpus in ``../shared/corpus``, PostgreSQL, Chromium, the Claude Code and Codex
CLIs, tmux, git, the unprivileged test user, the pinned spec-driven kits of
:mod:`testkit.kits`) fails instead, so a missing corpus fails CI rather than quietly dropping
a module. Without the switch such tests skip, saying what is missing.

**Property tests on a busy machine.** Hypothesis's timing checks (a per-example deadline, the
warning that drawing inputs is slow) measure the machine, not plangate: with the suite, CI
and benchmarks sharing two cores they failed tests that were right. They are off for every
property test (the ``plangate`` profile); each still runs all its examples.

**Checks root cannot make.** Root writes into read-only folders, so a check of what happens
when a write is refused runs as an unprivileged user through the :func:`unprivileged`
fixture (``runuser -u plangate-test``; ``scripts/ensure-test-services`` creates the user).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from testkit.kits import Kit, KitCache, KitMissing

settings.register_profile("plangate", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("plangate")

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "plangate tests",
    "GIT_AUTHOR_EMAIL": "tests@plangate.invalid",
    "GIT_COMMITTER_NAME": "plangate tests",
    "GIT_COMMITTER_EMAIL": "tests@plangate.invalid",
}
REQUIRE_ALL_ENV = "PLANGATE_REQUIRE_ALL"
#: What CI provides, and words a skip's reason uses when it is missing (any case).
CI_NEEDS: dict[str, tuple[str, ...]] = {
    "the public transcript corpus": ("corpus",),
    "PostgreSQL": ("postgresql", "initdb", "pg_ctl"),
    "Chromium": ("chromium", "playwright"),
    "the Claude Code CLI": ("claude code cli", "plangate_claude_bin"),
    "the Codex CLI": ("the codex cli is missing",),
    "tmux": ("tmux",),
    "bubblewrap": ("bubblewrap",),
    "socat": ("socat",),
    "git": ("git is not installed",),
    "an unprivileged user": ("unprivileged user",),
    "the spec-driven kits (cc-sdd, spec-kit)": ("cc-sdd", "specify-cli"),
}
TEST_USER = "plangate-test"
SRC = str(Path(__file__).resolve().parents[1] / "src")


@pytest.fixture(autouse=True)
def _isolated_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    base: Path = tmp_path_factory.mktemp("isolated")
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(base / "plangate-state"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(base / "claude-config"))
    monkeypatch.setenv("CODEX_HOME", str(base / "codex-home"))
    monkeypatch.setenv("PLANGATE_TUNING", "index_min_bytes=0")
    for name, value in GIT_IDENTITY.items():
        if name not in os.environ:
            monkeypatch.setenv(name, value)


_CWD = pytest.StashKey[str]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    item.stash[_CWD] = os.getcwd()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    """A test that changes the process's working folder must put it back (``monkeypatch.chdir``
    does, in its teardown): a later test would otherwise run in another test's project, and a
    ``plangate setup`` there find that project's settings (issue 32's merge found one)."""
    result = yield
    before = item.stash.get(_CWD, None)
    after = os.getcwd()
    if before is not None and after != before:
        os.chdir(before)
        raise AssertionError(f"the test left the working folder at {after} (use monkeypatch.chdir)")
    return result


# -- nothing CI has may be skipped --------------------------------------------------------


def require_all() -> bool:
    return os.environ.get(REQUIRE_ALL_ENV) == "1"


def ci_need(reason: str) -> str | None:
    """The thing CI provides that a skip's ``reason`` says is missing, or ``None``."""
    lowered = reason.lower()
    for need, words in CI_NEEDS.items():
        if any(word in lowered for word in words):
            return need
    return None


def _skip_reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _fail_if_required(report: pytest.CollectReport | pytest.TestReport) -> None:
    if not report.skipped or hasattr(report, "wasxfail") or not require_all():
        return
    reason = _skip_reason(report)
    need = ci_need(reason)
    if need is None:
        return
    report.outcome = "failed"
    report.longrepr = (
        f"{need} is missing, and {REQUIRE_ALL_ENV}=1 (CI) does not let a test skip for it: {reason}"
    )


def pytest_configure(config: pytest.Config) -> None:
    if require_all():
        # A module that fails at collection must not stop the others from running.
        config.option.continue_on_collection_errors = True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    _fail_if_required(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    _fail_if_required(report)
    return report


# -- third-party kits installed as their users install them ------------------------------


@pytest.fixture(scope="session")
def kit_cache(tmp_path_factory: pytest.TempPathFactory) -> KitCache:
    """Runs each kit's installer once per test session (see :mod:`testkit.kits`)."""
    return KitCache(tmp_path_factory.mktemp("kits"))


InstallKit = Callable[[Kit, Path], Path]


@pytest.fixture
def install_kit(kit_cache: KitCache) -> InstallKit:
    """Installs a kit into a project folder (a copy of this session's real installation);
    a kit that cannot be installed skips the test with the reason, which CI does not allow."""

    def install(kit: Kit, project: Path) -> Path:
        try:
            return kit_cache.install(kit, project)
        except KitMissing as error:
            pytest.skip(str(error))

    return install


# -- checks root cannot make --------------------------------------------------------------


class Unprivileged:
    """Runs Python code as a user who is not root, in ``folder``, a scratch folder it owns.

    The code runs with ``PYTHONPATH`` set to ``src`` and without site packages (``-S``), so
    it can import plangate's standard-library-only modules (the hook path) with any
    interpreter the user may execute. As root, ``src`` is a copy of plangate the user owns:
    the checkout may be where the user cannot read (a clone in ``/root``).
    """

    def __init__(self, prefix: list[str], python: str, folder: Path, src: str = SRC) -> None:
        self.prefix = prefix
        self.python = python
        self.folder = folder
        self.src = src

    def run(self, code: str) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": self.src,
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(self.folder),
            "LC_ALL": "C.UTF-8",
        }
        return subprocess.run(
            [*self.prefix, self.python, "-S", "-c", code],
            cwd=self.folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


def _usable_python(prefix: list[str]) -> str | None:
    """An interpreter (3.11 or newer) the user of ``prefix`` can run: this one, else the
    system's (a venv under ``/root`` is out of an unprivileged user's reach)."""
    for candidate in (os.path.realpath(sys.executable), "/usr/bin/python3"):
        probe = [*prefix, candidate, "-S", "-c", "import sys; assert sys.version_info >= (3, 11)"]
        try:
            if subprocess.run(probe, capture_output=True, timeout=30).returncode == 0:
                return candidate
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


@pytest.fixture
def unprivileged(tmp_path: Path) -> Iterator[Unprivileged]:
    """Runs code as a user who is not root (see :class:`Unprivileged`)."""
    if os.geteuid() != 0:
        yield Unprivileged([], sys.executable, tmp_path)
        return
    runuser = shutil.which("runuser")
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        runuser = None
    if runuser is None:
        pytest.skip(
            f"the unprivileged user {TEST_USER} (or runuser) is missing: "
            "run scripts/ensure-test-services as root"
        )
    prefix = [runuser, "-u", TEST_USER, "--"]
    python = _usable_python(prefix)
    if python is None:
        pytest.skip(f"no Python 3.11 the unprivileged user {TEST_USER} can run")
    folder = Path(tempfile.mkdtemp(prefix="plangate-unprivileged-"))
    src = Path(tempfile.mkdtemp(prefix="plangate-unprivileged-src-"))
    try:
        shutil.chown(folder, user=TEST_USER)
        copy = shutil.ignore_patterns("__pycache__")
        shutil.copytree(Path(SRC) / "plangate", src / "plangate", ignore=copy)
        for path in [src, *src.rglob("*")]:
            shutil.chown(path, user=TEST_USER)
        yield Unprivileged(prefix, python, folder, str(src))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(src, ignore_errors=True)
