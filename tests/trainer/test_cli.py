import json
import multiprocessing

import pytest
from typer.testing import CliRunner

from envfactory.cli.train import app

runner = CliRunner()


def test_train_on_a_synthetic_task_writes_plots_metrics_and_a_checkpoint(tmp_path):
    out = tmp_path / "run"
    args = [
        "--synthetic",
        "echo",
        "--model",
        "tiny",
        "--steps",
        "3",
        "--batch-size",
        "8",
        "--out",
        str(out),
        "--json",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["steps"] == 3 and summary["algorithm"] == "sao"
    assert (out / "curves.png").stat().st_size > 0
    assert len((out / "metrics.jsonl").read_text().splitlines()) == 3
    resumed = runner.invoke(app, args + ["--resume", "--steps", "2"])
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout.strip().splitlines()[-1])["steps"] == 5


def test_train_prints_the_plot_path_for_people(tmp_path):
    result = runner.invoke(
        app,
        [
            "--synthetic",
            "echo",
            "--steps",
            "2",
            "--batch-size",
            "8",
            "--algorithm",
            "grpo",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "plot:" in result.output and (tmp_path / "curves.png").exists()


def test_train_needs_exactly_one_source():
    result = runner.invoke(app, ["--steps", "1"])
    assert result.exit_code != 0
    assert "exactly one of --synthetic" in result.output


def test_an_unknown_task_exits_1_naming_it_and_the_choices_and_writes_nothing(tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(app, ["--synthetic", "nope", "--out", str(out), "--json"])
    assert result.exit_code == 1
    error = json.loads(result.stdout.strip().splitlines()[-1])
    assert error["error"] == "TrainerConfigError"
    assert "'nope'" in error["message"] and "two_turn_recall" in error["hint"]
    assert not out.exists()


def test_an_inconsistent_config_names_the_field_and_exits_1(tmp_path):
    result = runner.invoke(
        app,
        [
            "--synthetic",
            "echo",
            "--algorithm",
            "grpo",
            "--group-size",
            "3",
            "--batch-size",
            "8",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 1
    assert "batch_size must be a multiple of group_size" in result.output


def test_train_rolls_out_on_an_sglang_server_and_syncs_it_from_tensors(tmp_path):
    from envfactory.trainer.models import TinyModelSpec, build_tiny_model
    from envfactory.trainer.synthetic import get_task

    from .fake_sglang import FakeSGLangServer

    # the server starts from *other* weights: the trainer pushes its own at start
    served = tmp_path / "served"
    build_tiny_model(TinyModelSpec(vocab_size=get_task("echo").vocab_size), seed=9).save_pretrained(
        served
    )
    out = tmp_path / "run"
    with FakeSGLangServer(str(served)) as server:
        result = runner.invoke(
            app,
            [
                "--synthetic",
                "echo",
                "--steps",
                "2",
                "--warmup",
                "0",
                "--batch-size",
                "8",
                "--engine",
                "sglang",
                "--sglang-url",
                server.url,
                "--out",
                str(out),
                "--json",
            ],
        )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["engine"] == "sglang" and summary["policy_version"] == 2
    assert server.weight_version == "2"
    assert server.calls.count("/update_weights_from_tensor") == 3  # start + 2 updates
    assert "/update_weights_from_disk" not in server.calls
    mismatch = summary["last"]["logprob_mismatch"]
    assert mismatch is None or mismatch <= 1e-6
    assert (out / "model" / "config.json").is_file()


def test_engine_sglang_without_a_url_is_refused_with_how_to_start_one(tmp_path):
    result = runner.invoke(
        app,
        ["--synthetic", "echo", "--engine", "sglang", "--out", str(tmp_path / "r")],
        env={"ENVFACTORY_SGLANG_URL": ""},
    )
    assert result.exit_code == 1
    assert "--sglang-url" in result.output and "sglang.launch_server" in result.output


@pytest.mark.parametrize("mode", ["threads", pytest.param("processes", marks=pytest.mark.slow)])
def test_train_runs_with_rollout_workers_as_threads_or_processes(tmp_path, mode):
    args = ["--synthetic", "two_turn_recall", "--steps", "2", "--warmup", "0"]
    args += ["--batch-size", "4", "--workers", "2", "--rollout-mode", mode]
    result = runner.invoke(app, args + ["--out", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["rollout_mode"] == mode and summary["policy_version"] == 2
    assert summary["last"]["staleness_max"] <= 4
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("rollout-")]


def test_concurrent_episodes_batch_each_workers_forwards_from_the_cli(tmp_path):
    args = ["--synthetic", "two_turn_recall", "--steps", "2", "--warmup", "0"]
    args += ["--batch-size", "8", "--workers", "1", "--concurrent-episodes", "4"]
    result = runner.invoke(app, args + ["--out", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["concurrent_episodes"] == 4 and summary["policy_version"] == 2


def test_rollout_nice_without_rollout_processes_names_the_field(tmp_path):
    args = ["--synthetic", "echo", "--rollout-nice", "5", "--out", str(tmp_path / "run")]
    result = runner.invoke(app, args + ["--json"])
    assert result.exit_code == 1
    error = json.loads(result.stdout.strip().splitlines()[-1])
    assert "rollout_nice" in error["message"] and not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--rollout-mode", "fibers"], "--rollout-mode must be threads or processes"),
        (["--engine", "sglang", "--sglang-url", "http://127.0.0.1:9"], "--rollout-mode threads"),
    ],
    ids=["unknown-mode", "processes-with-sglang"],
)
def test_an_invalid_rollout_mode_combination_exits_1_before_training(tmp_path, extra, says):
    args = ["--synthetic", "echo", "--rollout-mode", "processes", *extra]
    result = runner.invoke(app, args + ["--out", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 1
    error = json.loads(result.stdout.strip().splitlines()[-1])
    assert error["error"] == "TrainerConfigError"
    assert says in error["message"] + (error["hint"] or "")
    assert not (tmp_path / "run").exists()
