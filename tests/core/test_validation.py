"""``workbench.core.validation``: the combined checks accept what their parts accept, return the
checked values, and name the parameter (and the range) when they refuse."""

from __future__ import annotations

import pytest

from workbench.core.validation import (
    check_index,
    check_key_rank,
    check_layer,
    check_orthonormal_keys,
    check_positive,
)


def test_combined_checks_return_the_checked_values() -> None:
    assert check_layer(5, 2, 3) == (5, 2, 3)
    assert check_key_rank(5, 5) == 5
    assert check_orthonormal_keys("orthonormal", 3, 3) == 3
    assert check_orthonormal_keys("iid", 9, 3) == 9
    assert check_positive("scale", 2) == 2.0 and isinstance(check_positive("scale", 2), float)
    assert check_index("k", 0, 1) == 0


@pytest.mark.parametrize("call,message", [
    (lambda: check_layer(1, 1, 1), "d must be an integer >= 2 (got 1)"),
    (lambda: check_layer(4, 5, 1), "r must be an integer in 1..4 (got 5)"),
    (lambda: check_layer(4, 2, 0), "H must be an integer >= 1 (got 0)"),
    (lambda: check_key_rank(0, 4), "r must be an integer >= 1 (got 0)"),
    (lambda: check_key_rank(5, 4), "r must be an integer in 1..4 (got 5)"),
    (lambda: check_orthonormal_keys("orthonormal", 4, 3, "--N"),
     "--N must be an integer in 1..d = 1..3 for orthonormal points (got 4)"),
    (lambda: check_positive("scale", 0.0), "scale must be a finite number in (0, inf)"),
    (lambda: check_positive("scale", float("inf")), "scale must be a finite number"),
    (lambda: check_index("k", 3, 3), "k must be an integer in 0..2 (got 3)"),
])
def test_refusals_name_the_parameter_and_the_range(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value).startswith(message)
