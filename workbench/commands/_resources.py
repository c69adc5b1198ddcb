"""Memory ``workbench train`` needs, estimated from its arguments before it starts. The
estimates of the constructions and the check against available memory are
``workbench.verifiers.resources``'s, which the construction runner uses too."""

from __future__ import annotations

from workbench.verifiers.resources import FLOAT32, Term

ADAM_COPIES = 4  # a trained parameter, its gradient and Adam's two moment estimates
FFN_WIDTH = 2048  # workbench.verifiers.models.EncoderStack's default FFN width
EVAL_BATCH = 2048  # workbench.verifiers.train.TrainConfig's default held-out batch


def train_terms(arch: str, d: int, N: int, rank: int, heads: int, layers: int, seeds: int,
                batch: int, eval_batch: int, steps: int, width: int) -> list[Term]:
    """``workbench train``'s stacked models (``seeds`` of them trained together): parameters
    with their gradients and Adam state, one step's batch and its key projections, the held-out
    batches, and the loss history. ``width`` is the model width (d, or the regression stack's)."""
    K, H, r, L = seeds, heads, rank, layers
    if arch == "generalized":  # W_h, the dot score's Q_h (rank x d each) and M_h (d x d)
        params, what = K * H * (2 * r * d + d * d), "parameters K x H x (2 r d + d^2)"
    else:  # Wq, Wk, Wv, Wo of shape (K, H r, width) per layer, and the encoders' FFN
        ffn = 2 * width * FFN_WIDTH if arch != "attention" else 0
        params = K * L * (4 * H * r * width + ffn)
        what = "parameters K x L x (4 H r width + FFN)"
    flags = ("--seeds", "--heads", "--rank", "--d", "--layers")
    return [
        Term(f"{what} with gradients and Adam state, float32", flags,
             ADAM_COPIES * FLOAT32 * params),
        Term("one step's keys and queries K x batch x (N + 1) x d, float32",
             ("--seeds", "--batch", "--N", "--d"), FLOAT32 * K * batch * (N + 1) * d),
        Term("one step's per-head projections K x batch x N x H r (x d: generalized "
             "attention's M_h X), float32",
             ("--seeds", "--batch", "--N", "--heads", "--rank"),
             FLOAT32 * K * batch * N * H * r * (d if arch == "generalized" else 1)),
        Term("a held-out batch eval-batch x (N + 1) x d, float32", ("--N", "--d"),
             FLOAT32 * eval_batch * (N + 1) * d),
        Term("the loss history steps x K, float32", ("--steps", "--seeds"), FLOAT32 * steps * K),
    ]
