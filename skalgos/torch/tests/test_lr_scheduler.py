import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from skalgos.torch.lr_scheduler import (  # noqa: E402
    WSD,
    TwoStageWSD,
    convex_bound,
    extend_horizon,
    lr_factors,
    optimal_base_lr,
    transfer_base_lr,
)


def _H(n):
    return sum(1.0 / k for k in range(1, n + 1))


def test_two_step_hand_case():
    # T=2, constant, gamma=1, D=G=1: S_1=2, S_2=1.
    # t1 = 1/(2*2); t2 = (1+1)/(2*2); t3 = 1/2 * (1/1) * (1+1)/2.
    assert convex_bound([1.0, 1.0], split=True) == (0.25, 0.5, 0.5)
    assert convex_bound([1.0, 1.0]) == 1.25
    gamma, bound = optimal_base_lr([1.0, 1.0])
    assert math.isclose(gamma, 0.5) and math.isclose(bound, 1.0)
    assert convex_bound([1.0, 1.0], base_lr=0.5, split=True) == (0.5, 0.25, 0.25)


@pytest.mark.parametrize("T", [10, 100, 1000])
@pytest.mark.parametrize("gamma,D,G", [(1.0, 1.0, 1.0), (0.3, 2.0, 0.5)])
def test_constant_schedule_closed_form(T, gamma, D, G):
    t1, t2, t3 = convex_bound(np.ones(T), base_lr=gamma, D=D, G=G, split=True)
    assert math.isclose(t1, D**2 / (2 * gamma * T), rel_tol=1e-12)
    assert math.isclose(t2, gamma * G**2 / 2, rel_tol=1e-12)
    assert math.isclose(t3, gamma / 2 * G**2 * _H(T - 1), rel_tol=1e-10)


def test_average_iterate_bound():
    eta = np.array([0.5, 0.2, 0.1])
    expected = (1.0 + np.sum(eta**2)) / (2 * eta.sum())
    assert math.isclose(convex_bound(eta, kind="average"), expected, rel_tol=1e-12)


@pytest.mark.parametrize("T", [100, 500, 1000, 5000])
def test_wsd_below_theorem(T):
    # The repository's theorem for WSD with a linear cooldown starting at T0.
    T0 = int(0.8 * T)
    a = (
        2 / 3
        + (T + 2 * T0) / (3 * (T + T0))
        + _H(T + T0 - 2)
        - _H(T - T0 + 1)
        - (T - T0) * (T0 - 1) / (3 * (T - T0 + 2) * (T + T0))
        + 1 / (T - T0) ** 2
        + _H(T - T0 - 1) / (T - T0 + 1)
    )
    _, star = optimal_base_lr(lr_factors("wsd", T + 1, cooldown_fraction=0.2))
    assert star <= math.sqrt(4 / (T + T0) * a)
    # ... and cooldown removes the log T of the constant schedule.
    _, const = optimal_base_lr(np.ones(T))
    assert star < const


def test_trailing_zero_is_dropped_and_interior_zero_at_T_refused():
    f = lr_factors("wsd", 11, cooldown_fraction=0.5)
    assert f[-1] == 0.0
    assert convex_bound(f) == convex_bound(f[:-1])
    with pytest.raises(ValueError, match="eta_T"):
        convex_bound(f, T=11)
    with pytest.raises(ValueError, match=">= 0"):
        convex_bound([1.0, -1.0])


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(0.01, 1.0), min_size=2, max_size=40),
    st.floats(0.05, 20.0),
)
def test_optimal_base_lr_minimizes_the_bound(factors, scale):
    gamma, star = optimal_base_lr(factors)
    assert math.isclose(convex_bound(factors, base_lr=gamma), star, rel_tol=1e-9)
    other = gamma * scale
    assert convex_bound(factors, base_lr=other) >= star * (1 - 1e-12)


def test_grid_minimum_agrees_with_closed_form():
    f = lr_factors("cosine", 201)
    grid = np.geomspace(1e-3, 1.0, 2001)
    values = [convex_bound(f, base_lr=g) for g in grid]
    gamma, _ = optimal_base_lr(f)
    assert abs(math.log(grid[int(np.argmin(values))] / gamma)) < 2 * math.log(
        grid[1] / grid[0]
    )


