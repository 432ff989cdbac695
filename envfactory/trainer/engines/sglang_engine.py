"""A rollout engine client for an SGLang server, over its native HTTP API.

Protocol used (SGLang ``http_server.py`` / ``io_struct.py``):
- ``POST /generate`` with ``input_ids``, ``sampling_params`` (``max_new_tokens``,
  ``temperature``, ``stop_token_ids``) and ``return_logprob: true``; the answer's
  ``meta_info.output_token_logprobs`` is a list of ``[logprob, token_id, text|null]``,
  ``meta_info.finish_reason.type`` is ``stop`` / ``length`` / ``abort`` and
  ``meta_info.weight_version`` names the weights the server held when it answered;
- ``POST /update_weights_from_tensor`` with ``serialized_named_tensors`` (one entry
  per tensor-parallel rank: base64 of a ``multiprocessing`` pickle of
  ``[(name, tensor), ...]``), ``flush_cache`` and ``weight_version``, answering
  ``{"success", "message"}``;
- ``POST /update_weight_version`` (``new_version``), ``GET /model_info`` (carries
  ``weight_version``; older servers: ``/get_model_info``);
- ``POST /pause_generation`` (``mode``) and ``POST /continue_generation``.

Weight sync is from tensors, never through a checkpoint on disk. What travels over
HTTP is a handle, not the bytes: a CUDA tensor pickles as a CUDA IPC handle, a CPU
tensor (pickled under torch's ``file_system`` sharing strategy) as the name of a
shared-memory segment. So the trainer and the server must share a host (SGLang's
``update_weights_from_tensor`` contract); across hosts SGLang's NCCL path
(``/init_weights_update_group`` + ``/update_weights_from_distributed``) is the one
to add. Tensors are copied before they are shared, so the trainer's own parameters
never move into shared memory.

Versions. The engine names the server's weights ``str(version)`` at start and on
every sync. A segment's version is the *older* of the version this client knew when
the request started and the ``weight_version`` the server reports with the answer:
a request retracted by a pause finishes on newer weights (the server then reports
the newer number, but its first tokens were sampled with the old ones), and a server
that lags the client (a sync in flight, an injected lag) reports the older number.
Staleness is thus never under-estimated. A version the client never set (``default``
after a server restart, another trainer's name) is an error: the server no longer
holds the weights this trainer thinks it does.
"""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Iterable
from multiprocessing.reduction import ForkingPickler
from typing import Any

import httpx
import torch
import torch.multiprocessing

from envfactory.core.errors import RolloutEngineError
from envfactory.trainer.engines.base import Generation, SamplingParams

_FINISH = {"stop": "stop", "length": "length", "abort": "aborted"}
_SHARING_LOCK = threading.Lock()


class SGLangError(RolloutEngineError):
    """The server refused or failed a request; the message carries its answer."""


def encode_named_tensors(named: Iterable[tuple[str, torch.Tensor]], device: str) -> str:
    """One ``serialized_named_tensors`` entry: base64 of a multiprocessing pickle.

    Each tensor is detached and copied to ``device`` first (a handle to a private copy,
    never to the trainer's live parameter)."""
    copies = [(name, t.detach().to(device, copy=True)) for name, t in named]
    buf = io.BytesIO()
    with _SHARING_LOCK:
        # CPU storages must travel by shared-memory *name*: the default (file
        # descriptors) needs a handshake only processes of one family can make
        previous = torch.multiprocessing.get_sharing_strategy()
        torch.multiprocessing.set_sharing_strategy("file_system")
        try:
            ForkingPickler(buf).dump(copies)
        finally:
            torch.multiprocessing.set_sharing_strategy(previous)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


class SGLangEngine:
    def __init__(
        self,
        base_url: str,
        version: int = 0,
        timeout_s: float = 600.0,
        pause_mode: str = "retract",
        tp_size: int = 1,
        weight_device: str | None = None,
    ) -> None:
        self._client = httpx.Client(base_url=base_url, timeout=timeout_s)
        self._url = base_url
        self._version = version
        self._pause_mode = pause_mode
        self._tp_size = tp_size
        self._device = weight_device or _default_device()
        self._post("/update_weight_version", {"new_version": str(version)})

    @property
    def version(self) -> int:
        return self._version

    def close(self) -> None:
        self._client.close()

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self._client.post(path, json=payload)
        except httpx.HTTPError as err:
            raise SGLangError(
                f"SGLang server at {self._url} did not answer {path}: {err}",
                hint="is the server up? start it with python -m sglang.launch_server",
            ) from err
        body = response.json() if response.content else {}
        if response.status_code != 200 or body.get("success") is False:
            raise SGLangError(f"{path} answered {response.status_code}: {body}")
        return body

    def generate(self, prompt_ids: list[int], params: SamplingParams) -> Generation:
        version = self._version
        body = self._post(
            "/generate",
            {
                "input_ids": list(prompt_ids),
                "sampling_params": {
                    "max_new_tokens": params.max_new_tokens,
                    "temperature": params.temperature,
                    "stop_token_ids": list(params.stop_token_ids),
                },
                "return_logprob": True,
            },
        )
        return parse_generate_response(body, version)

    def update_weights(self, model: torch.nn.Module, version: int) -> None:
        entry = encode_named_tensors(model.named_parameters(), self._device)
        self.pause()
        try:
            self._post(
                "/update_weights_from_tensor",
                {
                    "serialized_named_tensors": [entry] * self._tp_size,
                    "flush_cache": True,  # cached prefixes hold KV of the old weights
                    "weight_version": str(version),
                },
            )
            self._version = version
        finally:
            self.resume()

    def pause(self) -> None:
        self._post("/pause_generation", {"mode": self._pause_mode})

    def resume(self) -> None:
        self._post("/continue_generation", {})

    def server_weight_version(self) -> str | None:
        """The ``weight_version`` in the server's model info (``None`` if it has none)."""
        for path in ("/model_info", "/get_model_info"):
            response = self._client.get(path)
            if response.status_code == 200:
                version = response.json().get("weight_version")
                return None if version is None else str(version)
        raise SGLangError(f"{self._url} answers neither /model_info nor /get_model_info")


def served_version(meta: dict[str, Any], requested_at: int) -> int:
    """The segment's version: min(client's at request, server's at answer); see module doc."""
    raw = meta.get("weight_version")
    if raw is None:
        return requested_at  # a server too old to report it: the client's number
    try:
        reported = int(str(raw))
    except ValueError:
        raise SGLangError(
            f"the server reports weight_version {raw!r}, a version this trainer never set",
            hint="the server restarted or another trainer drives it; restart training",
        ) from None
    return min(reported, requested_at)


def parse_generate_response(body: dict[str, Any], version: int) -> Generation:
    """Turn a native ``/generate`` answer into a Generation (tokens exactly as sampled)."""
    meta = body.get("meta_info") or {}
    entries = meta.get("output_token_logprobs")
    if entries is None:
        raise SGLangError(
            "/generate answered without output_token_logprobs (return_logprob ignored?)"
        )
    tokens = tuple(int(entry[1]) for entry in entries)
    logprobs = tuple(float(entry[0]) for entry in entries)
    finish = meta.get("finish_reason") or {}
    kind = finish.get("type") if isinstance(finish, dict) else str(finish)
    reason = _FINISH.get(str(kind), "aborted")
    return Generation(tokens, logprobs, reason, served_version(meta, version))  # type: ignore[arg-type]
