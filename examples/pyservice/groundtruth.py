"""The ground truth: which request each pooled connection served, and for how long.

One JSON line per checkout from the SQLAlchemy pool (README.md, "Ground-truth
log"): the backend's pid (psycopg2's get_backend_pid), when the connection
was checked out and checked back in, and the request it was checked out for
-- tied through a contextvar that an ASGI middleware sets for every HTTP
request. FastAPI runs sync dependencies, handlers and the teardown of yield
dependencies on AnyIO's worker threads with a copy of the request's context,
so a checkout made in any of them sees its request. A checkin may come from
another thread (the teardown): the checkout is found on its pool record.

A line is written once both the connection is back in the pool and its
request has ended (whichever comes last), so that every line is complete;
lines are flushed one by one. A checkout still out when the service stops is
written with checkin null and open_at_exit true.
"""

import contextvars
import datetime
import itertools
import json
import logging
import threading
import time
from typing import Optional

log = logging.getLogger("pyservice.groundtruth")

_current: contextvars.ContextVar = contextvars.ContextVar("pyservice_request", default=None)
_ids = itertools.count(1)


def rfc3339(t: Optional[float]) -> Optional[str]:
    """A unix time as RFC 3339 in UTC with microseconds, or None."""
    if t is None:
        return None
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class RequestInfo:
    """One HTTP request, as the ground truth names it. The protocol layer and
    the authentication fill in what they learn (method, tool, user, error)."""

    __slots__ = (
        "id", "http_method", "path", "method", "tool", "rpc_id", "session", "user",
        "traceparent", "start", "end", "status", "error", "checkouts",
    )

    def __init__(self, http_method: str, path: str, headers: dict):
        self.id = "req-%06d" % next(_ids)
        self.http_method = http_method
        self.path = path
        self.method = None  # JSON-RPC method
        self.tool = None  # tools/call's tool name
        self.rpc_id = None
        self.session = headers.get("mcp-session-id")
        self.user = None  # the bearer token's user (email), once authenticated
        self.traceparent = headers.get("traceparent")
        self.start = time.time()
        self.end = None
        self.status = None
        self.error = None
        self.checkouts = []

    def describe(self, body: bytes) -> None:
        """Takes the method, tool and id from a JSON-RPC body, if it is one."""
        try:
            msg = json.loads(body)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        m = msg.get("method")
        self.method = m if isinstance(m, str) else None
        self.rpc_id = msg.get("id")
        params = msg.get("params")
        if isinstance(params, dict):
            if m == "tools/call" and isinstance(params.get("name"), str):
                self.tool = params["name"]
            meta = params.get("_meta")
            if self.traceparent is None and isinstance(meta, dict) and isinstance(meta.get("traceparent"), str):
                self.traceparent = meta["traceparent"]

    def as_json(self) -> dict:
        return {
            "id": self.id,
            "http_method": self.http_method,
            "path": self.path,
            "method": self.method,
            "tool": self.tool,
            "rpc_id": self.rpc_id,
            "session": self.session,
            "user": self.user,
            "traceparent": self.traceparent,
            "start": rfc3339(self.start),
            "end": rfc3339(self.end),
            "status": self.status,
            "error": self.error,
        }


def current() -> Optional[RequestInfo]:
    """The request being served in this context, if any."""
    return _current.get()


class _Checkout:
    __slots__ = ("pid", "checkout", "checkin", "request", "written")

    def __init__(self, pid: Optional[int], request: Optional[RequestInfo]):
        self.pid = pid
        self.checkout = time.time()
        self.checkin = None
        self.request = request
        self.written = False


_RECORD_KEY = "pyservice_groundtruth"


