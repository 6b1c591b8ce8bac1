"""What the Codex e2e tests share: plangate set up for Codex in a test's ``CODEX_HOME``, and a
project with cc-sdd installed for Codex by its own installer and a feature's spec folder."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from plangate.harness.codex import CodexEnv
from plangate.install.setup import setup
from testkit.kits import CC_SDD_CODEX
from tests.conftest import InstallKit


def setup_codex(cx: CodexEnv, *, uninstall: bool = False, home: Path | None = None) -> str:
    """``plangate setup --codex`` (or ``--uninstall``) for ``cx``'s ``CODEX_HOME`` (or
    ``home``), with this interpreter; what it printed."""
    out = io.StringIO()
    setup(
        project=False,
        uninstall=uninstall,
        ceo_review_gate=None,
        autoplan_gate=None,
        out=out,
        python=sys.executable,
        environ={"CODEX_HOME": str(home or cx.codex_home)},
        codex=True,
    )
    return out.getvalue()


def cc_sdd_project(install_kit: InstallKit, project: Path, spec: str) -> Path:
    """cc-sdd installed for Codex in ``project``, and the feature's spec folder ``spec``
    (relative) with its ``spec.json``; the folder."""
    install_kit(CC_SDD_CODEX, project)
    folder = project / spec
    folder.mkdir(parents=True)
    (folder / "spec.json").write_text('{"feature_name": "greet"}\n')
    return folder
