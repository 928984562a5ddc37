"""pyservice's settings: command-line flags, with the secrets from the environment."""

import argparse
import os
from dataclasses import dataclass
from typing import Optional

# The variants (see README.md): two leaks leakbench must find, and their fix.
HELD_WHILE_WAITING = "held-while-waiting"
HELD_ACROSS_UPSTREAM = "held-across-upstream"
FIXED = "fixed"
VARIANTS = (HELD_WHILE_WAITING, HELD_ACROSS_UPSTREAM, FIXED)

# The only MCP revision this service speaks.
PROTOCOL_VERSION = "2025-06-18"


@dataclass(frozen=True)
class Settings:
    dsn: str  # libpq URL or key=value string; a secret, never logged
    variant: str
    pool_size: int
    pool_timeout: float  # seconds a request waits for a pooled connection
    application_name: str  # "" sets none
    ground_truth: str  # path of the JSON-lines log; "" keeps none
    host: str
    port: int
    fd: Optional[int]  # an inherited listening socket, instead of host:port
    upstream_url: str  # call_upstream's target; "" is this service's own /upstream
    poll_interval: float  # wait_for_run's pause between polls, seconds
    wait_default: float  # wait_for_run's timeout when the call gives none
    log_level: str


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "no")


def parse(argv=None) -> Settings:
    p = argparse.ArgumentParser(
        prog="pyservice",
        description="An MCP 2025-06-18 service on FastAPI + SQLAlchemy 1.4 + psycopg2, "
        "leaky or fixed, for leakbench's tests. The DSN is read from $PYSERVICE_DSN "
        "or --dsn-file, never from the command line (it holds a password).",
    )
    p.add_argument("--variant", choices=VARIANTS, default=os.environ.get("PYSERVICE_VARIANT", FIXED))
    p.add_argument("--dsn-file", help="read the DSN from the first line of this file instead of $PYSERVICE_DSN")
    p.add_argument("--pool-size", type=int, default=10, help="SQLAlchemy pool_size (max_overflow is 0); default 10")
    p.add_argument("--pool-timeout", type=float, default=5.0, help="SQLAlchemy pool_timeout in seconds; default 5")
    p.add_argument("--application-name", default="pyservice", help="application_name of the connections; default pyservice")
    p.add_argument(
        "--no-application-name",
        action="store_true",
        default=_env_flag("PYSERVICE_NO_APPLICATION_NAME"),
        help="set no application_name (also $PYSERVICE_NO_APPLICATION_NAME=1)",
    )
    p.add_argument("--ground-truth", default="", help="append the ground-truth log (JSON lines) to this file")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--fd", type=int, default=None, help="serve on this inherited listening socket instead of --host/--port")
    p.add_argument("--upstream-url", default="", help="call_upstream's URL (GET ?delay=S); default this service's /upstream")
    p.add_argument("--poll-interval", type=float, default=0.5, help="wait_for_run's pause between polls; default 0.5 s")
    p.add_argument("--wait-default", type=float, default=5.0, help="wait_for_run's timeout when not given; default 5 s")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    a = p.parse_args(argv)

    if a.dsn_file:
        with open(a.dsn_file, encoding="utf-8") as f:
            dsn = f.readline().strip()
    else:
        dsn = os.environ.get("PYSERVICE_DSN", "").strip()
    if not dsn:
        p.error("no DSN: set $PYSERVICE_DSN or give --dsn-file")
    if a.pool_size < 1:
        p.error("--pool-size must be at least 1")
    if a.pool_timeout <= 0 or a.poll_interval <= 0 or a.wait_default < 0:
        p.error("--pool-timeout and --poll-interval must be positive, --wait-default not negative")
    return Settings(
        dsn=dsn,
        variant=a.variant,
        pool_size=a.pool_size,
        pool_timeout=a.pool_timeout,
        application_name="" if a.no_application_name else a.application_name,
        ground_truth=a.ground_truth,
        host=a.host,
        port=a.port,
        fd=a.fd,
        upstream_url=a.upstream_url,
        poll_interval=a.poll_interval,
        wait_default=a.wait_default,
        log_level=a.log_level,
    )
