"""The hook path's cache of parsed contracts: ``tomllib`` only when a file changed.

Parsing TOML imports ``tomllib`` (and with it ``re`` and ``typing``: about 30 ms on a busy
two-core machine), too much for every tool call. A contract parsed once is kept as JSON in
``<state root>/cache/contracts.json``, keyed by its path and the SHA-256 of the file's bytes
(not its size and modification time, which a rewrite can keep); a changed file is parsed
again. Each entry is sealed: a SHA-256 over the file's digest and everything the entry holds
(the parse, an error, the fallbacks), so an entry rewritten by hand (a strict contract made
lax in the cache while the TOML stays strict) does not match and the file is parsed again.
The seal is no secret: code that recomputes it can still forge an entry, which only a state
root the agent cannot write excludes (docs/threat-model.md). A contract that fails to parse
is kept as its error, so the hook reports it (``contract_invalid``) on every call until it is
fixed. The cache is only a cache: unreadable, it is rebuilt; unwritable, every call parses.

Beside its error, a broken contract keeps a *fallback*: the last version of the file that
parsed (:data:`GOOD`; the hook's own earlier parse, or the one ``plangate setup`` derived
the Read and Agent ``if`` conditions from, :meth:`Cache.remember`), else the entries the
broken file still names (:data:`SALVAGED`, :mod:`.salvage`). With a good version, the entries
the broken file names are kept beside it too: an entry renamed in the edit that broke the
file is refused as well. The hook refuses a Read or an Agent call that a fallback makes a
phase entry (``contract_invalid``): a broken contract never turns its Read and Agent entries
off silently either.
"""

from __future__ import annotations

from plangate import jsonio
from plangate.contracts import model
from plangate.errors import ContractError
from plangate.state_root import CACHE, CONTRACTS_CACHE, StateRoot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CACHE_DIR = CACHE
CACHE_NAME = CONTRACTS_CACHE
SCHEMA = 2
SEAL = "seal"
_SEAL_TAG = b"plangate contracts cache 2\n"
GOOD = "good"
"""A fallback that is the last version of the file that parsed."""
SALVAGED = "salvaged"
"""A fallback read from the broken file itself (no version of it ever parsed here)."""


def cache_path(state_root: str | None = None) -> str:
    return StateRoot(state_root).file(CACHE_DIR, CACHE_NAME)


class Cache:
    """Contracts by path, loaded from and saved to the cache file."""

    def __init__(self, state_root: str | None = None) -> None:
        self.root = state_root
        self.path = cache_path(state_root)
        self.entries: dict[str, dict[str, Any]] = {}
        self.changed = False
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = jsonio.loads(handle.read())
            if isinstance(data, dict) and data.get("schema") == SCHEMA:
                entries = data.get("entries")
                if isinstance(entries, dict):
                    self.entries = entries
        except (OSError, ValueError):
            pass

    def load(self, path: str) -> model.Contract:
        """The contract at ``path`` (:class:`ContractError` as the loader raises it)."""
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as error:
            raise ContractError(
                f"cannot read the contract: {error.strerror or error}",
                "check the path and its permissions",
                path=path,
            ) from None
        from plangate.autoplan.layout import sha256_hex

        digest = sha256_hex(data)
        entry = self._sealed(path)
        if entry is not None and entry.get("digest") == digest:
            try:
                return _from_entry(entry, path)
            except (KeyError, TypeError, ValueError):
                pass  # a cache from another version: parse again
        from plangate.contracts.loader import load_file

        try:
            contract = load_file(path)
        except ContractError as error:
            good = _good_before(entry)
            salvaged = _salvaged(path)
            broken: dict[str, Any] = {
                "digest": digest,
                "error": {"message": error.message, "remedy": error.remedy, "line": error.line},
                "fallback": good or salvaged,
            }
            if good is not None and salvaged is not None:
                broken[SALVAGED] = salvaged
            self._keep(path, broken)
            raise
        self._keep(path, {"digest": digest, "contract": to_dict(contract)})
        return contract

    def _sealed(self, path: str) -> dict[str, Any] | None:
        """The entry kept for ``path`` when its seal matches what it holds (None: no entry,
        or one rewritten since plangate wrote it)."""
        entry = self.entries.get(path)
        if not isinstance(entry, dict):
            return None
        body = {key: value for key, value in entry.items() if key != SEAL}
        try:
            return entry if entry.get(SEAL) == _seal(body) else None
        except (TypeError, ValueError):
            return None

    def _keep(self, path: str, body: dict[str, Any]) -> None:
        self.entries[path] = {**body, SEAL: _seal(body)}
        self.changed = True

    def fallback(self, path: str) -> tuple[model.Contract, str] | None:
        """The first fallback of the broken contract at ``path`` and its kind (:data:`GOOD`,
        else :data:`SALVAGED`); None when none is kept (or the file is not broken)."""
        kept = self.fallbacks(path)
        return kept[0] if kept else None

    def fallbacks(self, path: str) -> list[tuple[model.Contract, str]]:
        """Every fallback kept for the broken contract at ``path``: its good version and the
        entries the broken file names, either or both (none: the file is not broken)."""
        entry = self._sealed(path)
        if entry is None:
            return []
        found: list[tuple[model.Contract, str]] = []
        for kept in (entry.get("fallback"), entry.get(SALVAGED)):
            if not isinstance(kept, dict):
                continue
            try:
                found.append((from_dict(kept["contract"], path), str(kept["kind"])))
            except (KeyError, TypeError, ValueError, AttributeError):
                continue  # a cache from another version
        return found

    def remember(self, path: str, contract: model.Contract) -> None:
        """Keep ``contract`` (parsed just now, by setup) as the good version of ``path``, for
        when the file breaks later. A parse the cache holds for the file as it is now stays
        as it is; anything else is replaced by the fallback alone, so the next hook call
        parses the file itself (setup leaves the hook's cache as cold as it found it)."""
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return
        from plangate.autoplan.layout import sha256_hex

        entry = self._sealed(path)
        if entry is not None and entry.get("digest") == sha256_hex(data) and "contract" in entry:
            return
        self._keep(path, {"fallback": {"kind": GOOD, "contract": to_dict(contract)}})

    def save(self) -> None:
        if not self.changed:
            return
        try:
            folder = StateRoot(self.root).folder(CACHE_DIR)
            data = jsonio.dumps({"schema": SCHEMA, "entries": self.entries})
            folder.replace(CACHE_NAME, data.encode("utf-8"), 0o600)
        except (OSError, ValueError):
            pass  # only a cache
        self.changed = False


