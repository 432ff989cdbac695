"""Read a Harbor task directory.

Layout (Harbor): `instruction.md`, `task.toml`, `environment/` (Dockerfile + files),
`solution/solve.sh`, `tests/test.sh` + other test files. Our extension:
`solution/partial/*.sh`, one authored partial solution per file, and the `[envfactory]`
table in task.toml (see options.py).

Mapping (docs/task-formats.md): `environment/**` → build context; `tests/**` → verifier
files placed at `/tests` (where Harbor puts them) only at verification time, entry `bash
test.sh` run from there; when the tests write `/logs/verifier/reward.txt|json`, Harbor's
reward contract applies (the runner empties that directory before the entry and reads
what this run wrote, `verifiers.runner`), else the exit status is the reward;
`[verifier].env` becomes `K=V` prefixes of the entry, `[solution].env` `export` lines
at the top of every step. A `docker-compose.yaml` of more than one service maps its side
services onto the environment's services (`compose.py`): each sandbox gets fresh ones.
"""

from __future__ import annotations

import math
import shlex
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envfactory.core.errors import InvalidTask
from envfactory.core.models import (
    Cpus,
    LimitCaps,
    Limits,
    PartialSolution,
    ServiceSpec,
    Step,
    VerifyScope,
)

from .assemble import Found, assemble
from .compose import compose_services
from .files import read_text, store_files, walk_files
from .model import BlobWriter, ImportedTask
from .options import EnvfactoryOptions, parse_table
from .steps import split_steps

REQUIRED = {
    "instruction.md": "write the task's instruction (what the solver sees) in instruction.md",
    "task.toml": 'create task.toml (at least `version = "1.0"`)',
    "environment/Dockerfile": "put the image's Dockerfile in environment/Dockerfile",
    "solution/solve.sh": "write the reference solution as solution/solve.sh (`# step` blocks)",
    "tests/test.sh": "write the verifier entry tests/test.sh (exit 0 iff the task is solved)",
}
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")
REWARD_DIR = "/logs/verifier"


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Verifier(_Loose):
    timeout_sec: float = Field(default=600.0, gt=0, allow_inf_nan=False)
    env: dict[str, str] = Field(default_factory=dict)
    verify_scope: VerifyScope | None = None


class _Agent(_Loose):
    timeout_sec: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class _Environment(_Loose):
    cpus: Cpus = 1.0
    memory_mb: int | None = Field(default=None, ge=64)
    memory: str | None = None  # Harbor's deprecated "2G" form
    storage_mb: int | None = Field(default=None, ge=16)  # → limits.disk_mb
    storage: str | None = None  # Harbor's deprecated "10G" form
    allow_internet: bool | None = None


class _Solution(_Loose):
    env: dict[str, str] = Field(default_factory=dict)


class _Task(_Loose):
    name: str | None = None


def is_harbor(path: Path) -> bool:
    return any((path / name).exists() for name in ("task.toml", "instruction.md", "environment"))


def load_harbor(path: Path, artifacts: BlobWriter, caps: LimitCaps | None = None) -> ImportedTask:
    _require(path)
    config = read_toml(path / "task.toml")
    opts = parse_table(EnvfactoryOptions, config.get("envfactory"), where="task.toml [envfactory]")
    verifier = parse_table(_Verifier, config.get("verifier"), where="task.toml [verifier]")
    opts = _merge_scope(opts, verifier.verify_scope)
    solution = parse_table(_Solution, config.get("solution"), where="task.toml [solution]")
    notes: list[str] = []
    env_dir = path / "environment"
    exclude = [n for n in COMPOSE_FILES if (env_dir / n).exists()]
    build_files = store_files(walk_files(env_dir, exclude=exclude), artifacts)
    services: tuple[ServiceSpec, ...] = ()
    for name in exclude[:1]:
        services, more = compose_services(env_dir / name, build_files)
        notes += (
            more if services else [f"environment/{name} ignored: one service, run as one container"]
        )
    tests = walk_files(path / "tests")
    texts = tuple((rel, f.read_text(errors="replace")) for rel, f in tests if _is_text(f))
    reward = any(REWARD_DIR + "/reward." in text for _, text in texts)
    found = Found(
        format="harbor",
        name=_name(path, config),
        instruction=read_text(path / "instruction.md").strip(),
        dockerfile_text=(env_dir / "Dockerfile").read_text(errors="replace"),
        dockerfile_where="environment/Dockerfile",
        build_files=build_files,
        services=services,
        steps=_steps(path / "solution" / "solve.sh", "solution/solve.sh", solution.env),
        partials=_partials(path / "solution", solution.env),
        verifier_files=store_files(tests, artifacts),
        entry=_env_prefix(verifier.env) + "bash /tests/test.sh",
        verifier_timeout_s=math.ceil(verifier.timeout_sec),
        limits=_limits(config, opts),
        options=opts,
        notes=notes,
        test_texts=texts,
        mount_path="/tests",
        reward_dir=REWARD_DIR if reward else None,
    )
    return assemble(found, caps)


def _is_text(file: Path) -> bool:
    return file.stat().st_size <= 1_000_000 and b"\0" not in file.read_bytes()[:4096]


