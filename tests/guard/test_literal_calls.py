"""Binding the skill's Bash calls without a shell."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from plangate.guard.literal_calls import (
    literal_plangate_call,
    looks_like_unbindable_init,
    split_literal,
)


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (
            "/x/plangate autoplan init \"/a/p.md\" /a/p.md '/a/r.md'",
            ["/x/plangate", "autoplan", "init", "/a/p.md", "/a/p.md", "/a/r.md"],
        ),
        ("a \\\nb", ["a", "b"]),
        ('a "C:\\x\\y"', ["a", "C:\\x\\y"]),
        ("  a   b  ", ["a", "b"]),
        ("a\"b\"'c'", ["abc"]),
    ],
)
def test_literal_words(command: str, words: list[str]) -> None:
    assert split_literal(command) == words


@pytest.mark.parametrize(
    "command",
    [
        "a $HOME",
        'a "b$c"',
        "a `date`",
        'a "$(realpath x)"',
        "a | cat",
        "a && b",
        "a; b",
        "a > /dev/null",
        "a < in",
        'a "x\\"y"',
        "a 'unterminated",
        'a "unterminated',
        "a *.md",
        "",
    ],
)
def test_not_literal(command: str) -> None:
    assert split_literal(command) is None


def _executable(tmp_path: Path) -> str:
    path = tmp_path / "bin" / "plangate"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_literal_plangate_call_names_this_installation(tmp_path: Path) -> None:
    exe = _executable(tmp_path)
    call = literal_plangate_call(f'"{exe}" autoplan init /a /b /c', exe)
    assert call is not None
    assert (call.subcommand, call.arguments) == ("init", ["/a", "/b", "/c"])
    link = tmp_path / "link"
    os.symlink(exe, link)
    assert literal_plangate_call(f"{link} autoplan init /a /b /c", exe) is not None
    other = tmp_path / "other"
    other.write_text("")
    assert literal_plangate_call(f"{other} autoplan init /a /b /c", exe) is None
    assert literal_plangate_call("plangate autoplan init /a /b /c", exe) is None  # not absolute
    assert literal_plangate_call(f"{exe} gate render /a", exe) is None


@pytest.mark.parametrize(
    ("command", "unbindable"),
    [
        ('"$PLANGATE" autoplan init a.md b.md c.md', True),
        ("/x/plangate autoplan init a b c | tail -1", True),
        ("/x/plangate autoplan init a b c && echo done", True),
        ("/x/plangate autoplan init a b c", False),
        ("echo autoplan init", False),
    ],
)
def test_unbindable_init_is_noticed(command: str, unbindable: bool) -> None:
    assert looks_like_unbindable_init(command) is unbindable
