"""The files a Codex ``apply_patch`` writes (:mod:`plangate.contracts.patch_writes`)."""

from __future__ import annotations

from plangate.contracts.patch_writes import written_files

PATCH = """*** Begin Patch
*** Add File: src/new.py
+x = 1
*** Update File: src/old.py
*** Move to: src/moved.py
@@
-a
+b
*** Delete File: /abs/gone.txt
*** Update File: src/new.py
*** Add File:
*** End Patch
"""


def test_every_header_names_a_written_file_once() -> None:
    assert written_files(PATCH, "/p") == [
        "/p/src/new.py",
        "/p/src/old.py",
        "/p/src/moved.py",
        "/abs/gone.txt",
    ]


def test_a_patch_without_headers_writes_nothing() -> None:
    assert written_files("*** Begin Patch\n*** End Patch\n", "/p") == []
    assert written_files("+*** Add File: looks like one but is content", "/p") == []
