"""The contract format: a valid file loads; every error names its line and its remedy."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.contracts import compiled, discovery, loader
from plangate.errors import ContractError

VALID = """\
[workflow]
name = "notes"
skills = ["draft", "kit:review"]
variables = { topic = 1 }
paths = { dir = "notes/{topic}" }

[[phase]]
name = "draft"
entry = ["draft"]
editable = ["{dir}/**"]

[[phase.artifact]]
path = "{dir}/draft.md"
headings = ["Outline"]
min_items = 3

[phase.approval]
words = ["approve the draft"]
flag = { file = "{dir}/state.json", key = "approved.draft" }

[[phase]]
name = "review"
entry = ["kit:review"]

[[phase.artifact]]
path = "{dir}/review.md"
min_checkboxes = 1

[done]
all_checked = ["{dir}/review.md"]
check = "true"
"""


def test_a_valid_contract_loads_every_field() -> None:
    contract = loader.load_text(VALID, "notes.toml")
    assert contract.name == "notes"
    assert [p.name for p in contract.phases] == ["draft", "review"]
    draft = contract.phases[0]
    assert draft.editable == ("{dir}/**",)
    assert draft.artifacts[0].min_items == 3
    assert draft.artifacts[0].line == 12
    assert draft.approval.required and draft.approval.words == ("approve the draft",)
    assert draft.approval.flag is not None and draft.approval.flag.key == "approved.draft"
    assert contract.done is not None and contract.done.after == "review"
    assert contract.all_skills() == ("draft", "kit:review")


def test_the_cache_round_trips_a_contract(tmp_path: Path) -> None:
    path = tmp_path / "notes.toml"
    path.write_text(VALID)
    first = compiled.Cache(str(tmp_path / "state")).load(str(path))
    cache = compiled.Cache(str(tmp_path / "state"))
    first_dict = compiled.to_dict(first)
    cache.save()
    again = compiled.Cache(str(tmp_path / "state"))
    assert again.entries == {} or compiled.to_dict(again.load(str(path))) == first_dict


def test_the_cache_keeps_an_error_until_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(VALID.replace("min_items = 3", "min_items = -1"))
    state = str(tmp_path / "state")
    cache = compiled.Cache(state)
    with pytest.raises(ContractError):
        cache.load(str(path))
    cache.save()
    with pytest.raises(ContractError) as caught:
        compiled.Cache(state).load(str(path))
    assert caught.value.line == 15
    path.write_text(VALID)
    assert compiled.Cache(state).load(str(path)).name == "notes"


@pytest.mark.parametrize(
    ("change", "line", "says", "remedy"),
    [
        (("min_items = 3", "min_item = 3"), 15, "unknown key 'min_item'", "min_items"),
        (("min_items = 3", "min_items = -1"), 15, "whole number >= 0", "min_items = 3"),
        (('path = "{dir}/draft.md"', 'path = "{dri}/draft.md"'), 13, "{dri}", "declare it"),
        (('name = "review"', 'name = "draft"'), 22, "declared twice", "own name"),
        (('words = ["approve the draft"]', "words = []"), 18, "needs the words", "words ="),
        (('check = "true"', 'check = ""'), 31, "non-empty string", "check ="),
        (("[done]", '[done]\nafter = "nope"'), 30, "names no phase", "one of the phases"),
        (('name = "notes"', 'name = "my notes"'), 2, "may not hold spaces", 'name = "my-flow"'),
        (('key = "approved.draft"', 'keys = "approved.draft"'), 19, "unknown key 'keys'", "file"),
        (('skills = ["draft", "kit:review"]', "skills = ["), 4, "not valid TOML", "TOML syntax"),
    ],
)
def test_each_error_names_its_line_and_remedy(
    change: tuple[str, str], line: int, says: str, remedy: str
) -> None:
    text = VALID.replace(*change)
    assert text != VALID
    with pytest.raises(ContractError) as caught:
        loader.load_text(text, "notes.toml")
    error = caught.value
    assert (error.line, says in error.message, remedy in error.remedy) == (line, True, True), (
        error.where(),
        error.message,
        error.remedy,
    )


def test_the_shipped_library_is_valid() -> None:
    names = sorted(Path(discovery.library_dir()).glob("*.toml"))
    assert names, "the library ships at least the cc-sdd contract"
    for path in names:
        loader.load_file(str(path))


def test_discovery_order_and_shadowing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "p"
    beside = project / ".claude" / "skills" / "draft"
    beside.mkdir(parents=True)
    (beside / "plangate.toml").write_text(VALID)
    (project / ".plangate" / "contracts").mkdir(parents=True)
    (project / ".plangate" / "contracts" / "notes.toml").write_text(VALID)
    (project / ".plangate" / "contracts" / "broken.toml").write_text("[workflow\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    found = discovery.discover(str(project), loader.load_file, str(tmp_path / "state"))
    by_path = {Path(item.path).name + ":" + item.origin: item for item in found}
    assert by_path["plangate.toml:skill"].applies
    assert not by_path["notes.toml:project"].applies
    assert "shadowed by" in by_path["notes.toml:project"].why
    assert by_path["broken.toml:project"].applies and by_path["broken.toml:project"].error
    assert not by_path["cc-sdd.toml:library"].applies
    assert "none of its skills is installed" in by_path["cc-sdd.toml:library"].why


def test_check_reports_every_error_in_one_run(tmp_path: Path) -> None:
    """Issue 34: three mistakes in three parts of a file, all reported by one `contract check`,
    each with its line and remedy; a part that failed is not reported again as another."""
    import io

    from plangate.commands.contract import check_file

    text = (
        VALID.replace('name = "notes"', 'name = "my notes"')  # line 2
        .replace("min_items = 3", "min_item = 3")  # line 15
        .replace('check = "true"', 'check = ""')  # line 31
    )
    path = tmp_path / "notes.toml"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    assert check_file(str(path), out) == 1
    said = out.getvalue()
    assert f"{path}:2: error: workflow.name may not hold spaces" in said
    assert f"{path}:15: error: unknown key 'min_item' in phase.artifact" in said
    assert f"{path}:31: error: done.check must be a non-empty string" in said
    assert said.count(": error: ") == 3
    assert said.rstrip().endswith(f"{path}: 3 errors")


def test_check_warns_of_an_entry_naming_no_skill_with_the_closest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34: an entry naming a skill that exists nowhere (``post-outlin``) is valid TOML and
    a valid contract, but `contract check` warns, naming the closest skill."""
    import io

    from plangate.commands.contract import check_file

    project = tmp_path / "project"
    (project / ".claude" / "skills" / "post-outline").mkdir(parents=True)
    monkeypatch.chdir(project)
    text = VALID.replace('entry = ["draft"]', 'entry = ["post-outlin"]')
    path = tmp_path / "notes.toml"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    assert check_file(str(path), out) == 0
    said = out.getvalue()
    assert ": valid: workflow notes" in said
    assert (
        f"{path}: warning: phase draft enters with 'post-outlin', a skill that is neither in "
        "the workflow's skills nor installed here; did you mean 'post-outline'?" in said
    )
    assert said.count("warning:") == 1  # kit:review is a declared skill: no warning
