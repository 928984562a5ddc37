"""The MCP tools, and how each variant scopes its database sessions.

  whoami         the caller's email (no query beyond the authentication)
  start_run      a run of the caller's, done `seconds` from now (INSERT, commit)
  wait_for_run   polls the run every poll interval, each time on a fresh short
                 session, until it is done or `seconds` have passed
  call_upstream  a rate-limit SELECT, a slow upstream HTTP call, a record of it

held-while-waiting leaks in the authentication (db.get_mcp_actor), not here:
wait_for_run's polls are the fixed code, yet the request still holds the
connection its token lookup used. When as many waiters as the pool has
connections hold one each, no poll can get one either (max_overflow 0):
they fail on the pool timeout, like the requests beyond the pool.

held-across-upstream (ContextForge #2518 / #2323): call_upstream runs its
rate-limit SELECT on the request's session and keeps that transaction open
across the upstream call.
"""

import logging
import threading
import time

from sqlalchemy import text

import db as dbm
import upstream
from config import HELD_ACROSS_UPSTREAM
from protocol import INVALID_PARAMS, RPCError

log = logging.getLogger("pyservice.tools")

# Set when the service is asked to stop: waits end at once.
shutdown = threading.Event()

START_RUN_SQL = text(
    "INSERT INTO runs (user_id, name, done_at) "
    "VALUES (:uid, :name, now() + make_interval(secs => :secs)) RETURNING id, done_at"
)
POLL_RUN_SQL = text("SELECT id, done_at <= clock_timestamp() AS done FROM runs WHERE id = :id AND user_id = :uid")
RATE_SQL = text(
    "SELECT count(*) FROM upstream_calls WHERE user_id = :uid AND started_at > now() - interval '1 minute'"
)
RECORD_CALL_SQL = text(
    "INSERT INTO upstream_calls (user_id, url, started_at, finished_at, status) "
    "VALUES (:uid, :url, to_timestamp(:started), clock_timestamp(), :status)"
)

RATE_LIMIT = 600  # upstream calls a user may make a minute


class ToolError(Exception):
    """A tool call that failed as a tool (isError true), not as a request."""


def _number(args, key, default, lo, hi):
    v = args.get(key, default)
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            raise ToolError(f"{key} must be a number")
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not (lo <= v <= hi):
        raise ToolError(f"{key} must be a number from {lo} to {hi}")
    return float(v)


class Tools:
    def __init__(self, settings):
        self.s = settings
        self._defs = {
            "whoami": ("The caller's identity.", {}, self.whoami),
            "start_run": (
                "Starts a run of the caller's that is done `seconds` from now; answers its run_id.",
                {"seconds": {"type": "number", "description": "how long the run takes (default 3)"},
                 "name": {"type": "string"}},
                self.start_run,
            ),
            "wait_for_run": (
                "Polls a run until it is done or `seconds` have passed.",
                {"run_id": {"type": ["integer", "string"]},
                 "seconds": {"type": "number", "description": f"how long to wait at most (default {settings.wait_default:g})"}},
                self.wait_for_run,
            ),
            "call_upstream": (
                "Calls the slow upstream service and answers what it said.",
                {"delay": {"type": "number", "description": "the upstream's latency, seconds (default 1)"}},
                self.call_upstream,
            ),
        }

    def list(self):
        return [
            {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props}}
            for name, (desc, props, _) in self._defs.items()
        ]

    def call(self, name, args, actor, db):
        """Runs a tool: (structuredContent, isError). Database failures
        (a pool timeout) propagate: the request fails with them."""
        d = self._defs.get(name)
        if d is None:
            raise RPCError(200, INVALID_PARAMS, f"Unknown tool: {name[:64]}")
        try:
            return d[2](args, actor, db), False
        except ToolError as e:
            return {"error": str(e)}, True

    # --- the tools --------------------------------------------------------------

    def whoami(self, args, actor, db):
        return {"user_id": actor.id, "email": actor.email}

    def start_run(self, args, actor, db):
        secs = _number(args, "seconds", 3, 0, 3600)
        name = str(args.get("name", "run"))[:200]
        # On the request's session, committed at once: the commit gives the
        # connection back (in every variant).
        row = db.execute(START_RUN_SQL, {"uid": actor.id, "name": name, "secs": secs}).one()
        db.commit()
        return {"run_id": row.id, "done_at": row.done_at.isoformat()}

    def wait_for_run(self, args, actor, db):
        raw = args.get("run_id")
        try:
            run_id = int(raw)
        except (TypeError, ValueError):
            raise ToolError("run_id must be an integer")
        limit = _number(args, "seconds", self.s.wait_default, 0, 600)
        started = time.monotonic()
        polls = 0
        while True:
            # Each poll on a fresh short session (fixed in every variant).
            with dbm.SessionLocal() as s:
                row = s.execute(POLL_RUN_SQL, {"id": run_id, "uid": actor.id}).first()
            polls += 1
            waited = time.monotonic() - started
            if row is None:
                raise ToolError(f"run {run_id} not found")
            if row.done:
                return {"run_id": run_id, "status": "done", "polls": polls, "waited_seconds": round(waited, 3)}
            left = limit - waited
            if left <= 0:
                return {"run_id": run_id, "status": "running", "polls": polls, "waited_seconds": round(waited, 3)}
            if shutdown.wait(min(self.s.poll_interval, left)):
                raise ToolError("the service is stopping")

    def call_upstream(self, args, actor, db):
        delay = _number(args, "delay", 1, 0, 60)
        url = upstream.url_for(self.s, delay)
        started = time.time()
        if self.s.variant == HELD_ACROSS_UPSTREAM:
            # BUG (#2518): the rate-limit SELECT begins a transaction on the
            # request's session, held open across the HTTP call.
            recent = db.execute(RATE_SQL, {"uid": actor.id}).scalar_one()
            if recent >= RATE_LIMIT:
                raise ToolError("rate limit: too many upstream calls in the last minute")
            status, answer = self._fetch(url, delay)
            db.execute(RECORD_CALL_SQL, {"uid": actor.id, "url": url, "started": started, "status": status})
            db.commit()
        else:
            with dbm.SessionLocal() as s:
                recent = s.execute(RATE_SQL, {"uid": actor.id}).scalar_one()
            if recent >= RATE_LIMIT:
                raise ToolError("rate limit: too many upstream calls in the last minute")
            status, answer = self._fetch(url, delay)
            with dbm.SessionLocal.begin() as s:
                s.execute(RECORD_CALL_SQL, {"uid": actor.id, "url": url, "started": started, "status": status})
        if status != 200:
            raise ToolError(f"upstream answered {status}")
        return {"status": status, "answer": answer, "elapsed_seconds": round(time.time() - started, 3)}

    def _fetch(self, url, delay):
        try:
            return upstream.fetch(url, timeout=delay + 10)
        except OSError as e:
            raise ToolError(f"upstream unreachable: {e}")
