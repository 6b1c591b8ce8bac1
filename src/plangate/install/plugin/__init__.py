"""plangate as a Claude Code plugin.

The package ships the two manifests (``marketplace/.claude-plugin/marketplace.json`` and
``marketplace/plangate/.claude-plugin/plugin.json``); ``plangate setup --plugin`` builds the
whole marketplace folder from them in the state root (:mod:`plangate.install.plugin.build`):
the package's own skills rendered for this installation, ``hooks/hooks.json`` from the one
hook table (:mod:`plangate.hook_registry`), and ``bin/plangate-hook``, the launcher the hooks
run (plugin hooks do not get the plugin's ``bin/`` on PATH, so the launcher names the
absolute interpreter). Then it installs it with the real ``claude plugin`` commands
(:mod:`plangate.install.plugin.install`); :mod:`plangate.install.plugin.setup_plugin` is that
flow, refusals first.
"""
