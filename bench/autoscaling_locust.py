"""The load of bench/autoscaling.py: a locust ramp (its own process; locust's gevent stays out of Ray's).

Each user asks POST /v1/answer in a closed loop, a question from a rotation. A request that fails
(5xx, connection error) is asked once more, as a client with one retry would; what is lost is
what fails twice. Every request is written to $RAMP_LOG (JSON lines: when it ended, status,
outcome, whether it was retried, seconds), the shape's users to $RAMP_USERS_LOG.

The shape, in seconds from the start ($RAMP_STAGES, JSON [[until_s, users], …]): users rise and
hold, then fall to one user and stay there while the autoscaler takes replicas away.
"""
from __future__ import annotations

import itertools
import json
import os
import time

from locust import HttpUser, LoadTestShape, constant, events, task

QUESTIONS = json.loads(os.environ["RAMP_QUESTIONS"])
_rotation = itertools.cycle(QUESTIONS)
_log = open(os.environ["RAMP_LOG"], "a", buffering=1, encoding="utf-8")
_users_log = open(os.environ["RAMP_USERS_LOG"], "a", buffering=1, encoding="utf-8")
STAGES = [tuple(s) for s in json.loads(os.environ["RAMP_STAGES"])]


def _outcome(response) -> str:
    try:
        body = response.json()
    except ValueError:
        return "unreadable"
    if body.get("outcome") == "refusal":
        return "refusal:" + str(body.get("reason_code") or "")
    return str(body.get("outcome") or "unknown")


class Asker(HttpUser):
    wait_time = constant(0)

    @task
    def ask(self):
        question = next(_rotation)
        started = time.time()
        retried = False
        for attempt in (1, 2):
            try:
                with self.client.post("/v1/answer", json={"question": question}, timeout=90,
                                      headers={"Authorization": f"Bearer {os.environ['RAMP_KEY']}"},
                                      catch_response=True, name="/v1/answer") as response:
                    status = response.status_code
                    outcome = _outcome(response) if status == 200 else (response.text or "")[:200]
                    if status == 200:
                        response.success()
                    else:
                        response.failure(f"{status}")
            except Exception as e:  # a connection error
                status, outcome = 0, f"{type(e).__name__}: {e}"[:200]
            if status == 200 or (status and status < 500) or attempt == 2:
                break
            retried = True
        _log.write(json.dumps({"t": time.time(), "status": status, "outcome": outcome, "retried": retried,
                               "seconds": round(time.time() - started, 3)}) + "\n")


class Ramp(LoadTestShape):
    def tick(self):
        now = self.get_run_time()
        for until, users in STAGES:
            if now < until:
                _users_log.write(json.dumps({"t": time.time(), "users": users}) + "\n")
                return users, max(users, 1)
        return None


@events.quitting.add_listener
def _close(**_):
    _log.close()
    _users_log.close()
