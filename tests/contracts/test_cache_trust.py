"""The contracts cache is keyed by what it holds: a rewritten entry is never trusted.

``<state root>/cache/contracts.json`` spares the hook path ``tomllib``. An entry counts only
for the file bytes it was parsed from (their SHA-256, not size and modification time), and
only while its seal matches what it holds: a strict contract made lax in the cache, or a
contract file rewritten with its size and time kept, is parsed again from the file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plangate.contracts import compiled
from plangate.errors import ContractError
from tests.contracts.test_loader import VALID

STRICT = VALID
LAX_EDITABLE = ["**"]


def _cached(tmp_path: Path) -> tuple[Path, str, Path]:
    path = tmp_path / "notes.toml"
    path.write_text(STRICT)
    state = str(tmp_path / "state")
    cache = compiled.Cache(state)
    cache.load(str(path))
    cache.save()
    return path, state, Path(compiled.cache_path(state))


def test_a_cache_entry_made_lax_by_hand_is_ignored(tmp_path: Path) -> None:
    path, state, saved = _cached(tmp_path)
    data = json.loads(saved.read_text())
    entry = data["entries"][str(path)]
    entry["contract"]["phases"][0]["editable"] = LAX_EDITABLE
    entry["contract"]["phases"][0]["approval"]["required"] = False
    saved.write_text(json.dumps(data))
    contract = compiled.Cache(state).load(str(path))
    assert contract.phases[0].editable == ("{dir}/**",)
    assert contract.phases[0].approval.required


def test_an_entry_whose_digest_is_copied_but_contract_changed_is_ignored(tmp_path: Path) -> None:
    """Keeping the file's digest is not enough: the seal covers the parse too."""
    path, state, saved = _cached(tmp_path)
    data = json.loads(saved.read_text())
    entry = data["entries"][str(path)]
    assert len(entry["digest"]) == 64 and "stamp" not in entry
    entry["contract"]["phases"][0]["editable"] = LAX_EDITABLE
    saved.write_text(json.dumps(data))
    assert compiled.Cache(state).load(str(path)).phases[0].editable == ("{dir}/**",)


def test_a_contract_rewritten_with_its_size_and_time_kept_is_parsed_again(
    tmp_path: Path,
) -> None:
    path, state, _ = _cached(tmp_path)
    info = path.stat()
    lax = STRICT.replace('editable = ["{dir}/**"]', 'editable = ["{dir}/*x"]')
    assert len(lax) == len(STRICT)
    path.write_text(lax)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size
    assert compiled.Cache(state).load(str(path)).phases[0].editable == ("{dir}/*x",)


def test_a_forged_fallback_is_not_used(tmp_path: Path) -> None:
    """A broken contract keeps its last good version; a rewritten one is not taken."""
    path, state, saved = _cached(tmp_path)
    path.write_text(STRICT.replace("min_items = 3", "min_items = -1"))
    cache = compiled.Cache(state)
    with pytest.raises(ContractError):
        cache.load(str(path))
    cache.save()
    assert compiled.Cache(state).fallbacks(str(path))
    data = json.loads(saved.read_text())
    data["entries"][str(path)]["fallback"]["contract"]["phases"] = []
    saved.write_text(json.dumps(data))
    assert compiled.Cache(state).fallbacks(str(path)) == []


def test_an_untouched_entry_is_used_without_parsing(tmp_path: Path) -> None:
    """The cache still pays: a sealed entry for the same bytes is taken as it is."""
    path, state, saved = _cached(tmp_path)
    data = json.loads(saved.read_text())
    name = data["entries"][str(path)]["contract"]["name"]
    assert compiled.Cache(state)._sealed(str(path)) is not None
    assert compiled.Cache(state).load(str(path)).name == name
