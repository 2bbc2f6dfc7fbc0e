"""The main job: sweeps -> statistics -> probes -> executed notebooks -> HTML report, at one of three scales."""

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "notebook_paths": "_locate", "PROBE_RESULTS": "_locate", "probe_results_file": "_locate",
    **dict.fromkeys(["SCALES", "ScaleSpec"], "_scales"),
    **dict.fromkeys(["ScalePlan", "experiment_configs", "extra_size", "plan_datasets", "pretrained_models"],
                    "_scale_plan"),
    # the runner imports the training and notebook machinery
    "ensure_runs": "_runner", "run_pipeline": "_runner", "detach_pipeline": "_runner",
    # the notebooks the main job skips, and how a test executes one as the main job does
    **dict.fromkeys(["NOT_IN_MAIN_JOB", "execute_notebook"], "_runner"),
    # used by the other stages, the notebooks and the docs
    "probe_frames": "_scales",
    # what `diagnostics pipeline` reads and plans
    **dict.fromkeys(["PipelineInputs", "parse_data"], "_inputs"), "PlanError": "_runner", "check_plan": "_plan",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