def test_transfer_is_consistent():
    a, b = lr_factors("wsd", 301), lr_factors("cosine", 301)
    x = transfer_base_lr(2e-3, a, b)
    assert math.isclose(transfer_base_lr(x, b, a), 2e-3, rel_tol=1e-12)
    assert transfer_base_lr(2e-3, a, a) == 2e-3
    # D and G cancel: the transfer equals the ratio of optimal rates at any D, G.
    ga, _ = optimal_base_lr(a, D=3.0, G=0.2)
    gb, _ = optimal_base_lr(b, D=3.0, G=0.2)
    assert math.isclose(x, 2e-3 * gb / ga, rel_tol=1e-12)


def test_extend_horizon_cooldown_about_sixty_percent():
    s = extend_horizon(1e-3, 4000, 8000, cooldown_fraction=0.2)
    assert s["base_lr"] == 1e-3 and s["total_steps"] == 8000
    assert 0.55 < s["cooldown_fraction"] < 0.7
    ref, _ = optimal_base_lr(lr_factors("wsd", 4001))
    new, _ = optimal_base_lr(
        lr_factors("wsd", 8001, cooldown_fraction=s["cooldown_fraction"])
    )
    # The cooldown is a whole number of steps, so the match is exact only up
    # to what one step changes (about 1e-4 here).
    assert math.isclose(new, ref, rel_tol=1e-3)


def test_extend_horizon_two_stage_factor():
    s = extend_horizon(1e-3, 4000, 8000, mode="two_stage")
    assert s["milestone"] == 3200
    # The paper's real 50k->100k extension used 0.525.
    assert 0.4 < s["factor"] < 0.65
    f = lr_factors("two_stage", 8001, milestone=3200, factor=s["factor"])
    ref, _ = optimal_base_lr(lr_factors("wsd", 4001))
    assert math.isclose(optimal_base_lr(f)[0], ref, rel_tol=1e-6)


def test_lr_factors_shapes():
    assert lr_factors("wsd", 5, cooldown_fraction=0.4, decay="sqrt")[-1] == 0.0
    f = lr_factors("wsd", 10, warmup_steps=4, cooldown_fraction=0.2)
    assert f.tolist()[:5] == [0.0, 0.25, 0.5, 0.75, 1.0]
    c = lr_factors("cosine", 9, final_lr_factor=0.1)
    assert math.isclose(c[-1], 0.1) and np.all(np.diff(c) <= 0)
    assert np.all(lr_factors("linear", 4) == [0.75, 0.5, 0.25, 0.0])
    with pytest.raises(ValueError, match="kind"):
        lr_factors("step", 10)


def test_wsd_scheduler_follows_factors_and_resumes():
    def make():
        p = torch.nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD([p], lr=0.3)
        return opt, WSD(
            opt, total_steps=20, warmup_steps=3, cooldown_fraction=0.3, decay="sqrt"
        )

    opt, sched = make()
    seen = []
    for t in range(20):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
        if t == 9:
            saved = sched.state_dict()
    expected = 0.3 * lr_factors(
        "wsd", 20, warmup_steps=3, cooldown_fraction=0.3, decay="sqrt"
    )
    assert np.allclose(seen, expected, rtol=1e-12, atol=0)
    opt2, sched2 = make()
    sched2.load_state_dict(saved)
    for g in opt2.param_groups:
        g["lr"] = sched2.get_last_lr()[0]
    rest = []
    for _ in range(10):
        rest.append(opt2.param_groups[0]["lr"])
        opt2.step()
        sched2.step()
    assert np.allclose(rest, expected[10:], rtol=1e-12, atol=0)


def test_two_stage_scheduler_follows_extend_horizon():
    s = extend_horizon(0.1, 400, 800, mode="two_stage")
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=s["base_lr"])
    sched = TwoStageWSD(
        opt,
        total_steps=s["total_steps"],
        milestone=s["milestone"],
        factor=s["factor"],
        cooldown_fraction=s["cooldown_fraction"],
    )
    seen = []
    for _ in range(s["total_steps"]):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    f = lr_factors("two_stage", 800, milestone=s["milestone"], factor=s["factor"])
    assert np.allclose(seen, 0.1 * f, rtol=1e-12, atol=0)
    assert seen[s["milestone"] - 1] == 0.1 and math.isclose(
        seen[s["milestone"]], 0.1 * s["factor"]
    )
