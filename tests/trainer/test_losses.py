import math

import pytest
import torch

from envfactory.core.errors import TrainerConfigError
from envfactory.trainer.losses import (
    DIS_PRESETS,
    DISConfig,
    dis_bounds,
    dis_keep_mask,
    dis_loss,
    pg_loss,
    ppo_clip_loss,
)

REASONING = DIS_PRESETS["reasoning"]


def test_boundary_ratios_are_masked_and_inner_ones_kept():
    ratios = torch.tensor([1.0, 0.7, 6.0, 0.69, 5.99])
    keep = dis_keep_mask(ratios, DISConfig(eps_low=0.3, eps_high=5.0))
    assert keep.tolist() == [True, False, False, False, True]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("preset", sorted(DIS_PRESETS))
def test_a_ratio_exactly_on_either_bound_is_masked_in_float32_and_float64(preset, dtype):
    # regression: in float64, 1.0 - 0.8 is 0.19999999999999996, so r = 0.2 was kept
    config = DIS_PRESETS[preset]
    low = torch.tensor(float(f"{1 - config.eps_low:.10f}"), dtype=dtype)
    high = torch.tensor(1 + config.eps_high, dtype=dtype)
    inf = torch.tensor(torch.inf, dtype=dtype)
    ratios = torch.stack(
        [
            low,
            high,
            torch.nextafter(low, inf),  # one ulp inside
            torch.nextafter(high, -inf),
            torch.nextafter(low, -inf),  # one ulp outside
            torch.nextafter(high, inf),
        ]
    )
    assert dis_keep_mask(ratios, config).tolist() == [False, False, True, True, False, False]


def test_the_float64_coding_bounds_are_the_decimal_numbers():
    low, high = dis_bounds(DIS_PRESETS["coding"], torch.float64)
    assert float(low) == 0.2 and float(high) == 4.0
    assert dis_keep_mask(
        torch.tensor([0.2], dtype=torch.float64), DIS_PRESETS["coding"]
    ).tolist() == [False]


def test_presets_match_the_paper():
    assert (REASONING.eps_low, REASONING.eps_high) == (0.3, 5.0)
    coding = DIS_PRESETS["coding"]
    assert (coding.eps_low, coding.eps_high) == (0.8, 3.0)


def test_dis_loss_masks_tokens_outside_the_window_through_logprobs():
    ratios = torch.tensor([[1.0, 0.7, 6.0, 0.69, 5.99]], dtype=torch.float64)
    rollout = torch.log(torch.full_like(ratios, 0.1)).to(torch.float32)
    logp = (torch.log(ratios * 0.1)).to(torch.float32).requires_grad_(True)
    adv = torch.ones(1, 5)
    mask = torch.ones(1, 5, dtype=torch.bool)
    out = dis_loss(logp, rollout, adv, mask, REASONING)
    out.loss.backward()
    assert logp.grad is not None
    zero = [g == 0.0 for g in logp.grad[0].tolist()]
    # ratios recomputed in fp32 land within rounding of the boundaries; the middle
    # three are outside or on the boundary either way, so only they must be zero
    assert zero[2] and zero[3]
    assert not zero[0] and not zero[4]
    assert out.loss.dtype == torch.float32


def test_dis_gradient_is_the_importance_weighted_policy_gradient_over_all_action_tokens():
    logp = torch.tensor([[0.0, -1.0, -2.0, -0.5]], requires_grad=True)
    rollout = torch.tensor([[0.0, -1.2, -2.0, -5.0]])
    adv = torch.tensor([[0.0, 0.5, -1.0, 2.0]])
    mask = torch.tensor([[False, True, True, True]])
    out = dis_loss(logp, rollout, adv, mask, REASONING)
    out.loss.backward()
    r1 = math.exp(0.2)
    # token 3 has r = e^4.5 > 6: masked; N = 3 action tokens, kept or not
    expected = [0.0, -r1 * 0.5 / 3, 1.0 / 3, 0.0]
    assert logp.grad[0].tolist() == pytest.approx(expected, rel=1e-6)
    assert out.keep_fraction == pytest.approx(2 / 3)
    assert out.mask_fraction == pytest.approx(1 / 3)


def test_observation_tokens_never_contribute_to_any_loss():
    logp = torch.tensor([[-0.3, -1.0, -0.7]], requires_grad=True)
    rollout = torch.tensor([[-9.0, -1.0, -0.7]])
    adv = torch.tensor([[5.0, 1.0, 1.0]])
    mask = torch.tensor([[False, True, True]])
    for loss_fn in (
        lambda: dis_loss(logp, rollout, adv, mask, REASONING),
        lambda: pg_loss(logp, rollout, adv, mask),
        lambda: ppo_clip_loss(logp, rollout, adv, mask),
    ):
        logp.grad = None
        loss_fn().loss.backward()
        assert logp.grad[0, 0] == 0.0


def test_plain_pg_ignores_the_rollout_logprob():
    logp = torch.tensor([[0.0, -1.0]], requires_grad=True)
    adv = torch.tensor([[0.0, 1.0]])
    mask = torch.tensor([[False, True]])
    a = pg_loss(logp, torch.tensor([[0.0, -1.0]]), adv, mask).loss.detach()
    b = pg_loss(logp, torch.tensor([[0.0, -9.0]]), adv, mask).loss.detach()
    # −Σ Â·log π / N = −(1 · −1) / 1
    assert float(a) == float(b) == 1.0


def test_nonfinite_ratios_are_masked_not_propagated():
    logp = torch.tensor([[0.0, 0.0]], requires_grad=True)
    rollout = torch.tensor([[0.0, -200.0]])  # exp(200) overflows fp32 to inf
    out = dis_loss(logp, rollout, torch.ones(1, 2), torch.tensor([[False, True]]), REASONING)
    out.loss.backward()
    assert torch.isfinite(out.loss)
    assert logp.grad.tolist() == [[0.0, 0.0]]


def test_an_impossible_window_is_refused_with_the_values_named():
    with pytest.raises(TrainerConfigError, match="eps_low=0.0"):
        DISConfig(eps_low=0.0, eps_high=1.0)
