"""Plan before work: every run a scale will train, what is done, what it costs, and what stops it.

:func:`check_plan` lists the runs of a scale's plan (experiment, language, seed, model, training mixture with sources
and sizes and the state in the run store) and checks, before anything trains, that every source exists and holds the
sizes asked of it, that every language that trains can be scored and that every model is available locally.
``diagnostics pipeline --dry-run [--json]`` prints it; the real run refuses to start while it has problems.

Its cost comes from the training loop's own planning function, :func:`diagnostics.finetune.total_steps`:
a run's upper bound is its step budget times the batch size (pairs actually trained, a pair seen in two epochs
counted twice), so the estimate follows the recipe the config chooses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diagnostics.data import DataRef
from diagnostics.finetune import SweepConfig
from diagnostics.finetune import ConfigError, ModelSpec
from diagnostics.finetune import input_problems, model_problems

from ._scale_plan import ScalePlan, experiment_configs
from ._substitutes import substitutions


@dataclass
class CheckedPlan:
    """A scale's plan, checked: its runs, notices and blocking problems (what ``pipeline --dry-run`` prints).

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` or ``paper``.
    runs : list of dict
        One per run: ``experiment, language, seed, model, mixture`` (list of ``{source, size}``), ``train_pairs``,
        ``max_steps`` (the run's step budget, :func:`diagnostics.finetune.total_steps`), ``max_pair_epochs``
        (``max_steps`` x batch size: the pairs it trains at most; early stopping ends most runs sooner),
        ``fuse`` (the slots of the run's job) and ``group`` (its fused job, which may span experiments and
        languages; ``None`` when the run trains alone, is done, or its slots are decided on the device), ``state``
        (``done`` / ``pending`` / ``failed`` / ``interrupted`` / ``running`` / ``conflict``), ``path``.
    notices : list of str
        Things the user should know that do not stop the run (a language skipped for lack of data, a dataset
        standing in for the study's).
    problems : list of str
        One line each; the plan cannot run while any is left.
    train_pairs_per_s : float, optional
        Throughput behind the hours estimate.
    substitutions : dict
        Language -> datasets standing in for the study's (see :func:`diagnostics.pipeline._substitutes.substitutions`).
    schedules : dict
        ``jiant`` recipe only: each reading of the validation schedule (:data:`diagnostics.finetune.VAL_SCHEDULES`)
        -> ``{"runs", "max_pairs", "hours": {rate: hours}, "chosen", "source"}`` for the runs still to train, the
        pairs they train at most under that reading and the hours at each of :data:`PLAN_RATES` pairs/s, and the
        same expected under early stopping (``expected_pairs``, ``expected_hours``; see ``best_check``).
    best_check : dict
        ``jiant`` recipe only: the check at which runs are assumed to stop improving, and why
        (:func:`assumed_best_check`).
    exposure : list of dict
        ``jiant`` recipe only: per training mixture and reading, the pairs a run sees at most and, per mixture order,
        how many of them are the language's own (:func:`exposure_table`).
    """

    scale: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    train_pairs_per_s: float | None = None
    substitutions: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    schedules: dict[str, dict[str, Any]] = field(default_factory=dict)
    best_check: dict[str, Any] = field(default_factory=dict)
    exposure: list[dict[str, Any]] = field(default_factory=list)

    def counts(self) -> dict[str, dict[str, int]]:
        """Count, per experiment, the runs, those done, the pair-epochs still to train (upper bound) and the jobs.

        Experiment -> ``{"runs": int, "done": int, "pair_epochs": int, "jobs": int}``, in plan order; ``jobs``
        counts the executor's jobs that hold runs of the experiment still to train (a fused job may hold runs of
        several experiments and counts in each).
        """
        out: dict[str, dict[str, int]] = {}
        jobs: set[tuple[str, str]] = set()
        for run in self.runs:
            entry = out.setdefault(run["experiment"], {"runs": 0, "done": 0, "pair_epochs": 0, "jobs": 0})
            entry["runs"] += 1
            job = run["experiment"], run.get("group") or run["path"]
            if run["state"] != "done" and job not in jobs:
                jobs.add(job)
                entry["jobs"] += 1
            entry["done"] += run["state"] == "done"
            entry["pair_epochs"] += 0 if run["state"] == "done" else (run["max_pair_epochs"] or 0)
        return out

    def groups(self) -> dict[str, list[dict[str, Any]]]:
        """The fused jobs of the runs still to train: job name -> its runs (a job may span experiments)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for run in self.runs:
            if run["state"] != "done" and run.get("group"):
                out.setdefault(run["group"], []).append(run)
        return out

    def cost(self) -> dict[str, Any]:
        """Estimate the cost: runs to train, their pair-epochs (upper bound) and, with a throughput, hours.

        Keys ``runs_to_train``, ``runs_done``, ``max_pair_epochs``, ``train_pairs_per_s`` and ``max_hours``
        (``None`` without a throughput).
        """
        todo = [r for r in self.runs if r["state"] != "done"]
        pair_epochs = sum(r["max_pair_epochs"] or 0 for r in todo)
        hours = None if not self.train_pairs_per_s else round(pair_epochs / self.train_pairs_per_s / 3600, 1)
        return {"runs_to_train": len(todo), "runs_done": len(self.runs) - len(todo),
                "max_pair_epochs": pair_epochs, "train_pairs_per_s": self.train_pairs_per_s,
                "max_hours": hours}

    def to_dict(self) -> dict[str, Any]:
        """Build the JSON document of ``--dry-run --json``.

        Keys ``scale``, ``runs``, ``counts`` (:meth:`counts`), ``cost`` (:meth:`cost`), ``groups`` (fused job ->
        its runs still to train), ``notices``, ``problems``, ``substitutions``, ``schedules``, ``best_check``,
        ``exposure``.
        """
        return {"scale": self.scale, "runs": self.runs, "counts": self.counts(), "cost": self.cost(),
                "groups": {name: len(members) for name, members in self.groups().items()},
                "notices": self.notices, "problems": self.problems, "substitutions": self.substitutions,
                "schedules": self.schedules, "best_check": self.best_check, "exposure": self.exposure}

    def _exposure_lines(self) -> list[str]:
        """The table of what runs train on: pairs seen, and the language's own among them, per mixture order."""
        orders = list(self.exposure[0]["own_pairs"])
        out = ["what a run trains on at most (jiant recipe): pairs seen, of them the language's own train pairs "
               "(expected), per mixture_order:",
               f"  {'mixture':24s} {'reading':17s} {'pairs':>9s}  " + "  ".join(f"{o:>18s}" for o in orders)]
        for row in self.exposure:
            mixture = f"{row['language']} {row['own']:,} + {row['total'] - row['own']:,}"
            own = "  ".join(f"{row['own_pairs'][o]:>9,} ({row['own_share'][o]:6.1%})" for o in orders)
            chosen = f"  <- this plan ({row['order']})" if row["chosen"] else ""
            out.append(f"  {mixture:24s} {row['reading']:17s} {row['pairs']:>9,}  {own}{chosen}")
        return out

    def lines(self) -> list[str]:
        """Render the human-readable plan: one line per run, counts per experiment, cost, notices, problems.

        The lines carry no newlines.
        """
        out = []
        for run in self.runs:
            mixture = " + ".join(f"{m['source']} {m['size'] if m['size'] is not None else '?'}"
                                 + (f" ({m['feature']} {m['feature_share']:.0%})" if "feature" in m else "")
                                 for m in run["mixture"])
            out.append(f"{run['experiment']:36s} {run['language']:3s} seed={run['seed']:<3d} {run['model']:30s} "
                       f"{mixture:60s} {run['state']}")
        out.append("")
        fuse = sorted({str(run["fuse"]) for run in self.runs if run["state"] != "done" and run.get("fuse") != 1})
        for name, entry in self.counts().items():
            jobs = f", in {entry['jobs']:4d} fused jobs" if fuse and entry["jobs"] else ""
            out.append(f"{name:36s} {entry['runs']:4d} runs, {entry['done']:4d} done{jobs}")
        groups = self.groups()
        for name, members in groups.items():
            experiments = sorted({run["experiment"] for run in members})
            languages = sorted({run["language"] for run in members})
            out.append(f"{name} ({len(experiments)} experiments, languages {', '.join(languages)})")
        cost = self.cost()
        hours = (f", about {cost['max_hours']} h at {cost['train_pairs_per_s']:g} training pairs/s" if
                 cost["max_hours"] is not None else " (set --set train_pairs_per_s=N for hours)")
        todo = [run for run in self.runs if run["state"] != "done"]
        grouping = (f" in {len({run.get('group') or run['path'] for run in todo})} jobs (fuse={'/'.join(fuse)}; the "
                    "rate is the device's aggregate over a job)" if fuse else "")
        out.append(f"total: {len(self.runs)} runs, {cost['runs_done']} done, {cost['runs_to_train']} to train"
                   f"{grouping}; at most {cost['max_pair_epochs']:,} pair-epochs{hours}")
        if self.schedules:
            out.append("validation schedule (jiant recipe), runs still to train under each reading, at most:")
            for name, entry in self.schedules.items():
                hours = ", ".join(f"{h:,.1f} h at {rate:g} pairs/s" for rate, h in entry["hours"].items())
                chosen = "  <- this plan" if entry["chosen"] else ""
                out.append(f"  {name:17s} {entry['runs']:4d} runs, {entry['max_pairs']:>13,} pairs, {hours}{chosen}")
                if entry.get("expected_pairs") is not None:
                    hours = ", ".join(f"{h:,.1f} h" for h in entry["expected_hours"].values())
                    out.append(f"  {'':17s} {'expected':>9s} {entry['expected_pairs']:>13,} pairs, {hours} with "
                               "early stopping")
            if self.best_check:
                out.append(f"  expected: runs stop improving at check {self.best_check['check']} "
                           f"({self.best_check['source']})")
        if self.exposure:
            out += self._exposure_lines()
        out += [f"notice: {n}" for n in self.notices]
        out += [f"problem: {p}" for p in self.problems]
        return out


class SourceSizes:
    """Labelled pairs of each referenced source, each read once (and the problem a source has, if any)."""

    def __init__(self):
        self._sizes: dict[tuple, int | None] = {}
        self.problems: dict[tuple, str] = {}
        #: (labelled, pairs) per source read, shared with the sweep's own input check (data_problems)
        self.counts: dict[tuple, tuple[int, int]] = {}

    def size(self, ref: DataRef, option: str) -> int | None:
        """Count the labelled pairs in ``ref`` (read once per reference).

        ``option`` is the command-line option that supplies its file, named in the problem of a missing source.
        ``None`` when the source cannot be read (the reason goes to :attr:`problems`).
        """
        key = (ref.name, ref.split, ref.path, ref.language)
        if key not in self._sizes:
            self._sizes[key] = None
            try:
                frame = ref.load()
                self._sizes[key] = int(frame["label"].notna().sum())
                self.counts[key] = (self._sizes[key], len(frame))
            except FileNotFoundError as err:
                self.problems[key] = self._missing(ref, option, err)
            except Exception as err:  # a reader's DataFormatError names file and line; keep it on one line
                self.problems[key] = f"{_name(ref)}: cannot be read: {' '.join(str(err).split())}"
        return self._sizes[key]

    @staticmethod
    def _missing(ref: DataRef, option: str, err: Exception) -> str:
        if ref.path is None:
            return f"{_name(ref)}: no file given; supply it with {option}"
        return f"{_name(ref)}: {ref.path} does not exist; supply it with {option}"


def _name(ref: DataRef) -> str:
    return ref.name if ref.split is None or ref.path else f"{ref.name}:{ref.split}"


def _option(ref: DataRef, language: str, part: str) -> str:
    if ref.name == "mnli":
        return ("--data mnli=PATH (GLUE train.tsv or MultiNLI train.jsonl), or take the bundled SICK as a "
                "stand-in with --set extra_source=sick")
    return f"--data {language}.{part}=PATH"


def _mixture(config: SweepConfig, language: str, sizes: SourceSizes, shortfalls: dict[tuple, list[str]],
             experiment: str) -> tuple[list[dict[str, Any]], int | None]:
    """Sources and sizes of one language's training mixture; sizes a source cannot supply go to ``shortfalls``
    (``(source, path, asked, found, remedy) -> experiments``)."""
    from diagnostics.finetune import extra_ref

    refs = config.language_data(language)
    train_found = sizes.size(refs["train"], _option(refs["train"], language, "train"))
    if train_found == 0:
        shortfalls.setdefault((_name(refs["train"]), refs["train"].path, config.train_size or "labelled", 0,
                               f"a labelled training file with --data {language}.train=PATH"), []).append(experiment)
    train_size = config.train_size if config.train_size is not None else train_found
    if config.train_size is not None and train_found and config.train_size > train_found:
        shortfalls.setdefault((_name(refs["train"]), refs["train"].path, config.train_size, train_found,
                               f"a larger file with --data {language}.train=PATH or a lower train_size"),
                              []).append(experiment)
    mixture = [{"source": _name(refs["train"]), "size": train_size}]
    ref = extra_ref(config)
    if ref is not None:
        found = sizes.size(ref, _option(ref, language, "extra"))
        asked = config.extra_data.size
        if found is not None and asked > found:
            option = "a larger file with --data mnli=PATH" if ref.name == "mnli" else "a larger source"
            shortfalls.setdefault((_name(ref), ref.path, asked, found, f"{option}, or smaller sizes (--set "
                                   "extra_sizes=[...], --set presence_extra_size=N)"), []).append(experiment)
        entry = {"source": _name(ref), "size": asked}
        if config.presence is not None and config.presence.within == "extra":
            entry["feature_share"] = config.presence.share
        mixture.append(entry)
    if config.presence is not None:
        mixture[0 if config.presence.within == "train" else -1] |= {"feature": config.presence.feature,
                                                                     "feature_share": config.presence.share}
    total = None if any(m["size"] is None for m in mixture) else sum(m["size"] for m in mixture)
    return mixture, total


def model_problem(model: ModelSpec) -> tuple[str | None, str | None]:
    """Say why a model cannot be loaded here, or that the run will download it; nothing is downloaded.

    Returns ``(problem, notice)``: a problem line with its remedy (not cached, and offline or not a model folder),
    or a notice that the run downloads the model (not cached, and the hub may be asked); ``(None, None)`` when the
    model is here (or is the embedded one, built on first use).
    """
    from diagnostics.finetune import locate_model
    from diagnostics.models import ModelNotCachedError

    try:  # the sweep's own check: config.json and safetensors weights; the embedded model is built on first use
        locate_model(model, download=False)
    except ModelNotCachedError as err:
        return None, " ".join(str(err).split())
    except FileNotFoundError as err:  # ModelNotAvailableError included: first sentence, one line
        first = " ".join(str(err).split()).split(". ")[0]
        return (f"model {model.name!r} is not available locally: {first}; give a local folder with "
                f"--set 'models=[{{name: {model.name}, path: /path/to/model}}]'"), None
    return None, None


def check_plan(scale_plan: ScalePlan, only: tuple[str, ...] | None = None) -> CheckedPlan:
    """List every run of a resolved scale, with its state, the sources and sizes of its mixture, notices and problems.

    ``scale_plan`` is the scale resolved against its inputs (:meth:`ScalePlan.resolve`); states are read from its
    run store. ``only`` names the experiment families to plan (``base``, ``extra``, ``presence``). Problems are
    collected, never raised: a plan is always returned for the dry run to print.

    Parameters
    ----------
    scale_plan : ScalePlan
        The scale resolved against its inputs.
    only : tuple of str, optional
        The experiment families to plan (default: all).

    Returns
    -------
    CheckedPlan
        The runs, their counts and cost, the notices and the problems.
    """
    from diagnostics.finetune import total_steps
    from diagnostics.finetune import run_states, settings_conflict

    spec = scale_plan.spec
    configs = experiment_configs(scale_plan, only)
    plan = CheckedPlan(scale_plan.scale, train_pairs_per_s=spec.train_pairs_per_s)
    for language in scale_plan.skipped:
        plan.notices.append(f"{language}: skipped (no training data); supply --data {language}.train=PATH and "
                            f"--data {language}.validation=PATH to train it")
    for language in scale_plan.unscored:
        supply = f"supply --data {language}.diagnostics=PATH (AX-b/LiDiRus-format JSONL)"
        if spec.score_missing == "problem":
            plan.problems.append(f"{language}: has training data but no diagnostic set, so its runs would train and "
                                 f"never be scored; {supply}, or leave {language} out with --set score_missing=skip "
                                 f"(--set score_missing=train trains it anyway)")
        elif spec.score_missing == "skip":
            plan.notices.append(f"{language}: skipped (no diagnostic set to score it, score_missing=skip); {supply} "
                                f"to train and score it")
        else:
            plan.notices.append(f"{language}: trains without a diagnostic set (score_missing=train): its runs are "
                                f"never scored; {supply} to score them")
    plan.substitutions = substitutions(configs)
    for language, entries in plan.substitutions.items():
        for entry in entries:
            if entry["role"] == "diagnostic":
                plan.notices.append(f"{language}: scored on {entry['name']}, not on {entry['instead_of']}; its "
                                    f"results are labelled {entry['label']!r}")
    sick = [lang for lang, entries in plan.substitutions.items() if any(e["role"] == "extra" for e in entries)]
    if sick:
        plan.notices.append(f"extra English data ({', '.join(sick)}): the bundled SICK stands in for MNLI, the "
                            "study's; supply --data mnli=PATH and --set extra_source=mnli to train on it")
    sizes = SourceSizes()
    pending_jiant: list[tuple[SweepConfig, int]] = []
    jiant_mixtures: dict[tuple[str, int, int], SweepConfig] = {}
    best_checks: list[int] = []
    pending: list[tuple[SweepConfig, Any]] = []
    shortfalls: dict[tuple, list[str]] = {}
    seen_models = set()
    for name, config in configs.items():
        for model in config.models:
            if model.slug not in seen_models:
                seen_models.add(model.slug)
                problem, notice = model_problem(model)
                plan.problems += [problem] if problem else []
                plan.notices += [notice] if notice else []
        plan.problems += [f"{key}: {message}" for key, message in model_problems(config, availability=False,
                                                                                download=False)]
        mixtures = {}
        for language in config.languages:
            mixtures[language] = _mixture(config, language, sizes, shortfalls, name)
            refs = config.language_data(language)
            sizes.size(refs["validation"], _option(refs["validation"], language, "validation"))
            for ref in refs["diagnostics"]:
                sizes.size(ref, _option(ref, language, "diagnostics"))
        conflicts = []
        states = run_states(config)
        pending += [(config, spec_run) for spec_run, state in states if state != "done"]
        for spec_run, state in states:
            mixture, total = mixtures[spec_run.language]
            steps = None if total is None else total_steps(config, total)
            if config.recipe == "jiant" and total is not None:
                if state != "done":
                    pending_jiant.append((config, total))
                jiant_mixtures.setdefault((spec_run.language, mixture[0]["size"], total), config)
                if state == "done":
                    best_checks += _best_check(spec_run.path)
            plan.runs.append({"experiment": name, "language": spec_run.language, "seed": spec_run.seed,
                              "model": spec_run.model_spec.name, "mixture": mixture, "train_pairs": total,
                              "max_steps": steps,
                              "max_pair_epochs": None if steps is None else steps * config.batch_size,
                              "state": state, "path": str(spec_run.path), "fuse": None, "group": None})
            if state == "conflict":
                conflicts.append(spec_run)
        if conflicts:
            plan.problems.append(f"{name}: {len(conflicts)} finished run(s) were made with other settings "
                                 f"({settings_conflict(config, conflicts[0])}); the run refuses them: choose "
                                 f"another --runs folder or delete {Path(config.output_dir) / name}")
    for (source, path, asked, found, remedy), experiments in shortfalls.items():
        where = f" in {path}" if path else ""
        users = ", ".join(dict.fromkeys(experiments))
        plan.problems.append(f"{source}: asked for {asked} pairs ({users}), found {found}{where}; supply {remedy}")
    plan.problems += list(dict.fromkeys(sizes.problems.values()))
    if not plan.problems:  # what only the sweep's own check sees (an unlabelled validation set ...): same verdict
        for config in configs.values():
            plan.problems += ConfigError(input_problems(config, sizes.counts), config._source).lines()
    plan.problems = list(dict.fromkeys(plan.problems))
    plan.best_check = assumed_best_check(best_checks)
    plan.schedules = schedule_costs(pending_jiant, plan.best_check["check"])
    plan.exposure = exposure_table(jiant_mixtures)
    slots_of, group_of = _fused_groups(pending)
    for run in plan.runs:
        run["fuse"] = slots_of.get(run["path"], configs[run["experiment"]].fuse)
        run["group"] = group_of.get(run["path"])
    return plan


#: Training rates (pairs/s) the plan prices each validation-schedule reading at, both of the study's recipe on a
#: random mBERT-sized model, RTE lengths, batch 4, one H100 (benchmarks/results/bench_fused_sweep_cuda_h100.json):
#: one run at a time (fuse 1, fp32: 80.8) and 16 runs as one job at configs/paper.yaml's precision (K = 16, tf32:
#: 483.4; bf16 492.1).
PLAN_RATES = (80.8, 483.4)


def schedule_costs(runs: list[tuple[SweepConfig, int]], best_check: int = 0) -> dict[str, dict[str, Any]]:
    """Price the ``jiant`` runs still to train under each reading of the validation schedule.

    Parameters
    ----------
    runs : list of (SweepConfig, int)
        Each run's config (``recipe: jiant``) and the pairs of its training mixture.
    best_check : int
        The check at which a run's validation score is assumed to stop improving (:func:`assumed_best_check`);
        ``0``: no expected figure, the upper bound only.

    Returns
    -------
    dict
        Reading name -> ``{"runs", "max_pairs", "hours": {rate: hours}, "expected_pairs", "expected_hours",
        "chosen", "source"}`` (see :attr:`CheckedPlan.schedules`); empty without such runs.
    """
    from diagnostics.finetune import VAL_SCHEDULES, expected_stop, total_steps

    if not runs:
        return {}
    chosen = {config.val_schedule for config, _ in runs}
    out = {}
    for name, reading in VAL_SCHEDULES.items():
        pairs = sum(total_steps(config, size, name) * config.batch_size for config, size in runs)
        expected = (sum(expected_stop(config, size, name, best_check) * config.batch_size for config, size in runs)
                    if best_check else None)
        out[name] = {"runs": len(runs), "max_pairs": pairs,
                     "hours": {rate: round(pairs / rate / 3600, 1) for rate in PLAN_RATES},
                     "expected_pairs": expected,
                     "expected_hours": None if expected is None else
                     {rate: round(expected / rate / 3600, 1) for rate in PLAN_RATES},
                     "chosen": name in chosen, "source": reading.source}
    return out


#: Without finished runs to learn from, the check at which a ``jiant`` run's validation score is assumed to stop
#: improving: the fifth (3,125 steps, 12,500 pairs at batch 4), where the paper sees overall MCC stop rising
#: ("at the size of RTE + 10k", §5.3). Runs then stop by patience 21 checks later under ``jiant_superglue``.
ASSUMED_BEST_CHECK = 5
#: Finished runs needed before their own best checks replace :data:`ASSUMED_BEST_CHECK`.
MIN_RUNS_FOR_BEST_CHECK = 3


def _best_check(path) -> list[int]:
    """The best check of a finished run (from its ``metrics.json``), or nothing where it has none."""
    from diagnostics.finetune import Run

    try:
        best = Run.at(path).metrics().get("best") or {}
    except (OSError, ValueError):
        return []
    return [int(best["check"])] if isinstance(best.get("check"), int) else []


def assumed_best_check(checks: list[int]) -> dict[str, Any]:
    """The check behind the plan's expected cost: the median best check of finished runs, or the assumption.

    Parameters
    ----------
    checks : list of int
        The best check of each finished ``jiant`` run in the store.

    Returns
    -------
    dict
        ``{"check": int, "source": str}``: the median of ``checks`` when there are at least
        :data:`MIN_RUNS_FOR_BEST_CHECK`, else :data:`ASSUMED_BEST_CHECK` with the reason.
    """
    if len(checks) >= MIN_RUNS_FOR_BEST_CHECK:
        ordered = sorted(checks)
        return {"check": ordered[(len(ordered) - 1) // 2],
                "source": f"the median best check of the {len(checks)} finished jiant runs in the store"}
    return {"check": ASSUMED_BEST_CHECK,
            "source": "assumed: the paper's overall MCC stops rising at RTE + 10k, about the fifth check"}


def exposure_table(mixtures: dict[tuple[str, int, int], SweepConfig]) -> list[dict[str, Any]]:
    """What a ``jiant`` run trains on per mixture, reading of the schedule and mixture order (upper bound).

    Parameters
    ----------
    mixtures : dict
        ``(language, own train pairs, mixture pairs)`` -> a config that trains it.

    Returns
    -------
    list of dict
        One row per mixture x reading: ``language, own, total, reading, steps, pairs, order`` and, per order of
        :data:`diagnostics.finetune.MIXTURE_ORDERS`, ``own_pairs[order]`` (expected pairs of the language's own
        train set among those seen) and ``own_share[order]``; ``chosen`` marks the config's own reading, ``order``
        names its mixture order.
    """
    from diagnostics.finetune import MIXTURE_ORDERS, VAL_SCHEDULES, exposure, total_steps

    rows = []
    for (language, own, total), config in sorted(mixtures.items(), key=lambda item: (item[0][0], item[0][2])):
        for name in VAL_SCHEDULES:
            steps = total_steps(config, total, name)
            seen = {order: exposure(steps, config.batch_size, own, total, order) for order in MIXTURE_ORDERS}
            first = next(iter(seen.values()))
            rows.append({"language": language, "own": own, "total": total, "reading": name, "steps": steps,
                         "pairs": first.pairs, "chosen": name == config.val_schedule, "order": config.mixture_order,
                         "own_pairs": {order: round(e.own_pairs) for order, e in seen.items()},
                         "own_share": {order: round(e.own_share, 4) for order, e in seen.items()}})
    return rows


def _fused_groups(pending: list) -> tuple[dict[str, int | str], dict[str, str]]:
    """Each pending run's slots and job (run folder -> slots, run folder -> job name), as the sweep will cut them.

    Runs of every experiment that share a training key share a job (:func:`diagnostics.finetune.group_jobs`).
    ``fuse: auto`` is measured on the device the sweep runs on; on a machine without that device (a login node)
    its runs say ``auto`` and name no job.
    """
    from diagnostics.finetune import job_slots, jobs

    slots_of: dict[str, int | str] = {}
    measurable = []
    for config, spec in pending:
        if config.fuse == "auto" and config.device != "cpu":
            import torch

            if not torch.cuda.is_available():
                slots_of[str(spec.path)] = "auto"
                continue
        measurable.append((config, spec))
    group_of: dict[str, str] = {}
    config_of = {str(spec.path): config for config, spec in measurable}
    for number, job in enumerate(jobs(measurable, measurable[0][0].executor if measurable else "inprocess"), 1):
        size = min(len(job), job_slots(config_of[str(job[0].path)], job))
        for spec in job:
            slots_of[str(spec.path)] = size
            if size > 1 or len(job) > 1:
                group_of[str(spec.path)] = f"job {number}: {len(job)} runs in {size} slots"
    return slots_of, group_of


def build_mixtures(configs: dict[str, SweepConfig]) -> list[str]:
    """Build every controlled (presence) training mixture once before training; one problem line per failure.

    Feature counts are known only once the extra data is annotated (cached for later runs), so this is where a
    feature too rare for a share is found, before any run starts. Only the sweeps of ``configs`` with
    ``presence`` are built; a problem line reads ``<experiment> (<language>): <reason>``.
    """
    from tqdm.auto import tqdm

    from diagnostics.finetune import training_mixture

    problems = []
    todo = [(name, cfg, lang) for name, cfg in configs.items() if cfg.presence is not None for lang in cfg.languages]
    show = bool(todo) and todo[0][1].progress
    for name, config, language in tqdm(todo, desc="presence mixtures", disable=not show):
        try:
            training_mixture(config, language)
        except ValueError as err:
            problems.append(f"{name} ({language}): {' '.join(str(err).split())}")
    return list(dict.fromkeys(problems))
