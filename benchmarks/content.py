"""What synthetic records hold: random tool calls and results, and tool definitions."""

from __future__ import annotations

import random
from typing import Any

from benchmarks.corpus import Corpus, log_uniform_int, lognormal_int
from testkit.journals import bash_side_car, read_file_result

Block = dict[str, Any]
Call = tuple[Block, str, dict[str, Any]]
"""A ``tool_use`` block, the ``tool_result`` text and the ``toolUseResult`` side-car."""


def read_blocks(use_id: str, path: str, content: str) -> Call:
    """A whole-file Read of ``content`` and its result."""
    numbered, side = read_file_result(path, content.split("\n"))
    block = {"type": "tool_use", "id": use_id, "name": "Read", "input": {"file_path": path}}
    return block, numbered, side


def bash_call(tool_id: str, command: str, stdout: str, description: str) -> Call:
    """A Bash call and its successful result."""
    block = {
        "type": "tool_use",
        "id": tool_id,
        "name": "Bash",
        "input": {"command": command, "description": description},
    }
    return block, stdout, bash_side_car(stdout)


def tool_shapes(rng: random.Random, corpus: Corpus, size: int) -> dict[str, Any]:
    """Tool definitions of about ``size`` characters, as ``api-request-shape`` holds them."""
    tools: list[dict[str, Any]] = []
    used = 0
    while used < size:
        name = rng.choice(corpus.words).capitalize()
        description = corpus.prose(rng, rng.randint(40, 400))
        properties = {
            w: {"description": corpus.prose(rng, rng.randint(5, 40)), "type": "string"}
            for w in rng.sample(corpus.words, rng.randint(1, 5))
        }
        tools.append(
            {
                "name": name,
                "description": description,
                "input_schema": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": properties,
                    "required": list(properties)[:1],
                    "additionalProperties": False,
                },
            }
        )
        used += len(description) + sum(len(p["description"]) + 40 for p in properties.values())
    return {"system": [{"type": "text", "text": corpus.prose(rng, 600)}], "tools": tools}


def tool_call(rng: random.Random, corpus: Corpus, use_id: str, cwd: str, max_file: int) -> Call:
    """A tool_use block, the tool_result text and the ``toolUseResult`` side-car."""
    roll = rng.random()
    path = f"{cwd}/src/{rng.choice(corpus.names)}"
    if roll < 0.40:
        size = lognormal_int(rng, 600, 1.6, 0, 120_000)
        stdout = corpus.snippet(rng, size).rstrip("\n") if size else ""
        stderr = "" if rng.random() < 0.85 else corpus.snippet(rng, 300).rstrip("\n")
        command = f"grep -rn {rng.choice(corpus.words)} src | head -{rng.randint(5, 400)}"
        block = {
            "type": "tool_use",
            "id": use_id,
            "name": "Bash",
            "input": {"command": command, "description": corpus.prose(rng, 5)},
        }
        text = stdout + ("\n" + stderr if stderr else "")
        return block, text, bash_side_car(stdout, stderr)
    if roll < 0.72:
        if rng.random() < 0.03:
            size = log_uniform_int(rng, 10_000, max_file)
        else:
            size = lognormal_int(rng, 2500, 1.0, 100, 60_000)
        content = corpus.snippet(rng, min(size, max_file))
        return read_blocks(use_id, path, content)
    if roll < 0.87:
        original = corpus.snippet(rng, lognormal_int(rng, 5000, 1.0, 200, 80_000))
        old = corpus.snippet(rng, rng.randint(40, 600))
        new = corpus.snippet(rng, rng.randint(40, 900))
        block = {
            "type": "tool_use",
            "id": use_id,
            "name": "Edit",
            "input": {
                "file_path": path,
                "old_string": old,
                "new_string": new,
                "replace_all": False,
            },
        }
        text = f"The file {path} has been updated successfully."
        start = rng.randint(1, 400)
        patch = [
            {
                "oldStart": start,
                "oldLines": old.count("\n") + 1,
                "newStart": start,
                "newLines": new.count("\n") + 1,
                "lines": ["-" + x for x in old.split("\n")] + ["+" + x for x in new.split("\n")],
            }
        ]
        side = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": original,
            "structuredPatch": patch,
            "userModified": False,
            "replaceAll": False,
        }
        return block, text, side
    matches = corpus.snippet(rng, lognormal_int(rng, 1200, 1.3, 50, 40_000))
    found = [
        f"src/{rng.choice(corpus.names)}:{n}:{line}"
        for n, line in enumerate(matches.split("\n")[:-1], 1)
    ]
    pattern = rng.choice(corpus.words)
    block = {
        "type": "tool_use",
        "id": use_id,
        "name": "Grep",
        "input": {"pattern": pattern, "path": cwd, "output_mode": "content", "-n": True},
    }
    text = "\n".join(found)
    side = {
        "mode": "content",
        "numFiles": len({f.split(":", 1)[0] for f in found}),
        "filenames": [],
        "content": text,
        "numLines": len(found),
    }
    return block, text, side
