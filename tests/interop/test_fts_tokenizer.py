"""lance-cpp's full-text tokenizer against pylance's (lance.tokenize): the
same tokens, in the same places, for every parameter set lance-cpp
implements, over tens of thousands of English words and text mixing scripts,
accents, digits and punctuation; and the same refusals."""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

import lance

REPO = Path(__file__).resolve().parents[2]


def english_words() -> list[str]:
    """Words of the pinned .venv's Python sources and docstrings: a
    deterministic corpus, rich in inflected English."""
    root = Path(lance.__file__).parent.parent
    words = set()
    for f in sorted(root.rglob("*.py")):
        words.update(re.findall(r"[A-Za-z']{2,}", f.read_text(errors="ignore")))
        if len(words) > 60000:
            break
    return sorted(words)


def mixed_text(seed: int, n: int) -> str:
    rng = random.Random(seed)
    pieces = ["Ünïcödé", "naïve", "CAFÉ", "straße", "ﬁne", "Ｆｕｌｌ", "İstanbul", "ǅemal", "ΣΟΦΊΑ", "σοφία",
              "Москва", "東京タワー", "한국어", "١٢٣", "x²", "½", "don't", "it's", "o'clock", "U.S.A.", "e-mail",
              "snake_case", "camelCase", "3.14159", "v1.2.3", "#tag", "@user", "😀smile", "a\u0301b", "\u00a0nbsp",
              "tab\there", "line\nbreak", "ÆØÅ", "œuvre", "Ĳssel", "ŉ", "ǈ", "Ⅻ", "①", "ʰ", "ﬀ", "“quoted”", "‐dash—",
              "running", "generously", "universities", "organizations", "dying", "skies", "proceeded", "the", "The",
              "a" * 39, "b" * 40, "é" * 20, "é" * 19 + "e"]
    out = []
    for _ in range(n):
        out.append(rng.choice(pieces))
        out.append(rng.choice([" ", "  ", ", ", ". ", "-", "/", "\t", ";", "!", " (", ") "]))
    return "".join(out)


# (pylance kwargs, lance-cpp flags)
CONFIGS = [
    ({}, []),
    ({"stem": False}, ["--no-stem"]),
    ({"remove_stop_words": False}, ["--no-remove-stop-words"]),
    ({"ascii_folding": False}, ["--no-ascii-folding"]),
    ({"lower_case": False}, ["--no-lower-case"]),
    ({"lower_case": False, "stem": False, "remove_stop_words": False, "ascii_folding": False},
     ["--no-lower-case", "--no-stem", "--no-remove-stop-words", "--no-ascii-folding"]),
    ({"max_token_length": None}, ["--max-token-length", "none"]),
    ({"max_token_length": 6}, ["--max-token-length", "6"]),
    ({"custom_stop_words": ["run", "univers", "cafe"]}, ["--custom-stop-words", "run,univers,cafe"]),
    ({"base_tokenizer": "whitespace"}, ["--base-tokenizer", "whitespace"]),
    ({"base_tokenizer": "whitespace", "stem": False}, ["--base-tokenizer", "whitespace", "--no-stem"]),
    ({"base_tokenizer": "raw", "max_token_length": None}, ["--base-tokenizer", "raw", "--max-token-length", "none"]),
    ({"base_tokenizer": "ngram"}, ["--base-tokenizer", "ngram"]),
    ({"base_tokenizer": "ngram", "min_ngram_length": 1, "max_ngram_length": 4, "prefix_only": True},
     ["--base-tokenizer", "ngram", "--min-ngram-length", "1", "--max-ngram-length", "4", "--prefix-only"]),
    ({"base_tokenizer": "ngram", "min_ngram_length": 2, "max_ngram_length": 5},
     ["--base-tokenizer", "ngram", "--min-ngram-length", "2", "--max-ngram-length", "5"]),
]


def ours(lance_cpp, tmp_path: Path, text: str, flags: list[str]) -> list[tuple[str, int]]:
    f = tmp_path / "text.txt"
    f.write_bytes(text.encode())
    proc = lance_cpp.run_ok("tokenize", "--input", f, *flags)
    tokens = [(t, p) for t, p in json.loads(proc.stdout)]
    # pylance numbers positions from the first token it keeps.
    first = tokens[0][1] if tokens else 0
    return [(t, p - first) for t, p in tokens]


def theirs(text: str, kwargs: dict) -> list[tuple[str, int]]:
    return [(t.text, t.position) for t in lance.tokenize(text, **kwargs)]


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i, x, y
    return min(len(a), len(b)), a[len(b):len(b) + 1], b[len(a):len(a) + 1]


@pytest.mark.parametrize("kwargs,flags", CONFIGS, ids=[" ".join(f) or "defaults" for _, f in CONFIGS])
def test_mixed_text_tokens_as_pylance(lance_cpp, tmp_path, kwargs, flags):
    for seed in range(3):
        text = mixed_text(seed, 400)
        want, got = theirs(text, kwargs), ours(lance_cpp, tmp_path, text, flags)
        assert got == want, f"seed {seed}: first difference {first_difference(got, want)}"


@pytest.mark.parametrize("kwargs,flags", CONFIGS[:6], ids=[" ".join(f) or "defaults" for _, f in CONFIGS[:6]])
def test_english_words_as_pylance(lance_cpp, tmp_path, kwargs, flags):
    """Every word alone (stems, stop words, apostrophes, case) — the words are
    joined by newlines so each is one base token."""
    words = english_words()
    assert len(words) > 20000
    text = "\n".join(words)
    want, got = theirs(text, kwargs), ours(lance_cpp, tmp_path, text, flags)
    if got != want:
        i, g, w = first_difference(got, want)
        pytest.fail(f"{len(got)} vs {len(want)} tokens; first difference at {i}: ours {g}, pylance {w}")


def test_unicode_tables_are_pylances():
    """The generated character tables are what pylance answers today."""
    proc = subprocess.run([sys.executable, str(REPO / "scripts/gen_fts_tables.py"), "--check"])
    assert proc.returncode == 0, "src/lance/index/fts_unicode_tables.inc differs from pylance: rerun the script"


def test_refusals(lance_cpp):
    # Unknown to both.
    with pytest.raises(Exception, match="Klingon"):
        lance.tokenize("x", language="Klingon")
    proc = lance_cpp.run("tokenize", "x", "--language", "Klingon")
    assert proc.returncode == 1 and "Klingon" in proc.stderr
    # pylance stems French; lance-cpp does not and says so instead of
    # tokenizing differently.
    assert [t.text for t in lance.tokenize("les chats", language="French")] == ["chat"]
    proc = lance_cpp.run("tokenize", "les chats", "--language", "French")
    assert proc.returncode == 1 and "French" in proc.stderr and "not supported" in proc.stderr
    # Without stemming or built-in stop words the language does not matter.
    proc = lance_cpp.run_ok("tokenize", "les chats", "--language", "French", "--no-stem", "--no-remove-stop-words")
    assert json.loads(proc.stdout) == [["les", 0], ["chats", 1]]
    for base in ["icu", "jieba", "lindera/ipadic", "nonsense"]:
        proc = lance_cpp.run("tokenize", "x", "--base-tokenizer", base)
        assert proc.returncode == 1 and base in proc.stderr
