"""plangate's own settings: ``<state root>/config.json``. Standard library only (hook path).

The gates read their switch on every hook call, so this module imports nothing heavy: JSON
goes through :mod:`plangate.jsonio`, there is no :mod:`typing` or :mod:`dataclasses`, and the
modules only a write needs are imported when a write happens.

The file is one JSON object, written with two-space indentation and a trailing newline::

    {
      "ceo_review_gate": true,
      "run_attempts": 3
    }

Switches are stored as ``true``/``false`` (a hand-written ``"on"``/``"off"`` is read too),
whole numbers as numbers. Keys plangate does not know are kept on every write and reported
by :meth:`ConfigFile.warnings`. A value is checked only when it is read, so one bad value
never hides the others.

Switch resolution for the gates, first set wins: the value the caller passes (the
``plangate setup`` flag), the environment (``PLANGATE_CEO_REVIEW_GATE=on|off``,
``PLANGATE_AUTOPLAN_GATE=on|off``), the config file, the default (off).
"""

from __future__ import annotations

import os

from plangate import files, jsonio
from plangate.errors import ConfigError, StateError, UsageError
from plangate.locations import state_root
from plangate.state_root import CONFIG, StateRoot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

CONFIG_FILE = CONFIG
LOCK_SUFFIX = ".plangate-lock"
LOCK_TIMEOUT_S = 10.0

SWITCH = "switch"
INTEGER = "int"

SOURCE_FLAG = "flag"
SOURCE_ENV = "env"
SOURCE_CONFIG = "config"
SOURCE_DEFAULT = "default"

ON = "on"
OFF = "off"


class Setting:
    """One row of the settings table."""

    __slots__ = ("name", "kind", "default", "help", "env", "minimum", "maximum")

    def __init__(
        self,
        name: str,
        kind: str,
        default: bool | int,
        help: str,
        *,
        env: str = "",
        minimum: int = 0,
        maximum: int = 0,
    ) -> None:
        self.name = name
        self.kind = kind
        self.default = default
        self.help = help
        self.env = env
        self.minimum = minimum
        self.maximum = maximum

    def __repr__(self) -> str:
        return f"Setting({self.name!r}, {self.kind!r}, default={self.default!r})"

    @property
    def expects(self) -> str:
        """What a valid value looks like, for messages."""
        if self.kind == SWITCH:
            return "on or off"
        return f"a whole number from {self.minimum} to {self.maximum}"

    def parse(self, text: str) -> bool | int:
        """A value typed by a person (``config set``); :class:`UsageError` when invalid."""
        word = text.strip().lower()
        if self.kind == SWITCH:
            if word == ON:
                return True
            if word == OFF:
                return False
        else:
            digits = word[1:] if word[:1] in "+-" else word
            if digits.isascii() and digits.isdigit():
                number = int(word)
                if self.minimum <= number <= self.maximum:
                    return number
        raise UsageError(
            f"{self.name} must be {self.expects}, not {text!r}",
            f"run `plangate config set {self.name} {self.example}`",
        )

    @property
    def example(self) -> str:
        return "on" if self.kind == SWITCH else str(self.default)

    def accepts(self, value: object) -> bool | int | None:
        """The canonical value for one read from the file, or ``None`` when it is invalid."""
        if self.kind == SWITCH:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in (ON, OFF):
                return value.strip().lower() == ON
            return None
        if isinstance(value, int) and not isinstance(value, bool) and self.minimum <= value:
            return value if value <= self.maximum else None
        return None

    def format(self, value: bool | int) -> str:
        if self.kind == SWITCH:
            return "on" if value else "off"
        return str(value)


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "ceo_review_gate",
        SWITCH,
        False,
        "hold the final stop after /plan-ceo-review until its output ranks the top risks",
        env="PLANGATE_CEO_REVIEW_GATE",
    ),
    Setting(
        "autoplan_gate",
        SWITCH,
        False,
        "hold the final stop after /autoplan until every phase is published and the gate written",
        env="PLANGATE_AUTOPLAN_GATE",
    ),
    Setting(
        "workflow_contracts",
        SWITCH,
        True,
        "register the workflow contract hooks: phased skills held to their contract's phases",
        env="PLANGATE_WORKFLOW_CONTRACTS",
    ),
    Setting(
        "run_attempts",
        INTEGER,
        3,
        "attempts a plangate run may spend: each failed check, evidence-gate failure, review "
        "send-back or escalation spends one",
        minimum=1,
        maximum=20,
    ),
    Setting(
        "require_approval",
        SWITCH,
        False,
        "plangate run refuses a plan its /autoplan Final Approval Gate did not approve as it is",
    ),
)
BY_NAME: dict[str, Setting] = {setting.name: setting for setting in SETTINGS}
GATE_SWITCHES = tuple(
    setting.name
    for setting in SETTINGS
    if setting.kind == SWITCH and setting.name.endswith("_gate")
)


