"""One settings object, loaded once at the process edge and passed down as typed sub-configs.

Precedence: explicit argument > ``ENVFACTORY_*`` environment variable > default.
Nested fields use ``__``: ``ENVFACTORY_SANDBOX__POOL_SIZE=4``. Nothing below the edge
(CLI command, worker main, API app factory) reads the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .errors import ConfigError


class _Sub(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SandboxSettings(_Sub):
    base_image: str | None = None  # None → build the local debootstrap base image
    from_map: dict[str, str] = Field(default_factory=dict)  # extra "public:tag" → local image
    map_public_images: bool = True  # FROM python:*/ubuntu:*/debian:* → local base images
    pool_size: int = Field(default=2, ge=1)
    #: containers kept created and started ahead of demand for each kind a caller declares
    #: (a gate run: its verification containers), besides the `pool_size` in use; 0 = off.
    #: Off by default: on 2 loaded cores it did not pay (42.5 s per task on, 38.2 s off).
    standby: int = Field(default=0, ge=0)
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
    #: verification containers see the image's /usr/lib and /usr/local through the
    #: kernel's overlayfs where the storage driver is fuse-overlayfs and the view is the
    #: same files (`sandboxes/native_usr.py`); false: always the storage driver's view
    native_usr: bool = True
    #: where those containers' writes there go (one directory each, removed with it): a
    #: directory of root's, mode 0700 (made so when absent); None: /var/lib/envfactory/scratch
    scratch_dir: Path | None = None
    #: `run` (every verification but a full-state recipe's) makes the command the
    #: container's own, read to its end; false: a started container and an exec, as
    #: before (one runtime process, a seccomp filter and three engine calls more)
    own_command: bool = True


class TemporalSettings(_Sub):
    address: str | None = None  # None → start the embedded dev server
    namespace: str = "default"
    api_key: str | None = None
    dev_port: int = 7233
    task_queue_agents: str = "agents"
    task_queue_sandbox: str = "sandbox"


class AgentSettings(_Sub):
    """One role's model: which backend, which model at which endpoint, and its budgets.

    ``model`` and ``base_url`` have no default: the scripted backend needs neither, and the
    openai backend refuses to start without a model (see ``AgentsSettings``)."""

    backend: Literal["scripted", "openai"] = "scripted"
    model: str | None = None
    base_url: str | None = None  # None → the OpenAI default URL
    api_key_env: str = "OPENAI_API_KEY"  # the variable holding the key, never the key itself
    temperature: float = Field(default=0.2, ge=0, le=2)
    max_turns: int = Field(default=40, ge=1)
    max_tokens: int = Field(default=4096, ge=16)
    context_window: int = Field(default=128_000, ge=1024)
    wall_time_s: int = Field(default=1800, ge=1)
    request_timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    token_budget: int | None = Field(default=None, ge=1)  # prompt+completion over a run
    compact_at: float = Field(default=0.8, gt=0, le=1)  # fraction of context_window
    #: identical failing turns (or text-only turns) in a row that end a run as stuck
    stuck_after: int = Field(default=4, ge=2)

    @property
    def model_name(self) -> str:
        """The name recorded on trajectories: the model, or the backend when none is set."""
        return self.model or self.backend


ROLE_FIELDS = ("research", "judge", "verifier", "red_team", "shortcut_analyst")


def agent_var(role: str, field: str) -> str:
    """The environment variable of one agent setting: ``ENVFACTORY_AGENTS__JUDGE__MODEL``."""
    return f"ENVFACTORY_AGENTS__{role.upper()}__{field.upper()}"


class AgentsSettings(_Sub):
    """Per-role model settings over one shared default.

    ``ENVFACTORY_AGENTS__DEFAULT__MODEL=m`` sets every role's model; a role's own variable
    (``ENVFACTORY_AGENTS__JUDGE__MODEL``) wins for that role. A role inherits every field
    it does not set itself. An empty variable counts as unset (compose passes ``${X:-}``).
    """

    default: AgentSettings = AgentSettings()
    research: AgentSettings = AgentSettings()
    judge: AgentSettings = AgentSettings()
    verifier: AgentSettings = AgentSettings()
    red_team: AgentSettings = AgentSettings()
    #: reads each rewarded trajectory after the regex rules; scripted by default, and a
    #: scripted analyst with no script for a seed reports nothing
    shortcut_analyst: AgentSettings = AgentSettings()
    #: the analyst's tries at a valid report per trajectory (invalid structured output is
    #: sent back with the validation errors); then the attempt is recorded as failed
    analyst_attempts: int = Field(default=3, ge=1, le=20)
    #: extra directories of recorded scripts for the scripted backend (the packaged ones
    #: under envfactory/agents/scripts are always used): ENVFACTORY_AGENTS__SCRIPT_DIRS='["/s"]'
    script_dirs: tuple[Path, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _inherit_default(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        out = dict(data)
        default = _given(out.get("default"))
        if isinstance(default, dict):
            out["default"] = default
            for role in ROLE_FIELDS:
                own = _given(out.get(role))
                out[role] = {**default, **own} if isinstance(own, dict) else own
        return out

    @model_validator(mode="after")
    def _openai_needs_a_model(self) -> AgentsSettings:
        missing = [r for r, s in self.roles().items() if s.backend == "openai" and not s.model]
        if missing:
            raise ValueError(
                f"the {', '.join(missing)} role(s) use backend=openai but no model is set: set "
                f"ENVFACTORY_AGENTS__DEFAULT__MODEL (every role) or "
                f"{' / '.join(agent_var(r, 'model') for r in missing)} to the model's name, "
                f"e.g. gpt-4o-mini or the name your SGLang/vLLM server serves; or keep a "
                f"role off the model with "
                f"{' / '.join(agent_var(r, 'backend') + '=scripted' for r in missing)}"
            )
        return self

    def roles(self) -> dict[str, AgentSettings]:
        """role name (``research``, …, ``shortcut_analyst``) → its settings."""
        return {r: getattr(self, r) for r in ROLE_FIELDS}


def _given(value: Any) -> Any:
    """The fields a source really set: unset and empty values left out."""
    if value is None:
        return {}
    if isinstance(value, AgentSettings):
        return value.model_dump(exclude_unset=True)
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if v != "" and v is not None}
    return value  # not a mapping: validation names it


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
    #: the accepted judge solve-rate band [min, max] (a seed's constraints may set its own):
    #: 0 or below min → unproven; above max → flagged too easy for a reviewer to decide
    min_solve_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    max_solve_rate: float = Field(default=1.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _band_ordered(self) -> GateSettings:
        if self.min_solve_rate > self.max_solve_rate:
            raise ValueError(
                f"ENVFACTORY_GATES__MIN_SOLVE_RATE={self.min_solve_rate} is above "
                f"ENVFACTORY_GATES__MAX_SOLVE_RATE={self.max_solve_rate}: the band would be "
                "empty; make the minimum <= the maximum"
            )
        return self


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


class ArtifactSettings(_Sub):
    """Where artifacts live: ``local`` (under the home directory; several hosts need a
    shared filesystem) or ``s3`` (a bucket of any S3-compatible service, so workers on
    several hosts share nothing but the bucket). Keys are the same in both:
    ``<s3_prefix><first two hex digits>/<the other 62>``."""

    backend: Literal["local", "s3"] = "local"
    s3_bucket: str | None = None
    s3_prefix: str = ""  # e.g. "envfactory/": every object key starts with it
    s3_endpoint_url: str | None = None  # None → AWS; e.g. http://minio:9000
    s3_region: str | None = None
    #: None → boto3's own chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profile, role)
    s3_access_key_id: SecretStr | None = None
    s3_secret_access_key: SecretStr | None = None
    s3_connect_timeout_s: float = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def _s3_needs_a_bucket(self) -> ArtifactSettings:
        if self.backend == "s3" and not self.s3_bucket:
            raise ValueError(
                "backend=s3 needs a bucket: set ENVFACTORY_ARTIFACTS__S3_BUCKET (and "
                "ENVFACTORY_ARTIFACTS__S3_ENDPOINT_URL for a service other than AWS)"
            )
        if self.s3_prefix.startswith("/"):
            raise ValueError("ENVFACTORY_ARTIFACTS__S3_PREFIX must not start with '/'")
        return self


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
    artifacts: ArtifactSettings = ArtifactSettings()
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


def load_settings(**overrides: Any) -> Settings:
    """Read the environment once; call only at a process edge.

    Raises ConfigError naming every bad setting (as its variable) and how to fix it."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigError(
            "invalid settings:\n" + "\n".join(_setting_problem(e) for e in exc.errors()),
            hint="fix or unset the ENVFACTORY_* variables named above",
        ) from exc


def _setting_problem(err: Any) -> str:
    var = "ENVFACTORY_" + "__".join(str(p).upper() for p in err["loc"] if p != "__root__")
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"  - {var}: {msg}"
