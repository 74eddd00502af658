"""How fast a key may call, and what a question costs it: plain Python, shared by the key check
(serve/auth.py) and the service's answer budget (serve/service.py)."""
from __future__ import annotations

import math
import threading
import time


class RateLimiter:
    """A token bucket per key: `burst` requests at once, refilled at `per_minute`."""

    def __init__(self, per_minute: float, burst: int, clock=time.monotonic):
        self.rate, self.burst, self.clock = per_minute / 60.0, burst, clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key id -> (tokens, when)
        self._lock = threading.Lock()

    def charge(self, key_id: str, cost: float) -> None:
        """Charge what a request turned out to cost, after it ran: the bucket may go below zero, a debt the refill
        pays off before the key's next request is admitted."""
        with self._lock:
            now = self.clock()
            tokens, when = self._buckets.get(key_id, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - when) * self.rate)
            self._buckets[key_id] = (tokens - max(0.0, cost), now)

    def take(self, key_id: str, cost: float = 1.0) -> float:
        """0 when the request may go ahead, else the seconds until it could (a cost above the burst
        counts as the burst: a full bucket always admits one request)."""
        cost = min(cost, float(self.burst))
        with self._lock:
            now = self.clock()
            tokens, when = self._buckets.get(key_id, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - when) * self.rate)
            if tokens >= cost:
                self._buckets[key_id] = (tokens - cost, now)
                return 0.0
            self._buckets[key_id] = (tokens, now)
            return (cost - tokens) / self.rate if self.rate > 0 else math.inf


ANSWER_ADMISSION = 1.0  # units a question takes from its key's answer budget before any work: the first second's


def answer_charge(work_s: float) -> float:
    """What an answer costs after it ran, beyond its admission: one unit per second of its measured work (retrieval,
    generation and verification, as long as the request ran). A question's length says little about its work: a
    500-character run of numbers took 21 s where a 500-character question takes one."""
    return max(0.0, work_s - ANSWER_ADMISSION)
