"""Write the reference table of deepsig's Almost Stochastic Order that ``tests/stats/test_aso.py`` checks ours against.

deepsig (the deep-significance package, Ulmer et al. 2022) is not a dependency of the toolkit: it pulls in
packages the toolkit does not need. This script runs it once, in a separate environment, on fixed score samples
(25 pairs: 3 to 200 scores per side, equal and unequal sizes, identical, overlapping, crossing and separated
distributions, ties and constant sides, MCC-like values from a few seeds) and writes, per pair, the samples, the
settings (seed, confidence level, number of comparisons, bootstrap iterations, dt) and deepsig's outputs:

* ``eps_min``: ``deepsig.aso(scores_a, scores_b, ...)``, the number the test compares with ours;
* ``violation_ratio``: ``deepsig.aso.compute_violation_ratio`` on the samples (the point estimate inside ``aso``);
* ``boot_std``: the standard deviation of ``deepsig.aso.get_bootstrapped_violation_ratios`` with the same seed (the
  bootstrap inside ``aso``); the script checks that ``eps_min`` is ``violation_ratio + boot_std * Phi^-1(level)``
  clipped to [0, 1], so the table documents how deepsig's number is made;
* ``level``: the confidence level deepsig used. With ``num_comparisons = k > 1`` deepsig 1.2.8 raises the level to
  ``c + (1 - c) / k``, which is Bonferroni's ``1 - (1 - c) / k`` only for k = 2 (for k = 33 at c = 0.95 it is
  0.9515 instead of 0.9985).

Run from the repository root (about 10 minutes on one core: deepsig evaluates its quantile functions point by point)::

    python -m venv .venv-deepsig
    .venv-deepsig/bin/pip install deepsig==1.2.8
    .venv-deepsig/bin/python benchmarks/aso_deepsig_reference.py

It writes ``tests/stats/data/aso_deepsig_reference.json``. The samples come from ``numpy.random.default_rng(20190)``
and are rounded to 4 decimals before deepsig sees them, so the file holds exactly what deepsig was given.
"""

from __future__ import annotations

import json
import platform
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "stats" / "data" / "aso_deepsig_reference.json"
SEED = 20190
DT = 0.005


def _pairs(rng: np.random.Generator) -> list[dict]:
    """The score samples: name, scores_a, scores_b and the deepsig settings of each pair."""
    normal, r = rng.normal, lambda x: np.round(np.asarray(x, dtype=float), 4)
    grid = np.array([0.0, 0.1, 0.2, 0.25, 0.333])
    pairs = [
        ("seeds5_same_distribution", normal(0.30, 0.05, 5), normal(0.30, 0.05, 5)),
        ("seeds5_shift_0.02", normal(0.32, 0.05, 5), normal(0.30, 0.05, 5)),
        ("seeds5_shift_0.05", normal(0.35, 0.05, 5), normal(0.30, 0.05, 5)),
        ("seeds5_separated", normal(0.45, 0.02, 5), normal(0.30, 0.02, 5)),
        ("seeds3_vs_3", normal(0.20, 0.06, 3), normal(0.17, 0.06, 3)),
        ("seeds3_vs_7", normal(0.25, 0.05, 3), normal(0.22, 0.05, 7)),
        ("seeds10_unequal_spread", normal(0.33, 0.02, 10), normal(0.30, 0.08, 10)),
        ("seeds10_ties", rng.choice(grid, 10, p=[0.1, 0.2, 0.3, 0.2, 0.2]),
         rng.choice(grid, 10, p=[0.3, 0.3, 0.2, 0.1, 0.1])),
        ("constant_a_vs_varied_b", np.full(6, 0.2), normal(0.18, 0.05, 6)),
        ("both_constant_equal", np.full(5, 0.1), np.full(5, 0.1)),
        ("both_constant_different", np.full(4, 0.3), np.full(6, 0.1)),
        ("n20_shift_0.5", normal(0.5, 1.0, 20), normal(0.0, 1.0, 20)),
        ("n20_vs_50_shift_0.2", normal(0.2, 1.0, 20), normal(0.0, 1.0, 50)),
        ("n50_same_distribution", normal(0.0, 1.0, 50), normal(0.0, 1.0, 50)),
        ("n50_vs_30_wider_b", normal(0.0, 1.0, 50), normal(0.0, 2.0, 30)),
        ("n100_shift_0.3", normal(0.3, 1.0, 100), normal(0.0, 1.0, 100)),
        ("n200_vs_150_shift_0.1", normal(0.1, 1.0, 200), normal(0.0, 1.0, 150)),
        ("n40_skewed_beta", rng.beta(2.5, 5.0, 40), rng.beta(2.0, 5.0, 40)),
        ("n30_bimodal_vs_unimodal", np.concatenate([normal(-1.0, 0.3, 15), normal(1.2, 0.3, 15)]),
         normal(0.0, 0.5, 30)),
        ("seeds10_a_worse", normal(0.25, 0.05, 10), normal(0.30, 0.05, 10)),
        ("n15_confidence_0.99", normal(0.35, 0.05, 15), normal(0.32, 0.05, 15), {"confidence_level": 0.99}),
        ("seeds10_bonferroni_33", normal(0.40, 0.05, 10), normal(0.33, 0.05, 10), {"num_comparisons": 33}),
        ("seeds8_vs_12_2000_iterations", normal(0.31, 0.04, 8), normal(0.29, 0.04, 12),
         {"num_bootstrap_iterations": 2000, "seed": 7}),
        ("seeds6_around_zero", normal(0.02, 0.05, 6), normal(-0.01, 0.05, 6)),
        ("seeds4_outlier", np.array([0.31, 0.33, 0.30, 0.05]), normal(0.29, 0.02, 4)),
    ]
    out = []
    for name, a, b, *extra in pairs:
        settings = {"confidence_level": 0.95, "num_comparisons": 1, "num_bootstrap_iterations": 1000, "dt": DT,
                    "seed": 1}
        settings.update(*extra)
        out.append({"name": name, "scores_a": r(a).tolist(), "scores_b": r(b).tolist(), "settings": settings})
    return out