def _require(path: Path) -> None:
    missing = [name for name in REQUIRED if not (path / name).is_file()]
    if not missing and not read_text(path / "instruction.md").strip():
        raise InvalidTask(f"{path}/instruction.md is empty", hint=REQUIRED["instruction.md"])
    if missing:
        listed = "; ".join(f"{m} ({REQUIRED[m]})" for m in missing)
        raise InvalidTask(
            f"{path} is not a complete Harbor task: missing {listed}",
            hint="a Harbor task has instruction.md, task.toml, environment/Dockerfile, "
            "solution/solve.sh and tests/test.sh (docs/task-formats.md)",
        )
    extra = sorted(
        rel
        for rel, _ in walk_files(path / "solution")
        if rel != "solve.sh"
        and not (rel.startswith("partial/") and rel.endswith(".sh") and rel.count("/") == 1)
    )
    if extra:
        raise InvalidTask(
            f"{path}/solution holds {', '.join(extra)}; envfactory runs each step of "
            "solve.sh as a standalone script, so other solution files would be missing",
            hint="inline those files into solve.sh (e.g. with a here-document)",
        )


def read_toml(file: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(file.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise InvalidTask(
            f"{file}: invalid TOML: {exc}", hint="fix the syntax at the position named"
        ) from None
    except UnicodeDecodeError as exc:
        raise InvalidTask(f"{file}: not UTF-8 text ({exc})", hint="save it as UTF-8") from None
    except RecursionError:  # tomllib parses nested arrays recursively
        raise InvalidTask(
            f"{file}: values nested too deeply to read",
            hint="a task.toml needs a few levels of nesting at most",
        ) from None
    except ValueError as exc:  # an integer past Python's conversion limit (4300 digits)
        raise InvalidTask(
            f"{file}: a value cannot be read: {exc}".split("; use sys.")[0],
            hint="write numbers of a sensible size",
        ) from None


def _name(path: Path, config: dict[str, Any]) -> str:
    task = parse_table(_Task, config.get("task"), where="task.toml [task]")
    if task.name:
        return task.name.rsplit("/", 1)[-1]
    return path.resolve().name


def _merge_scope(opts: EnvfactoryOptions, scope: VerifyScope | None) -> EnvfactoryOptions:
    if scope is None:
        return opts
    if opts.verify_scope is not None and opts.verify_scope != scope:
        raise InvalidTask(
            f"task.toml: [verifier].verify_scope = '{scope}' but "
            f"[envfactory].verify_scope = '{opts.verify_scope}'",
            hint="keep one of the two (preferably [envfactory].verify_scope)",
        )
    return opts.model_copy(update={"verify_scope": scope})


def _env_prefix(env: dict[str, str]) -> str:
    for key in env:
        if not key.isidentifier():
            raise InvalidTask(
                f"task.toml env: {key!r} is not a valid variable name",
                hint="use letters, digits and _ only, not starting with a digit",
            )
    return "".join(f"{k}={shlex.quote(v)} " for k, v in sorted(env.items()))


def _steps(file: Path, where: str, env: dict[str, str]) -> tuple[Step, ...]:
    steps = split_steps(read_text(file), where=where)
    exports = "\n".join(f"export {k}={shlex.quote(v)}" for k, v in sorted(env.items()))
    if not exports:
        return steps
    _env_prefix(env)  # validates the names
    return tuple(s.model_copy(update={"script": f"{exports}\n{s.script}"}) for s in steps)


def _partials(solution_dir: Path, env: dict[str, str]) -> tuple[PartialSolution, ...]:
    partial_dir = solution_dir / "partial"
    if not partial_dir.is_dir():
        return ()
    files = sorted(partial_dir.glob("*.sh"))
    for f in files:
        if not f.stem.strip():  # the file's name is the partial's name
            raise InvalidTask(
                f"{f}: a partial solution is named by its file, and {f.name!r} names none",
                hint="name it for what it leaves undone, e.g. solution/partial/no-index.sh",
            )
    return tuple(
        PartialSolution(name=f.stem, steps=_steps(f, f"solution/partial/{f.name}", env))
        for f in files
    )


def _limits(config: dict[str, Any], opts: EnvfactoryOptions) -> Limits:
    env = parse_table(_Environment, config.get("environment"), where="task.toml [environment]")
    agent = parse_table(_Agent, config.get("agent"), where="task.toml [agent]")
    memory = env.memory_mb or (_memory_mb(env.memory) if env.memory else 2048)
    values: dict[str, Any] = {"cpus": env.cpus, "memory_mb": memory}
    values["network"] = bool(env.allow_internet)  # absent: no network (our default)
    if env.storage_mb or env.storage:  # absent: our default disk quota
        values["disk_mb"] = env.storage_mb or _memory_mb(env.storage or "", field="storage")
    if opts.exec_timeout_s or agent.timeout_sec:
        values["exec_timeout_s"] = opts.exec_timeout_s or math.ceil(agent.timeout_sec or 0)
    if opts.pids:
        values["pids"] = opts.pids
    return Limits(**values)


#: the least MiB a Harbor size may give, as `Limits` requires of memory_mb and disk_mb
MIN_MB = {"memory": 64, "storage": 16}


def _memory_mb(text: str, field: str = "memory") -> int:
    """MiB in a Harbor size ("2G", "512M"); `field` names the key in the error."""
    size = text.strip().upper()
    scale = {"G": 1024, "M": 1, "K": 1 / 1024}
    try:
        mb = int(float(size[:-1]) * scale[size[-1]])
    except (KeyError, ValueError, IndexError, OverflowError):  # "lots", "", "nanG", "infG"
        raise InvalidTask(
            f"task.toml [environment].{field} = {text!r} is not a size like '2G' or '512M'",
            hint=f"use {field}_mb = {2048 if field == 'memory' else 10240}",
        ) from None
    if mb < MIN_MB[field]:
        raise InvalidTask(
            f"task.toml [environment].{field} = {text!r} is {mb} MiB, below the "
            f"{MIN_MB[field]} MiB a sandbox needs",
            hint=f"give at least {MIN_MB[field]}M",
        )
    return mb
