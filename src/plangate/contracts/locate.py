"""The line of a key in a TOML text, for the loader's error messages.

``tomllib`` gives values without positions. The loader asks here for the line of, say, key
``min_items`` of the second ``[[phase.artifact]]`` of the first ``[[phase]]``. A small scan
of table headers and ``key =`` lines answers that for the TOML a contract is written in
(headers, arrays of tables, ``key = value`` lines, inline tables); anything it cannot place
is reported at the table's header line.
"""

from __future__ import annotations


class Lines:
    """The header lines of a TOML text's tables and the key lines inside each."""

    __slots__ = ("tables",)

    def __init__(self, text: str) -> None:
        # (table path with array indexes, header line) -> {key: line}
        self.tables: list[tuple[tuple[str, ...], int, dict[str, int]]] = [((), 0, {})]
        counts: dict[tuple[str, ...], int] = {}
        current: tuple[str, ...] = ()
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if line.startswith("[[") and "]]" in line:
                name = tuple(part.strip() for part in line[2 : line.index("]]")].split("."))
                parent = self._resolve(name[:-1], current)
                array = parent + (name[-1],)
                counts[array] = counts.get(array, -1) + 1
                current = array + (str(counts[array]),)
                self.tables.append((current, number, {}))
            elif line.startswith("[") and "]" in line:
                name = tuple(part.strip() for part in line[1 : line.index("]")].split("."))
                current = self._resolve(name[:-1], current) + (name[-1],)
                self.tables.append((current, number, {}))
            elif "=" in line and not line.startswith("#"):
                key = line.split("=", 1)[0].strip().strip('"').strip("'")
                self.tables[-1][2].setdefault(key, number)

    def _resolve(self, prefix: tuple[str, ...], current: tuple[str, ...]) -> tuple[str, ...]:
        """``phase.artifact`` inside the third ``[[phase]]`` is ``phase/2/artifact``."""
        resolved: list[str] = []
        position = 0
        for part in prefix:
            resolved.append(part)
            position += 1
            if position < len(current) and current[position - 1] == part:
                following = current[position] if position < len(current) else ""
                if following.isdigit():
                    resolved.append(following)
                    position += 1
        return tuple(resolved)

    def line(self, table: tuple[str, ...], key: str | None = None) -> int:
        """The line of ``key`` in ``table`` (or of the table's header); 0 when unknown."""
        for path, header, keys in self.tables:
            if path == table:
                if key is None:
                    return header
                if key in keys:
                    return keys[key]
                return header
        # an inline or dotted table: the line of its key in the parent
        return self.line(table[:-1], table[-1]) if table else 0
