"""The four dispositions a code can have, and the verified allow's, defined once for the code
tables of :mod:`.reasons`, :mod:`.contract_codes` and :mod:`.defence_codes`.

Hook path: standard library only.
"""

from __future__ import annotations

ALLOW = "allow"
UNVERIFIED = "unverified"
FALLBACK = "fallback"
CORRECTIVE = "corrective"
TRANSIENT = "transient"
DISPOSITIONS = (UNVERIFIED, FALLBACK, CORRECTIVE, TRANSIENT)
"""The dispositions a code can have (a verified allow is :data:`ALLOW` and has no code)."""
DENY_DISPOSITIONS = (FALLBACK, CORRECTIVE, TRANSIENT)
