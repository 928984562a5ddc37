"""The slow upstream call_upstream calls: by default an endpoint of this very
service (GET /upstream?delay=S, asynchronous, so that a slow answer holds no
worker thread), or any URL given with --upstream-url."""

import asyncio
import json
import time
import urllib.error
import urllib.parse
import urllib.request

MAX_DELAY = 60.0


async def endpoint(delay: float = 0.0):
    """GET /upstream: answers after delay seconds."""
    d = min(max(delay, 0.0), MAX_DELAY)
    await asyncio.sleep(d)
    return {"delay": d, "answer": "upstream says hello", "answered_at": time.time()}


def url_for(settings, delay: float) -> str:
    base = settings.upstream_url or own_url(settings)
    sep = "&" if urllib.parse.urlsplit(base).query else "?"
    return f"{base}{sep}delay={delay:g}"


_own = {"url": ""}


def set_own_url(url: str) -> None:
    """Records this service's own /upstream URL (known once it listens)."""
    _own["url"] = url


def own_url(settings) -> str:
    return _own["url"] or f"http://{settings.host}:{settings.port}/upstream"


def fetch(url: str, timeout: float):
    """GETs url: (status, its JSON answer or text)."""
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, body = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read()
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode("utf-8", "replace")[:500]