def setting(name: str) -> Setting:
    """The table row for ``name``; :class:`UsageError` for a name plangate does not know."""
    found = BY_NAME.get(name)
    if found is None:
        raise UsageError(
            f"unknown setting {name!r}",
            "the settings are " + ", ".join(BY_NAME) + "; see `plangate config list`",
        )
    return found


def config_path(root: str | None = None) -> str:
    return os.path.join(root if root is not None else state_root(), CONFIG_FILE)


def display_path(path: str) -> str:
    """``path`` with the home folder shown as ``~``, for messages."""
    home = os.path.expanduser("~").rstrip(os.sep)
    if home and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def _remedy(path: str) -> str:
    return (
        f"fix or delete {display_path(path)} (without it plangate uses the defaults), "
        "then run the command again"
    )


class ConfigFile:
    """The parsed content of one config file, unknown keys and their order included."""

    __slots__ = ("path", "data", "exists")

    def __init__(self, path: str, data: dict[str, object], exists: bool) -> None:
        self.path = path
        self.data = data
        self.exists = exists

    def unknown_keys(self) -> list[str]:
        return [key for key in self.data if key not in BY_NAME]

    def warnings(self) -> list[str]:
        return [
            f"warning: unknown key {key!r} in {display_path(self.path)} is kept and ignored "
            "(remove it if it is a typo)"
            for key in self.unknown_keys()
        ]

    def stored(self, name: str) -> bool | int | None:
        """The value the file holds for ``name`` (``None`` when absent); checked."""
        row = setting(name)
        if name not in self.data:
            return None
        raw = self.data[name]
        value = row.accepts(raw)
        if value is None:
            raise ConfigError(
                f"{display_path(self.path)}: {name} is {jsonio.dumps(raw)}, "
                f"which is not {row.expects}",
                f"run `plangate config set {name} {row.example}` or fix the file",
            )
        return value

    def value(self, name: str) -> bool | int:
        """The file's value for ``name``, else its default."""
        stored = self.stored(name)
        return setting(name).default if stored is None else stored


