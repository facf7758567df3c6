"""Format-preserving pseudonyms computed for whole columns equal the reference value for value:
the vectorized FF3-1 equals the ``ff3`` package (the external oracle), and the array path of
``Permutations.tokens`` equals its value-by-value ``token`` (which the ff3 package serves beyond
64 bits) on texts of every shape."""

from __future__ import annotations

import hmac

import numpy as np
import pytest
from ff3 import FF3Cipher
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.transforms._fpe import Permutations, bit_reverse, ff3_1_bits
from veil.transforms.pseudonymize import _hex_prefixes, _hmac_states, _messages


@settings(max_examples=60, deadline=None)
@given(
    bits=st.integers(20, 64),  # FF3-1's minimum domain is 10^6 (20 bits)
    key=st.binary(min_size=32, max_size=32),
    tweak=st.binary(min_size=7, max_size=7),
    seed=st.integers(0, 2**32 - 1),
)
def test_ff3_1_over_an_array_equals_the_ff3_package(
    bits: int, key: bytes, tweak: bytes, seed: int
) -> None:
    numbers = np.random.default_rng(seed).integers(0, 2**bits, 40, dtype=np.uint64, endpoint=False)
    cipher = FF3Cipher(key.hex(), tweak.hex(), radix=2)
    expected = [int(cipher.encrypt(format(int(n), f"0{bits}b")), 2) for n in numbers]
    assert ff3_1_bits(key, tweak, numbers, bits).tolist() == expected


def test_ff3_1_refuses_a_width_it_does_not_compute() -> None:
    with pytest.raises(ValueError, match="2 to 64 bits"):
        ff3_1_bits(bytes(32), bytes(7), np.zeros(1, dtype=np.uint64), 65)


@given(st.lists(st.integers(0, 2**64 - 1), max_size=20), st.integers(1, 64))
def test_bit_reverse_reverses_the_low_bits(values: list[int], width: int) -> None:
    array = np.array(values, dtype=np.uint64)
    low = [v & ((1 << width) - 1) for v in values]
    expected = [int(format(v, f"0{width}b")[::-1], 2) for v in low]
    assert bit_reverse(array & np.uint64((1 << width) - 1), width).tolist() == expected


TEXT = st.text(alphabet=st.sampled_from(list("0123456789ABCXYZabcxyz -./+éß€\x00")), max_size=14)
SHAPED = st.one_of(
    TEXT,
    st.integers(0, 10**18).map(str),  # integers, from one digit to past the table's size
    st.from_regex(r"A[0-9]{9}[A-Z]", fullmatch=True),  # a KRA PIN
    st.from_regex(r"\+254 7[0-9]{8}", fullmatch=True),  # a phone number
    st.from_regex(r"[0-9]{25,40}", fullmatch=True),  # over 64 bits: the ff3 package
)


@settings(max_examples=40, deadline=None)
@given(st.lists(SHAPED, max_size=60), st.booleans(), st.binary(min_size=32, max_size=32))
def test_tokens_of_an_array_equal_each_token(texts: list[str], integer: bool, key: bytes) -> None:
    one = Permutations(key, "domain", column="c")
    many = Permutations(key, "domain", column="c")
    assert many.tokens(texts, integer=integer) == [one.token(t, integer=integer) for t in texts]


def test_the_hex_helpers_match_their_value_by_value_forms() -> None:
    texts = ["a", "", "b\x00c", "é", "x" * 70]
    assert _messages(texts, b"\x1f0") == [t.encode() + b"\x1f0" for t in texts]
    assert _messages([], b"\x1f0") == []
    digests = np.random.default_rng(0).integers(0, 256, (5, 32), dtype=np.uint8)
    for length in (8, 9, 16, 64):
        expected = [bytes(row).hex()[:length] for row in digests]
        hexed = _hex_prefixes(digests[:, : (length + 1) // 2], length)
        assert [token.decode() for token in hexed] == expected


@settings(max_examples=60, deadline=None)
@given(
    key=st.one_of(st.binary(max_size=200), st.binary(min_size=63, max_size=65)),
    prefix=st.binary(max_size=80),
    messages=st.lists(st.binary(max_size=130), max_size=4),
)
def test_hmac_written_out_equals_the_standard_library(
    key: bytes, prefix: bytes, messages: list[bytes]
) -> None:
    """The hex tokens' HMAC (two precomputed SHA-256 states) is ``hmac.digest``: keys shorter
    than, as long as and longer than SHA-256's block (hashed first), any prefix and message."""
    inner, outer = _hmac_states(key, prefix)
    for message in messages:
        state, last = inner.copy(), outer.copy()
        state.update(message)
        last.update(state.digest())
        assert last.digest() == hmac.digest(key, prefix + message, "sha256")


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.sampled_from(list("aBz09 \t\n\x0b\x1c\x1f-._")), max_size=8),
            st.text(max_size=6),  # any Unicode: accents, other scripts (refused), NULs
            st.integers(-5, 5),
        ),
        max_size=30,
    ),
    st.sampled_from(["hex", "preserve"]),
    st.booleans(),
)
def test_canonical_texts_in_bulk_equal_each_one(values: list, fmt: str, normalize: bool) -> None:
    from veil.exceptions import ParameterError
    from veil.transforms import Pseudonymize

    step = Pseudonymize(["c"], format=fmt, normalize=normalize)
    array = np.asarray(values, dtype=object)
    try:
        expected = [step._canonical(v, "c") for v in array]
    except ParameterError:  # a letter of another script: refused either way
        with pytest.raises(ParameterError):
            step._canonical_all(array, "c")
        return
    assert step._canonical_all(array, "c") == expected
