"""Where hook commands that an earlier plangate registered find ``run_process``.

Settings and plugins written by an earlier ``plangate setup`` run
``from plangate.hooks.runtime import run_process``; this keeps them working until setup is
run again (``plangate doctor`` says when). New registrations import
:mod:`plangate.hook_io.runtime` directly.
"""

from plangate.hook_io.runtime import run_process

__all__ = ["run_process"]
