"""The hook code cache (:mod:`plangate.hook_io.code_cache`) in real hook processes.

Each test copies the plangate package into a folder of its own, so the cache file it writes
and the module it edits are the copy's; the hook command is the one setup registers
(:func:`plangate.hook_registry.hook_command`), run with that folder as plangate's root.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from plangate.hook_io import code_cache, code_cache_write
from plangate.hook_registry import hook_command
from tests.conftest import SRC

PROBE = (
    "import gc; gc.disable(); import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "import plangate.guard.evaluate, json; "
    "from plangate.hook_io import code_cache as c; cache = c.installed(); "
    "print(json.dumps({'served': sorted(cache.served) if cache else None, "
    "'file': plangate.guard.evaluate.__file__}))"
)


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(
        Path(SRC) / "plangate", root / "plangate", ignore=shutil.ignore_patterns("__pycache__")
    )
    return root


def _hook(root: Path, payload: dict[str, object], env: dict[str, str]) -> str:
    argv = shlex.split(hook_command("plangate.hooks.pre_tool_use", sys.executable, str(root)))
    done = subprocess.run(
        argv, input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _python(
    root: Path,
    env: dict[str, str],
    script: str,
    *args: str,
    profiled: bool = False,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``script`` in a ``python -S`` process (as hooks run) importing plangate from ``root``."""
    flags = ["-X", "importtime"] if profiled else []
    return subprocess.run(
        [sys.executable, *flags, "-S", "-c", script, str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=check,
    )


def _probe(root: Path, env: dict[str, str]) -> dict[str, object]:
    done = _python(root, env, PROBE, check=True)
    found: dict[str, object] = json.loads(done.stdout)
    return found


def _wait_for(path: Path) -> None:
    """The cache is written after the hook answered, by a detached child."""
    for _ in range(600):
        if path.exists():
            return
        time.sleep(0.05)
    raise AssertionError(f"no cache file at {path}")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGATE_", "PYTHON"))}
    env["PLANGATE_STATE_ROOT"] = str(tmp_path / "state")
    return env


def _phase_entry(tmp_path: Path) -> dict[str, object]:
    """A phase entry whose journal does not exist: a real decision (denied), all imports."""
    skill = tmp_path / "home" / ".claude" / "skills" / "autoplan" / "sections" / "ceo-phase.md"
    return {
        "session_id": "s1",
        "transcript_path": str(tmp_path / "missing.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(skill)},
        "tool_use_id": "toolu_1",
    }


def test_a_hook_run_writes_the_cache_and_the_next_process_is_served_from_it(
    tmp_path: Path,
) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    cache = Path(code_cache.cache_path(str(root / "plangate")))
    assert _probe(root, env)["served"] == []  # no file yet: every module imported as usual
    first = _hook(root, _phase_entry(tmp_path), env)
    _wait_for(cache)
    assert "permissionDecision" in first
    probe = _probe(root, env)
    served = probe["served"]
    assert isinstance(served, list)
    assert "plangate.guard.evaluate" in served and "plangate.journal.reader" in served
    assert probe["file"] == str(root / "plangate" / "guard" / "evaluate.py")
    assert _hook(root, _phase_entry(tmp_path), env) == first  # the same answer from the cache


#: The pre-index child's start (plangate.hooks.preindex_run): it closes the descriptors it
#: inherited, then imports the guard.
CLOSE_THEN_IMPORT = (
    "import gc; gc.disable(); import sys; sys.path.insert(0, sys.argv.pop(1)); import os; "
    "from plangate.hooks import preindex_run; from plangate.hook_io import code_cache as c; "
    "lock = os.open(os.devnull, os.O_RDONLY); preindex_run._close_others(lock); "
    "import plangate.guard.evaluate; print('plangate.guard.evaluate' in c.installed().served)"
)


def test_a_child_that_closes_its_descriptors_still_imports_from_the_cache(
    tmp_path: Path,
) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    _hook(root, _phase_entry(tmp_path), env)
    _wait_for(Path(code_cache.cache_path(str(root / "plangate"))))
    done = _python(root, env, CLOSE_THEN_IMPORT)
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr


def test_an_edited_module_is_imported_from_its_source(tmp_path: Path) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    cache = Path(code_cache.cache_path(str(root / "plangate")))
    _hook(root, _phase_entry(tmp_path), env)
    _wait_for(cache)
    module = root / "plangate" / "guard" / "evaluate.py"
    module.write_text(module.read_text("utf-8") + "\nEDITED = True\n", "utf-8")
    probe = _probe(root, env)
    served = probe["served"]
    assert isinstance(served, list)
    assert "plangate.guard.evaluate" not in served and "plangate.journal.reader" in served
    check = "import sys; sys.path.insert(0, sys.argv.pop(1)); import plangate.guard.evaluate as e"
    done = _python(root, env, check + "; print(e.EDITED)")
    assert done.stdout.strip() == "True", done.stderr


def test_a_broken_cache_file_is_ignored_and_the_switch_turns_it_off(tmp_path: Path) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    cache = Path(code_cache.cache_path(str(root / "plangate")))
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"PGHC\xff\xff\x00\x00not marshal")
    first = _hook(root, _phase_entry(tmp_path), env)
    assert "permissionDecision" in first
    for _ in range(600):  # rewritten after the answer, by a detached child
        served = _probe(root, env)["served"]
        if served:
            break
        time.sleep(0.05)
    assert isinstance(served, list) and "plangate.guard.evaluate" in served
    off = dict(env, **{code_cache.ENV: "0"})
    assert _probe(root, off)["served"] is None
    assert _hook(root, _phase_entry(tmp_path), off) == first


#: What a served process sees of its modules: how they are bound, what else it imported.
SERVED = (
    "import gc; gc.disable(); import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "import plangate.guard.evaluate as e, plangate.journal.compact, json; "
    "from plangate.hook_io import code_cache as c; from plangate.journal.events import Event; "
    "from plangate.journal import scan; import plangate.guard; "
    "print(json.dumps({'served': sorted(c.installed().served), "
    "'spec': [e.__spec__.name, e.__spec__.origin, e.__spec__.loader is c.installed()], "
    "'bound': [sys.modules['plangate.guard.evaluate'] is e, plangate.guard.evaluate is e], "
    "'package': [plangate.guard.__path__, plangate.guard.__package__, e.__package__], "
    "'scan': scan.__name__, 'future': '__future__' in sys.modules, "
    "'zlib': sys.modules['zlib'].__spec__.loader is not None, "
    "'annotations': [e.evaluate.__annotations__, Event.__init__.__annotations__], "
    "'class_annotations': 'Evaluation' in dir(e)}))"
)


def test_a_served_module_is_bound_as_the_import_system_binds_it(tmp_path: Path) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    _hook(root, _phase_entry(tmp_path), env)
    _wait_for(Path(code_cache.cache_path(str(root / "plangate"))))
    done = _python(root, env, SERVED, check=True)
    found = json.loads(done.stdout)
    assert {"plangate.guard.evaluate", "plangate.journal.scan"} <= set(found["served"])
    evaluate = str(root / "plangate" / "guard" / "evaluate.py")
    assert found["spec"] == ["plangate.guard.evaluate", evaluate, True]
    assert found["bound"] == [True, True]
    assert found["package"] == [
        [str(root / "plangate" / "guard")],
        "plangate.guard",
        "plangate.guard",
    ]
    assert found["scan"] == "plangate.journal.scan"
    # Compiled without the run-time `from __future__ import annotations` and without the
    # functions' annotations, which nothing in a hook process reads.
    assert found["future"] is False
    assert found["annotations"] == [{}, {}]
    assert found["zlib"] is True


def test_the_writer_keeps_class_annotations_and_drops_only_the_future_statement() -> None:
    source = (
        b"from __future__ import annotations\n"
        b"class Box:\n    size: int = 3\n"
        b"def grow(box: Box, by: int = 1) -> Box:\n    return box\n"
        b"LIMIT: dict[str, int] = {}\n"
    )
    namespace: dict[str, object] = {}
    exec(code_cache_write.compiled(source, "box.py"), namespace)  # noqa: S102 - the test's own source
    box, grow = namespace["Box"], namespace["grow"]
    assert isinstance(box, type) and callable(grow)
    assert box.__annotations__ == {"size": "int"}  # still unevaluated strings
    assert namespace["__annotations__"] == {"LIMIT": "dict[str, int]"}
    assert grow.__annotations__ == {}
    assert "annotations" not in namespace  # the future statement's binding is gone


BLOCKED = (
    "import gc; gc.disable(); import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from plangate.hook_io import code_cache as c; "
    "sys.modules['plangate.guard.reasons'] = None\n"
    "try:\n    import plangate.guard.reasons\nexcept ImportError:\n    print('blocked')\n"
    "print('plangate.guard.reasons' in c.installed().index)"
)


def test_a_blocked_module_stays_blocked(tmp_path: Path) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    _hook(root, _phase_entry(tmp_path), env)
    _wait_for(Path(code_cache.cache_path(str(root / "plangate"))))
    done = _python(root, env, BLOCKED)
    assert done.stdout.split() == ["blocked", "True"], done.stderr


RAISING = (
    "import gc; gc.disable(); import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from plangate.hook_io import code_cache as c\n"
    "try:\n    import plangate.guard.reasons\nexcept ZeroDivisionError:\n    print('raised')\n"
    "print('plangate.guard.reasons' in sys.modules, 'plangate.guard' in sys.modules)"
)


def test_a_module_that_raises_is_not_left_in_sys_modules(tmp_path: Path) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    cache = Path(code_cache.cache_path(str(root / "plangate")))
    _hook(root, _phase_entry(tmp_path), env)
    _wait_for(cache)
    # Cached code that raises while its source is unchanged (same size and time): written
    # from a version of the same length that divides by zero, then the source put back.
    module = root / "plangate" / "guard" / "reasons.py"
    text = module.read_text("utf-8")
    mtime = module.stat().st_mtime_ns
    module.write_text(text.replace('ALLOW = "allow"', "ALLOW = 1 // 0 ", 1), "utf-8")
    os.utime(module, ns=(mtime, mtime))
    fd = os.open(cache, os.O_RDONLY)
    try:
        index, base = code_cache.read_index(fd)
        old = code_cache.CodeCache(str(cache), fd, index, base)
        spec = importlib.util.spec_from_file_location("plangate.guard.reasons", module)
        assert spec is not None
        raising = importlib.util.module_from_spec(spec)
        code_cache_write.save(str(cache), {"plangate.guard.reasons": raising}, old)
    finally:
        os.close(fd)
    module.write_text(text, "utf-8")
    os.utime(module, ns=(mtime, mtime))
    done = _python(root, env, RAISING)
    assert done.stdout.split() == ["raised", "False", "True"], done.stderr


PROFILED = (
    "import gc; gc.disable(); import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "import plangate.guard.evaluate"
)


def test_under_importtime_every_module_is_in_the_profile(tmp_path: Path) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    _hook(root, _phase_entry(tmp_path), env)
    _wait_for(Path(code_cache.cache_path(str(root / "plangate"))))
    done = _python(root, env, PROFILED, profiled=True, check=True)
    profiled = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert {"plangate.guard.evaluate", "plangate.journal.reader", "zlib"} <= profiled


def _index(cache: Path) -> dict[str, code_cache.Entry]:
    fd = os.open(cache, os.O_RDONLY)
    try:
        return code_cache.read_index(fd)[0]
    finally:
        os.close(fd)


def test_modules_imported_together_are_grouped_by_the_next_hook_run(tmp_path: Path) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    cache = Path(code_cache.cache_path(str(root / "plangate")))
    first = _hook(root, _phase_entry(tmp_path), env)
    _wait_for(cache)
    alone = _index(cache)
    assert alone["plangate.guard.evaluate"][8] == alone["plangate.journal.reader"][8]
    assert alone["plangate.guard.evaluate"][8] == code_cache.UNSEEN
    written = cache.stat().st_mtime_ns
    assert _hook(root, _phase_entry(tmp_path), env) == first  # served: it groups them after
    for _ in range(600):
        if cache.stat().st_mtime_ns != written:
            break
        time.sleep(0.05)
    grouped = _index(cache)
    evaluate, reader = grouped["plangate.guard.evaluate"], grouped["plangate.journal.reader"]
    assert evaluate[6] == reader[6] and evaluate[8] == 0 and reader[8] > 0  # one group
    assert grouped["zlib"][5] == code_cache.EXTENSION
    served = _probe(root, env)["served"]
    assert isinstance(served, list) and "plangate.journal.reader" in served
    regrouped = cache.stat().st_mtime_ns
    assert _hook(root, _phase_entry(tmp_path), env) == first
    time.sleep(0.5)
    assert cache.stat().st_mtime_ns == regrouped  # grouped once: no rewrite after that


#: A non-phase Read, which imports a few modules of the phase decision's group (the world
#: the owned-file check reads) but not the module whose import loads the group.
NON_PHASE = (
    "import gc; gc.disable(); import sys, io, json; sys.path.insert(0, sys.argv.pop(1)); "
    "from plangate.hooks import pre_tool_use as m; from plangate.hook_io import code_cache as c; "
    "sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode())); "
    "sys.stdout, out = io.StringIO(), sys.stdout; m.main(); sys.stdout = out; "
    "cache = c.installed(); "
    "group = cache.index['plangate.guard.evaluate'][6]; "
    "print(json.dumps(['plangate.guard.world' in cache.served, group in cache.blobs, "
    "'plangate.guard.evaluate' in sys.modules]))"
)


def test_a_module_imported_without_its_group_is_read_alone(tmp_path: Path) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    cache = Path(code_cache.cache_path(str(root / "plangate")))
    _hook(root, _phase_entry(tmp_path), env)
    _wait_for(cache)
    written = cache.stat().st_mtime_ns
    _hook(root, _phase_entry(tmp_path), env)
    for _ in range(600):
        if cache.stat().st_mtime_ns != written:
            break
        time.sleep(0.05)
    assert _index(cache)["plangate.guard.world"][8] > 0  # in the phase decision's group
    payload = dict(_phase_entry(tmp_path), tool_input={"file_path": str(tmp_path / "notes.md")})
    done = _python(root, env, NON_PHASE, json.dumps(payload), check=True)
    assert json.loads(done.stdout) == [True, False, False], done.stderr


CYCLE = (
    "import gc; gc.disable(); import sys, os; sys.path.insert(0, sys.argv.pop(1)); "
    "import plangate; from plangate.hook_io import code_cache as c; "
    "import plangate.guard.cycle_a as a; c.after_answer(); "
    "print(os.environ['CYCLE_RUNS'], a.PARTNER, 'plangate.guard.cycle_a' in c.installed().served)"
)


def test_modules_that_import_each_other_run_once(tmp_path: Path) -> None:
    root = _package(tmp_path)
    env = _env(tmp_path)
    guard = root / "plangate" / "guard"
    count = "import os\nos.environ['CYCLE_RUNS'] = os.environ.get('CYCLE_RUNS', '') + '{}'\n"
    (guard / "cycle_a.py").write_text(
        count.format("a") + "from plangate.guard import cycle_b\nPARTNER = cycle_b.NAME\n"
    )
    (guard / "cycle_b.py").write_text(
        count.format("b")
        + "from plangate.guard import cycle_a\nNAME = 'b of ' + cycle_a.__name__\n"
    )
    _hook(root, _phase_entry(tmp_path), env)
    _wait_for(Path(code_cache.cache_path(str(root / "plangate"))))
    runs = []
    for _ in range(2):  # imported the usual way and written to the cache, then served
        done = _python(root, env, CYCLE)
        runs.append(done.stdout.split())
        assert done.returncode == 0, done.stderr
    partner = "b of plangate.guard.cycle_a"
    assert runs == [["ab", *partner.split(), "False"], ["ab", *partner.split(), "True"]]
