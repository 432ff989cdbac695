"""One settings object, loaded once at the process edge and passed down as typed sub-configs.

Precedence: explicit argument > ``ENVFACTORY_*`` environment variable > default.
Nested fields use ``__``: ``ENVFACTORY_SANDBOX__POOL_SIZE=4``. Nothing below the edge
(CLI command, worker main, API app factory) reads the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class _Sub(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SandboxSettings(_Sub):
    base_image: str | None = None  # None → build the local debootstrap base image
    from_map: dict[str, str] = Field(default_factory=dict)  # extra "public:tag" → local image
    map_public_images: bool = True  # FROM python:*/ubuntu:*/debian:* → local base images
    pool_size: int = Field(default=2, ge=1)
    #: containers kept created and started ahead of demand for each kind a caller declares
    #: (a gate run: its verification containers), besides the `pool_size` in use; 0 = off
    standby: int = Field(default=2, ge=0)
    build_network: bool = True  # builds may reach package registries
    build_timeout_s: int = Field(default=900, ge=10)
    runtime: Literal["auto", "runc", "runsc"] = "runc"
    output_cap_bytes: int = Field(default=1_000_000, ge=1024)
    docker_timeout_s: int = Field(default=300, ge=10)  # client timeout for builds/imports
    #: how often the disk watchdog measures an idle sandbox (engines without storage-opt);
    #: it measures sooner when a sandbox's usage grows towards its quota
    disk_poll_s: float = Field(default=0.5, gt=0)
    #: the janitor (workers, `envfactory up`) removes sandboxes of dead owners this often
    janitor_period_s: float = Field(default=120.0, gt=0)
    #: sandboxes owned by another host are removed only once this old (their owner's
    #: liveness cannot be checked from here)
    janitor_foreign_ttl_s: float = Field(default=86_400.0, gt=0)


class TemporalSettings(_Sub):
    address: str | None = None  # None → start the embedded dev server
    namespace: str = "default"
    api_key: str | None = None
    dev_port: int = 7233
    task_queue_agents: str = "agents"
    task_queue_sandbox: str = "sandbox"


class AgentSettings(_Sub):
    backend: Literal["scripted", "openai"] = "scripted"
    model: str = "scripted"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.2
    max_turns: int = Field(default=40, ge=1)
    max_tokens: int = Field(default=4096, ge=16)
    context_window: int = Field(default=128_000, ge=1024)
    wall_time_s: int = Field(default=1800, ge=1)
    request_timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    token_budget: int | None = Field(default=None, ge=1)  # prompt+completion over a run
    compact_at: float = Field(default=0.8, gt=0, le=1)  # fraction of context_window


class AgentsSettings(_Sub):
    research: AgentSettings = AgentSettings()
    judge: AgentSettings = AgentSettings()
    verifier: AgentSettings = AgentSettings()
    red_team: AgentSettings = AgentSettings()


class GateSettings(_Sub):
    repeats: int = Field(default=3, ge=1)
    judges: int = Field(default=2, ge=1)
    max_patch_rounds: int = Field(default=2, ge=0)
    #: mutants per environment for the gate battery's mutation score; 0 = off. Off by
    #: default for cost: every surviving mutant is verified on every gate state (about 70
    #: with two unsolved states and the probe library), minutes per environment on 2 cores.
    mutation_max: int = Field(default=0, ge=0)
    #: a score (killed / non-equivalent mutants) below this sends the environment to review
    mutation_min_score: float = Field(default=0.8, ge=0.0, le=1.0)


class ApiSettings(_Sub):
    host: str = "127.0.0.1"
    port: int = 8600
    #: origins besides the server's own (scheme://host[:port]) whose form posts the review
    #: pages accept, e.g. ["https://review.example.com"] behind a proxy
    allowed_origins: tuple[str, ...] = ()
    #: the largest request body accepted (JSON or form); larger ones get 413 unread
    max_request_bytes: int = Field(default=1 << 20, ge=1024)


class PackSettings(_Sub):
    #: a folder of trusted Ed25519 public keys (*.pub, PEM). When set, `pack import` and
    #: `train --pack` refuse a pack that is unsigned or signed by a key not in it.
    trust_dir: Path | None = None


class SeedLimits(_Sub):
    max_attachments: int = Field(default=32, ge=0)
    max_attachment_bytes: int = Field(default=5_000_000, ge=1)
    max_total_bytes: int = Field(default=20_000_000, ge=1)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ENVFACTORY_", env_nested_delimiter="__", frozen=True, extra="ignore"
    )

    home: Path = Path(".envfactory")
    database_url: str | None = None  # None → SQLite under home
    sandbox: SandboxSettings = SandboxSettings()
    temporal: TemporalSettings = TemporalSettings()
    agents: AgentsSettings = AgentsSettings()
    gates: GateSettings = GateSettings()
    api: ApiSettings = ApiSettings()
    seeds: SeedLimits = SeedLimits()
    #: `envfactory review decide` decides as the reviewer this token belongs to
    reviewer_token: SecretStr | None = None
    packs: PackSettings = PackSettings()
    # The name for the base-image override; same as ENVFACTORY_SANDBOX__BASE_IMAGE.
    base_image: str | None = None

    @model_validator(mode="after")
    def _base_image_alias(self) -> Settings:
        if self.base_image and not self.sandbox.base_image:
            sandbox = self.sandbox.model_copy(update={"base_image": self.base_image})
            object.__setattr__(self, "sandbox", sandbox)  # frozen: set once, while validating
        return self

    @property
    def db_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.home / 'envfactory.db').resolve()}"

    @property
    def artifacts_dir(self) -> Path:
        return self.home / "artifacts"

    @property
    def embedded_db(self) -> bool:
        return not self.database_url  # an empty ENVFACTORY_DATABASE_URL= means the default too


def load_settings(**overrides: object) -> Settings:
    """Read the environment once; call only at a process edge."""
    return Settings(**overrides)  # type: ignore[arg-type]
