"""A rollout engine client for an SGLang server, over its native HTTP API.

Protocol used (SGLang ``http_server.py`` / ``io_struct.py``):
- ``POST /generate`` with ``input_ids``, ``sampling_params`` (``max_new_tokens``,
  ``temperature``, ``stop_token_ids``) and ``return_logprob: true``; the answer's
  ``meta_info.output_token_logprobs`` is a list of ``[logprob, token_id, text|null]``,
  ``meta_info.finish_reason.type`` is ``stop`` / ``length`` / ``abort`` and
  ``meta_info.weight_version`` names the weights that served the request;
- ``POST /update_weights_from_disk`` with ``model_path`` and ``weight_version``,
  answering ``{"success", "message", "num_paused_requests"}``;
- ``POST /pause_generation`` (``mode``) and ``POST /continue_generation``.

Weight sync writes the trainer's weights as a Hugging Face checkpoint under
``weights_dir/v{version}`` (safetensors), then asks the server to load it while
generation is paused. Token versions: a request that was retracted by the pause
finishes on the new weights, so the client records, conservatively, the version it
knew when the request started (staleness is over-, never under-estimated); the
logprobs SGLang reports are the ones actually sampled, which is all DIS needs.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx
import torch

from envfactory.core.errors import RolloutEngineError
from envfactory.trainer.engines.base import Generation, SamplingParams

_FINISH = {"stop": "stop", "length": "length", "abort": "aborted"}


class SGLangError(RolloutEngineError):
    """The server refused or failed a request; the message carries its answer."""


class SGLangEngine:
    def __init__(
        self,
        base_url: str,
        weights_dir: Path,
        version: int = 0,
        timeout_s: float = 600.0,
        keep_checkpoints: int = 2,
        pause_mode: str = "retract",
    ) -> None:
        self._client = httpx.Client(base_url=base_url, timeout=timeout_s)
        self._weights_dir = Path(weights_dir)
        self._version = version
        self._keep = keep_checkpoints
        self._pause_mode = pause_mode

    @property
    def version(self) -> int:
        return self._version

    def close(self) -> None:
        self._client.close()

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        response = self._client.post(path, json=payload)
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
        path = self._weights_dir / f"v{version}"
        model.save_pretrained(path, safe_serialization=True)  # type: ignore[operator]
        self.pause()
        try:
            self._post(
                "/update_weights_from_disk",
                {"model_path": str(path), "weight_version": str(version)},
            )
            self._version = version
        finally:
            self.resume()
        self._prune(version)

    def _prune(self, version: int) -> None:
        # the server has loaded the new weights; old directories are only disk use
        for old in self._weights_dir.glob("v*"):
            suffix = old.name[1:]
            if suffix.isdigit() and int(suffix) <= version - self._keep:
                shutil.rmtree(old, ignore_errors=True)

    def pause(self) -> None:
        self._post("/pause_generation", {"mode": self._pause_mode})

    def resume(self) -> None:
        self._post("/continue_generation", {})

    def server_weight_version(self) -> str | None:
        response = self._client.get("/get_weight_version")
        response.raise_for_status()
        return response.json().get("weight_version")


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
    return Generation(tokens, logprobs, _FINISH.get(str(kind), "aborted"), version)  # type: ignore[arg-type]