def load(path: str | None = None) -> ConfigFile:
    """Read the config file; a missing file is empty, an unusable one a :class:`ConfigError`."""
    if path is None:
        path = config_path()
    try:
        with open(path, "rb") as stream:
            raw = stream.read()
    except FileNotFoundError:
        return ConfigFile(path, {}, False)
    except OSError as error:
        raise ConfigError(
            f"cannot read {display_path(path)}: {error.strerror or error}", _remedy(path)
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{display_path(path)} is not UTF-8 text", _remedy(path)) from None
    try:
        data = jsonio.loads(text)
    except jsonio.JSONError as error:
        raise ConfigError(
            f"{display_path(path)} is not valid JSON: {error}", _remedy(path)
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{display_path(path)} does not hold a JSON object", _remedy(path))
    return ConfigFile(path, data, True)


def get(name: str, *, path: str | None = None) -> bool | int:
    """The config file's value for ``name``, else the default (the environment is not read)."""
    setting(name)
    return load(path).value(name)


def resolve(
    name: str,
    environ: Mapping[str, str] | None = None,
    *,
    explicit: bool | int | None = None,
    path: str | None = None,
) -> tuple[bool | int, str]:
    """The effective value of ``name`` and where it came from.

    Sources, first set wins: ``"flag"`` (``explicit``), ``"env"`` (switches only),
    ``"config"``, ``"default"``. An environment variable that is set but empty counts as
    unset; any other value than on/off is a :class:`ConfigError`.
    """
    row = setting(name)
    if explicit is not None:
        return explicit, SOURCE_FLAG
    if row.env:
        if environ is None:
            environ = os.environ
        text = environ.get(row.env, "").strip()
        if text:
            word = text.lower()
            if word in (ON, OFF):
                return word == ON, SOURCE_ENV
            raise ConfigError(
                f"{row.env}={text!r} in the environment is not on or off",
                f"set {row.env} to on or off, or unset it",
            )
    stored = load(path).stored(name)
    if stored is not None:
        return stored, SOURCE_CONFIG
    return row.default, SOURCE_DEFAULT


def gate_switch(
    name: str,
    environ: Mapping[str, str] | None = None,
    *,
    explicit: bool | None = None,
    path: str | None = None,
) -> tuple[bool, str]:
    """Whether the gate ``name`` is on, and the source (``flag``/``env``/``config``/``default``)."""
    if setting(name).kind != SWITCH:
        raise ValueError(f"{name} is not a gate switch")
    value, source = resolve(name, environ, explicit=explicit, path=path)
    return bool(value), source


def set(name: str, value: bool | int | str, *, path: str | None = None) -> bool:
    """Validate and store ``value`` for ``name``; ``True`` when the file changed.

    A string is parsed as a person typed it (``on``, ``off``, ``5``). The write is atomic and
    durable (:func:`plangate.files.replace`), under an exclusive lock on a file beside the
    config (:class:`FileLock`) so concurrent writers never lose each other's change; the file
    is mode 0600 and a missing state root is created 0700.
    """
    row = setting(name)
    if isinstance(value, str):
        canonical = row.parse(value)
    else:
        checked = row.accepts(value)
        if checked is None:
            raise UsageError(
                f"{name} must be {row.expects}, not {value!r}",
                f"run `plangate config set {name} {row.example}`",
            )
        canonical = checked
    if path is None:
        path = config_path()
    where = os.path.dirname(path) or "."
    try:  # the state root: a real folder of ours, made 0700 when missing
        folder = StateRoot(where).folder()
    except OSError as error:
        raise StateError(
            f"cannot create {display_path(where)}: {error.strerror or error}",
            "check the permissions of PLANGATE_STATE_ROOT (default ~/.plangate)",
        ) from None
    base = os.path.basename(path)
    with FileLock(
        folder.file(base + LOCK_SUFFIX),
        message=f"another plangate process is changing {display_path(path)}",
        remedy="wait for it to finish, then run the command again",
        error=StateError,
    ):
        current = load(path)
        old = current.data.get(name)
        if type(old) is type(canonical) and old == canonical:
            return False
        data = dict(current.data)
        data[name] = canonical
        try:
            folder.replace(base, render(data).encode("utf-8"), 0o600, durable=True)
        except OSError as failure:
            raise _unwritable(path, failure, StateError) from None
    return True


def render(data: Mapping[str, object]) -> str:
    """The file's text: one key per line, two-space indentation, a trailing newline."""
    if not data:
        return "{}\n"
    lines = [f"  {jsonio.dumps(key)}: {jsonio.dumps(value)}" for key, value in data.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write_atomic(
    path: str,
    content: bytes,
    *,
    mode: int | None,
    error: type[ConfigError] | type[StateError] = StateError,
) -> None:
    """:func:`plangate.files.replace`, durable, with an :class:`OSError` turned into
    ``error`` naming the path (``mode`` ``None``: the umask's default for a new file)."""
    try:
        files.replace(path, content, mode, durable=True)
    except OSError as failure:
        raise _unwritable(path, failure, error) from None


def _unwritable(
    path: str, failure: OSError, error: type[ConfigError] | type[StateError]
) -> ConfigError | StateError:
    folder = os.path.dirname(path) or "."
    return error(
        f"cannot write {display_path(path)}: {failure.strerror or failure}",
        f"check that {display_path(folder)} is writable, then run the command again",
    )


class FileLock(files.Lock):
    """:class:`plangate.files.Lock` (an exclusive ``flock``, waited for up to ``timeout``
    seconds, default :data:`LOCK_TIMEOUT_S`) that fails with a plangate ``error``: ``message``
    and ``remedy`` when the lock stays busy, the lock file's path when it cannot be opened."""

    __slots__ = ("message", "remedy", "error")

    def __init__(
        self,
        path: str,
        *,
        message: str,
        remedy: str,
        error: type[ConfigError] | type[StateError] = ConfigError,
        timeout: float | None = None,
    ) -> None:
        super().__init__(path, timeout=LOCK_TIMEOUT_S if timeout is None else timeout, poll=0.02)
        self.message = message
        self.remedy = remedy
        self.error = error

    def __enter__(self) -> FileLock:
        try:
            self.acquire()
        except TimeoutError:
            raise self.error(
                f"{self.message} (lock {display_path(self.path)} held for over {self.timeout:g} s)",
                self.remedy,
            ) from None
        except OSError as failure:
            raise self.error(
                f"cannot create the lock file {display_path(self.path)}: "
                f"{failure.strerror or failure}",
                "check the folder's permissions, then run the command again",
            ) from None
        return self
