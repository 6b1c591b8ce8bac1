"""Plans shared by the plan-format tests."""

from __future__ import annotations

# A plan in canonical form: render_plan(parse_plan(EXAMPLE)) == EXAMPLE.
EXAMPLE = """\
# Plan: Rate-limit the login endpoint

## Goal

Stop password guessing: at most five failed logins per account per minute.
Scope: none

## Implementation plan

### Step 1: Count failed logins
Files: `src/app/limits.py`, `tests/test_limits.py`
Serves: AC1

Add a sliding-window counter keyed by account.

#### Notes

```python
## inside a fence this is not a section
```

### Step 2: Refuse the sixth attempt
Files: `src/app/login.py`
Serves: AC1, AC2

Return 429 with a `Retry-After` header.

### Step 3: Document the limit
Files: none
Serves: none

## Checks

- `pytest -q` (timeout 300s)
- Lint: `ruff check .`

## Acceptance criteria

- AC1: The sixth failed login within a minute is refused.
- AC2: A refused login says when to try again.

## Review record

### Phase 1 (CEO)
Decision: keep the scope to the login endpoint.
Reason: API keys have their own limits.
"""
