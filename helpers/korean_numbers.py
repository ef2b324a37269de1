"""Korean (Sino-Korean) readings of numbers, and the character vocabulary of chapter 6's
sequence-to-sequence task.

Imports only NumPy and the standard library.
"""

from __future__ import annotations

import numpy as np

from ._checks import int_array, integer

__all__ = ["MAX_KOREAN_NUMBER", "KOREAN_NUMBER_SYLLABLES", "read_korean_number",
           "reading_alignment", "number_reading_pairs", "CharVocabulary", "encode_reading_pairs",
           "encode_reading_sequences"]

# Sino-Korean numerals, read in groups of four digits (만, 억, 조). The course's standard form:
# no spaces; a silent 일 before 십, 백, 천 and before 만 when the 만 group is exactly 1
# (만, 십일만), but 일억 and 일조; zeros are not read (만일 for 10001), and 영 only for 0 itself.
_DIGIT_SYLLABLES = "영일이삼사오육칠팔구"
_PLACE_SYLLABLES = ("", "십", "백", "천")
_GROUP_SYLLABLES = ("", "만", "억", "조")
MAX_KOREAN_NUMBER = 10**16 - 1
KOREAN_NUMBER_SYLLABLES = _DIGIT_SYLLABLES + "십백천만억조"


def _check_number(n) -> int:
    return integer(n, "n", low=0, high=MAX_KOREAN_NUMBER)


def _syllables_with_powers(n: int) -> list[tuple[str, int]]:
    """(syllable, power of ten it reads) for each syllable of the reading of a checked ``n``."""
    if n == 0:
        return [("영", 0)]
    out = []
    for group in range(3, -1, -1):
        value = n // 10 ** (4 * group) % 10_000
        if value == 0:
            continue
        for place in range(3, -1, -1):
            digit = value // 10**place % 10
            if digit == 0:
                continue
            power = 4 * group + place
            silent_one = digit == 1 and (place > 0 or (group == 1 and value == 1))
            if not silent_one:
                out.append((_DIGIT_SYLLABLES[digit], power))
            if place > 0:
                out.append((_PLACE_SYLLABLES[place], power))
        if group > 0:
            out.append((_GROUP_SYLLABLES[group], 4 * group))
    return out


def read_korean_number(n, *, sep: str = "") -> str:
    """The Sino-Korean reading of a non-negative integer, as a native speaker writes it out.

    Digits are read in groups of four from the right, each group followed by its unit
    만 (10^4), 억 (10^8) or 조 (10^12). The standard form of this course:

    - 0 is 영; other zeros are not read (10001 → 만일, 10203 → 만이백삼).
    - 1 before 십, 백, 천 is silent (10 → 십, 100 → 백, 1000 → 천, 1010101 → 백일만백일).
    - A 만 group of exactly 1 is 만, not 일만 (10000 → 만, 100010000 → 일억만), but
      110000 → 십일만. Before 억 and 조 the 일 stays: 100000000 → 일억, 10^12 → 일조.
    - Groups are joined with ``sep``, by default nothing. Korean orthography (한글 맞춤법
      제44항) puts a space between the 만 groups (``sep=" "``: 일억 이천삼백사십오만
      육천칠백팔십구); the chapter's model reads and writes the form without spaces.

    Parameters
    ----------
    n : int or numpy.integer
        The number, 0 <= n <= 9,999,999,999,999,999 (``MAX_KOREAN_NUMBER``, up to 조).
    sep : str, default ""
        Inserted between the groups (after 만, 억, 조 when more syllables follow).

    Returns
    -------
    str
        The reading in Hangul, e.g. ``"이천이십육"`` for 2026.

    Raises
    ------
    TypeError
        If ``n`` is not an integer (floats, strings and ``bool`` are rejected), or ``sep``
        is not a string.
    ValueError
        If ``n`` is negative or larger than ``MAX_KOREAN_NUMBER``.

    Notes
    -----
    Chapter 6 trains an encoder-decoder with cross-attention to produce these readings
    from the digits.

    Examples
    --------
    >>> read_korean_number(2026)
    '이천이십육'
    >>> read_korean_number(100010000)
    '일억만'
    >>> read_korean_number(123456789, sep=" ")
    '일억 이천삼백사십오만 육천칠백팔십구'
    """
    n = _check_number(n)
    if not isinstance(sep, str):
        raise TypeError(f"sep must be a string; got {type(sep).__name__} {sep!r}")
    pieces = []
    for syllable, _ in _syllables_with_powers(n):
        pieces.append(syllable)
        if syllable in _GROUP_SYLLABLES[1:]:
            pieces.append(sep)
    return "".join(pieces).removesuffix(sep) if sep else "".join(pieces)


