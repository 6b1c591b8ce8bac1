"""plangate autoplan prepare-close: the close packet, its binding and its Read ranges."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest

from plangate import jsonio
from plangate.autoplan import layout
from plangate.autoplan.checkpoint import checkpoint
from plangate.autoplan.close import prepare_close, prepare_close_command
from plangate.autoplan.init import init
from plangate.errors import PlangateError
from plangate.plan import implementation_section
from tests.autoplan.conftest import PLAN, long_plan, restore_path, tree, write_plan


def _start(repo: Path, text: str) -> tuple[str, str]:
    source = write_plan(repo, text)
    restore = restore_path(repo)
    init(source, source, restore)
    return source, restore


def _covered(ranges: list[dict[str, int]]) -> set[int]:
    lines: set[int] = set()
    for entry in ranges:
        lines.update(range(entry["offset"], entry["offset"] + entry["limit"]))
    return lines


def test_close_packet_binding_and_read_ranges(repo: Path, reviewers: str) -> None:
    active, restore = _start(repo, long_plan())
    manifest = checkpoint(restore, "ceo", reviewers_dir=reviewers)
    out = io.StringIO()
    assert prepare_close_command(restore, "ceo", out=out) == 0
    assert out.getvalue().count("\n") == 1
    result = jsonio.loads(out.getvalue())
    assert isinstance(result, dict)
    assert list(result) == ["closePacketPath", "sha256", "bytes", "lines", "readRanges"]

    path = result["closePacketPath"]
    folder = os.path.dirname(path)
    assert os.path.basename(path) == "close-packet.md"
    assert layout.parse_folder_name(os.path.basename(folder)) == ("ceo", "close")
    assert os.path.dirname(folder) == os.path.dirname(restore)
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o444
    data = layout.read_verified(path, result["sha256"], result["bytes"])
    text = data.decode()

    # The ranges: 600 lines each, 1-based, together covering every line of the packet.
    assert result["lines"] == layout.line_count(data) == len(text.split("\n"))
    assert result["lines"] > 1200
    ranges = result["readRanges"]
    assert len(ranges) == (result["lines"] + 599) // 600 >= 3
    assert ranges[0] == {"offset": 1, "limit": 600}
    assert all(entry["limit"] == 600 for entry in ranges)
    assert set(range(1, result["lines"] + 1)) <= _covered(ranges)
    assert ranges[-1]["offset"] <= result["lines"]

    # It begins with the heading and the binding line.
    lines = text.split("\n")
    assert lines[0] == "# Current phase close packet"
    assert lines[1].startswith("Binding: ")
    binding = jsonio.loads(lines[1][len("Binding: ") :])
    assert binding == layout.close_binding(data)
    assert binding == {
        "phase": "ceo",
        "activePlan": active,
        "checkpoint": manifest["checkpoint"],
        "implementationSha256": manifest["implementationSha256"],
        "report": {"number": "1", "next": "eng"},
    }
    assert lines[1] == "Binding: " + jsonio.dumps(binding)  # compact JSON
    assert binding["implementationSha256"] == layout.implementation_sha256(
        Path(active).read_bytes()
    )

    # The complete implementation section, then the report template.
    section = implementation_section(Path(active).read_text().split("\n", 1)[1])
    assert section is not None
    assert section in text
    assert "true autoplan-published ceo" in text
    template = text[text.index("## Report template") :]
    assert "\nPhase 1 complete\n" in template
    assert text.index(section) < text.index("## Report template")
    assert "[finding" in template and "[decision" in template and "[reason" in template


def test_the_binding_follows_the_current_plan(repo: Path, reviewers: str) -> None:
    active, restore = _start(repo, PLAN)
    manifest = checkpoint(restore, "ceo", reviewers_dir=reviewers)
    text = Path(active).read_text().replace("one transaction", "one database transaction")
    Path(active).write_text(text)
    result = prepare_close(restore, "ceo")
    binding = layout.close_binding(Path(result["closePacketPath"]).read_bytes())
    assert binding is not None
    assert binding["checkpoint"] == manifest["checkpoint"]
    assert binding["implementationSha256"] != manifest["implementationSha256"]
    assert binding["implementationSha256"] == layout.implementation_sha256(
        Path(active).read_bytes()
    )
    assert "one database transaction" in Path(result["closePacketPath"]).read_text()


def test_the_latest_checkpoint_is_bound(repo: Path, reviewers: str) -> None:
    _, restore = _start(repo, PLAN)
    first = checkpoint(restore, "eng", reviewers_dir=reviewers)
    second = checkpoint(restore, "eng", reviewers_dir=reviewers)
    os.utime(first["checkpoint"], ns=(1, 1))
    result = prepare_close(restore, "eng")
    binding = layout.close_binding(Path(result["closePacketPath"]).read_bytes())
    assert binding is not None
    assert binding["checkpoint"] == second["checkpoint"]
    assert binding["report"] == {"number": "3", "next": "tasks"}
    assert "\nPhase 3 complete\n" in Path(result["closePacketPath"]).read_text()


@pytest.mark.parametrize(
    ("scope", "phase", "number", "following"),
    [
        ("design, dx", "ceo", "1", "design"),
        ("design, dx", "design", "2", "dx"),
        ("design, dx", "dx", "2.5", "eng"),
        ("dx", "ceo", "1", "dx"),
        ("none", "ceo", "1", "eng"),
    ],
)
def test_report_numbers_and_next_phase_follow_the_scope(
    repo: Path, reviewers: str, scope: str, phase: str, number: str, following: str
) -> None:
    _, restore = _start(repo, PLAN.replace("CSV file.\n", f"CSV file.\nScope: {scope}\n", 1))
    checkpoint(restore, phase, reviewers_dir=reviewers)
    result = prepare_close(restore, phase)
    data = Path(result["closePacketPath"]).read_bytes()
    binding = layout.close_binding(data)
    assert binding is not None
    assert binding["report"] == {"number": number, "next": following}
    assert f"\nPhase {number} complete\n".encode() in data


def test_prepare_close_without_a_checkpoint_is_refused(repo: Path) -> None:
    _, restore = _start(repo, PLAN)
    before = tree(repo)
    with pytest.raises(PlangateError) as caught:
        prepare_close(restore, "ceo")
    assert str(caught.value) == (
        f"Phase 1 (CEO) has no checkpoint for {restore} "
        f'(run `plangate autoplan checkpoint "{restore}" ceo` first)'
    )
    assert tree(repo) == before


def test_a_damaged_latest_checkpoint_is_refused(repo: Path, reviewers: str) -> None:
    _, restore = _start(repo, PLAN)
    manifest = checkpoint(restore, "ceo", reviewers_dir=reviewers)
    os.chmod(manifest["reviewInput"]["path"], 0o644)
    with pytest.raises(PlangateError) as caught:
        prepare_close(restore, "ceo")
    assert str(caught.value) == (
        f"the ceo checkpoint {manifest['checkpoint']} cannot be trusted (writable) "
        f'(run `plangate autoplan checkpoint "{restore}" ceo` again)'
    )


def test_checkpoints_of_another_restore_point_are_ignored(repo: Path, reviewers: str) -> None:
    source, restore = _start(repo, PLAN)
    checkpoint(restore, "ceo", reviewers_dir=reviewers)
    other = restore_path(repo, "plan-restore-2.md")
    init(source, source, other)
    with pytest.raises(PlangateError) as caught:
        prepare_close(other, "ceo")
    assert "has no checkpoint" in str(caught.value)


def test_a_fence_inside_the_plan_cannot_close_the_packet_block(repo: Path, reviewers: str) -> None:
    plan = PLAN.replace(
        "Write the parsed rows in one transaction.\n",
        "Write the parsed rows in one transaction.\n\n````sql\nBEGIN; -- ```\n````\n",
    )
    _, restore = _start(repo, plan)
    checkpoint(restore, "ceo", reviewers_dir=reviewers)
    text = Path(prepare_close(restore, "ceo")["closePacketPath"]).read_text()
    assert "\n`````markdown\n## Implementation plan\n" in text
