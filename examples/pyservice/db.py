"""The database: the engine and its pool, request-scoped sessions, and the
bearer-token lookup every MCP request goes through -- written as FastAPI
services usually write them.

The bug of the held-while-waiting variant lives here (get_mcp_actor): the
token lookup runs on the request-scoped session of get_db, whose teardown
closes it only after the response has been sent. SQLAlchemy's autobegin has
opened a transaction with that SELECT, so for the whole request the backend
sits "idle in transaction", its last query the lookup with the token inlined
(psycopg2 binds parameters on the client). The fix (get_mcp_actor_short)
looks the token up on a short session of its own, closed before dispatch.
"""

import logging
from typing import NamedTuple, Optional

from fastapi import Depends, Header
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session, sessionmaker

import groundtruth
from protocol import RPCError

log = logging.getLogger("pyservice.db")

# Bound by init(): the engine is built from the command line.
SessionLocal = sessionmaker(future=True)
engine = None

AUTH_SQL = text(
    "SELECT u.id, u.email FROM api_tokens t JOIN users u ON u.id = t.user_id "
    "WHERE t.token = :token AND t.active"
)


def init(settings, gt: groundtruth.Log):
    """Creates the engine: pool_size from the settings, no overflow, the
    configured pool_timeout; application_name unless turned off. The DSN
    may be a libpq URL or key=value string, so psycopg2 gets it as it is."""
    global engine
    import psycopg2

    kwargs = {}
    if settings.application_name:
        kwargs["application_name"] = settings.application_name

    def connect():
        return psycopg2.connect(settings.dsn, **kwargs)

    engine = create_engine(
        "postgresql+psycopg2://",
        creator=connect,
        pool_size=settings.pool_size,
        max_overflow=0,
        pool_timeout=settings.pool_timeout,
        hide_parameters=True,  # exception texts would show the bearer token
        future=True,
    )
    gt.attach(engine)
    SessionLocal.configure(bind=engine)
    return engine


def check_connection(settings) -> None:
    """Connects once outside the pool (no ground-truth line), so that a bad
    DSN fails the start with a clear message."""
    import psycopg2

    kwargs = {"dsn": settings.dsn, "connect_timeout": 10}
    if settings.application_name:
        kwargs["application_name"] = settings.application_name
    conn = psycopg2.connect(**kwargs)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM api_tokens LIMIT 1")
    finally:
        conn.rollback()
        conn.close()


def get_db():
    """The classic request-scoped session dependency."""
    db = SessionLocal()
    try:
        yield db
    finally:
        db.close()


class Actor(NamedTuple):
    id: int
    email: str


def _bearer(authorization: Optional[str]) -> str:
    if not authorization:
        raise RPCError(401, -32001, "Unauthorized: no bearer token", headers={"WWW-Authenticate": "Bearer"})
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise RPCError(401, -32001, "Unauthorized: want Authorization: Bearer <token>", headers={"WWW-Authenticate": "Bearer"})
    return token


def lookup_actor(db: Session, token: str) -> Actor:
    row = db.execute(AUTH_SQL, {"token": token}).first()
    if row is None:
        raise RPCError(401, -32001, "Unauthorized: unknown or inactive token", headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
    req = groundtruth.current()
    if req is not None:
        req.user = row.email
    return Actor(row.id, row.email)


def get_mcp_actor(authorization: Optional[str] = Header(None), db: Session = Depends(get_db)) -> Actor:
    """held-while-waiting (MCP server PR #917, the review finding): the lookup
    runs on the request's session, which stays checked out -- in the
    transaction the SELECT began -- until get_db's teardown, after the
    response."""
    return lookup_actor(db, _bearer(authorization))


def get_mcp_actor_short(authorization: Optional[str] = Header(None)) -> Actor:
    """The fix: a session of its own, closed (its connection back in the
    pool) before the request is dispatched."""
    token = _bearer(authorization)
    with SessionLocal() as db:
        return lookup_actor(db, token)
