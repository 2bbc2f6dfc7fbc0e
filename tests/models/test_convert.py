"""The E5S1 header as the configuration of a transformers BertModel (the converted folder is loaded by
tests/models/test_embedded.py)."""

from __future__ import annotations

import numpy as np

from diagnostics.models._convert import bert_config_dict

from _e5s1_files import small_e5s1


def test_the_header_becomes_a_bert_config_that_transformers_reads():
    src = small_e5s1(num_layers=3, intermediate_size=24, layer_norm_eps=float(np.float32(1e-12)))
    config = bert_config_dict(src)
    assert (config["num_hidden_layers"], config["hidden_size"], config["num_attention_heads"],
            config["intermediate_size"], config["vocab_size"]) == (3, 8, 2, 24, src.vocab_size)
    assert (config["pad_token_id"], config["bos_token_id"], config["eos_token_id"]) == (1, 0, 2)
    assert config["layer_norm_eps"] == 1e-12  # what was written, not its float32 rounding
    assert config["hidden_act"] == "gelu" and config["architectures"] == ["BertModel"]
    assert (config["max_position_embeddings"], config["type_vocab_size"]) == (32, 2)
