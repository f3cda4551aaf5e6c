"""A client for the OpenAI-compatible chat-completions protocol, used only by extraction.

llama.cpp's server, vLLM, Ollama and OpenAI all answer ``POST {base_url}/chat/completions``, so
one small client reaches any of them. It lives here, behind the :class:`Chat` interface, and only
:mod:`workbench.extraction.run` imports it (a test checks): models propose candidates offline and
are never called at answer time.

It speaks HTTP through :mod:`http.client` rather than ``urllib.request`` for one reason: a total
deadline. urllib's timeout bounds each socket operation, so a server that sends its headers and
then dribbles the body a byte a second never times out; here every blocking step gets only the
time left. Proxies from the environment (``https_proxy``, ``no_proxy``) are honoured, except for
loopback, where a local model server is never behind one.

Every failure is a :class:`~workbench.errors.ModelUnavailable` in plain words: refused, no such
host, HTTP status with the start of the body, a timeout with its seconds, a body that is not JSON,
an answer without ``choices[0].message.content``.

>>> OpenAIChat("http://127.0.0.1:8080/v1/", "m").endpoint
'http://127.0.0.1:8080/v1/chat/completions'
>>> OpenAIChat("http://127.0.0.1:8080/v1/chat/completions", "m").endpoint
'http://127.0.0.1:8080/v1/chat/completions'
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from workbench.errors import Invalid, ModelUnavailable

KEY_ENV = "WORKBENCH_LLM_KEY"
URL_ENV = "WORKBENCH_LLM_URL"
MODEL_ENV = "WORKBENCH_LLM_MODEL"
MAX_BODY = 32 * 1024 * 1024  # an answer larger than this is not a chat completion of one chunk
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


@dataclass(frozen=True)
class Reply:
    """The part of a chat completion extraction uses: the text, and why generation stopped
    (``"length"`` means the model was cut off, which explains JSON that ends mid-way)."""

    content: str
    finish_reason: str | None = None


class Chat(Protocol):
    """What extraction needs from a model: messages in, one reply out. Tests may inject a fake."""

    @property
    def model(self) -> str: ...

    def complete(self, messages: Sequence[Mapping[str, str]]) -> Reply: ...


def _short(body: bytes | str, limit: int = 200) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(text) > limit else "") if text else "(empty)"


@dataclass(frozen=True)
class OpenAIChat:
    """``POST {base_url}/chat/completions``, non-streaming, temperature 0, JSON-object output.

    ``base_url`` is what the server documents as its OpenAI base (``http://127.0.0.1:8080/v1``
    for llama.cpp, ``http://127.0.0.1:11434/v1`` for Ollama, ``https://api.openai.com/v1``); a
    URL that already ends in ``/chat/completions`` is used as it is. ``api_key`` is sent as a
    bearer token; ``None`` takes ``$WORKBENCH_LLM_KEY`` (and no key sends none).
    """

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    endpoint: str = field(init=False)

    def __post_init__(self) -> None:
        url = self.base_url.strip().rstrip("/")
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Invalid(f"the model server URL must be http(s)://host[:port][/path], not {self.base_url!r}")
        if not self.model.strip():
            raise Invalid("name the model (--model, or $WORKBENCH_LLM_MODEL)")
        if not self.timeout > 0:
            raise Invalid(f"the timeout must be a positive number of seconds, not {self.timeout!r}")
        if not url.endswith("/chat/completions"):
            url += "/chat/completions"
        object.__setattr__(self, "endpoint", url)
        if self.api_key is None and os.environ.get(KEY_ENV):
            object.__setattr__(self, "api_key", os.environ[KEY_ENV])

    def request_body(self, messages: Sequence[Mapping[str, str]]) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "stream": False,
        }

    def complete(self, messages: Sequence[Mapping[str, str]]) -> Reply:
        """One chat completion. Raises ModelUnavailable for every way the server can fail."""
        body = json.dumps(self.request_body(messages), ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "workbench"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        status, raw = self._post(body, headers)
        if status >= 300:
            raise ModelUnavailable(
                f"the model server answered HTTP {status}: {_short(raw)}", where=self.endpoint, http_status=status
            )
        try:
            answer = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):  # RecursionError: nested too deep
            said = _short(raw)
            raise ModelUnavailable(f"the model server's answer is not JSON: {said}", where=self.endpoint) from None
        try:
            choice = answer["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content, choice = None, None
        if not isinstance(content, str):
            raise ModelUnavailable(
                f"the model server's answer has no choices[0].message.content: {_short(raw)}", where=self.endpoint
            )
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        return Reply(content, reason if isinstance(reason, str) else None)

    # ------------------------------------------------------------------ transport

    def _connection(self, deadline: float) -> tuple[http.client.HTTPConnection, str]:
        """A connection to the server (or its proxy) and the request target to send."""
        parts = urllib.parse.urlsplit(self.endpoint)
        host, https = parts.hostname or "", parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        proxy = None if host in _LOOPBACK or urllib.request.proxy_bypass(host) else urllib.request.getproxies().get(
            parts.scheme)
        left = max(deadline - time.monotonic(), 0.001)
        if proxy:
            p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            if not https:  # a plain HTTP proxy takes the absolute URL
                return http.client.HTTPConnection(p.hostname or "", p.port or 80, timeout=left), self.endpoint
            tunnel = http.client.HTTPSConnection(p.hostname or "", p.port or 80, timeout=left,
                                                 context=ssl.create_default_context())
            tunnel.set_tunnel(host, port)
            return tunnel, target
        if https:
            return http.client.HTTPSConnection(host, port, timeout=left, context=ssl.create_default_context()), target
        return http.client.HTTPConnection(host, port, timeout=left), target

    def _post(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """Status and body, all within ``timeout`` seconds in total."""
        deadline = time.monotonic() + self.timeout
        conn, target = self._connection(deadline)
        try:
            conn.connect()
            self._left(conn, deadline)
            conn.request("POST", target, body=body, headers=headers)
            self._left(conn, deadline)
            response = conn.getresponse()
            chunks, size = [], 0
            while True:
                self._left(conn, deadline)
                chunk = response.read1(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_BODY:
                    raise ModelUnavailable(f"the model server's answer is larger than {MAX_BODY} bytes",
                                           where=self.endpoint)
                chunks.append(chunk)
            return response.status, b"".join(chunks)
        except TimeoutError:
            raise ModelUnavailable(
                f"the model server did not answer within {self.timeout:g} seconds", where=self.endpoint
            ) from None
        except socket.gaierror as exc:
            said = f"cannot find the model server's host ({exc.strerror})"
            raise ModelUnavailable(said, where=self.endpoint) from None
        except ConnectionRefusedError:
            raise ModelUnavailable("connection refused: is the model server running at this URL?",
                                   where=self.endpoint) from None
        except ssl.SSLError as exc:
            raise ModelUnavailable(f"TLS failed: {exc.reason or exc}", where=self.endpoint) from None
        except (OSError, http.client.HTTPException) as exc:
            said = str(exc) or type(exc).__name__
            raise ModelUnavailable(f"the connection to the model server failed: {said}", where=self.endpoint) from None
        finally:
            conn.close()

    def _left(self, conn: http.client.HTTPConnection, deadline: float) -> None:
        """Give the next blocking step only the time left, so the whole exchange has one deadline."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if conn.sock is not None:
            conn.sock.settimeout(left)
