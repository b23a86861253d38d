"""What every LLM client here shares, the agent's adapters and the judge's clients alike: how long a server asks
us to wait before retrying. (Prices are in `ghost_eval.pricing`, also shared.)"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from datetime import UTC

__all__ = ["retry_after_seconds"]


def retry_after_seconds(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """The server's requested delay: `retry-after-ms`, `retry-after` in seconds, or `retry-after` as an HTTP date.

    An HTTP date ending in `-0000` parses to a datetime without a zone; HTTP dates are always UTC, so it is read
    as UTC rather than as local time (or refused for lacking a zone). `now` is the current epoch time (for tests).
    """
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    if (ms := lowered.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    if email.utils.parsedate_tz(value) is None:
        return None
    when = email.utils.parsedate_to_datetime(value)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