def reading_alignment(n) -> list[tuple[str, int]]:
    """Which input digit each syllable of the reading comes from: the true alignment.

    A digit syllable (일 … 구, 영) reads its own digit; 십, 백, 천 belong to the digit in
    their place (also when its 1 is silent); 만, 억, 조 belong to the digit in the 10^4,
    10^8, 10^12 place, the last digit of their group.

    Parameters
    ----------
    n : int or numpy.integer
        As for :func:`read_korean_number`.

    Returns
    -------
    list of (str, int)
        One pair per syllable of ``read_korean_number(n)``: the syllable and the index of
        its digit in ``str(n)``, counted from 0 on the left.

    Raises
    ------
    TypeError, ValueError
        As :func:`read_korean_number`.

    Examples
    --------
    >>> reading_alignment(2026)
    [('이', 0), ('천', 0), ('이', 2), ('십', 2), ('육', 3)]
    >>> reading_alignment(10203)
    [('만', 0), ('이', 2), ('백', 2), ('삼', 4)]
    """
    n = _check_number(n)
    last = len(str(n)) - 1
    return [(syllable, last - power) for syllable, power in _syllables_with_powers(n)]


def number_reading_pairs(n_train: int, n_test: int, *, max_digits: int = 8,
                         seed: int = 0) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Random (digits, reading) pairs, split so that no test number occurs in training.

    Numbers are drawn by length first: a length L uniform in 1..``max_digits``, then a
    number with exactly L digits, uniform (0..9 for L = 1). Short numbers are therefore as
    common as long ones, until there are no new ones of that length left. Every number
    appears at most once; the distinct numbers are shuffled and the first ``n_train`` go to
    training, the next ``n_test`` to the test set.

    Parameters
    ----------
    n_train, n_test : int
        Numbers of training and test pairs, >= 0 each.
    max_digits : int, default 8
        The longest numbers, 1..16 digits.
    seed : int, default 0
        Seed of the NumPy generator; the same arguments give the same pairs.

    Returns
    -------
    train, test : list of (str, str)
        Pairs ``(str(n), read_korean_number(n))``, e.g. ``("2026", "이천이십육")``.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If a count or the seed is negative, ``max_digits`` is outside 1..16, or there are
        fewer than ``n_train + n_test`` numbers with at most ``max_digits`` digits.
    """
    n_train, n_test = integer(n_train, "n_train", low=0), integer(n_test, "n_test", low=0)
    max_digits = integer(max_digits, "max_digits", low=1, high=16)
    seed = integer(seed, "seed", low=0)
    total = n_train + n_test
    if total > 10**max_digits:
        raise ValueError(f"asked for {total} distinct numbers, but only {10**max_digits} "
                         f"have at most {max_digits} digits")
    rng = np.random.default_rng(seed)
    lows = [0] + [10 ** (k - 1) for k in range(2, max_digits + 1)]
    chosen: dict[int, None] = {}
    while len(chosen) < total:
        for length in rng.integers(1, max_digits + 1, size=max(total, 64)):
            chosen.setdefault(int(rng.integers(lows[length - 1], 10**length)))
            if len(chosen) == total:
                break
    numbers = rng.permutation(np.array(list(chosen), dtype=np.int64))
    pairs = [(str(int(k)), read_korean_number(int(k))) for k in numbers]
    return pairs[:n_train], pairs[n_train:]


class CharVocabulary:
    """Characters ↔ integer ids, with padding, start and end tokens.

    Id 0 is the padding token ``<pad>``, 1 the start token ``<s>``, 2 the end token ``</s>``;
    the characters follow from id 3 in the order given. Keras's ``Embedding(mask_zero=True)``
    treats id 0 as padding, so padded positions can be masked.

    Parameters
    ----------
    chars : str or iterable of str
        The characters, each a single character, no duplicates.

    Attributes
    ----------
    tokens : list of str
        All tokens by id: ``["<pad>", "<s>", "</s>", *chars]``.
    pad_id, start_id, end_id : int
        0, 1 and 2.

    Raises
    ------
    TypeError
        If an entry of ``chars`` is not a string.
    ValueError
        If ``chars`` is empty, has duplicates or an entry that is not one character.

    Notes
    -----
    Chapter 6: the digits are the encoder's vocabulary, the syllables of the readings
    (``KOREAN_NUMBER_SYLLABLES``) the decoder's.

    Examples
    --------
    >>> vocab = CharVocabulary("0123456789")
    >>> vocab.encode(["42", "7"], start=True, end=True)
    array([[ 1,  7,  5,  2],
           [ 1, 10,  2,  0]], dtype=int32)
    >>> vocab.decode([[7, 5, 2, 0], [10, 2, 3, 3]])
    ['42', '7']
    """

    PAD, START, END = "<pad>", "<s>", "</s>"
    pad_id, start_id, end_id = 0, 1, 2

    def __init__(self, chars):
        chars = list(chars)
        for c in chars:
            if not isinstance(c, str):
                raise TypeError(f"chars must be strings; got {type(c).__name__} {c!r}")
            if len(c) != 1:
                raise ValueError(f"each entry of chars must be one character; got {c!r}")
        if not chars or len(set(chars)) != len(chars):
            raise ValueError(f"chars must be non-empty and without duplicates; got {chars!r}")
        self.tokens = [self.PAD, self.START, self.END, *chars]
        self._ids = {c: i for i, c in enumerate(self.tokens) if i >= 3}

    def __len__(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        return f"CharVocabulary({''.join(self.tokens[3:])!r})"

    def encode(self, texts, *, length: int | None = None, start: bool = False,
               end: bool = False) -> np.ndarray:
        """Turn strings into a padded array of ids.

        Parameters
        ----------
        texts : str or sequence of str
            The strings; a single string is treated as a batch of one.
        length : int, optional
            Pad (with 0 at the end) to this many positions. Defaults to the longest
            encoded text.
        start, end : bool, default False
            Put the start token before / the end token after each text.

        Returns
        -------
        numpy.ndarray, shape (batch, length), int32

        Raises
        ------
        TypeError
            If a text is not a string.
        ValueError
            If a text contains a character outside the vocabulary, or is longer than
            ``length`` once encoded.
        """
        texts = [texts] if isinstance(texts, str) else list(texts)
        rows = []
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be strings; got {type(text).__name__} {text!r}")
            unknown = sorted(set(text) - self._ids.keys())
            if unknown:
                raise ValueError(f"{text!r} has characters outside the vocabulary: {unknown}; "
                                 f"the vocabulary is {''.join(self.tokens[3:])!r}")
            rows.append([self.start_id] * start + [self._ids[c] for c in text]
                        + [self.end_id] * end)
        longest = max((len(r) for r in rows), default=0)
        length = longest if length is None else integer(length, "length", low=0)
        if longest > length:
            raise ValueError(f"a text needs {longest} positions but length is {length}")
        out = np.zeros((len(rows), length), dtype=np.int32)
        for i, row in enumerate(rows):
            out[i, :len(row)] = row
        return out

    def decode(self, ids) -> list[str]:
        """Turn rows of ids back into strings.

        Each row is read up to its first end or padding token; start tokens are skipped.

        Parameters
        ----------
        ids : array_like, shape (batch, length) or (length,), integer

        Returns
        -------
        list of str
            One string per row (a list of one for a 1-D input).

        Raises
        ------
        TypeError
            If ``ids`` is not an integer array.
        ValueError
            If ``ids`` is not 1-D or 2-D, or has an id outside 0..len(self) - 1.
        """
        arr = np.asarray(ids)
        if arr.size == 0:
            arr = arr.astype(np.int32)  # [] is float64 to NumPy
        arr = int_array(arr, "ids", low=0, high=len(self) - 1)
        if arr.ndim == 1:
            arr = arr[None]
        if arr.ndim != 2:
            raise ValueError(f"ids must have shape (batch, length) or (length,); got shape "
                             f"{np.shape(ids)}")
        texts = []
        for row in arr:
            chars = []
            for i in row:
                if i in (self.pad_id, self.end_id):
                    break
                if i != self.start_id:
                    chars.append(self.tokens[i])
            texts.append("".join(chars))
        return texts


def encode_reading_pairs(pairs, source_vocab: CharVocabulary,
                         target_vocab: CharVocabulary, *,
                         source_length: int = 8, target_length: int = 16):
    """The arrays an encoder-decoder trains on with teacher forcing.

    Parameters
    ----------
    pairs : sequence of (str, str)
        (digits, reading) pairs, as :func:`number_reading_pairs` returns them.
    source_vocab, target_vocab : CharVocabulary
        The vocabularies of the digits and of the syllables.
    source_length : int, default 8
        Positions of the source (the most digits), padded with 0.
    target_length : int, default 16
        Positions of the decoder's input and target: the longest reading plus its end token.

    Returns
    -------
    source : numpy.ndarray, shape (batch, source_length), int32
    target_in : numpy.ndarray, shape (batch, target_length), int32
        The start token, then the reading: what the decoder is fed.
    target_out : numpy.ndarray, shape (batch, target_length), int32
        The reading, then the end token: ``target_in`` moved one position to the left, what
        the decoder must predict at each position.

    Raises
    ------
    TypeError, ValueError
        As :meth:`CharVocabulary.encode` (a character outside a vocabulary, or a text longer
        than its length).

    Notes
    -----
    Taught in chapter 6 (teacher forcing); chapter 8 trains its Transformer on the same
    arrays.

    Examples
    --------
    >>> source, target_in, target_out = encode_reading_pairs(
    ...     [("10", "십")], CharVocabulary("0123456789"), CharVocabulary(KOREAN_NUMBER_SYLLABLES),
    ...     source_length=3, target_length=3)
    >>> source.tolist(), target_in.tolist(), target_out.tolist()
    ([[4, 3, 0]], [[1, 13, 2]], [[13, 2, 0]])
    """
    source = source_vocab.encode([digits for digits, _ in pairs],
                                 length=source_length)
    target = target_vocab.encode([reading for _, reading in pairs], start=True,
                                 end=True, length=target_length + 1)
    return source, target[:, :-1], target[:, 1:]


def encode_reading_sequences(pairs, vocab: CharVocabulary, *, max_digits: int = 8,
                             reading_length: int = 16):
    """The arrays a decoder-only language model trains on: digits, a separator, the reading.

    Each pair becomes one sequence ``<pad>… digits <s> reading </s> <pad>…``: the digits
    right-aligned in ``max_digits`` positions (padded on the left, so that every prompt ends
    at the same position), the start token ``<s>`` as the separator, then the reading and
    its end token in ``reading_length`` positions. The model learns to predict each next
    token; only the reading's tokens (and the end token) count in the loss.

    Parameters
    ----------
    pairs : sequence of (str, str)
        (digits, reading) pairs, as :func:`number_reading_pairs` returns them.
    vocab : CharVocabulary
        One vocabulary holding the digits and the syllables.
    max_digits : int, default 8
        Positions of the digits; the prompt is ``max_digits + 1`` tokens long.
    reading_length : int, default 16
        Positions of the reading plus its end token.

    Returns
    -------
    inputs : numpy.ndarray, shape (batch, max_digits + reading_length), int32
        The sequence without its last token: what the model is fed. Its first
        ``max_digits + 1`` columns are the prompt (digits and separator).
    targets : numpy.ndarray, shape (batch, max_digits + reading_length), int32
        The sequence without its first token: the next token at every position.
    weights : numpy.ndarray, shape (batch, max_digits + reading_length), float32
        1 where the target is a token of the reading or its end token, else 0: the
        ``sample_weight`` that puts the loss on the reading only.

    Raises
    ------
    TypeError, ValueError
        As :meth:`CharVocabulary.encode` (a character outside the vocabulary, or digits or
        a reading longer than their positions).

    Notes
    -----
    Taught in chapter 9 (the reading task of chapter 6 for a decoder-only Transformer).

    Examples
    --------
    >>> vocab = CharVocabulary("0123456789" + KOREAN_NUMBER_SYLLABLES)
    >>> inputs, targets, weights = encode_reading_sequences([("10", "십")], vocab,
    ...                                                     max_digits=3, reading_length=3)
    >>> vocab.tokens[4], vocab.tokens[3], vocab.tokens[23]
    ('1', '0', '십')
    >>> inputs.tolist(), targets.tolist(), weights.tolist()
    ([[0, 4, 3, 1, 23, 2]], [[4, 3, 1, 23, 2, 0]], [[0.0, 0.0, 0.0, 1.0, 1.0, 0.0]])
    """
    max_digits = integer(max_digits, "max_digits", low=1)
    reading_length = integer(reading_length, "reading_length", low=1)
    digits = vocab.encode([d for d, _ in pairs], length=max_digits)
    lengths = (digits != vocab.pad_id).sum(axis=1)
    prompts = np.zeros_like(digits)
    for row, (ids, length) in enumerate(zip(digits, lengths)):
        prompts[row, max_digits - length:] = ids[:length]          # right-align
    readings = vocab.encode([r for _, r in pairs], end=True, length=reading_length)
    separator = np.full((len(pairs), 1), vocab.start_id, np.int32)
    sequences = np.concatenate([prompts, separator, readings], axis=1)
    weights = np.zeros(sequences[:, 1:].shape, np.float32)
    weights[:, max_digits:] = readings != vocab.pad_id
    return sequences[:, :-1], sequences[:, 1:], weights