class Log:
    """The ground-truth log. Without a path it keeps nothing (the events are
    not even listened to)."""

    def __init__(self, path: str, variant: str):
        self._variant = variant
        self._lock = threading.Lock()
        self._open = set()  # checkouts not yet written
        self._f = open(path, "a", encoding="utf-8") if path else None

    @property
    def enabled(self) -> bool:
        return self._f is not None

    # --- SQLAlchemy pool events ---------------------------------------------

    def attach(self, engine) -> None:
        """Listens to the engine pool's checkout and checkin events."""
        if not self.enabled:
            return
        from sqlalchemy import event

        event.listen(engine, "checkout", self._on_checkout)
        event.listen(engine, "checkin", self._on_checkin)

    def _on_checkout(self, dbapi_connection, connection_record, connection_proxy) -> None:
        try:
            pid = dbapi_connection.get_backend_pid()  # libpq's PQbackendPID: no round trip
        except Exception:  # a broken connection: the pool's next use says so
            pid = None
        c = _Checkout(pid, _current.get())
        connection_record.info[_RECORD_KEY] = c
        with self._lock:
            self._open.add(c)
            if c.request is not None:
                c.request.checkouts.append(c)

    def _on_checkin(self, dbapi_connection, connection_record) -> None:
        # After the pool's reset-on-return (the ROLLBACK): from here on the
        # backend is no longer in the transaction.
        c = connection_record.info.pop(_RECORD_KEY, None)
        if c is None:
            return
        with self._lock:
            c.checkin = time.time()
            self._write_if_complete(c)

    # --- requests -------------------------------------------------------------

    def end_request(self, req: RequestInfo) -> None:
        """Marks the request ended (the first call wins) and writes its
        checkouts that are already back in the pool."""
        with self._lock:
            if req.end is not None:
                return
            req.end = time.time()
            for c in req.checkouts:
                self._write_if_complete(c)

    def _write_if_complete(self, c: _Checkout) -> None:
        # Called with the lock held.
        if c.written or c.checkin is None or (c.request is not None and c.request.end is None):
            return
        self._write(c)

    def _write(self, c: _Checkout, open_at_exit: bool = False) -> None:
        c.written = True
        self._open.discard(c)
        if self._f is None:
            return
        rec = {
            "pid": c.pid,
            "checkout": rfc3339(c.checkout),
            "checkin": rfc3339(c.checkin),
            "held_seconds": None if c.checkin is None else round(c.checkin - c.checkout, 6),
            "variant": self._variant,
            "request": None if c.request is None else c.request.as_json(),
        }
        if open_at_exit:
            rec["open_at_exit"] = True
        try:
            self._f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            self._f.flush()
        except OSError as e:
            log.error("ground truth: cannot write: %s", e)

    def close(self) -> None:
        """Writes what is still open and closes the file."""
        with self._lock:
            for c in sorted(self._open, key=lambda c: c.checkout):
                self._write(c, open_at_exit=True)
            if self._f is not None:
                self._f.close()
                self._f = None


class Middleware:
    """A pure ASGI middleware: gives every HTTP request its RequestInfo in the
    context, reads a POST body once to name its JSON-RPC method and tool (and
    replays it to the application), and ends the request when the last byte
    of its response has been handed to the server."""

    def __init__(self, app, log: Log):
        self.app = app
        self.log = log

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        req = RequestInfo(scope["method"], scope["path"], headers)

        if scope["method"] == "POST":
            messages = []
            body = b""
            while True:
                msg = await receive()
                messages.append(msg)
                if msg["type"] != "http.request":
                    break
                body += msg.get("body", b"")
                if not msg.get("more_body", False):
                    break
            req.describe(body)
            if messages[-1]["type"] == "http.request":
                messages = [{"type": "http.request", "body": body, "more_body": False}]
            inner = receive

            async def receive():
                if messages:
                    return messages.pop(0)
                return await inner()

        async def send_and_note(msg):
            if msg["type"] == "http.response.start":
                req.status = msg["status"]
            await send(msg)
            if msg["type"] == "http.response.body" and not msg.get("more_body", False):
                self.log.end_request(req)

        token = _current.set(req)
        try:
            await self.app(scope, receive, send_and_note)
        finally:
            if req.status is None:
                req.status = 500
            self.log.end_request(req)
            _current.reset(token)
