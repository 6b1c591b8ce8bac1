"""``plangate doctor``'s ``package files`` check: plangate's installed files against the hashes
in its wheel's ``RECORD``, in a real wheel built from this tree and installed into a fresh
virtual environment, then one file edited and one removed as an agent would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plangate.install.check import OK
from plangate.install.installed_files import check_installed_files

REPO = Path(__file__).resolve().parents[2]


def _run(
    args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _doctor(python: Path, home: Path) -> dict[str, dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGATE_", "CLAUDE"))}
    env["HOME"] = str(home)
    done = _run([str(python), "-m", "plangate", "doctor", "--json"], cwd=home, env=env)
    record = json.loads(done.stdout)
    assert record["healthy"] is (done.returncode == 0)
    return {check["check"]: check for check in record["checks"]}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_edited_installed_file_is_named(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet"]
        + ["--wheel-dir", str(wheels), str(REPO)]
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("plangate-*.whl")
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)]).returncode == 0
    python = venv / "bin" / "python"
    installed = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
        + ["--no-deps", "--no-index", str(wheel)]
    )
    assert installed.returncode == 0, installed.stderr
    home = tmp_path / "home"
    home.mkdir()

    fresh = _doctor(python, home)["package files"]
    assert fresh["status"] == "ok", fresh
    assert fresh["detail"].endswith("files match the hashes in plangate's RECORD")

    (site,) = venv.glob("lib/python*/site-packages")
    with open(site / "plangate" / "hooks" / "stop.py", "a", encoding="utf-8") as stream:
        stream.write("\nimport os  # an agent was here\n")
    (site / "plangate" / "contracts" / "library" / "cc-sdd.toml").unlink()
    edited = _doctor(python, home)["package files"]
    assert edited["status"] == "problem", edited
    assert "changed since installation: plangate/hooks/stop.py" in edited["detail"]
    assert "missing: plangate/contracts/library/cc-sdd.toml" in edited["detail"]
    assert "pipx reinstall plangate" in edited["remedy"]


def test_an_editable_install_is_not_checkable() -> None:
    check = check_installed_files()  # this checkout: `pip install -e`
    assert (check.status, check.detail) == (
        OK,
        "not checkable (editable install): no hashes to compare",
    )
