"""An ASGI app factory for tests that run the API as its own process, configured by the
environment as a deployment would be:

    ENVFACTORY_DATABASE_URL=… python -m uvicorn tests.api.asgi_from_env:app --factory
"""

from __future__ import annotations

from fastapi import FastAPI

from envfactory.api import create_app
from envfactory.api.app import freeze_heap
from envfactory.core.settings import load_settings


def app() -> FastAPI:
    built = create_app(load_settings())
    freeze_heap()  # as `envfactory review serve` does
    return built
