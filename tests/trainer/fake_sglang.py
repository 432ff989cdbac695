"""A local stand-in for an SGLang server: the native HTTP protocol over a real tiny model.

It speaks the shapes of SGLang's ``http_server.py``: ``/generate`` answers ``text``,
``output_ids`` and ``meta_info`` with ``output_token_logprobs`` as
``[logprob, token_id, null]`` triples, ``finish_reason`` as ``{"type": ...}`` and the
serving ``weight_version``; ``/update_weights_from_disk`` loads a Hugging Face
checkpoint directory and answers ``success`` / ``message`` / ``num_paused_requests``;
``/pause_generation`` holds new generations until ``/continue_generation``.
Sampling and logprobs come from a real model (a TorchEngine), so what the client
receives is what a model computed, not canned numbers.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from transformers import AutoModelForCausalLM

from envfactory.trainer.engines import SamplingParams, TorchEngine


class FakeSGLangServer:
    def __init__(self, model_path: str, seed: int = 0) -> None:
        model = AutoModelForCausalLM.from_pretrained(model_path)
        self.engine = TorchEngine(model, seed=seed)
        self.weight_version = "default"
        self.calls: list[str] = []
        self.waiting = 0
        self._resumed = threading.Event()
        self._resumed.set()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeSGLangServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._resumed.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def generate(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.waiting += 1
        self._resumed.wait()
        with self._lock:
            self.waiting -= 1
        sp = body.get("sampling_params") or {}
        params = SamplingParams(
            max_new_tokens=int(sp.get("max_new_tokens", 16)),
            temperature=float(sp.get("temperature", 1.0)),
            stop_token_ids=tuple(sp.get("stop_token_ids") or ()),
        )
        gen = self.engine.generate(list(body["input_ids"]), params)
        if gen.finish_reason == "stop":
            finish = {"type": "stop", "matched": gen.token_ids[-1]}
        else:
            finish = {"type": "length", "length": len(gen.token_ids)}
        meta: dict[str, Any] = {
            "id": uuid.uuid4().hex,
            "finish_reason": finish,
            "prompt_tokens": len(body["input_ids"]),
            "completion_tokens": len(gen.token_ids),
            "cached_tokens": 0,
            "weight_version": self.weight_version,
        }
        if body.get("return_logprob"):
            meta["output_token_logprobs"] = [
                [lp, t, None] for lp, t in zip(gen.logprobs, gen.token_ids, strict=True)
            ]
        return 200, {"text": "", "output_ids": list(gen.token_ids), "meta_info": meta}

    def update_weights_from_disk(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        try:
            model = AutoModelForCausalLM.from_pretrained(body["model_path"])
        except OSError as err:
            return 400, {
                "success": False,
                "message": f"Failed to load weights: {err}",
                "num_paused_requests": 0,
            }
        self.engine.update_weights(model, self.engine.version + 1)
        message = "Succeeded to update model weights."
        if body.get("weight_version") is not None:
            self.weight_version = body["weight_version"]
            message += f" Weight version updated to {self.weight_version}."
        return 200, {"success": True, "message": message, "num_paused_requests": 0}

    def _route(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.calls.append(path)
        if method == "POST" and path == "/generate":
            return self.generate(body)
        if method == "POST" and path == "/update_weights_from_disk":
            return self.update_weights_from_disk(body)
        if method == "POST" and path == "/pause_generation":
            self._resumed.clear()
            return 200, {"message": "Generation paused successfully.", "status": "ok"}
        if method == "POST" and path == "/continue_generation":
            self._resumed.set()
            return 200, {"message": "Generation continued successfully.", "status": "ok"}
        if method == "GET" and path == "/get_weight_version":
            return 200, {"weight_version": self.weight_version}
        return 404, {"detail": "Not Found"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, method: str) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}") if length else {}
                status, payload = server._route(method, self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                self._answer("POST")

            def do_GET(self) -> None:  # noqa: N802
                self._answer("GET")

            def log_message(self, *args: object) -> None:
                return None

        return Handler
