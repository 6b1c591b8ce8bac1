"""Installing plangate into Claude Code, and checking an installation.

* :mod:`.setup`: ``plangate setup`` (settings hooks and skills) and its ``--uninstall``, given
  one :class:`~.context.InstallContext`; :mod:`.plugin` the same with ``--plugin``.
* :mod:`.settings_file`: safe edits of a ``settings.json`` (restored byte for byte).
* :mod:`.skill_bundle`: the bundled skills and the folders they are installed as.
* :mod:`.switches`: the gate switches as setup resolves, saves and reports them.
* :mod:`.place`: the rule that hooks never point into a temporary environment.
* :mod:`.registrations`, :mod:`.checks`, :mod:`.doctor`: what registers plangate, and
  ``plangate doctor``'s checks of it.
* :mod:`.live`, :mod:`.carried`: ``plangate doctor --live``, real sessions of the user's
  Claude Code with the user's registration carried into a throwaway HOME.

Which names and folders are plangate's skills (:mod:`plangate.skill_names`) and the table of
hooks (:mod:`plangate.hook_registry`) stay below this package: the hooks read them too.
"""
