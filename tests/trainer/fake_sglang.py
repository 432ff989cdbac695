"""A local stand-in for an SGLang server: the native HTTP protocol over a real tiny model.

It speaks the shapes of SGLang's ``http_server.py``: ``/generate`` answers ``text``,
``output_ids`` and ``meta_info`` with ``output_token_logprobs`` as
``[logprob, token_id, null]`` triples, ``finish_reason`` as ``{"type": ...}`` and the
``weight_version`` the server holds when it answers; ``/update_weights_from_tensor``
decodes ``serialized_named_tensors`` as SGLang does (base64, then a pickle whose
tensors are shared-memory or CUDA IPC handles), loads them by parameter name and
takes the request's ``weight_version``; ``/update_weight_version`` renames the
weights; ``/model_info`` (and the older ``/get_model_info``) reports the version;
``/pause_generation`` holds new generations until ``/continue_generation``.
The version starts as ``"default"``, SGLang's own default. Sampling and logprobs come
from a real model (a TorchEngine), so what the client receives is what a model
computed, not canned numbers.
"""

from __future__ import annotations

import base64
import json
import pickle
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from transformers import AutoModelForCausalLM

from envfactory.trainer.engines import SamplingParams, TorchEngine


class FakeSGLangServer:
    def __init__(self, model_path: str, seed: int = 0) -> None:
        model = AutoModelForCausalLM.from_pretrained(model_path)
        self.model_path = model_path
        self.engine = TorchEngine(model, seed=seed)
        self.weight_version = "default"
        self.calls: list[str] = []
        self.tensor_payloads: list[int] = []  # entries (TP ranks) per weight update
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
        with self._lock:
            version = self.weight_version  # as SGLang: the version when the answer is built
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
            "weight_version": version,
        }
        if body.get("return_logprob"):
            meta["output_token_logprobs"] = [
                [lp, t, None] for lp, t in zip(gen.logprobs, gen.token_ids, strict=True)
            ]
        return 200, {"text": "", "output_ids": list(gen.token_ids), "meta_info": meta}

    def update_weights_from_tensor(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        entries = body.get("serialized_named_tensors") or []
        self.tensor_payloads.append(len(entries))
        try:
            named = pickle.loads(base64.b64decode(entries[0], validate=True))
            self.engine.load_weights(dict(named), self.engine.version + 1)
        except (IndexError, ValueError, KeyError, pickle.UnpicklingError) as err:
            return 400, {"success": False, "message": f"Failed to update weights: {err}"}
        if body.get("weight_version") is not None:
            self.weight_version = body["weight_version"]
        return 200, {"success": True, "message": "Succeeded to update model weights."}

    def model_info(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "is_generation": True,
            "weight_version": self.weight_version,
        }

    def _route(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.calls.append(path)
        if method == "POST" and path == "/generate":
            return self.generate(body)
        if method == "POST" and path == "/update_weights_from_tensor":
            return self.update_weights_from_tensor(body)
        if method == "POST" and path == "/update_weight_version":
            self.weight_version = str(body["new_version"])
            return 200, {
                "success": True,
                "new_version": self.weight_version,
                "message": f"Weight version updated to {self.weight_version}",
            }
        if method == "GET" and path in ("/model_info", "/get_model_info"):
            return 200, self.model_info()
        if method == "POST" and path == "/pause_generation":
            self._resumed.clear()
            return 200, {"message": "Generation paused successfully.", "status": "ok"}
        if method == "POST" and path == "/continue_generation":
            self._resumed.set()
            return 200, {"message": "Generation continued successfully.", "status": "ok"}
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
