"""One settings object, loaded once at the process edge and passed down as typed sub-configs.

Precedence: explicit argument > ``ENVFACTORY_*`` environment variable > default.
Nested fields use ``__``: ``ENVFACTORY_SANDBOX__POOL_SIZE=4``. Nothing below the edge
(CLI command, worker main, API app factory) reads the environment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .errors import ConfigError
from .models import LimitCaps, TaskFileLimits


class _Sub(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SandboxSettings(_Sub):
    base_image: str | None = Field(
        default=None,
        description="an image of your own registry to use instead of the base image; unset: "
        "the debootstrap base, built locally",
    )
    from_map: dict[str, str] = Field(
        default_factory=dict,
        description="JSON map of extra public image names (`name:tag`) → local images; wins "
        "over the built-in map",
    )
    map_public_images: bool = Field(
        default=True,
        description="`FROM python:*` / `ubuntu:*` / `debian:*` are built on the local base "
        'image of the release they name (docs/verifiers.md, "Base images by release"); '
        "`false`: kept as written",
    )
    pool_size: int = Field(default=2, ge=1, description="concurrent sandboxes")
    home_scope: str = Field(
        default="",
        max_length=64,
        pattern=r"^[A-Za-z0-9._-]*$",
        description="the install its sandboxes belong to (a label on each): `sandbox gc` and "
        "the janitor remove only this scope's orphans; empty: derived from `home`",
    )
    # Off by default: on 2 loaded cores it did not pay (42.5 s per task on, 38.2 s off).
    standby: int = Field(
        default=0,
        ge=0,
        description="containers a caller keeps started ahead of demand for each kind it "
        "declares (a gate run: its verification containers; each used once), besides the "
        "pool; 0: off",
    )
    build_network: bool = Field(
        default=True,
        description="builds of our own environments may reach package registries (on "
        "envfactory's build network, fenced off from the host by iptables rules it installs: "
        "needs root on the engine's host); pack builds are offline unless `--build-network`",
    )
    build_timeout_s: int = Field(
        default=900, ge=10, description="the longest an image build may take, in seconds"
    )
    runtime: Literal["auto", "runc", "runsc"] = Field(
        default="runc",
        description="the container runtime: `runsc` (gVisor, refused when the engine lacks "
        "it), `auto` (runsc where the engine has it, else runc)",
    )
    output_cap_bytes: int = Field(
        default=1_000_000,
        ge=1024,
        description="bytes of a command's output kept; past the cap it is cut (a verification "
        "cut there earns no reward)",
    )
    docker_timeout_s: int = Field(
        default=300, ge=10, description="the Docker client's timeout for builds and imports"
    )
    disk_poll_s: float = Field(
        default=0.5,
        gt=0,
        description="how often the disk watchdog measures an idle sandbox (engines without "
        "`--storage-opt size=`); sooner while its usage grows towards the quota",
    )
    janitor_period_s: float = Field(
        default=120.0,
        gt=0,
        description="how often the janitor (workers, `envfactory up`) removes sandboxes of dead "
        "owners",
    )
    # Their owner's liveness cannot be checked from here.
    janitor_foreign_ttl_s: float = Field(
        default=86_400.0,
        gt=0,
        description="sandboxes owned by another host are removed only once this old",
    )
    task_caps: LimitCaps = Field(
        default_factory=LimitCaps,
        description="ceilings on the limits an imported task asks for (task.toml "
        "[environment], [agent], [verifier]): a value above one is clamped to it at import, "
        "with a warning",
    )
    task_files: TaskFileLimits = Field(
        default_factory=TaskFileLimits,
        description="what an imported task directory may hold (files, bytes each and "
        "together, sparse files at their full size): a task over one is refused at import",
    )
    native_usr: bool = Field(
        default=True,
        description="on fuse-overlayfs, verification containers read the image's `/usr/lib` "
        "and `/usr/local` through kernel overlays of its own layers where that view is the "
        "same files (`sandboxes/native_usr.py`; root only; 13–25% less CPU per verification "
        "in benchmarks/RESULTS.md); `false`: always the storage driver's view",
    )
    scratch_dir: Path | None = Field(
        default=None,
        description="where those overlays' writes go, one directory per container, removed "
        "with it: root's, mode 0700 (made so when absent, else the overlays stay off); "
        "unset: `/var/lib/envfactory/scratch`",
    )
    hard_disk_quota: bool = Field(
        default=True,
        description="where the storage driver takes no size (fuse-overlayfs), each "
        "container's writable layer is a loop-mounted filesystem of its quota (plus a "
        "margin), so no write outruns it (`sandboxes/layer_quota.py`; root and loop "
        "devices needed, else the disk watchdog alone); `false`: the watchdog alone",
    )
    # An exec costs one runtime process, a seccomp filter and three engine calls more.
    own_command: bool = Field(
        default=True,
        description="a verification (every one but a full-state recipe's) is its container's "
        "own command, its output attached before the start and read to its end (no exec: 17% "
        "less CPU per gate run in benchmarks/RESULTS.md); `false`: a started container and "
        "an exec",
    )


class TemporalSettings(_Sub):
    address: str | None = Field(
        default=None,
        description="a Temporal cluster's `host:port`; unset: the embedded dev server",
    )
    namespace: str = Field(default="default", description="the Temporal namespace")
    api_key: str | None = Field(
        default=None, description="an API key for the cluster (connects over TLS when set)"
    )
    dev_port: int = Field(default=7233, description="the port the embedded dev server listens on")
    task_queue_agents: str = Field(
        default="agents", description="the task queue of the agent activities"
    )
    task_queue_sandbox: str = Field(
        default="sandbox",
        description="the task queue of the sandbox activities (builds, gates); must differ "
        "from the agents' queue",
    )


class AgentSettings(_Sub):
    """One role's model: which backend, which model at which endpoint, and its budgets.

    ``model`` and ``base_url`` have no default: the scripted backend needs neither, and the
    openai backend refuses to start without a model (see ``AgentsSettings``)."""

    backend: Literal["scripted", "openai"] = Field(
        default="scripted",
        description="`scripted` replays recorded tool calls (the example seeds only); "
        "`openai`: any chat-completions endpoint (OpenAI, SGLang, vLLM)",
    )
    model: str | None = Field(
        default=None,
        description="the model name; required by `openai` (the start is refused without it)",
    )
    base_url: str | None = Field(
        default=None,
        description="the endpoint, e.g. `http://127.0.0.1:30000/v1` for a local server; "
        "unset: OpenAI's",
    )
    # The variable's name, never the key itself: settings are logged and stored.
    api_key_env: str = Field(
        default="OPENAI_API_KEY",
        description="the environment variable holding the API key (a local server may need none)",
    )
    temperature: float = Field(default=0.2, ge=0, le=2, description="sampling temperature")
    max_turns: int = Field(default=40, ge=1, description="the turn budget of one run")
    max_tokens: int = Field(default=4096, ge=16, description="the most tokens one reply may have")
    context_window: int = Field(
        default=128_000, ge=1024, description="the model's context window, in tokens"
    )
    wall_time_s: int = Field(
        default=1800, ge=1, description="the wall-time budget of one run, in seconds"
    )
    request_timeout_s: float = Field(
        default=120.0, gt=0, description="the timeout of one request, in seconds"
    )
    max_retries: int = Field(default=4, ge=0, description="retries of a failed request")
    token_budget: int | None = Field(
        default=None,
        ge=1,
        description="prompt and completion tokens one run may spend; unset: no budget",
    )
    compact_at: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="the history is compacted when it would pass this fraction of the "
        "context window",
    )
    stuck_after: int = Field(
        default=4,
        ge=2,
        description="identical failing (or text-only) turns in a row that end a run as stuck "
        "([docs/agents.md](docs/agents.md))",
    )

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

    default: AgentSettings = Field(
        default=AgentSettings(),
        description="every role's values, for each field the role does not set itself",
    )
    research: AgentSettings = Field(
        default=AgentSettings(),
        description="the research role's own values (it turns the seed into an environment)",
    )
    judge: AgentSettings = Field(
        default=AgentSettings(),
        description="the judge role's own values (it attempts the task, k times)",
    )
    verifier: AgentSettings = Field(
        default=AgentSettings(),
        description="the verifier writer's own values (it never sees the reference solution)",
    )
    red_team: AgentSettings = Field(
        default=AgentSettings(),
        description="the red team's own values (it tries to earn the reward without doing the "
        "task)",
    )
    shortcut_analyst: AgentSettings = Field(
        default=AgentSettings(),
        description="the shortcut analyst's own values: it reads each rewarded trajectory "
        "after the regex rules; a scripted analyst with no script for a seed reports nothing",
    )
    # Invalid structured output is sent back with the validation errors, then retried.
    analyst_attempts: int = Field(
        default=3,
        ge=1,
        le=20,
        description="tries the shortcut analyst gets at a valid report per trajectory before "
        "the analysis is recorded as failed",
    )
    script_dirs: tuple[Path, ...] = Field(
        default=(),
        description="JSON list of extra directories of recorded scripts for the scripted "
        "backend (the packaged ones, under `envfactory/agents/scripts`, are always used)",
    )

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
    repeats: int = Field(default=3, ge=1, description="runs per gate check")
    judges: int = Field(
        default=2,
        ge=1,
        description="judge attempts per environment (k; a seed's `constraints.judges` wins)",
    )
    max_patch_rounds: int = Field(
        default=2,
        ge=0,
        description="rounds in which the verifier is rewritten after failed gates or a "
        "confirmed shortcut, before the seed is rejected",
    )
    # Off by default for cost: every surviving mutant is verified on every gate state (about
    # 70 with two unsolved states and the probe library), minutes per environment on 2 cores.
    mutation_max: int = Field(
        default=0,
        ge=0,
        description="mutants per environment for the gate battery's mutation score; 0: off",
    )
    mutation_min_score: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="a mutation score (killed / non-equivalent mutants) below this sends the "
        "environment to review",
    )
    min_solve_rate: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="the accepted judge solve-rate band's lower end (a seed's constraints may "
        "set its own): a rate of 0 or below it → unproven (docs/pipeline.md)",
    )
    max_solve_rate: float = Field(
        default=1.0,
        ge=0.0,
        le=1.0,
        description="the band's upper end: above it → a too-easy flag a reviewer confirms or "
        "overrides",
    )

    @model_validator(mode="after")
    def _band_ordered(self) -> GateSettings:
        if self.min_solve_rate > self.max_solve_rate:
            raise ValueError(
                f"ENVFACTORY_GATES__MIN_SOLVE_RATE={self.min_solve_rate} is above "
                f"ENVFACTORY_GATES__MAX_SOLVE_RATE={self.max_solve_rate}: the band would be "
                "empty; make the minimum <= the maximum"
            )
        return self


class RepoSettings(_Sub):
    hold_underspecified: bool = Field(
        default=True,
        description="a mined commit whose fail-to-pass tests require a name its instruction "
        "does not give (an exception class, a message) is held for review, not gated; "
        "false: gated and published like any other, the finding kept in its row",
    )


class ApiSettings(_Sub):
    host: str = Field(
        default="127.0.0.1", description="the address the HTTP API and review UI listen on"
    )
    port: int = Field(default=8600, description="the port of the HTTP API and review UI")
    allowed_origins: tuple[str, ...] = Field(
        default=(),
        description="JSON list of origins besides the server's own (`scheme://host[:port]`) "
        "whose form posts the review pages accept (a proxy's public origin)",
    )
    max_request_bytes: int = Field(
        default=1 << 20,
        ge=1024,
        description="the largest request body accepted (JSON or form); larger ones get 413 "
        "unread (the seed upload's cap is ENVFACTORY_SEEDS__MAX_TOTAL_BYTES plus this)",
    )
    max_concurrent_per_token: int = Field(
        default=8,
        ge=1,
        description="requests one reviewer token (or page session) may have in flight at "
        "once, per API process; the next one gets 429 with Retry-After",
    )


class PackSettings(_Sub):
    trust_dir: Path | None = Field(
        default=None,
        description="a folder of trusted Ed25519 public keys (`*.pub`, PEM); when set, "
        "`pack import` and `train --pack` refuse packs that are unsigned or signed by a key "
        "not in it",
    )


class ArtifactSettings(_Sub):
    """Where artifacts live: ``local`` (under the home directory; several hosts need a
    shared filesystem) or ``s3`` (a bucket of any S3-compatible service, so workers on
    several hosts share nothing but the bucket). Keys are the same in both:
    ``<s3_prefix><first two hex digits>/<the other 62>``."""

    backend: Literal["local", "s3"] = Field(
        default="local",
        description="`local`: under the home directory; `s3`: in a bucket of any "
        "S3-compatible service (AWS, MinIO, Ceph), so hosts share no filesystem",
    )
    s3_bucket: str | None = Field(default=None, description="the bucket; required by `s3`")
    s3_prefix: str = Field(
        default="",
        description="what every object name starts with, e.g. `envfactory/`; the rest is the "
        "local layout's: `<prefix>ab/cdef…`",
    )
    s3_endpoint_url: str | None = Field(
        default=None,
        description="the service's URL, e.g. `http://minio:9000`; unset: AWS",
    )
    s3_region: str | None = Field(
        default=None, description="the bucket's region; unset: boto3's default"
    )
    s3_access_key_id: SecretStr | None = Field(
        default=None,
        description="the access key; unset: boto3's own chain (`AWS_ACCESS_KEY_ID`…, "
        "profile, role)",
    )
    s3_secret_access_key: SecretStr | None = Field(
        default=None, description="the secret key that goes with the access key"
    )
    s3_connect_timeout_s: float = Field(
        default=5.0, gt=0, description="the timeout of a connection to the service, in seconds"
    )

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
    max_attachments: int = Field(default=32, ge=0, description="files one seed may attach")
    max_attachment_bytes: int = Field(
        default=5_000_000, ge=1, description="the largest file a seed may attach, in bytes"
    )
    max_total_bytes: int = Field(
        default=20_000_000, ge=1, description="a seed's files together, at most, in bytes"
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ENVFACTORY_", env_nested_delimiter="__", frozen=True, extra="ignore"
    )

    home: Path = Field(
        default=Path(".envfactory"),
        description="data directory: SQLite database, artifacts, Temporal dev-server database",
    )
    database_url: str | None = Field(
        default=None,
        description="the store's database, e.g. `postgresql+psycopg://user@host/db`; unset or "
        "empty: SQLite under the home directory",
    )
    sandbox: SandboxSettings = SandboxSettings()
    temporal: TemporalSettings = TemporalSettings()
    agents: AgentsSettings = AgentsSettings()
    gates: GateSettings = GateSettings()
    api: ApiSettings = ApiSettings()
    seeds: SeedLimits = SeedLimits()
    reviewer_token: SecretStr | None = Field(
        default=None,
        description="the reviewer token `envfactory review decide` decides with; unset: the "
        "local operator (docs/review-security.md)",
    )
    packs: PackSettings = PackSettings()
    repos: RepoSettings = RepoSettings()
    artifacts: ArtifactSettings = ArtifactSettings()
    # The name for the base-image override.
    base_image: str | None = Field(
        default=None,
        description="the same as `ENVFACTORY_SANDBOX__BASE_IMAGE`, which wins when both are set",
    )

    @model_validator(mode="after")
    def _home_scope(self) -> Settings:
        """Sandboxes are labelled with the install that made them: two homes sharing one
        Docker engine never reap each other's orphans."""
        if not self.sandbox.home_scope:
            digest = hashlib.sha256(str(self.home.resolve()).encode()).hexdigest()[:16]
            sandbox = self.sandbox.model_copy(update={"home_scope": f"home-{digest}"})
            object.__setattr__(self, "sandbox", sandbox)  # frozen: set once, while validating
        return self

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
