"""The pack adapter against an object shaped like the packs package's episodes.

The packs package is another issue's work; these tests pin the interface the adapter
relies on (``pack.reset()`` → episode with ``instruction``, ``exec``, ``reward``,
``close``) with a small in-memory pack, not with the real one.
"""

from envfactory.trainer.engines import SamplingParams, TorchEngine
from envfactory.trainer.environments import ByteCodec, Environment, PackEnvironment
from envfactory.trainer.models import TinyModelSpec, build_tiny_model
from envfactory.trainer.rollout import run_episode
from envfactory.trainer.synthetic import BOS, SEP, RecallEnvironment, get_task


class ShellEpisode:
    instruction = "create ok"

    def __init__(self):
        self.commands = []
        self.closed = False

    def exec(self, action: str) -> str:
        self.commands.append(action)
        return f"ran {action}"

    def reward(self) -> float:
        return 1.0 if "touch ok" in self.commands else 0.0

    def close(self) -> None:
        self.closed = True


class InMemoryPack:
    def __init__(self):
        self.episodes = []

    def reset(self) -> ShellEpisode:
        self.episodes.append(ShellEpisode())
        return self.episodes[-1]


def test_pack_episodes_become_token_observations_and_a_binary_reward():
    codec, pack = ByteCodec(), InMemoryPack()
    env = PackEnvironment(pack, codec, max_turns=4)
    assert isinstance(env, Environment)
    first = env.reset(seed=0)
    assert first[0] == BOS and first[-1] == SEP and codec.decode(first) == "create ok"
    step = env.step(tuple(codec.encode("touch ok")))
    assert not step.done and codec.decode(step.observation) == "ran touch ok"
    final = env.step(tuple(codec.encode("<done>")))
    assert final.done and final.reward == 1.0
    assert pack.episodes[0].closed and pack.episodes[0].commands == ["touch ok"]


def test_a_pack_episode_ends_after_max_turns_with_the_verifier_reward():
    codec, pack = ByteCodec(), InMemoryPack()
    env = PackEnvironment(pack, codec, max_turns=2)
    env.reset(seed=0)
    assert not env.step(tuple(codec.encode("ls"))).done
    final = env.step(tuple(codec.encode("pwd")))
    assert final.done and final.reward == 0.0 and pack.episodes[0].closed


def test_a_tiny_byte_model_plays_a_pack_episode_end_to_end():
    codec = ByteCodec()
    policy = build_tiny_model(TinyModelSpec(vocab_size=codec.vocab_size), seed=0)
    env = PackEnvironment(InMemoryPack(), codec, max_turns=3)
    traj = run_episode(TorchEngine(policy, seed=0), env, 1, SamplingParams(max_new_tokens=6), 3)
    assert traj is not None and traj.num_action_tokens == 18
    assert traj.finish_reason == "env_done" and traj.reward in (0.0, 1.0)


def test_the_recall_task_rewards_only_answers_that_repeat_each_shown_symbol():
    env = RecallEnvironment(turns=2, n_symbols=4)
    shown = env.reset(seed=5)[-1]
    step = env.step((shown,))
    assert not step.done
    final = env.step((step.observation[-1],))
    assert final.done and final.reward == 1.0
    shown = env.reset(seed=5)[-1]
    env.step((shown,))
    assert env.step((2,)).reward == 0.0
    assert get_task("two_turn_recall").vocab_size == 7


def test_an_episode_that_would_overflow_the_context_ends_with_finish_reason_length():
    codec = ByteCodec()
    policy = build_tiny_model(TinyModelSpec(vocab_size=codec.vocab_size), seed=0)
    env = PackEnvironment(InMemoryPack(), codec, max_turns=10)
    engine = TorchEngine(policy, seed=0)
    traj = run_episode(engine, env, 1, SamplingParams(max_new_tokens=8), 10, max_tokens=40)
    assert traj is not None and traj.finish_reason == "length" and traj.reward == 0.0
    assert len(traj.token_ids) <= 40


def test_a_local_checkpoint_tokenizer_frames_pack_episodes(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from envfactory.trainer.models import load_codec

    words = ["[UNK]", "<s>", "</s>", "\n", "create", "ok", "touch", "ran", "<done>"]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(" ", "removed"), pre_tokenizers.Split("\n", "isolated")]
    )
    tok = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>")
    tok.save_pretrained(tmp_path)
    codec = load_codec(str(tmp_path))
    assert (codec.bos_ids, codec.sep_ids, codec.stop_ids) == ((1,), (3,), (2,))
    env = PackEnvironment(InMemoryPack(), codec, max_turns=3)
    assert env.reset(seed=0) == (1, 4, 5, 3)
    step = env.step((6, 5, 2))  # "touch ok" then the stop token
    assert step.observation == (7, 6, 5, 3)
    assert env.step((8,)).reward == 1.0


def _length(env, seed: int) -> int:
    env.reset(seed)
    turns = 1
    while not env.step((3,)).done:
        turns += 1
    return turns


def test_long_tail_recall_lengths_follow_the_power_law_up_to_the_cap():
    task = get_task("long_tail_recall")
    env = task.make()
    lengths = [_length(env, seed) for seed in range(3000)]
    # P(n >= 2) = 2^-1.2 = 0.435; P(n = 32) = 32^-1.2 = 0.016
    assert abs(sum(n == 1 for n in lengths) / 3000 - 0.565) < 0.03
    assert min(lengths) == 1 and max(lengths) == task.turns
    assert 0.005 < sum(n == task.turns for n in lengths) / 3000 < 0.03


def test_a_slow_task_survives_pickling_for_worker_processes():
    import pickle

    from envfactory.trainer.synthetic import SlowEnvironment, SlowTask

    factory = pickle.loads(pickle.dumps(SlowTask(get_task("long_tail_recall"), 0.0)))
    env = factory()
    assert isinstance(env, SlowEnvironment) and env.reset(7)
