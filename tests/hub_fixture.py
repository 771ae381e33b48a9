"""A local HTTP server that answers ``resolve/`` requests the way the Hugging Face Hub does.

THIS IS A TEST FIXTURE, NOT THE HUB. It serves files of one dataset repository from
memory, at known commits, so the Hub code path (``huggingface_hub.hf_hub_download`` with
``HF_ENDPOINT`` pointing here) runs offline:

- ``HEAD|GET /datasets/<repo>/resolve/<revision>/<path>`` answers like the Hub does for an
  LFS file: ``302`` to a CDN URL with ``X-Repo-Commit``, ``X-Linked-Etag`` (the sha256)
  and ``X-Linked-Size``; unknown revisions, repos and paths get ``404`` with the Hub's
  ``X-Error-Code`` (``RevisionNotFound``, ``RepoNotFound``, ``EntryNotFound``);
- the CDN is the same server reached as ``localhost`` rather than ``127.0.0.1`` (another
  host to the client, so it behaves as with a real CDN redirect): ``GET /cdn/<sha256>``.

It counts the body bytes it serves, so tests can show that touching one row downloads
exactly that row's tensors, and it can serve corrupted bytes of the right size (the Hub
client checks only sizes, so the harness's own sha256 check must catch them).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote


@dataclass
class FakeHub:
    """In-memory repository state of the fixture, and what it has served."""

    repo_id: str
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    corrupt: set[str] = field(default_factory=set)  # sha256s served with one byte flipped
    served: list[tuple[str, int]] = field(default_factory=list)  # (sha256, bytes) per GET
    port: int = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add_commit(self, commit: str, files: dict[str, bytes], branch: str = "main") -> None:
        self.commits[commit] = dict(files)
        self.branches[branch] = commit

    def add_tree(self, commit: str, root: Path, pattern: str = "blob/**/*.safetensors") -> None:
        """Publish every file of ``root`` matching ``pattern`` at ``commit``."""
        files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.glob(pattern)
                 if p.is_file()}
        self.add_commit(commit, files)

    @property
    def bytes_served(self) -> int:
        return sum(n for _, n in self.served)

    def _by_sha(self, sha: str) -> bytes | None:
        for files in self.commits.values():
            for data in files.values():
                if hashlib.sha256(data).hexdigest() == sha:
                    return data
        return None


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep test output clean
            pass

        def _error(self, code: int, error_code: str, commit: str | None = None) -> None:
            self.send_response(code)
            self.send_header("X-Error-Code", error_code)
            self.send_header("X-Error-Message", error_code)
            if commit:
                self.send_header("X-Repo-Commit", commit)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _resolve(self, head: bool) -> None:
            path = unquote(self.path.split("?", 1)[0])
            if path.startswith("/cdn/"):
                sha = path.removeprefix("/cdn/")
                data = hub._by_sha(sha)
                if data is None:
                    return self._error(404, "EntryNotFound")
                if sha in hub.corrupt:
                    data = data[:-1] + bytes([data[-1] ^ 0xFF])
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", f'"{sha}"')
                self.end_headers()
                if not head:
                    self.wfile.write(data)
                    hub.served.append((sha, len(data)))
                return None
            prefix = f"/datasets/{hub.repo_id}/resolve/"
            if not path.startswith(prefix):
                return self._error(404, "RepoNotFound")
            revision, _, relpath = path.removeprefix(prefix).partition("/")
            commit = hub.branches.get(revision, revision)
            if commit not in hub.commits:
                return self._error(404, "RevisionNotFound")
            data = hub.commits[commit].get(relpath)
            if data is None:
                return self._error(404, "EntryNotFound", commit)
            sha = hashlib.sha256(data).hexdigest()
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{hub.port}/cdn/{sha}")
            self.send_header("X-Repo-Commit", commit)
            self.send_header("X-Linked-Etag", f'"{sha}"')
            self.send_header("X-Linked-Size", str(len(data)))
            self.send_header("ETag", f'"{sha}"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None

        def do_HEAD(self) -> None:  # noqa: N802 (http.server's naming)
            self._resolve(head=True)

        def do_GET(self) -> None:  # noqa: N802
            self._resolve(head=False)

    return Handler


class HubServer:
    """Runs a :class:`FakeHub` on a free local port in a background thread."""

    def __init__(self, hub: FakeHub) -> None:
        self.hub = hub
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
        hub.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self.hub

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
