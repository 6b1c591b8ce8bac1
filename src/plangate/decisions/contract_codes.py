"""The contract codes: disposition and text of each, in the guard's one code table.

:mod:`plangate.decisions.reasons` merges :data:`TABLE` into its own, so a contract decision is a
:class:`plangate.decisions.reasons.Decision` like any other: the same decision log, the same
dispositions, and ``plangate explain <code>`` prints its section of the troubleshooting page.

Hook path: standard library only.
"""

from __future__ import annotations

from plangate.decisions import CORRECTIVE, UNVERIFIED

CONTRACT_INVALID = "contract_invalid"
CONTRACT_PHASE_ORDER = "contract_phase_order"
CONTRACT_ARTIFACT = "contract_artifact"
CONTRACT_APPROVAL = "contract_approval"
CONTRACT_SELF_APPROVAL = "contract_self_approval"
CONTRACT_EDIT_SCOPE = "contract_edit_scope"
CONTRACT_UNVERIFIED = "contract_unverified"

TABLE: dict[str, tuple[str, str]] = {
    CONTRACT_UNVERIFIED: (
        UNVERIFIED,
        "The workflow contract could not be checked for this call: the session journal "
        "could not be read in time or in a shape plangate knows.",
    ),
    CONTRACT_INVALID: (
        CORRECTIVE,
        "A workflow contract that applies here does not parse, so plangate cannot hold its "
        "workflow to its phases. Run `plangate contract list` to find it and `plangate "
        "contract check <file>` for its line and remedy, and ask the person to fix it.",
    ),
    CONTRACT_PHASE_ORDER: (
        CORRECTIVE,
        "Phase {phase} of workflow {workflow} cannot start yet: an earlier phase has not "
        "left its artifacts. Run that phase first.",
    ),
    CONTRACT_ARTIFACT: (
        CORRECTIVE,
        "Phase {phase} of workflow {workflow} cannot start yet: an earlier phase's artifact "
        "does not meet its contract. Finish that artifact first.",
    ),
    CONTRACT_APPROVAL: (
        CORRECTIVE,
        "Phase {phase} of workflow {workflow} cannot start yet: an earlier phase needs a "
        "person's approval. Finish your turn and ask the person to review it and approve it "
        "in their own words. Do not approve it yourself: no command you run and no file you "
        "write counts as the person's approval, and trying is logged.",
    ),
    CONTRACT_SELF_APPROVAL: (
        CORRECTIVE,
        "An approval flag of workflow {workflow} was set without a person's approval. Only "
        "the person approves a phase. Finish your turn and ask them to review it and approve "
        "it in their own words, and never write the flag before they have.",
    ),
    CONTRACT_EDIT_SCOPE: (
        CORRECTIVE,
        "This edit is outside the paths phase {phase} of workflow {workflow} may change. "
        "Finish the phase (and its approval) and enter the phase that may edit it.",
    ),
}

CODES: tuple[str, ...] = tuple(TABLE)
