import numpy as np
import pytest

from dltheory import datasets


def test_digits_split_is_seeded_and_scaled():
    a, b = datasets.digits(seed=0), datasets.digits(seed=0)
    np.testing.assert_array_equal(a.y_test, b.y_test)
    assert a.X_train.shape[1] == 64 and 0 <= a.X_train.min() and a.X_train.max() <= 1
    assert len(a.X_train) + len(a.X_test) == 1797 and a.n_classes == 10
    assert datasets.digits(seed=0, images=True).shape == (1, 8, 8)
    with pytest.raises(ValueError, match="test_fraction"):
        datasets.digits(seed=0, test_fraction=1.5)


def test_mnist1d_generated_offline_and_deterministic():
    a = datasets.mnist1d(200, seed=3)
    b = datasets.mnist1d(200, seed=3)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert a.X_train.shape[1] == 40 and a.name == "MNIST-1D"
    assert len(a.X_train) + len(a.X_test) == 200
    assert not np.array_equal(datasets.mnist1d(200, seed=4).X_train, a.X_train)


def test_text_tokens_roundtrip():
    tok = datasets.text_tokens(level="chars", max_chars=5000)
    assert tok.decode(tok.ids[:200]) == datasets.text_corpus(5000)[:200]
    words = datasets.tokenize("the cat and the hat", level="words")
    assert words.vocab[0] == "the" and words.decode(words.ids) == "the cat and the hat"
    capped = datasets.text_tokens(level="words", max_chars=20_000, max_vocab=50)
    assert capped.vocab_size == 50 and capped.vocab[0] == "<unk>"
    with pytest.raises(ValueError, match="level"):
        datasets.tokenize("x", level="bytes")


def test_real_loaders_fall_back_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DLTHEORY_DATA_DIR", str(tmp_path))
    split = datasets.cifar("cifar10", seed=0)        # no torchvision or no files: stand-in
    assert split.name in ("digits", "CIFAR10")
    if split.name == "digits":
        out = capsys.readouterr().out.strip().splitlines()
        assert len(out) == 1 and "stand-in" in out[0]
    tok = datasets.wikitext(max_vocab=100)
    assert tok.name.startswith("pydoc")
    with pytest.raises(FileNotFoundError):
        datasets.wikitext(fallback=False)
    with pytest.raises(ValueError, match="cifar10"):
        datasets.cifar("imagenet", seed=0)
