"""Resolve missing tensors (or LFS pointers) from the Hugging Face Hub at a pinned commit.

The file is downloaded with ``huggingface_hub.hf_hub_download`` into the Hub cache (so a
second checkout, or a second run, reuses it), then verified here, because the Hub client
checks only the size: the sha256 must equal the pointer's oid or the content-addressed
file name. A verified file is linked into the dataset root (a symlink to the cache blob,
as the Hub cache itself does; a copy where links are impossible). A bad download is
deleted from the cache so that a retry fetches it again.

Where to fetch from is data, not code: ``hf_eval/data/hub.json`` holds the repo id and the
pinned revision (overridable with ``HF_EVAL_HUB_REPO`` / ``HF_EVAL_HUB_REVISION``). A root
that is itself a Hub cache snapshot (``…/datasets--org--name/snapshots/<commit>/``) uses
that repo and commit. ``HF_HUB_OFFLINE=1`` serves only the cache; it, ``HF_ENDPOINT`` and
``HF_HUB_CACHE`` are read at each call (the Hub client itself reads them at import).

Every failure is a ``DataError`` naming the tensor: no pinned revision, revision missing,
no such object, hash or size mismatch, network off, Hub unreachable.

Xet: ``huggingface_hub`` downloads Xet-backed files (the Hub's storage now) through
``hf_xet`` when it is installed, which this package requires; the sha256 check here is the
same whichever transport brought the bytes.

Failing fast without network: the Hub client retries a failed request with backoff (about
23 s per file). A pinned commit's file that is already in the Hub cache is served from it
without asking the Hub. Otherwise one metadata request, without retries and with a short
timeout (:data:`PROBE_TIMEOUT_S`), goes first; a transport error (no route, refused, DNS,
timeout) fails the tensor at once, says so, and the endpoint is then taken as unreachable
for :data:`UNREACHABLE_FOR_S` seconds, so the next tensors fail at once too.

``huggingface_hub`` is imported inside the functions that call it, on purpose: every
:func:`hf_eval.dataset.open_dataset` builds this resolver, and an audit whose tensors are
all local should not pay the client's import (nor freeze the environment it reads at
import time before a test or a user sets ``HF_HUB_OFFLINE``).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hf_eval.data.errors import DataError
from hf_eval.data.store import Expected, TensorStore

PIN_FILE = Path(__file__).with_name("hub.json")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_TRUE = {"1", "true", "yes", "on"}
#: Seconds the first (unretried) metadata request may take before the Hub counts as down.
PROBE_TIMEOUT_S = 5.0
#: After a transport error, how long an endpoint is taken as unreachable without asking.
UNREACHABLE_FOR_S = 60.0
#: endpoint -> (monotonic time of the failure, what failed)
_unreachable: dict[str, tuple[float, str]] = {}


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP client's network-level errors (``httpx2`` in huggingface_hub 2, else httpx)."""
    found: list[type[BaseException]] = []
    for module in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(module).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


@dataclass(frozen=True)
class HubPin:
    """Which Hub repository and commit hold the tensors this checkout references."""

    repo_id: str
    """The Hub repository, as ``org/name``."""
    revision: str | None
    """The commit (or other revision) to download from; None or empty when nothing is pinned
    yet, in which case every fetch fails rather than asking the Hub."""
    repo_type: str = "dataset"
    """The Hub repository kind: ``dataset``, ``model`` or ``space``."""


