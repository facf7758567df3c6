"""The tabular autoencoder (torch, CPU): an embedding per categorical column and the
standardized numbers, an MLP down to the latent code, and back up to one head per column
(softmax over a column's categories, a regression for the numbers). ``variational=True``
makes it a VAE whose prior is sampled to synthesize rows (``veil synth --method tvae``).

Training is seeded and deterministic on CPU, stops early on a validation split, shows a rich
progress bar per epoch, and with ``dp=(epsilon, delta)`` runs DP-SGD through Opacus: every
example's gradient clipped, Gaussian noise added, the noise level set by Opacus' accountant
so that the whole training spends exactly (epsilon, delta); then the number of epochs is
fixed in advance (early stopping would look at the data outside the accountant).
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from veil.exceptions import MissingExtraError
from veil.progress import Progress

EMBEDDING = 8  # every category's embedding has this many dimensions (one t-SNE map for all)


def torch_module() -> Any:
    """torch, or one line on the extra that brings it."""
    try:
        import torch
    except ImportError as err:
        raise MissingExtraError("the autoencoder needs torch: pip install 'veil[ml]'") from err
    return torch


def build(
    cardinalities: list[int],
    numeric: int,
    latent: int,
    *,
    hidden: tuple[int, ...] = (128, 64),
    variational: bool = False,
    target: int = 0,
    inputs: int = 0,
) -> Any:
    """A fresh network (parameters drawn from torch's seeded generator). ``target``: 0, or a
    head on the code predicting the target too (1: a number; 2 or more: its classes), a
    supervised autoencoder whose code keeps what predicts it. ``inputs``: columns the encoder
    reads besides the table's (a boosted score of the target) that the decoder does not
    rebuild."""
    torch = torch_module()
    nn = torch.nn

    class TabularAutoencoder(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.cardinalities = list(cardinalities)
            self.numeric = numeric
            self.latent = latent
            self.variational = variational
            self.inputs = inputs
            self.embeddings = nn.ModuleList([nn.Embedding(n, EMBEDDING) for n in cardinalities])
            width = EMBEDDING * len(cardinalities) + numeric + inputs
            layers: list[Any] = []
            for size in hidden:
                layers += [nn.Linear(width, size), nn.ReLU()]
                width = size
            self.encoder = nn.Sequential(*layers)
            self.to_code = nn.Linear(width, latent * (2 if variational else 1))
            layers, width = [], latent
            for size in reversed(hidden):
                layers += [nn.Linear(width, size), nn.ReLU()]
                width = size
            self.decoder = nn.Sequential(*layers)
            self.heads = nn.ModuleList([nn.Linear(width, n) for n in cardinalities])
            self.numbers = nn.Linear(width, max(numeric, 1))
            self.target = nn.Linear(latent, target) if target else None
            # the target weighs as much as all the columns together: the code keeps it
            self.target_weight = float(len(cardinalities) + (1 if numeric else 0))

        def encode(self, codes: Any, numbers: Any, extra: Any = None) -> tuple[Any, Any]:
            parts = [e(codes[:, j]) for j, e in enumerate(self.embeddings)]
            more = [] if extra is None else [extra]
            hidden_state = self.encoder(torch.cat([*parts, numbers, *more], dim=1))
            out = self.to_code(hidden_state)
            if not self.variational:
                return out, None
            return out[:, : self.latent], out[:, self.latent :].clamp(-10, 10)

        def decode(self, code: Any) -> tuple[list[Any], Any]:
            hidden_state = self.decoder(code)
            logits = [head(hidden_state) for head in self.heads]
            return logits, self.numbers(hidden_state)[:, : self.numeric]

        def forward(self, codes: Any, numbers: Any, extra: Any = None) -> tuple[Any, ...]:
            mean, log_var = self.encode(codes, numbers, extra)
            code = mean
            if log_var is not None and self.training:
                code = mean + torch.randn_like(mean) * torch.exp(0.5 * log_var)
            logits, predicted = self.decode(code)
            return logits, predicted, mean, log_var

    return TabularAutoencoder()


def loss_of(model: Any, batch: tuple[Any, ...], reduction: str = "mean") -> Any:
    """Cross-entropy per categorical column plus squared error of the numbers (plus the KL
    term for the VAE, plus the target's error for a supervised one), summed over columns.
    ``batch``: codes, numbers, the extra inputs if the network reads any, the labels if any."""
    torch = torch_module()
    network = getattr(model, "_module", model)
    codes, numbers, *rest = batch
    extra = rest.pop(0) if network.inputs else None
    logits, predicted, mean, log_var = model(codes, numbers, extra)
    functional = torch.nn.functional
    total = torch.zeros((), dtype=torch.float32)
    for j, column in enumerate(logits):
        total = total + functional.cross_entropy(column, codes[:, j], reduction=reduction)
    if numbers.shape[1]:
        error = ((predicted - numbers) ** 2).sum(dim=1)
        total = total + (error.mean() if reduction == "mean" else error.sum())
    if network.target is not None and rest:
        guess = network.target(mean)
        if guess.shape[1] == 1:
            error = (guess[:, 0] - rest[0].float()) ** 2
            term = error.mean() if reduction == "mean" else error.sum()
        else:
            term = functional.cross_entropy(guess, rest[0].long(), reduction=reduction)
        total = total + network.target_weight * term
    if log_var is not None:
        kl = -0.5 * (1 + log_var - mean**2 - log_var.exp()).sum(dim=1)
        total = total + (kl.mean() if reduction == "mean" else kl.sum())
    return total


@dataclass
class Training:
    """What training did: losses per epoch, where it stopped and what DP spent."""

    epochs: int = 0
    train_loss: list[float] = field(default_factory=list)
    validation_loss: list[float] = field(default_factory=list)
    stopped_early: bool = False
    epsilon: float | None = None
    delta: float | None = None
    noise_multiplier: float | None = None
    max_grad_norm: float | None = None
    seconds: float = 0.0


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """torch deterministic on CPU for the block (and its own RNG seeded)."""
    torch = torch_module()
    torch.manual_seed(seed)
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous)


def train(
    model: Any,
    codes: np.ndarray,
    numbers: np.ndarray,
    *,
    seed: int,
    epochs: int = 60,
    labels: np.ndarray | None = None,
    extra: np.ndarray | None = None,
    batch_size: int = 256,
    learning_rate: float = 2e-3,
    validation: float = 0.1,
    patience: int = 5,
    dp: tuple[float, float] | None = None,
    max_grad_norm: float = 1.0,
    progress: Progress | None = None,
) -> Training:
    """Fit ``model`` to the rows, an epoch at a time on ``progress`` (a rich bar in the CLI);
    ``extra``: the columns the network reads besides the table's (``build(inputs=)``)."""
    import time

    torch = torch_module()
    start = time.perf_counter()
    result = Training()
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(codes))
    held = 0 if dp is not None else max(1, int(len(codes) * validation)) if len(codes) > 20 else 0
    valid, fit_rows = order[:held], order[held:]
    tensors = (
        torch.as_tensor(codes),
        torch.as_tensor(numbers),
        *([torch.as_tensor(extra)] if extra is not None else []),
        *([torch.as_tensor(labels)] if labels is not None else []),
    )
    dataset = torch.utils.data.TensorDataset(*(t[fit_rows] for t in tensors))
    generator = torch.Generator().manual_seed(seed)
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=True, generator=generator
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    engine = None
    wrapped = model
    if dp is not None:
        engine, wrapped, optimizer, loader = _private(
            model, optimizer, loader, dp, epochs, max_grad_norm
        )
        result.noise_multiplier = float(optimizer.noise_multiplier)
        result.max_grad_norm = max_grad_norm
    best, best_state, waited = math.inf, None, 0
    if progress is not None:
        progress.step("training the autoencoder" + (" with DP-SGD" if dp else ""))
        progress.expect(epochs * len(fit_rows))  # rows seen: an epoch is every row once
    for epoch in range(epochs):
        result.train_loss.append(_epoch(wrapped, loader, optimizer))
        result.epochs = epoch + 1
        if held:
            model.eval()
            with torch.no_grad():
                value = float(loss_of(model, tuple(t[valid] for t in tensors)))
            result.validation_loss.append(value)
            if value < best - 1e-4:
                best, waited = value, 0
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            else:
                waited += 1
        if progress is not None:
            progress.advance(len(fit_rows))
        if held and waited >= patience:
            result.stopped_early = True
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    if dp is not None and engine is not None:
        result.epsilon = float(engine.get_epsilon(dp[1]))
        result.delta = dp[1]
        wrapped.remove_hooks()  # the network alone again, without per-example gradients
    result.seconds = time.perf_counter() - start
    model.eval()
    return result


def _private(
    model: Any,
    optimizer: Any,
    loader: Any,
    dp: tuple[float, float],
    epochs: int,
    max_grad_norm: float,
) -> tuple[Any, Any, Any, Any]:
    """Opacus' DP-SGD around the training: (its engine, the wrapped model, the noisy optimizer,
    the Poisson-sampled loader), calibrated to ``dp`` = (epsilon, delta) over ``epochs``."""
    from opacus import PrivacyEngine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus' note on secure_mode: veil's notes say it
        engine = PrivacyEngine(accountant="prv")
        wrapped, optimizer, loader = engine.make_private_with_epsilon(
            module=model,
            optimizer=optimizer,
            data_loader=loader,
            target_epsilon=dp[0],
            target_delta=dp[1],
            epochs=epochs,
            max_grad_norm=max_grad_norm,
        )
    return engine, wrapped, optimizer, loader


def _epoch(model: Any, loader: Any, optimizer: Any) -> float:
    """One pass over ``loader``: the mean training loss per row."""
    model.train()
    total, seen = 0.0, 0
    for batch in loader:
        if len(batch[0]) == 0:  # Poisson sampling can draw an empty batch
            continue
        optimizer.zero_grad()
        loss = loss_of(model, tuple(batch))
        with warnings.catch_warnings():  # Opacus' hooks on inputs that need no gradient
            warnings.simplefilter("ignore", UserWarning)
            loss.backward()
        optimizer.step()
        total += float(loss.detach()) * len(batch[0])
        seen += len(batch[0])
    return total / max(seen, 1)
