"""What a printed error means: the one place its words are computed, from the task, the number
of keys ``N``, their law (``points``) and the target (docs/paper.md §2, "Error").

The reference point a reader can compare with is stated only where it holds: predicting the
midpoint of the two keys scores exactly 0.5 on ``D_2`` (``||x_1 - x_2||^2 / 4 = 1/2`` for
orthonormal keys) and 0.5 in expectation for two i.i.d. uniform keys (``E(1 - <x_1, x_2>) / 2``);
for ``N > 2`` orthonormal keys their mean scores ``1 - 1/N`` (``1 - 2/N + N/N^2``); elsewhere
(``N > 2`` i.i.d. keys, the farthest-point and regression tasks, another target) only the zero
model's score is stated.
"""

from __future__ import annotations

NEAREST = "error = E||f - A||^2, the squared Euclidean distance to the true nearest neighbour"
FARTHEST = ("error = the mean over the N tokens of ||f_i - A_i||^2, f_i the point farthest from "
            "token i (the key of least inner product with it) and A_i the model's output at "
            "token i (the zero model scores 1)")
REGRESSION = ("error = E (<w, x_q> - A)^2 / d, the squared error of the predicted label of the "
              "query x_q given the N context pairs (x_i, <w, x_i>), divided by d (predicting 0 "
              "scores 1)")
TARGET_ERROR = ("error = E||f - A||^2, the squared Euclidean distance to the target f (the zero "
                "model scores E||f||^2 <= 1)")


def reference_point(N: int | None, points: str | None) -> str:
    """The nearest-neighbour task's baseline besides the zero model, where one holds exactly
    (see the module note); empty where none does."""
    if N == 2 and points == "orthonormal":
        return "on D_2 predicting the midpoint of the two keys scores 0.5"
    if N == 2 and points == "iid":
        return "predicting the midpoint of the two keys scores 0.5 in expectation"
    if N is not None and N > 2 and points == "orthonormal":
        return f"predicting the mean of the {N} orthonormal keys scores 1 - 1/N = {1 - 1 / N:.4g}"
    return ""


def error_meaning(task: str = "nearest", N: int | None = None, points: str | None = None,
                  target: str = "nearest") -> str:
    """The sentence that says what a printed error is for ``task`` with ``N`` keys of law
    ``points`` (``None``: a mixture, as in ``workbench check``) against ``target``."""
    if target != "nearest":
        return TARGET_ERROR
    if task == "farthest":
        return FARTHEST
    if task == "regression":
        return REGRESSION
    ref = reference_point(N, points)
    return f"{NEAREST} (the zero model scores 1{'; ' + ref if ref else ''})"


ERROR_MEANING = error_meaning("nearest", 2, "orthonormal")  # the bounds' setting: N = 2 on D_2
