"""Rate limits: token buckets per token and per client address, answering 429 with ``Retry-After``.

A request that carries a token (``Authorization: Bearer ...``, or the ``podium_token`` session cookie of the
pages) is charged to that token's bucket; any other request (anonymous reads, the sign-in form) to its
client address's bucket.  A bucket holds ``burst`` requests and refills at ``rate`` per second; a request
that finds it empty is refused without reaching the application and costs nothing.

A token is charged alone only once this process has seen it valid: otherwise a client could make up a new
token for every request and never be limited.  So a request with a token the limiter does not know is
charged to its address first and the token is looked up (one query, once per token and process); an
unknown or revoked token stays charged to the address, and a token answered 401 is forgotten.

The buckets are in memory, one set per server process: with several worker processes a client whose
requests are spread over them gets up to that many times the limit (connections are spread by the
kernel; a keep-alive connection stays with one process).  Buckets that have refilled are forgotten, as
equal to a fresh one, so the memory held is bounded by the clients active in the last ``burst / rate``
seconds, and never exceeds ``max_entries`` buckets.

The client address is the peer of the connection as the ASGI server gives it (uvicorn rewrites it from
``X-Forwarded-For`` for the proxies it trusts: ``--forwarded-allow-ips``, by default only 127.0.0.1).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["Buckets", "RateLimit", "client_key", "credential_of"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Clock = Callable[[], float]

COOKIE = "podium_token"  # the pages' session cookie (pages.COOKIE; not imported: pages imports jinja2)
IDLE_FORGET = 600.0      # seconds after which an unlimited (rate 0) entry that only marks a known token goes


class Buckets:
    """Token buckets by key, the least recently used first.

    Parameters
    ----------
    rate : float
        Refill in requests per second; 0 = unlimited (entries then only remember which tokens are known).
    burst : int
        Capacity: requests allowed at once.
    max_entries : int
        Most buckets kept; beyond it the least recently used are dropped (forgiving their debt, which only
        happens when that many clients were active within ``burst / rate`` seconds).
    """

    def __init__(self, rate: float, burst: int, max_entries: int = 200_000) -> None:
        self.rate = float(rate)
        self.burst = float(burst)
        self.max_entries = max_entries
        # key -> [level, time of the last update, known token]; a bucket refilled by then is full
        self._entries: OrderedDict[str, list[Any]] = OrderedDict()
        self._idle = self.burst / self.rate if self.rate > 0 else IDLE_FORGET

    def __len__(self) -> int:
        return len(self._entries)

    def take(self, key: str, now: float) -> float:
        """Charge one request to ``key``: 0.0 if allowed, else the seconds until one would be."""
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = [self.burst, now, False]
        else:
            self._entries.move_to_end(key)
        wait = 0.0
        if self.rate > 0:
            level = min(self.burst, entry[0] + (now - entry[1]) * self.rate)
            if level >= 1.0 - 1e-9:  # (a client that waited Retry-After must not miss by a rounding)
                level = max(level - 1.0, 0.0)
            else:
                wait = (1.0 - level) / self.rate
            entry[0], entry[1] = level, now
        else:
            entry[1] = now
        self._evict(now)
        return wait

    def known(self, key: str) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry[2]

    def mark(self, key: str, known: bool, now: float) -> None:
        """Remember whether ``key`` is a valid token (creating its full bucket if it has none)."""
        entry = self._entries.get(key)
        if entry is None:
            if not known:
                return
            entry = self._entries[key] = [self.burst, now, False]
        entry[2] = known
        self._evict(now)

    def _evict(self, now: float) -> None:
        # Two of the oldest per call: a bucket untouched for burst / rate seconds is full again, the same as
        # none; popping at least one per request keeps the dict from growing beyond the active clients.
        entries = self._entries
        for _ in range(2):
            if not entries:
                return
            key, entry = next(iter(entries.items()))
            if now - entry[1] < self._idle:
                break
            del entries[key]
        while len(entries) > self.max_entries:
            entries.popitem(last=False)


def credential_of(scope: Scope) -> str | None:
    """The token a request carries: the bearer token of ``Authorization``, else the session cookie."""
    cookie = None
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
        elif name == b"cookie" and cookie is None:
            for part in value.decode("latin-1").split(";"):
                key, _, found = part.strip().partition("=")
                if key == COOKIE and found:
                    cookie = found.strip('"')
    return cookie


def client_key(scope: Scope) -> str:
    """The address a request is limited by: the client's IPv4 address, its IPv6 /64 network, or the peer
    name the server gave (a test client's, a Unix socket's)."""
    client = scope.get("client")
    host = str(client[0]) if client else "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return host


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()[:32]


class RateLimit:
    """ASGI middleware applying the token and address limits (see the module docstring).

    Parameters
    ----------
    app
        The application.
    token_rate, token_burst, address_rate, address_burst
        The limits (:class:`podium.server.Settings`); a rate of 0 turns that limit off.
    verify : async callable
        Is this token valid (known and not revoked)?  Used only while the address limit is on.
    clock : callable
        Seconds, monotonic (injectable for tests).
    html : callable
        The body of a refusal for a page (not under ``/api/``): ``html(status, message) -> bytes``; the API
        gets ``{"detail": message, "field": "rate"}``.
    exempt : tuple of str
        Path prefixes never limited (static files).
    """

    def __init__(self, app: Any, *, token_rate: float, token_burst: int, address_rate: float, address_burst: int,
                 verify: Callable[[str], Awaitable[bool]], clock: Clock = time.monotonic,
                 html: Callable[[int, str], bytes] | None = None, exempt: tuple[str, ...] = ()) -> None:
        self.app = app
        self.tokens = Buckets(token_rate, token_burst)
        self.addresses = Buckets(address_rate, address_burst)
        self.verify = verify
        self.clock = clock
        self.html = html
        self.exempt = exempt

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.exempt):
            await self.app(scope, receive, send)
            return
        token = credential_of(scope)
        now = self.clock()
        if token is None:
            wait = self.addresses.take(client_key(scope), now)
            if wait:
                await self._refuse(scope, send, wait, "this address", self.addresses)
                return
            await self.app(scope, receive, send)
            return
        key = _digest(token)
        checking = self.addresses.rate > 0 and not self.tokens.known(key)
        if checking:
            wait = self.addresses.take(client_key(scope), now)
            if wait:
                await self._refuse(scope, send, wait, "this address (with a token not yet seen valid)",
                                   self.addresses)
                return
            try:
                valid = await self.verify(token)
            except Exception:  # the database failing: the application answers for it (503), not the limiter
                valid = False
            if not valid:
                await self.app(scope, receive, send)  # charged to the address; the app refuses the token
                return
            self.tokens.mark(key, True, now)
        wait = self.tokens.take(key, now)  # (unlimited: 0, and the token is remembered as active)
        if wait:
            await self._refuse(scope, send, wait, "this token", self.tokens)
            return

        async def watch(message: Message) -> None:
            # A token refused as unknown or revoked is charged to its address again from now on.
            if message["type"] == "http.response.start" and message["status"] == 401:
                self.tokens.mark(key, False, self.clock())
            await send(message)

        await self.app(scope, receive, watch if self.addresses.rate > 0 else send)

    async def _refuse(self, scope: Scope, send: Send, wait: float, who: str, buckets: Buckets) -> None:
        seconds = max(1, math.ceil(wait))  # whole seconds (RFC 9110), never less than the wait
        message = (f"Too many requests from {who}: at most {buckets.rate:g} per second, in bursts of up to "
                   f"{buckets.burst:g}; retry in {seconds} s.")
        if self.html is not None and not scope["path"].startswith("/api/"):
            body, kind = self.html(429, message), b"text/html; charset=utf-8"
        else:
            body, kind = json.dumps({"detail": message, "field": "rate"}).encode(), b"application/json"
        await send({"type": "http.response.start", "status": 429, "headers": [
            (b"content-type", kind), (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(seconds).encode())]})
        await send({"type": "http.response.body", "body": body})