def _seal(body: dict[str, Any]) -> str:
    """The SHA-256 that ties an entry's parts together (module docstring)."""
    from plangate.autoplan.layout import sha256_hex

    return sha256_hex(_SEAL_TAG + jsonio.dumps(body).encode("utf-8"))


def _good_before(entry: object) -> dict[str, Any] | None:
    """The good version of a file that just failed to parse: the version the cache held if
    it parsed, or the good version it kept."""
    if isinstance(entry, dict):
        if isinstance(entry.get("contract"), dict) and "error" not in entry:
            return {"kind": GOOD, "contract": entry["contract"]}
        kept = entry.get("fallback")
        if isinstance(kept, dict) and kept.get("kind") == GOOD:
            return kept
    return None


def _salvaged(path: str) -> dict[str, Any] | None:
    """The entries the broken file at ``path`` names (None: it names none)."""
    from plangate.contracts.salvage import salvage

    found = salvage(path)
    return None if found is None else {"kind": SALVAGED, "contract": to_dict(found)}


def _from_entry(entry: dict[str, Any], path: str) -> model.Contract:
    error = entry.get("error")
    if isinstance(error, dict):
        raise ContractError(
            str(error["message"]), str(error["remedy"]), path=path, line=int(error["line"])
        )
    return from_dict(entry["contract"], path)


def to_dict(contract: model.Contract) -> dict[str, Any]:
    done = contract.done
    return {
        "name": contract.name,
        "skills": list(contract.skills),
        "variables": dict(contract.variables),
        "paths": dict(contract.paths),
        "phases": [_phase_dict(phase) for phase in contract.phases],
        "done": None
        if done is None
        else {
            "after": done.after,
            "files": list(done.files),
            "all_checked": list(done.all_checked),
            "check": done.check,
            "check_timeout": done.check_timeout,
        },
    }


def _phase_dict(phase: model.Phase) -> dict[str, Any]:
    approval = phase.approval
    flag = approval.flag
    return {
        "name": phase.name,
        "entry": list(phase.entry),
        "reads": list(phase.reads),
        "agents": list(phase.agents),
        "binds": phase.binds,
        "editable": None if phase.editable is None else list(phase.editable),
        "artifacts": [
            {
                "path": a.path,
                "headings": list(a.headings),
                "min_items": a.min_items,
                "min_checkboxes": a.min_checkboxes,
                "placeholders": list(a.placeholders),
                "line": a.line,
            }
            for a in phase.artifacts
        ],
        "approval": {
            "required": approval.required,
            "words": list(approval.words),
            "pattern": approval.pattern,
            "flag": None if flag is None else {"file": flag.file, "key": flag.key},
        },
    }


def from_dict(data: dict[str, Any], source: str) -> model.Contract:
    done = data["done"]
    return model.Contract(
        str(data["name"]),
        skills=tuple(data["skills"]),
        variables={str(k): int(v) for k, v in data["variables"].items()},
        paths={str(k): str(v) for k, v in data["paths"].items()},
        phases=tuple(_phase_of(p) for p in data["phases"]),
        done=None
        if done is None
        else model.Done(
            str(done["after"]),
            files=tuple(done["files"]),
            all_checked=tuple(done["all_checked"]),
            check=done["check"],
            check_timeout=int(done["check_timeout"]),
        ),
        source=source,
    )


def _phase_of(data: dict[str, Any]) -> model.Phase:
    approval = data["approval"]
    flag = approval["flag"]
    editable = data["editable"]
    return model.Phase(
        str(data["name"]),
        entry=tuple(data["entry"]),
        reads=tuple(data["reads"]),
        agents=tuple(data["agents"]),
        binds=bool(data["binds"]),
        editable=None if editable is None else tuple(editable),
        artifacts=tuple(
            model.Artifact(
                str(a["path"]),
                headings=tuple(a["headings"]),
                min_items=int(a["min_items"]),
                min_checkboxes=int(a["min_checkboxes"]),
                placeholders=tuple(a["placeholders"]),
                line=int(a["line"]),
            )
            for a in data["artifacts"]
        ),
        approval=model.Approval(
            bool(approval["required"]),
            tuple(approval["words"]),
            approval["pattern"],
            None if flag is None else model.Flag(str(flag["file"]), str(flag["key"])),
        ),
    )
