import pytest
import torch

from envfactory.trainer.critic import (
    CriticConfig,
    FreezePatternError,
    build_critic,
    freeze_by_patterns,
    value_loss,
)
from envfactory.trainer.models import TinyModelSpec, build_tiny_model


@pytest.fixture
def policy():
    return build_tiny_model(TinyModelSpec(vocab_size=12), seed=3)


def _snapshot(module, names):
    params = dict(module.named_parameters())
    return {n: params[n].detach().clone() for n in names}


def test_frozen_attention_is_bitwise_unchanged_after_k_critic_steps_while_mlp_and_head_move(policy):
    config = CriticConfig(lr=1e-2)
    critic, optimizer = build_critic(policy, config)
    names = [n for n, _ in critic.named_parameters()]
    attention = [n for n in names if ".self_attn." in n]
    trainable = [n for n in names if ".mlp." in n or n.startswith("head.")]
    assert attention and trainable
    before_attn = _snapshot(critic, attention)
    before_train = _snapshot(critic, trainable)
    ids = torch.randint(0, 12, (4, 9))
    mask = torch.ones(4, 9, dtype=torch.bool)
    mask[:, 0] = False
    returns = torch.rand(4, 9)
    for _ in range(2):  # K = 2
        loss = value_loss(critic(ids, None), returns, mask)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    after = dict(critic.named_parameters())
    for n in attention:
        assert torch.equal(after[n], before_attn[n]), n
    moved = [n for n in trainable if not torch.equal(after[n], before_train[n])]
    assert set(moved) == set(trainable)


def test_a_freeze_pattern_that_matches_nothing_is_an_error(policy):
    with pytest.raises(FreezePatternError, match="no_such_module"):
        build_critic(policy, CriticConfig(freeze_patterns=(r"\.self_attn\.", r"no_such_module")))


def test_freeze_returns_exactly_the_matched_parameters(policy):
    frozen = freeze_by_patterns(policy, [r"\.q_proj\."])
    assert frozen and all(".q_proj." in n for n in frozen)
    assert all(not p.requires_grad for n, p in policy.named_parameters() if n in frozen)


def test_the_value_of_token_t_does_not_see_token_t(policy):
    critic, _ = build_critic(policy, CriticConfig())
    torch.nn.init.normal_(critic.head.weight)
    ids = torch.tensor([[1, 2, 3, 4]])
    changed = ids.clone()
    changed[0, 3] = 7
    with torch.no_grad():
        a, b = critic(ids, None), critic(changed, None)
    # V at position 3 is the state before token 3 was chosen: it cannot depend on it
    assert torch.equal(a[0, :4], b[0, :4])
    assert a[0, 0] == 0.0


def test_the_critic_starts_as_a_copy_of_the_policy_decoder(policy):
    critic, _ = build_critic(policy, CriticConfig())
    src = dict(policy.get_decoder().named_parameters())
    for name, param in critic.backbone.named_parameters():
        assert torch.equal(param, src[name])
        assert param.data_ptr() != src[name].data_ptr()
