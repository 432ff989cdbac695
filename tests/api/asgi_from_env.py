"""An ASGI app factory for tests that run the API as its own process, configured by the
environment as a deployment would be:

    ENVFACTORY_DATABASE_URL=… python -m uvicorn tests.api.asgi_from_env:app --factory
"""

from __future__ import annotations

from fastapi import FastAPI

from envfactory.api import create_app
from envfactory.core.settings import load_settings


def app() -> FastAPI:
    return create_app(load_settings())