def main() -> None:
    """Run deepsig on every pair and write the table."""
    from deepsig import aso
    from deepsig.aso import compute_violation_ratio, get_bootstrapped_violation_ratios, get_quantile_function
    from scipy.stats import norm

    pairs = _pairs(np.random.default_rng(SEED))
    start = time.time()
    for pair in pairs:
        a, b, s = np.array(pair["scores_a"]), np.array(pair["scores_b"]), pair["settings"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Division by zero encountered in violation ratio" for equal sides
            eps_min = aso(a, b, confidence_level=s["confidence_level"], num_comparisons=s["num_comparisons"],
                          num_bootstrap_iterations=s["num_bootstrap_iterations"], dt=s["dt"], num_jobs=1,
                          show_progress=False, seed=s["seed"])
            ratio = compute_violation_ratio(a, b, dt=s["dt"])
            samples = np.array(get_bootstrapped_violation_ratios(
                a, b, get_quantile_function(a), get_quantile_function(b), s["num_bootstrap_iterations"], s["dt"],
                1, False, s["seed"], None))
        # the level deepsig 1.2.8 uses: `confidence_level += (1 - confidence_level) / num_comparisons` when
        # num_comparisons > 1 (Bonferroni's 1 - (1 - confidence_level) / num_comparisons only for 2 comparisons)
        c, k = s["confidence_level"], s["num_comparisons"]
        level = c + (1 - c) / k if k > 1 else c
        rebuilt = float(np.clip(ratio + np.std(samples) * norm.ppf(level), 0, 1))
        assert abs(rebuilt - eps_min) < 1e-12, (pair["name"], rebuilt, eps_min)
        pair["deepsig"] = {"eps_min": float(eps_min), "violation_ratio": float(ratio),
                           "boot_std": float(np.std(samples)), "level": level}
        print(f"{pair['name']:32s} n={len(a):3d} m={len(b):3d} eps_min={eps_min:.4f} "
              f"violation_ratio={ratio:.4f} boot_std={np.std(samples):.4f}", flush=True)
    table = {
        "made_by": "benchmarks/aso_deepsig_reference.py",
        "command": ".venv-deepsig/bin/python benchmarks/aso_deepsig_reference.py (deepsig installed with "
                   "pip install deepsig==1.2.8)",
        "versions": {"deepsig": version("deepsig"), "numpy": np.__version__, "scipy": version("scipy"),
                     "python": platform.python_version()},
        "sample_seed": SEED,
        "notes": "deepsig.aso(scores_a, scores_b, confidence_level, num_comparisons, num_bootstrap_iterations, dt, "
                 "num_jobs=1, show_progress=False, seed); violation_ratio and boot_std are its point estimate and "
                 "the standard deviation of its bootstrap ratios (same seed), eps_min = clip(violation_ratio + "
                 "boot_std * Phi^-1(level), 0, 1) with level = confidence_level + (1 - confidence_level) / "
                 "num_comparisons when num_comparisons > 1, else confidence_level",
        "pairs": pairs,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT} "
          f"({len(pairs)} pairs, {time.time() - start:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