def load_pin(path: Path = PIN_FILE) -> HubPin:
    """The pin from ``hub.json``, with the environment overrides applied."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise DataError(path, "file not found") from None
    except json.JSONDecodeError as exc:
        raise DataError(path, f"malformed JSON: {exc.msg}", line=exc.lineno) from None
    for key in ("repo_id", "repo_type", "revision"):
        if key not in data:
            raise DataError(path, "missing key", field=key)
    revision = os.environ.get("HF_EVAL_HUB_REVISION") or data["revision"]
    repo_id = os.environ.get("HF_EVAL_HUB_REPO") or data["repo_id"]
    return HubPin(repo_id=repo_id, revision=revision, repo_type=data["repo_type"])


def pin_from_cache_snapshot(root: Path) -> HubPin | None:
    """The repo and commit of a root inside ``<hub cache>/<type>s--org--name/snapshots/<sha>``."""
    parts = root.resolve().parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "snapshots" and _COMMIT.fullmatch(parts[i + 1]):
            kind, _, name = parts[i - 1].partition("--")
            if kind in ("datasets", "models", "spaces") and "--" in name:
                return HubPin(name.replace("--", "/", 1), parts[i + 1], kind[:-1])
    return None


def offline() -> bool:
    """``HF_HUB_OFFLINE`` as set now (the Hub client itself reads it only at import)."""
    from huggingface_hub import constants

    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE or constants.HF_HUB_OFFLINE


class HubResolver:
    """Downloads ``relpath`` from the pinned Hub revision, verifies it, links it into the root."""

    name = "hub"

    def __init__(self, pin: HubPin | None = None, cache_dir: str | Path | None = None,
                 endpoint: str | None = None) -> None:
        self._pin = pin
        self.cache_dir = cache_dir
        self.endpoint = endpoint

    @classmethod
    def for_root(cls, root: Path) -> HubResolver:
        """The default resolver of a dataset root: its cache snapshot's pin, else ``hub.json``."""
        return cls(pin=pin_from_cache_snapshot(root))

    @property
    def pin(self) -> HubPin:
        return self._pin or load_pin()

    def fetch(self, store: TensorStore, relpath: str, expected: Expected | None) -> bool:
        """Download, verify and place ``relpath``; every failure raises a ``DataError``.

        The message starts with the file's state (missing, or a pointer without content)
        so that a failure here still says what was wrong locally.
        """
        target = store.root / relpath
        state = ("tensor file is a Git LFS pointer with no content" if target.is_file()
                 else "tensor file is missing")
        try:
            if expected is None:
                raise DataError(relpath, "hub: no sha256 is known for this path (neither an LFS "
                                "pointer nor a content-addressed name): refusing unverifiable "
                                "data")
            pin = self.pin
            if not pin.revision:
                raise DataError(relpath, f"hub: no revision pinned for {pin.repo_id} (set "
                                f"'revision' in hf_eval/{PIN_FILE.name} or HF_EVAL_HUB_REVISION)")
            blob = self._download(relpath, pin)
            self._check(store, relpath, blob, expected, pin)
        except DataError as err:
            raise DataError(err.file, f"{state}; {err.rule}", line=err.line,
                            field=err.field) from None
        self._place(blob, target)
        return True

    # ----------------------------------------------------------------- steps
    def _endpoint(self) -> str:
        from huggingface_hub import constants

        return (self.endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")

    def _cached(self, relpath: str, pin: HubPin) -> Path | None:
        """The file from the Hub cache when this pinned commit already holds it (no network)."""
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        try:
            return Path(hf_hub_download(pin.repo_id, relpath, repo_type=pin.repo_type,
                                        revision=pin.revision, cache_dir=self._cache_dir(),
                                        local_files_only=True))
        except (LocalEntryNotFoundError, FileNotFoundError):
            return None

    def _cache_dir(self) -> str | Path | None:
        return self.cache_dir or os.environ.get("HF_HUB_CACHE")

    def _probe(self, relpath: str, pin: HubPin) -> None:
        """One metadata request without retries: a network failure is reported at once."""
        from huggingface_hub import get_hf_file_metadata, hf_hub_url

        endpoint = self._endpoint()
        where = f"{pin.repo_id}@{pin.revision}"
        down = _unreachable.get(endpoint)
        if down is not None and time.monotonic() - down[0] < UNREACHABLE_FOR_S:
            raise DataError(relpath, f"hub: cannot reach {endpoint} for {where} (it failed "
                            f"{time.monotonic() - down[0]:.0f} s ago: {down[1]}); no network? "
                            "set HF_HUB_OFFLINE=1 to use only the Hub cache")
        url = hf_hub_url(pin.repo_id, relpath, repo_type=pin.repo_type, revision=pin.revision,
                         endpoint=endpoint)
        try:
            get_hf_file_metadata(url, timeout=PROBE_TIMEOUT_S, retry_on_errors=False)
        except _transport_errors() as exc:
            cause = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            _unreachable[endpoint] = (time.monotonic(), cause.strip())
            raise DataError(relpath, f"hub: cannot reach {endpoint} for {where} ({cause.strip()})"
                            "; no network? failing at once rather than retrying; set "
                            "HF_HUB_OFFLINE=1 to use only the Hub cache") from None
        _unreachable.pop(endpoint, None)

    def _download(self, relpath: str, pin: HubPin) -> Path:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import (
            HfHubHTTPError,
            LocalEntryNotFoundError,
            OfflineModeIsEnabled,
            RemoteEntryNotFoundError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        where = f"{pin.repo_id}@{pin.revision}"
        is_offline = offline()
        try:
            cached = self._cached(relpath, pin) if _COMMIT.fullmatch(pin.revision or "") else None
            if cached is not None:
                return cached
            if not is_offline:
                self._probe(relpath, pin)
            local = hf_hub_download(pin.repo_id, relpath, repo_type=pin.repo_type,
                                    revision=pin.revision, cache_dir=self._cache_dir(),
                                    endpoint=self._endpoint(), local_files_only=is_offline)
        except RevisionNotFoundError:
            raise DataError(relpath, f"hub: revision missing: {pin.revision} is not a "
                            f"revision of {pin.repo_id}") from None
        except RepositoryNotFoundError:
            raise DataError(relpath, f"hub: repository {pin.repo_id} not found (or private "
                            "without a token)") from None
        except (OfflineModeIsEnabled, LocalEntryNotFoundError) as exc:
            if is_offline or isinstance(exc, OfflineModeIsEnabled):
                raise DataError(relpath, f"hub: network off (HF_HUB_OFFLINE=1) and not in the "
                                f"Hub cache for {where}") from None
            raise DataError(relpath, f"hub: cannot reach the Hub for {where} and the file is "
                            f"not in its cache ({_cause(exc)})") from None
        except RemoteEntryNotFoundError:  # remote 404 for the path, or cached as non-existent
            raise DataError(relpath, f"hub: no object: {where} has no file at this path") from None
        except HfHubHTTPError as exc:
            raise DataError(relpath, f"hub: HTTP error for {where}: "
                            f"{str(exc).splitlines()[0]}") from None
        return Path(local)

    def _check(self, store: TensorStore, relpath: str, local: Path, expected: Expected,
               pin: HubPin) -> None:
        blob = local.resolve()
        size = blob.stat().st_size
        problem = None
        if expected.size is not None and size != expected.size:
            problem = f"size mismatch: {size} bytes, the pointer records {expected.size}"
        else:
            actual = store.verified.sha256(blob)
            if actual != expected.sha256:
                problem = f"hash mismatch: the file hashes to {actual}, expected {expected.sha256}"
        if problem:
            # Never keep bad bytes in the cache: the next attempt must download again.
            local.unlink(missing_ok=True)
            blob.unlink(missing_ok=True)
            raise DataError(relpath, f"hub: {problem} (downloaded from {pin.repo_id}@"
                            f"{pin.revision}; removed from the cache)")

    @staticmethod
    def _place(local: Path, target: Path) -> None:
        """Put the verified bytes at ``target`` atomically: a symlink to the blob, else a copy."""
        blob = local.resolve()
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        os.close(fd)
        tmp = Path(tmp_name)
        tmp.unlink()
        try:
            try:
                tmp.symlink_to(blob)
            except OSError:
                shutil.copyfile(blob, tmp)
            tmp.replace(target)
        finally:
            tmp.unlink(missing_ok=True)


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__ or exc.__context__ or exc
    return f"{type(inner).__name__}: {str(inner).splitlines()[0] if str(inner) else ''}".strip()
