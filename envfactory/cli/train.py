"""``envfactory train``: run the SAO trainer (or a baseline) on a synthetic task or a pack.

Mount with ``main_app.add_typer(train.app, name="train")``: the work is done in the
callback, so ``envfactory train --synthetic two_turn_recall --model tiny --steps 60``
runs directly. Writes ``metrics.jsonl``, ``curves.png``, a checkpoint and the policy
as a Hugging Face model directory (``model/``, servable by SGLang) under ``--out`` and
prints the plot's path (``--json``: one JSON object instead). ``--engine sglang
--sglang-url URL`` rolls out on a running SGLang server (same host: weights travel as
tensor handles) instead of the in-process torch engine.
torch is imported lazily, inside the command, so the rest of the CLI works without
the ``trainer`` extra.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from envfactory.core.errors import EnvFactoryError, TrainerConfigError

app = typer.Typer(
    help=(
        "Train a policy with SAO (single-rollout async RL with DIS and a critic), or the\n"
        "GRPO / plain-PG baselines, on a synthetic task or an exported pack.\n\n"
        "Examples:\n\n"
        "  envfactory train --synthetic two_turn_recall --model tiny --steps 80\n\n"
        "  envfactory train --synthetic graded_recall --steps 40   # the critic matters here\n\n"
        "  envfactory train --pack out/packs/my-pack --model tiny --steps 5 --json\n\n"
        "  envfactory train --synthetic echo --algorithm grpo --steps 20 --out runs/grpo\n\n"
        "  envfactory train --synthetic two_turn_recall --rollout-mode processes --workers 4\n\n"
        "  envfactory train --synthetic graded_recall --rollout-mode processes --workers 1 \\\n"
        "      --concurrent-episodes 32 --rollout-nice 10   # one batched engine, learner first\n\n"
        "  envfactory train --synthetic echo --engine sglang --sglang-url http://127.0.0.1:30000"
    ),
    no_args_is_help=False,
)

TINY_LR = 3e-3  # the paper's 1e-6 is for billion-parameter models; tiny ones need more


def _open_pack(path: Path) -> Any:
    """Verify and open the pack before anything heavy is loaded; with a trust directory
    (ENVFACTORY_PACKS__TRUST_DIR) only a pack signed by a trusted key opens."""
    try:
        from envfactory.packs import Pack
        from envfactory.packs.signing import TrustedKeys
    except ImportError as err:
        raise TrainerConfigError(
            f"--pack needs the packs package (envfactory.packs), which is missing here: {err}"
        ) from err
    from envfactory.core.errors import EnvFactoryError
    from envfactory.core.settings import load_settings
    from sandboxes import DockerEngine

    try:
        settings = load_settings()
        trust = TrustedKeys.load((), settings.packs.trust_dir)
        # The install's sandbox settings: its episode containers carry its home scope, so
        # `sandbox gc` and the janitor of this install find them after a SIGKILL.
        return Pack.open(path, trust=trust, engine=DockerEngine(settings.sandbox))
    except EnvFactoryError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from err


def _pack_setup(opts: dict[str, Any]) -> tuple[Any, int, tuple[int, ...]]:
    opened = opts["opened"]
    from envfactory.trainer.environments import PackEnvironment
    from envfactory.trainer.models import load_codec

    codec = load_codec(opts["model"])
    max_turns = opts["max_turns"]
    factory = lambda: PackEnvironment(opened, codec, max_turns=max_turns)  # noqa: E731
    return factory, codec.vocab_size, codec.stop_ids


def _build_trainer(opts: dict[str, Any]) -> Any:
    from envfactory.trainer.config import TrainerConfig
    from envfactory.trainer.loop import Trainer
    from envfactory.trainer.models import TinyModelSpec, limit_cpu_threads, load_policy
    from envfactory.trainer.synthetic import get_task

    if opts["synthetic"]:
        task = get_task(opts["synthetic"])
        env_factory, vocab, max_turns, new_tokens = task.make, task.vocab_size, task.turns, 1
        stop_ids: tuple[int, ...] = ()
    else:
        env_factory, vocab, stop_ids = _pack_setup(opts)
        max_turns, new_tokens = opts["max_turns"], opts["max_new_tokens"]
    is_tiny = opts["model"] == "tiny"
    if is_tiny:
        limit_cpu_threads(1)
    config = TrainerConfig.from_options(
        algorithm=opts["algorithm"],
        batch_size=opts["batch_size"],
        group_size=opts["group_size"] if opts["algorithm"] == "grpo" else 1,
        lr=opts["lr"] or (TINY_LR if is_tiny else 1e-6),
        value_lr=3e-3 if is_tiny else 5e-6,
        critic_warmup_steps=min(opts["warmup"], max(opts["steps"] - 1, 0)),
        max_turns=max_turns,
        max_new_tokens=new_tokens,
        stop_token_ids=stop_ids,
        rollout_workers=opts["workers"],
        rollout_mode=opts["rollout_mode"],
        concurrent_episodes=opts["concurrent_episodes"],
        rollout_nice=opts["rollout_nice"],
        seed=opts["seed"],
    )
    policy = load_policy(opts["model"], TinyModelSpec(vocab_size=vocab), opts["seed"])
    return Trainer(config, policy, env_factory, engine=_engine(opts))


def _engine(opts: dict[str, Any]) -> Any:
    """``None`` (the trainer's own torch engine) or an SGLang client."""
    if opts["engine"] == "torch":
        return None
    from envfactory.trainer.engines import SGLangEngine

    return SGLangEngine(opts["sglang_url"])


def _train_with_progress(trainer: Any, steps: int, console: Console, quiet: bool) -> None:
    columns = (
        TextColumn("[bold]train[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, disable=quiet) as progress:
        bar = progress.add_task("train", total=steps, info="")

        def on_step(m: Any) -> None:
            ev = "-" if m.explained_variance is None else f"{m.explained_variance:.2f}"
            info = (
                f"reward {m.reward_mean:.2f}  value EV {ev}  mask {m.mask_fraction:.2f}  "
                f"idle {m.trainer_idle_fraction:.2f}"
            )
            progress.update(bar, advance=1, info=info)

        trainer.run(steps, on_step=on_step)


def _run(opts: dict[str, Any], console: Console) -> dict[str, Any]:
    from envfactory.trainer.checkpoint import load_checkpoint, save_checkpoint
    from envfactory.trainer.metrics import plot_metrics

    trainer = _build_trainer(opts)
    out: Path = opts["out"]
    if opts["resume"] and (out / "checkpoint").is_dir():
        load_checkpoint(trainer, out / "checkpoint")
    _train_with_progress(trainer, opts["steps"], console, quiet=opts["json"])
    save_checkpoint(trainer, out / "checkpoint")
    trainer.policy.save_pretrained(out / "model")
    (out / "metrics.jsonl").write_text("".join(m.model_dump_json() + "\n" for m in trainer.history))
    title = f"{trainer.config.algorithm} on {opts['synthetic'] or opts['pack']}"
    plot = plot_metrics(trainer.history, out / "curves.png", title=title)
    last = trainer.history[-1]
    return {
        "algorithm": trainer.config.algorithm,
        "steps": len(trainer.history),
        "policy_version": trainer.version,
        "reward_first": trainer.history[0].reward_mean,
        "reward_last": last.reward_mean,
        "explained_variance_after_warmup": _ev_after_warmup(trainer),
        "plot": str(plot),
        "metrics": str(out / "metrics.jsonl"),
        "checkpoint": str(out / "checkpoint"),
        "model": str(out / "model"),
        "engine": opts["engine"],
        "rollout_mode": trainer.config.rollout_mode,
        "concurrent_episodes": trainer.config.concurrent_episodes,
        "last": last.model_dump(),
    }


def _ev_after_warmup(trainer: Any) -> float | None:
    """Mean critic explained variance over the steps that updated the policy."""
    values = [
        m.explained_variance
        for m in trainer.history
        if m.policy_updated and m.explained_variance is not None
    ]
    return sum(values) / len(values) if values else None


def _check_options(opts: dict[str, Any]) -> None:
    if (opts["synthetic"] is None) == (opts["pack"] is None):
        raise TrainerConfigError("give exactly one of --synthetic NAME or --pack PATH")
    if opts["algorithm"] not in ("sao", "mean_baseline", "pg", "grpo"):
        raise TrainerConfigError(
            f"--algorithm must be sao, mean_baseline, pg or grpo, not {opts['algorithm']!r}"
        )
    if opts["engine"] not in ("torch", "sglang"):
        raise TrainerConfigError(f"--engine must be torch or sglang, not {opts['engine']!r}")
    if (opts["engine"] == "sglang") != bool(opts["sglang_url"]):
        raise TrainerConfigError(
            "--engine sglang and --sglang-url URL go together",
            hint="start a server (python -m sglang.launch_server --model-path DIR "
            "--skip-tokenizer-init) and pass its URL, or leave both out for the torch engine",
        )
    _check_rollout_mode(opts)


def _check_rollout_mode(opts: dict[str, Any]) -> None:
    mode = opts["rollout_mode"]
    if mode not in ("threads", "processes"):
        raise TrainerConfigError(f"--rollout-mode must be threads or processes, not {mode!r}")
    if mode == "processes" and opts["engine"] == "sglang":
        raise TrainerConfigError(
            "--rollout-mode processes runs the torch engine in worker processes; "
            "an SGLang server already runs outside the trainer",
            hint="use --rollout-mode threads with --engine sglang",
        )
    if mode == "processes" and opts["pack"] is not None:
        raise TrainerConfigError(
            "--rollout-mode processes does not take --pack yet: a pack environment holds "
            "an opened pack and a tokenizer, which are not sent to worker processes",
            hint="use --rollout-mode threads with --pack",
        )


def _fail(err: EnvFactoryError, as_json: bool) -> NoReturn:
    if as_json:
        payload = {"error": type(err).__name__, "message": err.message, "hint": err.hint}
        typer.echo(json.dumps(payload))
    else:
        typer.echo(f"error: {err}", err=True)
    raise typer.Exit(1)


@app.callback(invoke_without_command=True)
def train(
    synthetic: str = typer.Option(
        None,
        "--synthetic",
        help="Built-in task: echo, two_turn_recall, three_turn_recall, graded_recall.",
    ),
    pack: Path = typer.Option(None, "--pack", help="An exported environment pack directory."),
    model: str = typer.Option(
        "tiny", "--model", help="'tiny' (random init) or a local HF checkpoint directory."
    ),
    steps: int = typer.Option(50, "--steps", min=1, help="Policy/critic optimisation steps."),
    out: Path = typer.Option(
        Path(".envfactory/train"), "--out", help="Where metrics, plots and checkpoints go."
    ),
    algorithm: str = typer.Option(
        "sao", "--algorithm", help="sao | mean_baseline | pg | grpo (see docs/trainer.md)"
    ),
    batch_size: int = typer.Option(32, "--batch-size", min=1),
    group_size: int = typer.Option(4, "--group-size", min=2, help="G for grpo."),
    lr: float = typer.Option(None, "--lr", help="Policy LR (default 3e-3 tiny, 1e-6 otherwise)."),
    warmup: int = typer.Option(
        10, "--warmup", min=0, help="Critic-only warm-up steps (the paper's 10; capped at steps-1)."
    ),
    workers: int = typer.Option(
        2, "--workers", min=1, help="Rollout workers (threads or processes, see --rollout-mode)."
    ),
    rollout_mode: str = typer.Option(
        "threads",
        "--rollout-mode",
        help="threads (any engine) or processes (torch engine, no GIL shared with the learner).",
    ),
    concurrent_episodes: int = typer.Option(
        1,
        "--concurrent-episodes",
        min=1,
        help="Episodes each worker plays at once, their forwards batched (continuous batching).",
    ),
    rollout_nice: int = typer.Option(
        0,
        "--rollout-nice",
        min=0,
        max=19,
        help="Niceness of rollout processes: the learner first when both want a core.",
    ),
    max_turns: int = typer.Option(8, "--max-turns", min=1, help="Turns per pack episode."),
    max_new_tokens: int = typer.Option(
        64, "--max-new-tokens", min=1, help="Tokens per pack action."
    ),
    engine: str = typer.Option(
        "torch", "--engine", help="Rollout engine: torch (in-process) or sglang (a server)."
    ),
    sglang_url: str = typer.Option(
        None,
        "--sglang-url",
        envvar="ENVFACTORY_SGLANG_URL",
        help="Base URL of a running SGLang server on this host (with --engine sglang).",
    ),
    seed: int = typer.Option(0, "--seed"),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUT/checkpoint if present."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object for machines."),
) -> None:
    """Train on --synthetic NAME or --pack PATH and plot the curves."""
    console = Console(stderr=json_out)
    opts = dict(locals())
    opts["json"] = json_out
    opts["opened"] = _open_pack(pack) if pack is not None else None  # before torch loads
    try:
        _check_options(opts)
        summary = _run(opts, console)
    except EnvFactoryError as err:
        _fail(err, json_out)
    if json_out:
        typer.echo(json.dumps(summary))
    else:
        console.print(
            f"reward {summary['reward_first']:.2f} → {summary['reward_last']:.2f} "
            f"over {summary['steps']} steps ({summary['algorithm']})"
        )
        console.print(f"plot: {summary['plot']}")
