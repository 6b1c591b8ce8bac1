"""The README's "Guard your own workflow" example, run as a user would: the contract copied
from the README into a project with three skills of the user's own, checked and listed
with the CLI, then a real ``claude -p`` session on the stand-in model."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plangate.commands.settings import settings_object
from plangate.harness.claude import ClaudeEnv
from plangate.harness.standin import Script, StandIn, tool_use

README = Path(__file__).resolve().parents[2] / "README.md"
SKILLS = ("post-outline", "post-draft", "post-publish")
OUTLINE = "# Outline\n\n- Why\n- How\n- What next\n"


def readme_contract() -> str:
    section = README.read_text(encoding="utf-8").split("## Guard your own workflow\n", 1)[1]
    return section.split("```toml\n", 1)[1].split("```", 1)[0]


def plangate(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plangate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def make_project(project: Path) -> None:
    for name in SKILLS:
        folder = project / ".claude" / "skills" / name
        folder.mkdir(parents=True)
        folder.joinpath("SKILL.md").write_text(
            f"---\nname: {name}\ndescription: the {name.split('-')[1]} step of a blog post\n---\n\n"
            f"Do the {name.split('-')[1]} step for the post named in the arguments.\n"
        )
    contracts = project / ".plangate" / "contracts"
    contracts.mkdir(parents=True)
    contracts.joinpath("post.toml").write_text(readme_contract())


def test_the_readme_contract_checks_and_applies(tmp_path: Path) -> None:
    make_project(tmp_path)
    checked = plangate(tmp_path, "contract", "check", ".plangate/contracts/post.toml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "valid: workflow post, 3 phases (outline → draft → publish)" in checked.stdout
    listed = plangate(tmp_path, "contract", "list", "--json")
    assert listed.returncode == 0
    applying = [c for c in json.loads(listed.stdout)["contracts"] if c["applies"]]
    assert [(c["workflow"], c["origin"]) for c in applying] == [("post", "project")]


@pytest.fixture
def session(tmp_path: Path, claude_bin: Path) -> Iterator[tuple[ClaudeEnv, StandIn, Script]]:
    script = Script(fallback="Done.")
    with StandIn(script) as model:
        env = ClaudeEnv.create(tmp_path / "cc", model, binary=claude_bin)
        make_project(env.project_dir)
        yield env, model, script


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_the_readme_example_in_a_real_session(
    session: tuple[ClaudeEnv, StandIn, Script], tmp_path: Path
) -> None:
    env, model, script = session
    state = tmp_path / "state"
    settings = settings_object(False, False, contracts=True)
    extra = {"PLANGATE_STATE_ROOT": str(state)}
    posts = env.project_dir / "posts" / "hello"
    page = env.project_dir / "site" / "hello.html"
    ids: list[str] = []

    def run(prompt: str, *turns: object) -> str:
        script.add_main(*turns)  # type: ignore[arg-type]
        result = env.run(
            prompt,
            settings=settings,
            resume=ids[-1] if ids else None,
            allowed_tools=["Read", "Write", "Bash", "Skill"],
            env=extra,
        )
        assert result.ok and result.session_id, result.describe()
        ids.append(result.session_id)
        return result.stdout

    asked = len(model.message_requests("main"))
    early = run("/post-draft hello")
    assert "contract_phase_order" in early and len(model.message_requests("main")) == asked
    run(
        "/post-outline hello",
        tool_use("Write", file_path=str(page), content="<h1>too early</h1>\n"),
        tool_use("Write", file_path=str(posts / "outline.md"), content=OUTLINE),
        "The outline is ready. Approve it?",
    )
    assert not page.exists() and (posts / "outline.md").is_file()
    assert model.saw("contract_edit_scope")
    run(
        "Yes, approve the outline.",
        tool_use("Skill", skill="post-draft", args="hello"),
        tool_use("Write", file_path=str(posts / "draft.md"), content="# Draft\n\nHello.\n"),
        "Drafted.",
    )
    run(
        "/post-publish hello",
        "Published.",
        tool_use("Bash", command=f"mkdir -p site && cp posts/hello/draft.md {page}"),
        "Now the page exists.",
    )
    assert page.is_file()
    assert model.saw("PLANGATE_GATE contract-gate blocked")
    log = [
        json.loads(line)
        for line in (state / "analytics" / "autoplan-guard.jsonl").read_text().splitlines()
    ]
    denied = [(line["event"], line["code"]) for line in log if line["decision"] == "deny"]
    assert denied == [("typed", "contract_phase_order"), ("edit", "contract_edit_scope")]
    assert {"phase": "outline", "event": "approval", "via": "human"}.items() <= next(
        line for line in log if line.get("event") == "approval"
    ).items()
